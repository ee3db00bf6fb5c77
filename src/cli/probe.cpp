// `rmcp probe`: the convolution suite, one child process per (scenario, configuration)
// forked from the worker's fork server, --bisect over the workaround switches, and
// `rmcp probe report` for a saved result (docs/probe.md).
#include "context.hpp"
#include "json_output.hpp"

#include "detect/detect.hpp"
#include "explain/crash_classifier.hpp"
#include "facts/facts.hpp"
#include "facts/facts_json.hpp"
#include "patch/profile.hpp"
#include "probe/catalogue.hpp"
#include "probe/probe.hpp"
#include "probe/report.hpp"
#include "probe/runner.hpp"
#include "probe/view.hpp"
#include "process/spawn.hpp"
#include "util/atomic_file.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <unistd.h>

namespace rmcp::cli {

namespace {

struct ReportOptions {
    std::string result;
    std::string html;
};

struct ProbeOptions {
    std::string python;
    std::vector<std::string> scenarios;
    bool quick = false;
    bool bisect = false;
    double timeout_s = 300;
    std::string save;
    CLI::Option* save_opt = nullptr;  // --save without FILE: the user's profiles directory
    std::string device = "auto";
    std::string html;
    int repeat = 5;
    int warmup = 2;
    std::string catalogue;
};

std::string getenv_or(const char* name, std::string fallback = "") {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : fallback;
}

// --python, else $RMCP_PYTHON, else the active virtualenv's python, else python3 on PATH:
// the interpreter the user trains with is the one whose PyTorch must be probed.
std::string default_python() {
    if (auto p = getenv_or("RMCP_PYTHON"); !p.empty()) return p;
    if (auto venv = getenv_or("VIRTUAL_ENV"); !venv.empty()) return venv + "/bin/python";
    return "python3";
}

// Switches whose variables come from a profile (the ISA-family override) are resolved for
// this machine's physical GPU targets; where the profile has nothing for them, the switch
// leaves the search space.
std::vector<probe::Switch> usable_switches(Context& ctx, const probe::Catalogue& catalogue) {
    std::vector<probe::Switch> out;
    std::optional<Result<patch::ProfileSet>> profiles;
    std::optional<std::vector<std::string>> targets;
    for (const auto& sw : catalogue.switches) {
        if (sw.profile.empty()) {
            out.push_back(sw);
            continue;
        }
        if (!profiles) profiles = patch::load_profiles(ctx.data_dir() / "profiles");
        if (!*profiles) {
            ctx.diag.warning(fmt::format("switch {} left out: {}", sw.id, profiles->error().message()));
            continue;
        }
        if (!targets) {
            auto root = ctx.open_root();
            targets = root ? patch::gpu_targets(detect(*root)) : std::vector<std::string>{};
        }
        const patch::Profile* p = (**profiles).find(sw.profile);
        if (!p) {
            ctx.diag.warning(fmt::format("switch {} left out: no profile named {}", sw.id, sw.profile));
            continue;
        }
        probe::Switch resolved = sw;
        resolved.env = p->set;
        if (patch::ProfileSet::override_applies(*p, *targets))
            for (const auto& rule : p->gfx_override)
                if (std::find(rule.targets.begin(), rule.targets.end(), targets->front()) != rule.targets.end())
                    resolved.env["HSA_OVERRIDE_GFX_VERSION"] = rule.value;
        if (resolved.env.empty()) {
            ctx.diag.verbose(
                fmt::format("switch {} left out: profile {} changes nothing on this machine", sw.id, sw.profile));
            continue;
        }
        out.push_back(std::move(resolved));
    }
    return out;
}

std::string clock_time(double seconds) {
    const auto s = static_cast<long long>(std::llround(seconds));
    if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
    return fmt::format("{}:{:02}", s / 60, s % 60);
}

void print_progress(Context& ctx, const probe::ProgressEvent& e) {
    if (ctx.options.quiet) return;
    std::string counter = e.total > 0 ? fmt::format("[{}/{}", e.index, e.total) : fmt::format("[{}", e.index);
    if (e.eta_s && e.index < e.total) counter += ", ETA " + clock_time(*e.eta_s);
    counter += "]";
    const std::string config = e.phase == "baseline" ? "" : fmt::format("{} {{{}}} ", e.phase, e.configuration->key());
    fmt::print(stderr, "{} {}{} {} {} {} … {}\n", counter, config, e.scenario->id,
               probe::direction_tag(e.scenario->direction), probe::dtype_tag(e.scenario->dtype), e.scenario->op,
               probe::describe(*e.result));
    std::fflush(stderr);
}

std::string fault_map_path_for(const std::filesystem::path& profile) {
    std::filesystem::path p = profile;
    p.replace_extension(".faultmap.json");
    return p.string();
}

// An output file's directory must exist and be writable before the suite runs: an hour of
// probing must not end in "No such file or directory".
Status check_output_path(const std::string& option, const std::string& file) {
    const std::filesystem::path path = std::filesystem::absolute(file).lexically_normal();
    const std::filesystem::path dir = path.parent_path();
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        return Error{"checking " + option, file, "is a directory; name a file", ExitCode::usage};
    if (!std::filesystem::is_directory(dir, ec))
        return Error{"checking " + option, file, fmt::format("directory {} does not exist", dir.string()),
                     ExitCode::usage};
    if (::access(dir.c_str(), W_OK) != 0)
        return Error{"checking " + option, file, fmt::format("directory {}: {}", dir.string(), std::strerror(errno)),
                     ExitCode::environment};
    return ok_status();
}

std::string torch_build(const probe::Handshake& h) {
    if (h.gpu_build == "hip") return "ROCm build";
    if (h.gpu_build == "cuda") return "CUDA build";
    return "CPU-only build";
}

// --device auto: the GPU when the interpreter's torch sees one, else the CPU (whose fault map
// is empty by construction: PyTorch's CPU convolutions are not what fails in the field).
Result<std::string> choose_device(Context& ctx, probe::ZygoteRunner& runner, const probe::Handshake& hs,
                                  const std::string& asked, const std::string& python) {
    if (asked == "cpu") return asked;
    std::optional<probe::DeviceQuery> query;
    if (!hs.gpu_build.empty()) {
        auto q = runner.query_device();
        if (!q) return q.error();
        query = *q;
    }
    const bool seen = query && query->available;
    if (asked != "auto") {
        if (!seen)
            return Error{"probing " + asked + " with", python,
                         fmt::format("torch {} sees no GPU: {}", hs.torch_version,
                                     query ? query->message : "this torch is a " + torch_build(hs)),
                         ExitCode::environment};
        return asked;
    }
    if (seen) {
        ctx.diag.note(fmt::format("torch sees {} GPU{}: {}{}; probing cuda", query->count, query->count == 1 ? "" : "s",
                                  query->name, query->gfx_target.empty() ? "" : " (" + query->gfx_target + ")"));
        return std::string("cuda");
    }
    ctx.diag.warning(fmt::format("torch {} sees no GPU ({}): probing the CPU, so the fault map will be empty",
                                 hs.torch_version, query ? query->message : "a " + torch_build(hs)));
    return std::string("cpu");
}

// Variables each child reports as it saw them: every switch's, and the import-time ones.
std::vector<std::string> reported_variables(const probe::Catalogue& catalogue,
                                            const std::vector<probe::Switch>& switches) {
    std::set<std::string> names(catalogue.import_time.begin(), catalogue.import_time.end());
    for (const auto& sw : switches) {
        for (const auto& [k, v] : sw.env) names.insert(k);
        for (const auto& alt : sw.alternatives)
            for (const auto& [k, v] : alt) names.insert(k);
    }
    return {names.begin(), names.end()};
}

Status write_html(Context& ctx, const nlohmann::json& result, const std::string& file, const std::string& source) {
    auto page = probe::render_html(result, source);
    if (!page) return page.error();
    const std::string path = std::filesystem::absolute(file).lexically_normal().string();
    if (auto s = write_file_atomic(path, *page); !s) return s;
    ctx.diag.note(fmt::format("wrote {}", path));
    return ok_status();
}

// JSON as is; text as the grid on a terminal, as a list elsewhere (pipes, files, tests).
Status print_result(Context& ctx, OutputFormat format, const nlohmann::json& result) {
    if (format == OutputFormat::json) {
        fmt::print("{}", json_output(ctx, result));
        return ok_status();
    }
    const auto layout = ::isatty(STDOUT_FILENO) == 1 ? probe::TextLayout::grid : probe::TextLayout::list;
    auto text = probe::render_summary_text(result, ctx.style(), layout);
    if (!text) return text.error();
    fmt::print("{}", *text);
    return ok_status();
}

int run_probe(Context& ctx, ProbeOptions o) {
    // `--save` alone writes where `rmcp env/run --profile probed` find it by name
    // (patch::user_profiles_dir; docs/patches.md, "User profiles").
    if (o.save_opt && o.save_opt->count() > 0 && o.save.empty()) {
        const std::filesystem::path dir = patch::user_profiles_dir(process::current_environment_map());
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        if (ec)
            return fail(ctx,
                        Error{"creating the profiles directory", dir.string(), ec.message(), ExitCode::environment});
        o.save = (dir / "probed.toml").string();
    }
    const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
    if (!format) return fail(ctx, format.error());
    if (o.device != "auto" && o.device != "cpu" && o.device.rfind("cuda", 0) != 0)
        return fail(ctx, Error{"choosing device", o.device, "use auto, cpu or cuda (ROCm builds call the GPU cuda)",
                               ExitCode::usage});
    if (!(o.timeout_s > 0 && o.timeout_s <= 30 * 24 * 3600.0))
        return fail(ctx, Error{"setting --timeout", "", "must be a positive number of seconds, at most 30 days",
                               ExitCode::usage});
    for (const auto& [option, file] : {std::pair{"--save", o.save}, std::pair{"--html", o.html}})
        if (!file.empty())
            if (auto s = check_output_path(option, file); !s) return fail(ctx, s.error());

    const std::filesystem::path catalogue_path =
        o.catalogue.empty() ? ctx.data_dir() / "probe" / "catalogue.toml" : std::filesystem::path(o.catalogue);
    auto catalogue = probe::load_catalogue(catalogue_path);
    if (!catalogue) return fail(ctx, catalogue.error());
    auto scenarios = probe::select_scenarios(*catalogue, o.scenarios, o.quick);
    if (!scenarios) return fail(ctx, scenarios.error());

    auto python =
        probe::resolve_interpreter(o.python.empty() ? default_python() : o.python, getenv_or("PATH", "/usr/bin:/bin"));
    if (!python) return fail(ctx, python.error());

    std::vector<probe::Switch> switches;
    if (o.bisect) {
        switches = usable_switches(ctx, *catalogue);
    } else {
        for (const auto& sw : catalogue->switches)
            if (sw.profile.empty()) switches.push_back(sw);
    }

    probe::WorkerOptions wo;
    wo.python = *python;
    wo.python_path = std::filesystem::absolute(ctx.data_dir() / "python").lexically_normal().string();
    wo.repeat = o.repeat;
    wo.warmup = o.warmup;
    wo.timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
    wo.base_env = process::current_environment();
    // Crashes are named by the knowledge base's log signatures; without a usable kb the exit
    // signal and the telling stderr line remain.
    wo.classify = explain::first_entry_classifier(ctx.kb_dir(), [&ctx](const std::string& why) {
        ctx.diag.verbose(fmt::format("crashes not matched against the knowledge base: {}", why));
    });
    wo.import_time = catalogue->import_time;
    wo.report_env = reported_variables(*catalogue, switches);
    wo.notice = [&ctx](const std::string& message) { ctx.diag.warning(message); };
    probe::ZygoteRunner runner(wo);

    // The handshake: is it Python, is torch there (docs/probe.md, "The fork server").
    auto hs = runner.start();
    if (!hs) return fail(ctx, hs.error());
    ctx.diag.note(fmt::format("probing {}: Python {}, torch {} ({})", *python, hs->python_version, hs->torch_version,
                              torch_build(*hs)));
    // The fork server must fork from a process without a device runtime or a thread pool
    // (docs/probe.md, "The fork server"); a torch whose import starts either is named here.
    if (hs->cuda_initialized || !hs->device_calls.empty() || hs->threads > 1)
        ctx.diag.warning(fmt::format("after import torch the fork server has {} thread{}{}{}: children forked from it "
                                     "may inherit a broken runtime or thread pool",
                                     hs->threads, hs->threads == 1 ? "" : "s",
                                     hs->cuda_initialized ? ", an initialised GPU runtime" : "",
                                     hs->device_calls.empty() ? "" : ", device calls made"));
    auto device_name = choose_device(ctx, runner, *hs, o.device, *python);
    if (!device_name) return fail(ctx, device_name.error());
    runner.set_device(*device_name);

    probe::Probe prober(runner, *scenarios, [&](const probe::ProgressEvent& e) { print_progress(ctx, e); });
    if (auto s = prober.run_baseline(); !s) return fail(ctx, s.error());
    if (o.bisect)
        if (auto s = prober.bisect(switches); !s) return fail(ctx, s.error());
    const probe::ProbeRun run = prober.result();
    const probe::DeviceInfo device = probe::device_info(run, *device_name, *python);
    const bool passed = probe::passed(run);

    nlohmann::json result = probe::probe_to_json(run, device);
    result["python_version"] = hs->python_version;
    result["torch_build"] = hs->gpu_build.empty() ? "cpu" : hs->gpu_build == "hip" ? "rocm" : hs->gpu_build;
    result["fork_servers"] = runner.servers_started();
    result["fork_server_restarts"] = runner.restarts();
    result["profile"] = probe::chosen_profile_json(run, switches);
    if (auto root = ctx.open_root()) result["machine"] = probe::machine_summary(facts_to_json(detect(*root)));

    // Files first (the JSON names what was saved), the result printed in any case; a write
    // that fails is reported after it, so a long run's result is never lost.
    int exit_code = passed ? 0 : static_cast<int>(ExitCode::findings);
    std::optional<Error> write_error;
    if (!o.save.empty()) {
        const std::filesystem::path profile_path = std::filesystem::absolute(o.save).lexically_normal();
        const std::string map_path = fault_map_path_for(profile_path);
        if (auto s = write_file_atomic(map_path, json_output(ctx, probe::fault_map_json(run, run.baseline, device)));
            !s) {
            write_error = s.error();
        } else if (passed) {
            const auto& winner = probe::winning_configuration(run);
            if (auto w = write_file_atomic(profile_path.string(),
                                           probe::profile_toml(run, winner, switches, device,
                                                               profile_path.stem().string(), map_path));
                !w) {
                write_error = w.error();
            } else {
                result["profile"]["saved_to"] = profile_path.string();
                result["profile"]["fault_map"] = map_path;
                ctx.diag.note(fmt::format("saved profile {} and fault map {}", profile_path.string(), map_path));
            }
        } else {
            // A profile is a configuration under which every scenario passed; there is none.
            // The fault map still says what fails by default (rmcp.torch routes around it).
            ctx.diag.error(
                Error{"saving profile", profile_path.string(),
                      fmt::format("no configuration passed every scenario{}; no profile written "
                                  "(the default configuration's failures are in {})",
                                  o.bisect ? "" : " (the default failed; --bisect searches the switches)", map_path),
                      ExitCode::findings});
        }
    }
    if (!o.html.empty() && !write_error)
        if (auto s = write_html(ctx, result, o.html, "this run"); !s) write_error = s.error();

    if (auto s = print_result(ctx, *format, result); !s) return fail(ctx, s.error());
    if (write_error) return fail(ctx, *write_error);
    return exit_code;
}

// `rmcp probe report RESULT.json [--html FILE]`: a saved result as text (the grid on a
// terminal) and, with --html, as one page.
int run_report(Context& ctx, const ReportOptions& o) {
    const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
    if (!format) return fail(ctx, format.error());
    if (!o.html.empty())
        if (auto s = check_output_path("--html", o.html); !s) return fail(ctx, s.error());
    auto result = probe::load_result(o.result);
    if (!result) return fail(ctx, result.error());
    if (auto grid = probe::grid_from_json(*result); !grid) {
        Error e = grid.error();
        e.path = o.result + ": " + e.path;
        return fail(ctx, e);
    }
    if (!o.html.empty())
        if (auto s = write_html(ctx, *result, o.html, o.result); !s) return fail(ctx, s.error());
    if (auto s = print_result(ctx, *format, *result); !s) return fail(ctx, s.error());
    return 0;
}

}  // namespace

void add_probe_command(CLI::App& app, Context& ctx, Action& action) {
    auto opts = std::make_shared<ProbeOptions>();
    auto* cmd = app.add_subcommand("probe", "Run the GPU convolution suite, one child per scenario; --bisect finds "
                                            "the fastest configuration that does not fail");
    cmd->add_option("--python", opts->python,
                    "Interpreter whose PyTorch is probed (default: $RMCP_PYTHON, else $VIRTUAL_ENV/bin/python, "
                    "else python3 on PATH)")
        ->type_name("PY");
    cmd->add_option("--scenario", opts->scenarios, "Scenario id or family name (repeatable; default: all)")
        ->type_name("NAME");
    cmd->add_flag("--quick", opts->quick, "Only the quick subset (seconds)");
    cmd->add_flag("--bisect", opts->bisect, "Search the workaround switches for the fastest passing configuration");
    cmd->add_option("--timeout", opts->timeout_s, "Seconds before a child counts as hung (default 300)")
        ->type_name("S");
    opts->save_opt = cmd->add_option("--save", opts->save,
                                     "Write the winning profile to FILE (TOML) and the fault map to FILE's stem + "
                                     ".faultmap.json; without FILE: $XDG_CONFIG_HOME/rmcp/profiles/probed.toml, "
                                     "found by `rmcp env/run --profile probed`")
                         ->expected(0, 1)
                         ->type_name("[FILE]");
    cmd->add_option("--device", opts->device,
                    "auto, cpu or cuda (default auto: cuda when the interpreter's torch sees a GPU, else cpu)")
        ->type_name("DEV");
    cmd->add_option("--repeat", opts->repeat, "Timed calls per scenario; the median counts (default 5)")
        ->check(CLI::Range(1, 1000))
        ->type_name("N");
    cmd->add_option("--warmup", opts->warmup, "Untimed calls before timing (default 2)")
        ->check(CLI::Range(0, 1000))
        ->type_name("N");
    cmd->add_option("--catalogue", opts->catalogue, "Scenario catalogue (default: the shipped probe/catalogue.toml)")
        ->type_name("FILE");
    cmd->add_option("--html", opts->html,
                    "Also write the result as one self-contained HTML page: the scenario x configuration grid, the "
                    "bisect path, the chosen profile and the machine's facts")
        ->type_name("FILE");

    auto ropts = std::make_shared<ReportOptions>();
    auto* report = cmd->add_subcommand("report", "Show a saved result (rmcp probe --format json > FILE) as text, "
                                                 "or as one HTML page with --html");
    report->add_option("result", ropts->result, "The saved result (JSON)")->required()->type_name("RESULT.json");
    report->add_option("--html", ropts->html, "Write the page to FILE")->type_name("FILE");
    report->callback([&ctx, &action, ropts] { action = [&ctx, ropts] { return run_report(ctx, *ropts); }; });
    cmd->footer("Exit: 0 every scenario passes (with --bisect: a passing configuration was found), 1 failures "
                "remain (no profile is saved then), 2 usage (also: --save into a missing directory), 3 the "
                "interpreter is missing, does not answer the handshake as Python, cannot import torch, or "
                "--device cuda finds no GPU. See docs/probe.md.");
    // CLI11 runs the parent's callback after a subcommand's: `probe report` keeps its action.
    cmd->callback([&ctx, &action, opts, report] {
        if (report->parsed()) return;
        action = [&ctx, opts] { return run_probe(ctx, *opts); };
    });
}

}  // namespace rmcp::cli
