// `rmcp run [options] -- CMD ARGS...`: the supervisor (docs/run.md). Parses into a
// run::CommandRequest, calls run::run_command, prints the plan of a --dry-run.
#include "context.hpp"
#include "install_paths.hpp"
#include "json_output.hpp"

#include "run/command.hpp"
#include "util/strings.hpp"

#include <fmt/format.h>

#include <memory>

namespace rmcp::cli {

namespace {

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
        ctx.out.print("{}", json_output(ctx, nlohmann::json{{"schema_version", 1},
                                                            {"profile", attempts.front()["profile"]},
                                                            {"attempts", attempts},
                                                            {"argv", argv}}));
        return;
    }
    std::size_t n = 0;
    for (const auto& rung : plan) {
        print_text(ctx, "attempt {}: profile {}\n", ++n, run::rung_name(rung));
        for (const auto& c : rung.env) {
            if (c.value) print_text(ctx, "  set {}={}\n", c.name, *c.value);
            else print_text(ctx, "  unset {}\n", c.name);
        }
    }
    std::string shown;
    for (const auto& a : argv) shown += (shown.empty() ? "" : " ") + sh_word(a);
    print_text(ctx, "argv: {}\n", shown);
}

int run_command(Context& ctx, run::CommandRequest request) {
    if (request.command.empty())
        return fail(ctx, Error{"parsing arguments", "", "rmcp run needs a command: rmcp run [OPTIONS] -- CMD ARGS...",
                               ExitCode::usage});
    const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
    if (!format) return fail(ctx, format.error());
    request.data_dir = ctx.data_dir();
    request.kb_dir = ctx.kb_dir();
    request.executable_dir = executable_dir();
    request.installed_library_dir = installed_library_dir();
    request.open_root = [&ctx] { return ctx.open_root(); };
    request.rmcp_command = command_prefix(ctx);
    request.json_text = [&ctx](const nlohmann::json& doc) { return json_output(ctx, doc); };
    auto outcome = run::run_command(request, ctx.diag);
    if (!outcome) return fail(ctx, outcome.error());
    if (outcome->planned) print_plan(ctx, *format, *outcome->planned, request.command);
    if (outcome->start_error && *format == OutputFormat::json) {
        // The child never started: a failure before it, so one JSON error object (the message
        // is on stderr already). Its exit_code is the one rmcp exits with, 126 or 127.
        Error e = *outcome->start_error;
        e.code = static_cast<ExitCode>(outcome->exit_code);
        print_error_json(ctx, e);
    }
    return outcome->exit_code;
}

}  // namespace

void add_run_command(CLI::App& app, Context& ctx, Action& action) {
    // The request's fields are the options' targets; the rest is filled in from the context.
    auto args_ptr = std::make_shared<run::CommandRequest>();
    run::CommandRequest& args = *args_ptr;
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
            run::CommandRequest request = *args_ptr;
            // CLI11 keeps the "--" separator among the remaining arguments; it is not the command's.
            auto rest = cmd->remaining();
            if (!rest.empty() && rest.front() == "--") rest.erase(rest.begin());
            for (auto& extra : rest) request.command.push_back(std::move(extra));
            return run_command(ctx, std::move(request));
        };
    });
}

}  // namespace rmcp::cli
