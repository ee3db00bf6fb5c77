#include "run/command.hpp"

#include "detect/detect.hpp"
#include "facts/facts_json.hpp"
#include "kb/libraries.hpp"
#include "kb/kb.hpp"
#include "patch/auto_profile.hpp"
#include "patch/next_step.hpp"
#include "patch/patch.hpp"
#include "patch/profile.hpp"
#include "run/incident.hpp"
#include "run/kb_watcher.hpp"
#include "run/plan.hpp"
#include "scan/coverage.hpp"
#include "similar/index.hpp"
#include "similar/terms.hpp"
#include "util/atomic_file.hpp"
#include "util/strings.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <unistd.h>

namespace rmcp::run {

namespace {

// Finite seconds from 0 to 30 days: 1e10, inf or nan once killed a healthy child at once.
Result<double> parse_seconds(const std::string& option, const std::string& text) {
    auto seconds = check_seconds(text);
    if (!seconds) return Error{"parsing " + option, text, seconds.error().cause, ExitCode::usage};
    return seconds;
}

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
// puts both in build/), else the installed private library directory.
Result<std::string> find_preload_library(const CommandRequest& request) {
    if (const char* env = std::getenv("RMCP_PRELOAD_LIB"); env && *env) {
        if (::access(env, R_OK) == 0) return std::string(env);
        return Error{"finding allocation tracer", env, std::strerror(errno), ExitCode::environment};
    }
    const auto installed = request.installed_library_dir / "librmcp_preload.so";
    if (!request.executable_dir.empty())
        for (const auto& candidate : {request.executable_dir / "librmcp_preload.so", installed})
            if (::access(candidate.c_str(), R_OK) == 0) return candidate.string();
    return Error{"finding allocation tracer", "librmcp_preload.so",
                 fmt::format("not next to the rmcp binary nor at {} (set RMCP_PRELOAD_LIB)", installed.string()),
                 ExitCode::environment};
}

// The one auto decision (patch/auto_profile.hpp), on the facts doctor evaluates.
Result<patch::ProfileEnv> decide_auto(const CommandRequest& request, const Root& root, const Facts& facts,
                                      const patch::ProfileSet& profiles, Diagnostics& diag) {
    auto doctor_facts = facts_to_json(facts);
    kb::merge_libraries(doctor_facts, scan::libraries_facts(root, facts));
    patch::AutoSources sources{request.data_dir / "profiles" / "rules" / "auto.toml", request.data_dir / "patches",
                               request.kb_dir};
    auto decision = patch::choose_auto(profiles, facts, doctor_facts, sources);
    if (!decision) return decision.error();
    for (const auto& n : decision->notes) diag.note(n);
    for (const auto& v : decision->verbose) diag.verbose(v);
    return std::move(decision->env);
}

// The attempts: the user's environment as it is, or the profile ladder climbed from
// --profile (the first rung without one). Profiles and facts only when asked for:
// `rmcp run -- CMD` starts in a few ms (docs/PERFORMANCE.md, "rmcp run").
Result<std::vector<Rung>> plan_attempts(const CommandRequest& request, const Root& root, const patch::UserEnv& user_env,
                                        std::optional<Facts>& facts, Diagnostics& diag) {
    if (request.profile.empty() && request.retries == 0) return std::vector<Rung>{plain_rung(user_env)};
    std::vector<std::string> profile_notes;
    auto profiles = patch::load_profiles_with_user(request.data_dir / "profiles", root,
                                                   process::current_environment_map(), profile_notes);
    if (!profiles) return profiles.error();
    for (const auto& n : profile_notes) diag.note(n);
    facts = detect(root);
    const auto ladder = profiles->ladder();
    if (ladder.empty())
        return Error{"choosing profile", (request.data_dir / "profiles").string(), "no profiles defined",
                     ExitCode::usage};
    PlanRequest plan;
    plan.start = request.profile.empty() ? ladder.front()->name : request.profile;
    if (plan.start == "auto") {
        auto env = decide_auto(request, root, *facts, *profiles, diag);
        if (!env) return env.error();
        plan.start_env = std::move(*env);
    }
    plan.retries = request.retries;
    plan.fallback = request.fallback == "cpu" ? Fallback::cpu : Fallback::none;
    plan.gpu_targets = patch::gpu_targets(*facts);
    plan.user_env = user_env;
    return make_plan(*profiles, plan);
}

Status write_report(const std::string& path, const std::string& text) {
    std::error_code ec;
    const auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) return Error{"creating directory for incident report", parent.string(), ec.message()};
    return write_file_atomic(path, text);
}

// The similar public reports of an incident (docs/run.md, "Incident report"): looked up by
// its error lines in the index of public threads; a lookup that fails is a note.
nlohmann::json similar_reports(const CommandRequest& request, const std::vector<std::string>& lines,
                               Diagnostics& diag) {
    similar::TermCollector terms;
    for (const auto& line : lines)
        if (!terms.add_line(line)) break;
    if (terms.terms().empty()) return nlohmann::json::array();
    auto index =
        similar::ThreadIndex::open(request.data_dir / "threads",
                                   similar::module_paths(request.executable_dir, request.installed_library_dir),
                                   similar::build_tree_index(request.executable_dir));
    auto nearest =
        index ? index->nearest(terms.terms(), 3) : Result<std::vector<similar::SimilarReport>>(index.error());
    if (!nearest) {
        diag.note(fmt::format("no similar public reports: {}", nearest.error().message()));
        return nlohmann::json::array();
    }
    return similar::reports_json(similar::shown(std::move(*nearest), 3));
}

// What to run after an incident (issue 30: a summary ends with the next command): a run that a
// stricter profile saved is run under it from the start; otherwise the fix of the problem the
// summary names first, as explain and doctor name it (patch/next_step.hpp). "" when rmcp knows
// no command.
std::string next_after(const CommandRequest& request, const RunResult& result, bool live) {
    const Attempt& last = result.attempts.back();
    if (result.attempts.size() > 1 && last.end == AttemptEnd::exited && last.exit_status == 0) {
        std::string argv;
        for (const auto& a : request.command) argv += " " + sh_word(a);
        return fmt::format("{} run --profile {} --{}", request.rmcp_command,
                           sh_word(last.rung.profile.empty() ? "default" : last.rung.profile), argv);
    }
    const std::string id = top_entry(result);
    if (id.empty()) return {};
    auto kb = kb::load(request.kb_dir);
    auto patches = patch::load_patches(request.data_dir / "patches");
    if (!kb || !patches) return {};
    const kb::Entry* entry = kb->find(id);
    if (!entry) return {};
    auto step = patch::first_fix_step(*entry, *patches, request.rmcp_command, live);
    return step ? step->next : std::string();
}

// On an incident, or always with --report: the summary on stderr and the JSON report.
// Returns false when the report could not be written (the error is printed).
bool report_incident(const CommandRequest& request, const RunResult& result, const Root& root,
                     std::optional<Facts>& facts, Diagnostics& diag) {
    if (!result.incident() && request.report.empty()) return true;
    ReportInputs inputs;
    inputs.command = request.command;
    inputs.requested_profile = request.profile;
    inputs.log_path = request.log;
    if (!facts) facts = detect(root);
    inputs.facts = facts_to_json(*facts);
    inputs.kernel_log = read_kernel_log_since(result.started);
    if (result.incident()) inputs.similar = similar_reports(request, incident_lines(result, inputs.kernel_log), diag);
    const std::string path = request.report.empty() ? default_report_path(result.started) : request.report;
    for (const auto& line : summary_lines(result)) diag.note(line);
    if (auto written = write_report(path, request.json_text(incident_report(result, inputs))); !written) {
        diag.error(written.error());
        return false;
    }
    if (result.incident()) {
        diag.note(fmt::format("incident report: {}", path));
        if (const auto next = next_after(request, result, root.is_live()); !next.empty())
            diag.note(fmt::format("next: {}", next));
        diag.note(fmt::format("more: {} explain {}", request.rmcp_command, sh_word(path)));
    }
    return true;
}

}  // namespace

