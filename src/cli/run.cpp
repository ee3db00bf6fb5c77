// `rmcp run [options] -- CMD ARGS...`: the supervisor (docs/run.md,
// docs/run.md). Parses, builds the attempt plan, calls run::supervise, writes the report.
#include "context.hpp"
#include "process/spawn.hpp"
#include "install_paths.hpp"
#include "json_output.hpp"

#include "detect/detect.hpp"
#include "facts/facts_json.hpp"
#include "kb/libraries.hpp"
#include "patch/auto_profile.hpp"
#include "scan/coverage.hpp"
#include "patch/profile.hpp"
#include "run/kb_watcher.hpp"
#include "run/plan.hpp"
#include "run/incident.hpp"
#include "run/supervisor.hpp"
#include "util/atomic_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <system_error>
#include <unistd.h>

namespace rmcp::cli {

namespace {

struct RunArgs {
    std::string profile;
    unsigned retries = 0;
    std::string fallback = "none";
    std::string log;
    std::string report;
    std::string stall_timeout = "0";
    std::string kill_grace = "5";
    bool pty = false;
    bool trace_alloc = false;
    bool dry_run = false;
    std::vector<std::string> command;  // after --
};

// The user's profile.env (written by env patches); a missing file is no changes.
Result<patch::UserEnv> read_user_env(const Root& root) {
    const std::string path = patch::user_env_file_path(process::current_environment_map());
    auto text = root.read_file(path);
    if (!text) {
        if (text.error().os_error == ENOENT) return patch::UserEnv{};
        return text.error();
    }
    return patch::parse_user_env(*text, root.host_path(path));
}

// librmcp_preload.so: $RMCP_PRELOAD_LIB, else next to the rmcp binary (the build tree
// puts both in build/), else the installed private library directory (install_paths.hpp).
Result<std::string> find_preload_library() {
    if (const char* env = std::getenv("RMCP_PRELOAD_LIB"); env && *env) {
        if (::access(env, R_OK) == 0) return std::string(env);
        return Error{"finding allocation tracer", env, std::strerror(errno), ExitCode::environment};
    }
    const auto bin = executable_dir();
    const auto installed = installed_library_dir() / "librmcp_preload.so";
    if (!bin.empty())
        for (const auto& candidate : {bin / "librmcp_preload.so", installed})
            if (::access(candidate.c_str(), R_OK) == 0) return candidate.string();
    return Error{"finding allocation tracer", "librmcp_preload.so",
                 fmt::format("not next to the rmcp binary nor at {} (set RMCP_PRELOAD_LIB)", installed.string()),
                 ExitCode::environment};
}

Status write_report(const std::string& path, const std::string& text) {
    std::error_code ec;
    const auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) return Error{"creating directory for incident report", parent.string(), ec.message()};
    return write_file_atomic(path, text);
}

// `--dry-run`: what would run, attempt by attempt, and nothing started.
void print_plan(Context& ctx, OutputFormat format, const std::vector<run::Rung>& plan,
                const std::vector<std::string>& argv) {
    if (format == OutputFormat::json) {
        nlohmann::json attempts = nlohmann::json::array();
        for (const auto& rung : plan) {
            nlohmann::json env = nlohmann::json::array();
            for (const auto& c : rung.env)
                env.push_back({{"name", c.name}, {"value", c.value ? nlohmann::json(*c.value) : nlohmann::json()}});
            attempts.push_back({{"profile", rung.profile.empty() ? nlohmann::json() : nlohmann::json(rung.profile)},
                                {"hide_gpu", rung.hide_gpu},
                                {"env", env}});
        }
        fmt::print("{}", json_output(ctx, nlohmann::json{{"schema_version", 1},
                                                         {"profile", attempts.front()["profile"]},
                                                         {"attempts", attempts},
                                                         {"argv", argv}}));
        return;
    }
    std::size_t n = 0;
    for (const auto& rung : plan) {
        fmt::print("attempt {}: profile {}{}\n", ++n, rung.profile.empty() ? "(none)" : rung.profile,
                   rung.hide_gpu ? " (GPU hidden)" : "");
        for (const auto& c : rung.env) {
            if (c.value) fmt::print("  set {}={}\n", c.name, *c.value);
            else fmt::print("  unset {}\n", c.name);
        }
    }
    std::string shown;
    for (const auto& a : argv) shown += (shown.empty() ? "" : " ") + a;
    fmt::print("argv: {}\n", shown);
}

int run_command(Context& ctx, const RunArgs& args, const std::vector<std::string>& command) {
    if (command.empty())
        return fail(ctx, Error{"parsing arguments", "", "rmcp run needs a command: rmcp run [OPTIONS] -- CMD ARGS...",
                               ExitCode::usage});
    const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
    if (!format) return fail(ctx, format.error());
    // Finite seconds from 0 to 30 days: 1e10, inf or nan once killed a healthy child at once.
    const auto stall_timeout = run::check_seconds(args.stall_timeout);
    if (!stall_timeout)
        return fail(ctx,
                    Error{"parsing --stall-timeout", args.stall_timeout, stall_timeout.error().cause, ExitCode::usage});
    const auto kill_grace = run::check_seconds(args.kill_grace);
    if (!kill_grace)
        return fail(ctx, Error{"parsing --kill-grace", args.kill_grace, kill_grace.error().cause, ExitCode::usage});
    auto root = ctx.open_root();
    if (!root) return fail(ctx, root.error());
    auto user_env = read_user_env(*root);
    if (!user_env) return fail(ctx, user_env.error());

    // Profiles and facts only when asked for: `rmcp run -- CMD` starts in a few ms
    // (docs/PERFORMANCE.md, "rmcp run").
    std::optional<Facts> facts;
    run::RunOptions options;
    if (args.profile.empty() && args.retries == 0) {
        options.plan.push_back(run::plain_rung(*user_env));
    } else {
        std::vector<std::string> profile_notes;
        auto profiles = patch::load_profiles_with_user(ctx.data_dir() / "profiles", *root,
                                                       process::current_environment_map(), profile_notes);
        if (!profiles) return fail(ctx, profiles.error());
        for (const auto& n : profile_notes) ctx.diag.note(n);
        facts = detect(*root);
        run::PlanRequest request;
        const auto ladder = profiles->ladder();
        if (ladder.empty())
            return fail(ctx, Error{"choosing profile", (ctx.data_dir() / "profiles").string(), "no profiles defined",
                                   ExitCode::usage});
        request.start = args.profile.empty() ? ladder.front()->name : args.profile;
        if (request.start == "auto") {
            // The one auto decision (patch/auto_profile.hpp), on the facts doctor evaluates.
            auto doctor_facts = facts_to_json(*facts);
            kb::merge_libraries(doctor_facts, scan::libraries_facts(*root, *facts));
            patch::AutoSources sources{ctx.data_dir() / "profiles" / "rules" / "auto.toml", ctx.data_dir() / "patches",
                                       ctx.kb_dir()};
            auto decision = patch::choose_auto(*profiles, *facts, doctor_facts, sources);
            if (!decision) return fail(ctx, decision.error());
            for (const auto& n : decision->notes) ctx.diag.note(n);
            for (const auto& v : decision->verbose) ctx.diag.verbose(v);
            request.start_env = std::move(decision->env);
        }
        request.retries = args.retries;
        request.fallback = args.fallback == "cpu" ? run::Fallback::cpu : run::Fallback::none;
        request.gpu_targets = patch::gpu_targets(*facts);
        request.user_env = *user_env;
        auto plan = run::make_plan(*profiles, request);
        if (!plan) return fail(ctx, plan.error());
        options.plan = std::move(*plan);
    }
    if (args.trace_alloc) {
        auto lib = find_preload_library();
        if (!lib) return fail(ctx, lib.error());
        options.preload_library = *lib;
    }
    options.argv = command;
    if (args.dry_run) {
        print_plan(ctx, *format, options.plan, command);
        return 0;
    }
    options.terminal = args.pty ? run::Terminal::pty : run::Terminal::pipes;
    options.log_path = args.log;
    options.stall_timeout_s = *stall_timeout;
    options.kill_grace_s = *kill_grace;
    options.watcher = run::kb_watcher_factory(ctx.kb_dir());

    const run::RunResult result = run::supervise(options, ctx.diag);
    if (result.attempts.back().end == run::AttemptEnd::not_started) return result.exit_code;

    if (result.incident() || !args.report.empty()) {
        run::ReportInputs inputs;
        inputs.command = command;
        inputs.requested_profile = args.profile;
        inputs.log_path = args.log;
        if (!facts) facts = detect(*root);
        inputs.facts = facts_to_json(*facts);
        inputs.kernel_log = run::read_kernel_log_since(result.started);
        const std::string path = args.report.empty() ? run::default_report_path(result.started) : args.report;
        for (const auto& line : run::summary_lines(result)) ctx.diag.note(line);
        if (auto written = write_report(path, json_output(ctx, run::incident_report(result, inputs))); !written)
            ctx.diag.error(written.error());
        else if (result.incident()) ctx.diag.note(fmt::format("incident report: {}", path));
    }
    return result.exit_code;
}

}  // namespace

