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
            if (static_cast<unsigned char>(c) < 0x20)
                out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
            else
                out += c;
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

std::string describe(const RunResult& r) {
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

nlohmann::json result_to_json(const RunResult& r) {
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
            steps.push_back({{"phase", s.phase}, {"configuration", s.configuration}, {"scenario", s.scenario},
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
    std::vector<std::string> costs;
    for (const auto& change : config.changes) {
        const std::string base = change.id.substr(0, change.id.find('='));
        for (const auto& sw : switches)
            if (sw.id == base) costs.push_back(sw.cost);
    }
    std::string cost = costs.empty() ? "none: the default configuration passed" : "";
    for (const auto& c : costs) cost += (cost.empty() ? "" : "; ") + c;
    const bool bisected = run.bisect && run.bisect->found;
    std::string description = fmt::format(
        "Measured by rmcp probe{} on {}{} with torch {}: {} of {} scenarios{}.", bisected ? " --bisect" : "",
        device.name, device.gfx_target.empty() ? "" : " (" + device.gfx_target + ")", device.torch_version,
        bisected ? "the fastest configuration under which all" : "the default configuration;",
        run.scenarios.size(), bisected ? " pass" : " probed");
    std::string out = fmt::format(
        "# Written by `rmcp probe --save`; the fault map next to it lists what fails without it.\n"
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

std::string render_text(const ProbeRun& run, const DeviceInfo& device) {
    std::string out = fmt::format("device: {}{}  torch {}  python {}\n", device.name,
                                  device.gfx_target.empty() ? "" : " (" + device.gfx_target + ")",
                                  device.torch_version, device.python);
    std::size_t width = 8;
    for (const auto& s : run.scenarios) width = std::max(width, s.id.size());
    out += fmt::format("\ndefault configuration:\n");
    int failures = 0;
    for (const auto& s : run.scenarios) {
        const auto it = run.baseline.results.find(s.id);
        if (it == run.baseline.results.end()) continue;
        failures += is_failure(it->second.outcome) ? 1 : 0;
        out += fmt::format("  {:<{}}  {}\n", s.id, width, describe(it->second));
    }
    out += fmt::format("  {} of {} scenarios fail\n", failures, run.scenarios.size());
    if (run.bisect) {
        const auto& b = *run.bisect;
        out += "\nbisect:\n";
        if (b.found) {
            out += fmt::format("  smallest passing set: {}\n", b.minimal.empty() ? "(none needed)" : fmt::format("{}", fmt::join(b.minimal, " + ")));
            if (b.fastest) {
                out += fmt::format("  fastest passing configuration: {}", b.fastest->key());
                if (b.fastest_total_ms) out += fmt::format(" ({:.3g} ms over all scenarios)", *b.fastest_total_ms);
                out += "\n";
                for (const auto& [k, v] : b.fastest->env()) out += fmt::format("    {}={}\n", k, v);
            }
        } else {
            out += "  no passing configuration found\n";
        }
        if (!b.note.empty()) out += fmt::format("  note: {}\n", b.note);
        out += fmt::format("  child runs: {} search + {} verify + {} timing = {}\n", b.search_runs, b.verify_runs,
                           b.fastest_runs, b.search_runs + b.verify_runs + b.fastest_runs);
    }
    out += fmt::format("\n{} child runs in all\n", run.child_runs);
    return out;
}

}  // namespace rmcp::probe