Result<CommandOutcome> run_command(const CommandRequest& request, Diagnostics& diag) {
    const auto stall_timeout = parse_seconds("--stall-timeout", request.stall_timeout);
    if (!stall_timeout) return stall_timeout.error();
    const auto kill_grace = parse_seconds("--kill-grace", request.kill_grace);
    if (!kill_grace) return kill_grace.error();
    // --report and --log name files: one that is not a regular file or missing (a device
    // node, a FIFO that would block the open, a symbolic link, "-") is refused before the
    // child runs (util/atomic_file.hpp). --log is appended to, --report replaced atomically.
    for (const auto* file : {&request.report, &request.log})
        if (!file->empty())
            if (auto s = check_output_file(*file); !s) return s.error();
    auto root = request.open_root();
    if (!root) return root.error();
    auto user_env = read_user_env(*root);
    if (!user_env) return user_env.error();

    std::optional<Facts> facts;
    RunOptions options;
    auto plan = plan_attempts(request, *root, *user_env, facts, diag);
    if (!plan) return plan.error();
    options.plan = std::move(*plan);
    if (request.trace_alloc) {
        auto lib = find_preload_library(request);
        if (!lib) return lib.error();
        options.preload_library = *lib;
    }
    if (request.dry_run) return CommandOutcome{0, std::move(options.plan), std::nullopt};
    options.argv = request.command;
    options.terminal = request.pty ? Terminal::pty : Terminal::pipes;
    options.log_path = request.log;
    options.stall_timeout_s = *stall_timeout;
    options.kill_grace_s = *kill_grace;
    options.watcher = kb_watcher_factory(request.kb_dir);

    const RunResult result = supervise(options, diag);
    int exit_code = result.exit_code;
    // The child's output could not be relayed (docs/security.md, "Output"): a child that
    // exited 0 does not make the run a success when what it printed was lost.
    for (const auto& a : result.attempts)
        if (a.stdout_relay_error != 0 && exit_code == 0) {
            diag.error(os_error("relaying the command's output to", "standard output", a.stdout_relay_error));
            exit_code = static_cast<int>(ExitCode::environment);
        }
    // A report that could not be written (a full disk) is an error; the child's own failure,
    // when it failed, is still the exit code (docs/exit-codes.md).
    if (result.attempts.back().end != AttemptEnd::not_started &&
        !report_incident(request, result, *root, facts, diag) && exit_code == 0)
        exit_code = static_cast<int>(ExitCode::environment);
    CommandOutcome outcome{exit_code, std::nullopt, std::nullopt};
    // Only when no attempt ever started: after a retry, stdout already holds a child's output.
    if (result.attempts.size() == 1 && result.attempts.front().end == AttemptEnd::not_started)
        outcome.start_error = result.attempts.front().start_error;
    return outcome;
}

}  // namespace rmcp::run
