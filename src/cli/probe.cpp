// `rmcp probe`: the convolution suite, one child process per (scenario, configuration),
// and --bisect over the workaround switches (docs/probe.md).
#include "context.hpp"
#include "json_output.hpp"

#include "detect/detect.hpp"
#include "explain/matcher.hpp"
#include "kb/kb.hpp"
#include "facts/facts.hpp"
#include "patch/profile.hpp"
#include "probe/catalogue.hpp"
#include "probe/probe.hpp"
#include "probe/report.hpp"
#include "probe/runner.hpp"
#include "util/atomic_file.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

extern char** environ;

namespace rmcp::cli {

namespace {

struct ProbeOptions {
    std::string python;
    std::vector<std::string> scenarios;
    bool quick = false;
    bool bisect = false;
    double timeout_s = 300;
    std::string save;
    std::string device = "cpu";
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
            ctx.diag.verbose(fmt::format("switch {} left out: profile {} changes nothing on this machine", sw.id,
                                         sw.profile));
            continue;
        }
        out.push_back(std::move(resolved));
    }
    return out;
}

// Crashes are classified by the knowledge base's log signatures (the explain matcher):
// the first entry whose signature matches the child's stderr names the failure. Without
// a loadable knowledge base the exit signal and the telling stderr line remain.
probe::CrashClassifier crash_classifier(Context& ctx) {
    auto kb = kb::load(ctx.kb_dir());
    if (!kb) {
        ctx.diag.verbose(fmt::format("crashes not matched against the knowledge base: {}", kb.error().message()));
        return {};
    }
    auto set =
        explain::SignatureSet::compile(kb->entries, explain::Reporting::first_only, explain::ContextWords::skip);
    if (!set) {
        ctx.diag.verbose(fmt::format("crashes not matched against the knowledge base: {}", set.error().message()));
        return {};
    }
    return [set = *set](std::string_view text) {
        std::string entry;
        explain::LogScanner scanner(set, [&](const explain::Match& m) {
            if (entry.empty()) entry = set->signatures()[m.signature].entry_id;
        });
        if (scanner.feed(text)) (void)scanner.finish();
        return entry;
    };
}

void print_progress(Context& ctx, const probe::ProgressEvent& e) {
    if (ctx.options.quiet) return;
    const std::string counter = e.total > 0 ? fmt::format("[{}/{}]", e.index, e.total) : fmt::format("[{}]", e.index);
    const std::string config =
        e.phase == "baseline" ? "" : fmt::format("{} {{{}}} ", e.phase, e.configuration->key());
    fmt::print(stderr, "{} {}{} {} {} {} … {}\n", counter, config, e.scenario->id, probe::direction_tag(e.scenario->direction),
               probe::dtype_tag(e.scenario->dtype), e.scenario->op, probe::describe(*e.result));
    std::fflush(stderr);
}

std::string fault_map_path_for(const std::filesystem::path& profile) {
    std::filesystem::path p = profile;
    p.replace_extension(".faultmap.json");
    return p.string();
}

int run_probe(Context& ctx, const ProbeOptions& o) {
    const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
    if (!format) return fail(ctx, format.error());
    if (o.device != "cpu" && o.device.rfind("cuda", 0) != 0)
        return fail(ctx, Error{"choosing device", o.device, "use cpu or cuda (ROCm builds call the GPU cuda)",
                               ExitCode::usage});
    if (o.timeout_s <= 0) return fail(ctx, Error{"setting --timeout", "", "must be positive", ExitCode::usage});

    const std::filesystem::path catalogue_path =
        o.catalogue.empty() ? ctx.data_dir() / "probe" / "catalogue.toml" : std::filesystem::path(o.catalogue);
    auto catalogue = probe::load_catalogue(catalogue_path);
    if (!catalogue) return fail(ctx, catalogue.error());
    auto scenarios = probe::select_scenarios(*catalogue, o.scenarios, o.quick);
    if (!scenarios) return fail(ctx, scenarios.error());

    auto python = probe::resolve_interpreter(o.python.empty() ? default_python() : o.python, getenv_or("PATH", "/usr/bin:/bin"));
    if (!python) return fail(ctx, python.error());

    probe::WorkerOptions wo;
    wo.python = *python;
    wo.python_path = std::filesystem::absolute(ctx.data_dir() / "python").lexically_normal().string();
    wo.device = o.device;
    wo.repeat = o.repeat;
    wo.warmup = o.warmup;
    wo.timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
    for (char** e = environ; e && *e; ++e) wo.base_env.emplace_back(*e);
    wo.classify = crash_classifier(ctx);
    probe::WorkerRunner runner(wo);

    probe::Probe prober(runner, *scenarios, [&](const probe::ProgressEvent& e) { print_progress(ctx, e); });
    if (auto s = prober.run_baseline(); !s) return fail(ctx, s.error());
    std::vector<probe::Switch> switches;
    if (o.bisect) {
        switches = usable_switches(ctx, *catalogue);
        if (auto s = prober.bisect(switches); !s) return fail(ctx, s.error());
    }
    const probe::ProbeRun run = prober.result();
    const probe::DeviceInfo device = probe::device_info(run, o.device, *python);

    if (!o.save.empty()) {
        const std::filesystem::path profile_path = std::filesystem::absolute(o.save).lexically_normal();
        const std::string map_path = fault_map_path_for(profile_path);
        const auto& winner = probe::winning_configuration(run);
        const std::string name = profile_path.stem().string();
        if (auto s = write_file_atomic(map_path, json_output(ctx, probe::fault_map_json(run, run.baseline, device))); !s)
            return fail(ctx, s.error());
        if (auto s = write_file_atomic(profile_path.string(),
                                       probe::profile_toml(run, winner, switches, device, name, map_path));
            !s)
            return fail(ctx, s.error());
        ctx.diag.note(fmt::format("saved profile {} and fault map {}", profile_path.string(), map_path));
    }

    if (*format == OutputFormat::json)
        fmt::print("{}", json_output(ctx, probe::probe_to_json(run, device)));
    else
        fmt::print("{}", probe::render_text(run, device));

    std::vector<std::string> all;
    for (const auto& s : run.scenarios) all.push_back(s.id);
    const bool passed = run.bisect ? run.bisect->found : run.baseline.passes(all);
    return passed ? 0 : static_cast<int>(ExitCode::findings);
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
    cmd->add_option("--save", opts->save,
                    "Write the winning profile to FILE (TOML) and the fault map to FILE's stem + .faultmap.json")
        ->type_name("FILE");
    cmd->add_option("--device", opts->device, "cpu or cuda (default cpu)")->type_name("DEV");
    cmd->add_option("--repeat", opts->repeat, "Timed calls per scenario; the median counts (default 5)")
        ->check(CLI::Range(1, 1000))
        ->type_name("N");
    cmd->add_option("--warmup", opts->warmup, "Untimed calls before timing (default 2)")
        ->check(CLI::Range(0, 1000))
        ->type_name("N");
    cmd->add_option("--catalogue", opts->catalogue, "Scenario catalogue (default: the shipped probe/catalogue.toml)")
        ->type_name("FILE");
    cmd->footer("Exit: 0 every scenario passes (with --bisect: a passing configuration was found), 1 failures "
                "remain, 2 usage, 3 the interpreter is missing or cannot import torch. See docs/probe.md.");
    cmd->callback([&ctx, &action, opts] { action = [&ctx, opts] { return run_probe(ctx, *opts); }; });
}

}  // namespace rmcp::cli
