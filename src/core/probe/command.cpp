#include "probe/command.hpp"

#include "detect/detect.hpp"
#include "explain/crash_classifier.hpp"
#include "facts/facts_json.hpp"
#include "facts/torch_python.hpp"
#include "patch/profile.hpp"
#include "probe/catalogue.hpp"
#include "probe/report.hpp"
#include "probe/runner.hpp"
#include "render/probe_view.hpp"
#include "process/spawn.hpp"
#include "util/atomic_file.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <unistd.h>

namespace rmcp::probe {

namespace {

std::string getenv_or(const char* name, std::string fallback = "") {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : fallback;
}

// --python, else $RMCP_PYTHON, else the active virtualenv's python: the interpreter the user
// trains with is the one whose PyTorch must be probed. "" when neither names one.
std::string python_from_environment() {
    if (auto p = getenv_or("RMCP_PYTHON"); !p.empty()) return p;
    if (auto venv = getenv_or("VIRTUAL_ENV"); !venv.empty()) return venv + "/bin/python";
    return {};
}

// The machine's facts, detected once and only when a step needs them.
class MachineFacts {
public:
    explicit MachineFacts(const Root* root) : m_root(root) {}
    [[nodiscard]] bool known() const { return m_root != nullptr; }
    [[nodiscard]] bool live() const { return m_root != nullptr && m_root->is_live(); }
    const Facts& get() {
        if (!m_facts) m_facts = detect(*m_root);
        return *m_facts;
    }

private:
    const Root* m_root;
    std::optional<Facts> m_facts;
};

// The PyTorch detect found on this machine with an interpreter that runs here: a ROCm build
// first, then any (newcomer review, finding 6: `python3` on PATH was pyenv's, without torch,
// while detect had found torch for /usr/bin/python3). nullopt under --root (a snapshot's
// interpreters do not run here) or when none is found.
struct DetectedTorch {
    std::string python;
    std::string version;
    std::string path;
};
std::optional<DetectedTorch> detected_torch(MachineFacts& machine) {
    if (!machine.live()) return std::nullopt;
    std::optional<DetectedTorch> any;
    for (const auto& t : machine.get().torch) {
        const std::string python = torch_python(t.path, t.origin);
        if (python.empty() || ::access(python.c_str(), X_OK) != 0) continue;
        DetectedTorch d{python, t.version.value_or("(version unknown)"), t.path};
        if (t.hip_version.is_known()) return d;
        if (!any) any = std::move(d);
    }
    return any;
}

// `--save` alone writes where `rmcp env/run --profile probed` find it by name
// (patch::user_profiles_dir; docs/patches.md, "User profiles").
Status resolve_default_save(ProbeRequest& request) {
    if (!request.save_to_default || !request.save.empty()) return ok_status();
    const std::filesystem::path dir = patch::user_profiles_dir(process::current_environment_map());
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return Error{"creating the profiles directory", dir.string(), ec.message(), ExitCode::environment};
    request.save = (dir / "probed.toml").string();
    return ok_status();
}

Status check_request(const ProbeRequest& request) {
    if (request.device != "auto" && request.device != "cpu" && request.device.rfind("cuda", 0) != 0)
        return Error{"choosing device", request.device, "use auto, cpu or cuda (ROCm builds call the GPU cuda)",
                     ExitCode::usage};
    if (!(request.timeout_s > 0 && request.timeout_s <= 30 * 24 * 3600.0))
        return Error{"setting --timeout", "", "must be a positive number of seconds, at most 30 days", ExitCode::usage};
    for (const auto& [option, file] : {std::pair{"--save", request.save}, std::pair{"--html", request.html}})
        if (!file.empty())
            if (auto s = check_output_path(option, file); !s) return s;
    return ok_status();
}

// Switches whose variables come from a profile (the ISA-family override) are resolved for
// this machine's physical GPU targets; where the profile has nothing for them, the switch
// leaves the search space.
std::vector<Switch> usable_switches(const ProbeRequest& request, const Catalogue& catalogue, MachineFacts& machine,
                                    Diagnostics& diag) {
    std::vector<Switch> out;
    std::optional<Result<patch::ProfileSet>> profiles;
    std::optional<std::vector<std::string>> targets;
    for (const auto& sw : catalogue.switches) {
        if (sw.profile.empty()) {
            out.push_back(sw);
            continue;
        }
        if (!profiles) profiles = patch::load_profiles(request.data_dir / "profiles");
        if (!*profiles) {
            diag.warning(fmt::format("switch {} left out: {}", sw.id, profiles->error().message()));
            continue;
        }
        if (!targets) targets = machine.known() ? patch::gpu_targets(machine.get()) : std::vector<std::string>{};
        const patch::Profile* p = (**profiles).find(sw.profile);
        if (!p) {
            diag.warning(fmt::format("switch {} left out: no profile named {}", sw.id, sw.profile));
            continue;
        }
        Switch resolved = sw;
        resolved.env = p->set;
        if (patch::ProfileSet::override_applies(*p, *targets))
            for (const auto& rule : p->gfx_override)
                if (std::find(rule.targets.begin(), rule.targets.end(), targets->front()) != rule.targets.end())
                    resolved.env["HSA_OVERRIDE_GFX_VERSION"] = rule.value;
        if (resolved.env.empty()) {
            diag.verbose(
                fmt::format("switch {} left out: profile {} changes nothing on this machine", sw.id, sw.profile));
            continue;
        }
        out.push_back(std::move(resolved));
    }
    return out;
}

// Without --bisect only the switches that need no profile are listed (their variables are
// still reported by each child).
std::vector<Switch> chosen_switches(const ProbeRequest& request, const Catalogue& catalogue, MachineFacts& machine,
                                    Diagnostics& diag) {
    if (request.bisect) return usable_switches(request, catalogue, machine, diag);
    std::vector<Switch> switches;
    for (const auto& sw : catalogue.switches)
        if (sw.profile.empty()) switches.push_back(sw);
    return switches;
}

// Variables each child reports as it saw them: every switch's, and the import-time ones.
std::vector<std::string> reported_variables(const Catalogue& catalogue, const std::vector<Switch>& switches) {
    std::set<std::string> names(catalogue.import_time.begin(), catalogue.import_time.end());
    for (const auto& sw : switches) {
        for (const auto& [k, v] : sw.env) names.insert(k);
        for (const auto& alt : sw.alternatives)
            for (const auto& [k, v] : alt) names.insert(k);
    }
    return {names.begin(), names.end()};
}

WorkerOptions worker_options(const ProbeRequest& request, const std::string& python, const Catalogue& catalogue,
                             const std::vector<Switch>& switches, Diagnostics& diag) {
    WorkerOptions wo;
    wo.python = python;
    wo.python_path = std::filesystem::absolute(request.data_dir / "python").lexically_normal().string();
    wo.repeat = request.repeat;
    wo.warmup = request.warmup;
    wo.timeout = std::chrono::milliseconds(static_cast<long long>(request.timeout_s * 1000));
    wo.base_env = process::current_environment();
    // Crashes are named by the knowledge base's log signatures; without a usable kb the exit
    // signal and the telling stderr line remain.
    wo.classify = explain::first_entry_classifier(request.kb_dir, [&diag](const std::string& why) {
        diag.verbose(fmt::format("crashes not matched against the knowledge base: {}", why));
    });
    wo.import_time = catalogue.import_time;
    wo.report_env = reported_variables(catalogue, switches);
    wo.notice = [&diag](const std::string& message) { diag.warning(message); };
    return wo;
}

std::string torch_build(const Handshake& h) {
    if (h.gpu_build == "hip") return "ROCm build";
    if (h.gpu_build == "cuda") return "CUDA build";
    return "CPU-only build";
}

// The handshake: is it Python, is torch there (docs/probe.md, "The fork server").
Result<Handshake> start_fork_server(ZygoteRunner& runner, const std::string& python, Diagnostics& diag) {
    auto hs = runner.start();
    if (!hs) return hs.error();
    diag.note(fmt::format("probing {}: Python {}, torch {} ({})", python, hs->python_version, hs->torch_version,
                          torch_build(*hs)));
    // The fork server must fork from a process without a device runtime or a thread pool
    // (docs/probe.md, "The fork server"); a torch whose import starts either is named here.
    if (hs->cuda_initialized || !hs->device_calls.empty() || hs->threads > 1)
        diag.warning(fmt::format("after import torch the fork server has {} thread{}{}{}: children forked from it "
                                 "may inherit a broken runtime or thread pool",
                                 hs->threads, hs->threads == 1 ? "" : "s",
                                 hs->cuda_initialized ? ", an initialised GPU runtime" : "",
                                 hs->device_calls.empty() ? "" : ", device calls made"));
    return hs;
}

// --device auto: the GPU when the interpreter's torch sees one, else the CPU (whose fault map
// is empty by construction: PyTorch's CPU convolutions are not what fails in the field).
Result<std::string> choose_device(ZygoteRunner& runner, const Handshake& hs, const std::string& asked,
                                  const std::string& python, Diagnostics& diag) {
    if (asked == "cpu") return asked;
    std::optional<DeviceQuery> query;
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
        diag.note(fmt::format("torch sees {} GPU{}: {}{}; probing cuda", query->count, query->count == 1 ? "" : "s",
                              query->name, query->gfx_target.empty() ? "" : " (" + query->gfx_target + ")"));
        return std::string("cuda");
    }
    diag.warning(fmt::format("torch {} sees no GPU ({}): probing the CPU, so the fault map will be empty",
                             hs.torch_version, query ? query->message : "a " + torch_build(hs)));
    return std::string("cpu");
}

nlohmann::json result_document(const ProbeRun& run, const DeviceInfo& device, const Handshake& hs,
                               const ZygoteRunner& runner, const std::vector<Switch>& switches, MachineFacts& machine) {
    nlohmann::json result = probe_to_json(run, device);
    result["python_version"] = hs.python_version;
    result["torch_build"] = hs.gpu_build.empty() ? "cpu" : hs.gpu_build == "hip" ? "rocm" : hs.gpu_build;
    result["fork_servers"] = runner.servers_started();
    result["fork_server_restarts"] = runner.restarts();
    result["profile"] = chosen_profile_json(run, switches);
    if (machine.known()) result["machine"] = machine_summary(facts_to_json(machine.get()));
    return result;
}

std::string fault_map_path_for(const std::filesystem::path& profile) {
    std::filesystem::path p = profile;
    p.replace_extension(".faultmap.json");
    return p.string();
}

// The fault map always; the profile only when a configuration passed every scenario (the
// fault map still says what fails by default: rmcp.torch routes around it).
std::optional<Error> save_profile(const ProbeRequest& request, const ProbeRun& run, const DeviceInfo& device,
                                  const std::vector<Switch>& switches, nlohmann::json& result, Diagnostics& diag) {
    const std::filesystem::path profile_path = std::filesystem::absolute(request.save).lexically_normal();
    const std::string map_path = fault_map_path_for(profile_path);
    if (auto s = write_file_atomic(map_path, request.json_text(fault_map_json(run, run.baseline, device))); !s)
        return s.error();
    if (!passed(run)) {
        diag.error(
            Error{"saving profile", profile_path.string(),
                  fmt::format("no configuration passed every scenario{}; no profile written "
                              "(the default configuration's failures are in {})",
                              request.bisect ? "" : " (the default failed; --bisect searches the switches)", map_path),
                  ExitCode::findings});
        return std::nullopt;
    }
    const auto& winner = winning_configuration(run);
    if (auto w = write_file_atomic(profile_path.string(),
                                   profile_toml(run, winner, switches, device, profile_path.stem().string(), map_path));
        !w)
        return w.error();
    result["profile"]["saved_to"] = profile_path.string();
    result["profile"]["fault_map"] = map_path;
    diag.note(fmt::format("saved profile {} and fault map {}", profile_path.string(), map_path));
    return std::nullopt;
}

}  // namespace

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
    // The one rule for output files (util/atomic_file.hpp), before the run rather than after
    // it: "-" and a path that is not a regular file (a device node, a FIFO, a symbolic link)
    // are refused; --save also writes FILE's .faultmap.json.
    for (const auto& each :
         option == "--save" ? std::vector<std::string>{file, fault_map_path_for(file)} : std::vector<std::string>{file})
        if (auto s = check_output_file(each); !s) {
            Error e = s.error();
            e.doing = "checking " + option;
            return e;
        }
    return ok_status();
}