void add_run_command(CLI::App& app, Context& ctx, Action& action) {
    auto args_ptr = std::make_shared<RunArgs>();
    RunArgs& args = *args_ptr;
    auto* cmd = app.add_subcommand("run", "Run a command under supervision: relay, classify crashes, retry, report");
    cmd->add_option("--profile", args.profile, "Start under this profile (a name from profiles/, or auto)")
        ->type_name("NAME|auto");
    cmd->add_option("--retries", args.retries,
                    "Restart up to N times, one rung stricter, after a recognised GPU failure")
        ->type_name("N");
    cmd->add_option("--fallback", args.fallback, "cpu: the last attempt hides the GPU (needs --retries >= 1)")
        ->check(CLI::IsMember({"none", "cpu"}))
        ->type_name("cpu");
    cmd->add_option("--log", args.log, "Append the child's stdout and stderr (raw bytes) to FILE")->type_name("FILE");
    cmd->add_option("--report", args.report,
                    "Write the JSON report here, always (default: only on an incident, under "
                    "$XDG_STATE_HOME/rmcp/incidents/)")
        ->type_name("FILE");
    cmd->add_option("--stall-timeout", args.stall_timeout,
                    "Seconds without output after which the run is a suspected GPU hang and is stopped (0: never; "
                    "at most 30 days)")
        ->type_name("S");
    cmd->add_option("--kill-grace", args.kill_grace,
                    "Seconds between SIGTERM and SIGKILL when stopping a stalled run, and between forwarding "
                    "SIGTERM/SIGHUP and ending (default 5; at most 30 days)")
        ->type_name("S");
    cmd->add_flag("--dry-run", args.dry_run,
                  "Print the plan (profile of each attempt, environment changes, argv) and start nothing");
    cmd->add_flag("--pty", args.pty, "Give the child pseudo-terminals for stdout and stderr (progress bars)");
    cmd->add_flag("--trace-alloc", args.trace_alloc,
                  "Preload librmcp_preload.so (RMCP_ALLOC=trace) and put its summary in the report");
    cmd->footer("Everything after -- is the command, run without a shell. Exit status: the command's, 128+N when\n"
                "it died of signal N; 127/126 when it cannot be started; 128+N when SIGTERM or SIGHUP reached rmcp\n"
                "and the run was still going --kill-grace later. After the command exits, its output is relayed\n"
                "for at most 2 s more (processes it left running are named in the report). See docs/run.md.");
    // Options stop at the command: `rmcp run python -u train.py` leaves -u to python.
    cmd->prefix_command();
    cmd->add_option("command", args.command, "The command and its arguments")->type_name("CMD ARGS...");
    cmd->callback([&ctx, &action, cmd, args_ptr] {
        action = [&ctx, cmd, args_ptr] {
            std::vector<std::string> command = args_ptr->command;
            // CLI11 keeps the "--" separator among the remaining arguments; it is not the command's.
            auto rest = cmd->remaining();
            if (!rest.empty() && rest.front() == "--") rest.erase(rest.begin());
            for (auto& extra : rest) command.push_back(std::move(extra));
            return run_command(ctx, *args_ptr, command);
        };
    });
}

}  // namespace rmcp::cli
