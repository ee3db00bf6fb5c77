#include "probe/report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace rmcp::probe {

namespace {

std::string toml_string(std::string_view s) {
    std::string out = "\"";
    for (const char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
            else out += c;
        }
    }
    return out + "\"";
}

std::string fault_name(Outcome o) {
    // The fault map knows crash, hang and wrong; a raised HIP/MIOpen error is a crash.
    return o == Outcome::hang ? "hang" : o == Outcome::wrong ? "wrong" : "crash";
}

nlohmann::json configuration_json(const ConfigurationResult& c) {
    nlohmann::json results = nlohmann::json::array();
    for (const auto& [id, r] : c.results) {
        auto j = result_to_json(r);
        j["scenario"] = id;
        results.push_back(std::move(j));
    }
    return {{"name", c.configuration.key()},
            {"switches", c.configuration.ids()},
            {"env", c.configuration.env()},
            {"results", std::move(results)}};
}

}  // namespace

std::string describe(const ScenarioResult& r) {
    std::string out(outcome_name(r.outcome));
    if (r.outcome == Outcome::ok) return fmt::format("ok {:.3g} ms", r.median_ms);
    if (!r.detail.empty()) out += fmt::format(" ({})", r.detail);
    if (!r.kb_entry.empty()) out += fmt::format(" [{}]", r.kb_entry);
    // A wrong answer's detail already says how wrong; the worker's message repeats it.
    if (!r.message.empty() && r.outcome != Outcome::unsupported && r.outcome != Outcome::wrong)
        out += ": " + r.message.substr(0, 160);
    return out;
}

DeviceInfo device_info(const ProbeRun& run, const std::string& torch_device, const std::string& python) {
    DeviceInfo d;
    d.torch_device = torch_device;
    d.python = python;
    d.name = torch_device;
    for (const auto& c : run.configurations)
        for (const auto& [id, r] : c.results)
            if (r.report.is_object() && r.report.contains("torch_version")) {
                d.torch_version = r.report.value("torch_version", "");
                d.name = r.report.value("device_name", torch_device);
                d.gfx_target = r.report.value("gfx_target", "");
                return d;
            }
    return d;
}

nlohmann::json result_to_json(const ScenarioResult& r) {
    nlohmann::json j = {{"outcome", outcome_name(r.outcome)}, {"detail", r.detail}, {"wall_s", r.wall_s}};
    if (r.outcome == Outcome::ok) j["median_ms"] = r.median_ms;
    if (!r.message.empty()) j["message"] = r.message;
    if (r.signal) j["signal"] = r.signal;
    if (r.exit_code >= 0) j["exit_code"] = r.exit_code;
    if (!r.kb_entry.empty()) j["kb_entry"] = r.kb_entry;
    if (r.report.is_object()) {
        for (const char* key : {"error", "tolerance", "min_ms", "times_ms", "env_seen"})
            if (r.report.contains(key)) j[key] = r.report[key];
        // Non-empty only for variables the fork server was started with (import-time ones).
        if (r.report.contains("env_inherited") && !r.report["env_inherited"].empty())
            j["env_inherited"] = r.report["env_inherited"];
    }
    return j;
}

const Configuration& winning_configuration(const ProbeRun& run) {
    if (run.bisect && run.bisect->found && run.bisect->fastest) return *run.bisect->fastest;
    return run.baseline.configuration;
}

nlohmann::json fault_map_json(const ProbeRun& run, const ConfigurationResult& config, const DeviceInfo& device) {
    nlohmann::json faults = nlohmann::json::array();
    for (const auto& s : run.scenarios) {
        const auto it = config.results.find(s.id);
        if (it == config.results.end() || !is_failure(it->second.outcome)) continue;
        nlohmann::json f = scenario_to_json(s);
        f.erase("id");
        f["scenario"] = s.id;
        f["failure"] = fault_name(it->second.outcome);
        faults.push_back(std::move(f));
    }
    return {{"schema_version", k_schema_version},
            {"device", device.name},
            {"torch_device", device.torch_device},
            {"gfx_target", device.gfx_target},
            {"torch_version", device.torch_version},
            {"configuration", config.configuration.env()},
            {"faults", std::move(faults)}};
}

nlohmann::json probe_to_json(const ProbeRun& run, const DeviceInfo& device) {
    nlohmann::json scenarios = nlohmann::json::array();
    for (const auto& s : run.scenarios) scenarios.push_back(scenario_to_json(s));
    nlohmann::json configs = nlohmann::json::array();
    for (const auto& c : run.configurations) configs.push_back(configuration_json(c));
    nlohmann::json out = {{"schema_version", k_schema_version},
                          {"python", device.python},
                          {"device", device.name},
                          {"torch_device", device.torch_device},
                          {"gfx_target", device.gfx_target},
                          {"torch_version", device.torch_version},
                          {"scenarios", std::move(scenarios)},
                          {"configurations", std::move(configs)},
                          {"fault_map", fault_map_json(run, run.baseline, device)},
                          {"child_runs", run.child_runs}};
    std::vector<std::string> all;
    for (const auto& s : run.scenarios) all.push_back(s.id);
    out["passed"] = run.bisect ? run.bisect->found : run.baseline.passes(all);
    if (run.bisect) {
        const auto& b = *run.bisect;
        nlohmann::json steps = nlohmann::json::array();
        for (const auto& s : b.steps)
            steps.push_back({{"phase", s.phase},
                             {"configuration", s.configuration},
                             {"scenario", s.scenario},
                             {"outcome", outcome_name(s.outcome)}});
        out["bisect"] = {{"found", b.found},
                         {"minimal", b.minimal},
                         {"fastest", b.fastest ? nlohmann::json(b.fastest->ids()) : nlohmann::json(nullptr)},
                         {"fastest_env", b.fastest ? nlohmann::json(b.fastest->env()) : nlohmann::json(nullptr)},
                         {"fastest_total_ms", b.fastest_total_ms ? nlohmann::json(*b.fastest_total_ms) : nullptr},
                         {"default_total_ms", b.default_total_ms ? nlohmann::json(*b.default_total_ms) : nullptr},
                         {"search_runs", b.search_runs},
                         {"verify_runs", b.verify_runs},
                         {"fastest_runs", b.fastest_runs},
                         {"child_runs", b.search_runs + b.verify_runs + b.fastest_runs},
                         {"note", b.note},
                         {"steps", std::move(steps)}};
    }
    return out;
}