Result<ProbeOutcome> run_probe(ProbeRequest request, Diagnostics& diag) {
    if (auto s = resolve_default_save(request); !s) return s.error();
    if (auto s = check_request(request); !s) return s.error();

    const std::filesystem::path catalogue_path = request.catalogue.empty()
                                                     ? request.data_dir / "probe" / "catalogue.toml"
                                                     : std::filesystem::path(request.catalogue);
    auto catalogue = load_catalogue(catalogue_path);
    if (!catalogue) return catalogue.error();
    auto scenarios = select_scenarios(*catalogue, request.scenarios, request.quick);
    if (!scenarios) return scenarios.error();
    MachineFacts machine(request.root);
    const auto detected = detected_torch(machine);
    std::string asked = request.python.empty() ? python_from_environment() : request.python;
    if (asked.empty()) {
        if (detected) {
            asked = detected->python;
            diag.note(fmt::format("probing {}: detect found PyTorch {} for it in {} (--python chooses another)",
                                  detected->python, detected->version, detected->path));
        } else {
            asked = "python3";
        }
    }
    // A failure to start the interpreter or to import torch names the one detect found.
    const auto with_hint = [&](Error e) {
        if (detected && detected->python != asked)
            e.cause += fmt::format("; detect found PyTorch {} for {}: try --python {}", detected->version,
                                   detected->python, detected->python);
        return e;
    };
    auto python = resolve_interpreter(asked, getenv_or("PATH", "/usr/bin:/bin"));
    if (!python) return with_hint(python.error());

    const std::vector<Switch> switches = chosen_switches(request, *catalogue, machine, diag);
    ZygoteRunner runner(worker_options(request, *python, *catalogue, switches, diag));
    auto hs = start_fork_server(runner, *python, diag);
    if (!hs) return with_hint(hs.error());
    auto device_name = choose_device(runner, *hs, request.device, *python, diag);
    if (!device_name) return device_name.error();
    runner.set_device(*device_name);
    // A profile measured on the CPU would be read as the GPU's (newcomer review, finding 5):
    // refused before any scenario runs, unless asked for.
    if (*device_name == "cpu" && !request.save.empty() && !request.allow_cpu)
        return Error{"saving a profile to", request.save,
                     "the probe runs on the CPU, which says nothing about your GPU; pass --allow-cpu to save it anyway",
                     ExitCode::usage};

    Probe prober(runner, *scenarios, request.progress);
    if (auto s = prober.run_baseline(); !s) return s.error();
    if (request.bisect)
        if (auto s = prober.bisect(switches); !s) return s.error();
    const ProbeRun run = prober.result();
    const DeviceInfo device = device_info(run, *device_name, *python);

    ProbeOutcome outcome;
    outcome.result = result_document(run, device, *hs, runner, switches, machine);
    outcome.exit_code = passed(run) ? 0 : static_cast<int>(ExitCode::findings);
    if (!request.save.empty()) outcome.write_error = save_profile(request, run, device, switches, outcome.result, diag);
    return outcome;
}

Result<nlohmann::json> load_saved_result(const std::string& path, const std::string& html) {
    if (!html.empty())
        if (auto s = check_output_path("--html", html); !s) return s.error();
    auto result = load_result(path);
    if (!result) return result.error();
    if (auto grid = grid_from_json(*result); !grid) {
        Error e = grid.error();
        e.path = path + ": " + e.path;
        return e;
    }
    return result;
}

}  // namespace rmcp::probe
