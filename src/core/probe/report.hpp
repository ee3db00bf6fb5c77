// What the probe hands back: the JSON result, the fault map that rmcp.torch routes by,
// and the winning configuration as a profile under the patch manager's format
// (profiles/*.toml, src/core/patch/profile.hpp). Formats: docs/probe.md.
#pragma once

#include "probe/probe.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace rmcp::probe {

inline constexpr int k_schema_version = 1;
// The variable rmcp.torch reads to find the fault map (python/rmcp/torch/__init__.py).
inline constexpr const char* k_fault_map_variable = "RMCP_FAULT_MAP";

struct DeviceInfo {
    std::string torch_device;  // "cpu" | "cuda"
    std::string name;          // what torch calls the device
    std::string gfx_target;    // effective target torch reports (ROCm builds), else ""
    std::string torch_version;
    std::string python;
};

// From the first worker report that carries them.
DeviceInfo device_info(const ProbeRun& run, const std::string& torch_device, const std::string& python);

nlohmann::json result_to_json(const ScenarioResult& r);
nlohmann::json probe_to_json(const ProbeRun& run, const DeviceInfo& device);

// The failures of one configuration (the default, for the saved map).
nlohmann::json fault_map_json(const ProbeRun& run, const ConfigurationResult& config, const DeviceInfo& device);

// The configuration to save: the fastest passing one with --bisect, else the default.
const Configuration& winning_configuration(const ProbeRun& run);

// Whether a configuration passed every scenario: with --bisect, one was found; without, the
// default passed.
bool passed(const ProbeRun& run);

// The costs of a configuration's switches, joined ("none: ..." for the default).
std::string configuration_cost(const Configuration& config, const std::vector<Switch>& switches);

// The configuration a profile would hold: {"configuration", "switches", "env", "cost"}, or
// {"configuration": null} when none passed.
nlohmann::json chosen_profile_json(const ProbeRun& run, const std::vector<Switch>& switches);

// The machine's facts worth seeing next to a result, picked from detect's JSON
// (facts_to_json): OS, kernel, driver, GPUs and their targets, ROCm, relevant variables.
nlohmann::json machine_summary(const nlohmann::json& facts);

// A profile file (name, rank, description, cost, [set]); `fault_map_path` (absolute) is set
// as RMCP_FAULT_MAP so rmcp.torch finds the map when run under this profile.
std::string profile_toml(const ProbeRun& run, const Configuration& config, const std::vector<Switch>& switches,
                         const DeviceInfo& device, const std::string& profile_name, const std::string& fault_map_path);

// "ok 1.8 ms", "crash (SIGABRT) Memory access fault ..." — the progress and table cell.
std::string describe(const ScenarioResult& r);

}  // namespace rmcp::probe