std::string profile_toml(const ProbeRun& run, const Configuration& config, const std::vector<Switch>& switches,
                         const DeviceInfo& device, const std::string& profile_name, const std::string& fault_map_path) {
    const std::string cost = configuration_cost(config, switches);
    const bool bisected = run.bisect && run.bisect->found;
    std::string description =
        fmt::format("Measured by rmcp probe{} on {}{} with torch {}: {} of {} scenarios{}.",
                    bisected ? " --bisect" : "", device.name,
                    device.gfx_target.empty() ? "" : " (" + device.gfx_target + ")", device.torch_version,
                    bisected ? "the fastest configuration under which all" : "the default configuration;",
                    run.scenarios.size(), bisected ? " pass" : " probed");
    std::string out =
        fmt::format("# Written by `rmcp probe --save`; the fault map next to it lists what fails without it.\n"
                    "# Switches: {}\n",
                    config.changes.empty() ? "none" : config.key());
    out += fmt::format("name = {}\n", toml_string(profile_name));
    // Between the shipped default (0) and isa-override (10): a probed profile is the first
    // rung for this machine; escalation climbs the shipped ladder from here.
    out += "rank = 5\n";
    out += fmt::format("description = {}\n", toml_string(description));
    out += fmt::format("cost = {}\n", toml_string(cost));
    out += "\n[set]\n";
    EnvMap env = config.env();
    if (!fault_map_path.empty()) env[k_fault_map_variable] = fault_map_path;
    for (const auto& [k, v] : env) out += fmt::format("{} = {}\n", k, toml_string(v));
    return out;
}

bool passed(const ProbeRun& run) {
    std::vector<std::string> all;
    for (const auto& s : run.scenarios) all.push_back(s.id);
    return run.bisect ? run.bisect->found : run.baseline.passes(all);
}

std::string configuration_cost(const Configuration& config, const std::vector<Switch>& switches) {
    std::string cost;
    for (const auto& change : config.changes) {
        const std::string base = change.id.substr(0, change.id.find('='));
        for (const auto& sw : switches)
            if (sw.id == base) cost += (cost.empty() ? "" : "; ") + sw.cost;
    }
    return cost.empty() ? "none: the default configuration passed" : cost;
}

nlohmann::json chosen_profile_json(const ProbeRun& run, const std::vector<Switch>& switches) {
    if (!passed(run)) return {{"configuration", nullptr}};
    const Configuration& c = winning_configuration(run);
    return {{"configuration", c.key()},
            {"switches", c.ids()},
            {"env", c.env()},
            {"cost", configuration_cost(c, switches)}};
}

nlohmann::json machine_summary(const nlohmann::json& facts) {
    // detect's schema belongs to detect (docs/detect.md); read what is there, tolerate the rest.
    const auto text = [](const nlohmann::json& j, std::initializer_list<const char*> path) -> std::string {
        const nlohmann::json* at = &j;
        for (const char* key : path) {
            if (!at->is_object() || !at->contains(key)) return "";
            at = &(*at)[key];
        }
        if (at->is_string()) return at->get<std::string>();
        if (at->is_number() || at->is_boolean()) return at->dump();
        return "";
    };
    nlohmann::json m = nlohmann::json::object();
    if (const auto os = text(facts, {"driver", "os", "pretty_name"}); !os.empty()) m["os"] = os;
    if (const auto k = text(facts, {"driver", "kernel_release"}); !k.empty()) m["kernel"] = k;
    if (const auto loaded = text(facts, {"driver", "loaded"}); !loaded.empty())
        m["amdgpu driver"] = loaded == "true" ? "loaded" : "not loaded";
    nlohmann::json gpus = nlohmann::json::array();
    if (facts.contains("gpus") && facts["gpus"].is_array())
        for (const auto& g : facts["gpus"]) {
            std::string line = text(g, {"marketing_name"});
            if (line.empty()) line = text(g, {"asic_name"});
            const std::string target = text(g, {"gfx_target"}), effective = text(g, {"effective_gfx_target"});
            if (!target.empty()) line += " " + target;
            if (!effective.empty() && effective != target) line += " (runs as " + effective + ")";
            if (const auto vram = g.contains("vram_bytes") && g["vram_bytes"].is_number()
                                      ? g["vram_bytes"].get<double>() / (1024.0 * 1024 * 1024)
                                      : 0.0;
                vram > 0)
                line += fmt::format(", {:.0f} GiB", vram);
            gpus.push_back(line);
        }
    m["gpus"] = std::move(gpus);
    if (facts.contains("rocm") && facts["rocm"].is_array()) {
        nlohmann::json rocm = nlohmann::json::array();
        for (const auto& r : facts["rocm"]) {
            const std::string v = text(r, {"version"});
            if (!v.empty()) rocm.push_back(v + (text(r, {"path"}).empty() ? "" : " at " + text(r, {"path"})));
        }
        m["rocm"] = std::move(rocm);
    }
    if (facts.contains("env") && facts["env"].is_object() && !facts["env"].empty()) m["environment"] = facts["env"];
    return m;
}

}  // namespace rmcp::probe
