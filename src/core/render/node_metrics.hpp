// What `rmcp doctor --format prometheus|nfd` says about a node besides its findings
// (docs/fleet.md): the GPUs and versions from detect's facts, the last saved probe result
// and the incident reports of `rmcp run`, both read through the Root (ARCHITECTURE.md,
// principle 1), so a fixture tree answers for a node exactly like `/`.
#pragma once

#include "facts/facts.hpp"
#include "root/root.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rmcp {

// The saved result of `rmcp probe --format json` (docs/probe.md), reduced to what a fleet
// alerts on.
struct ProbeSummary {
    bool passed = false;
    double saved_unix_s = 0;                        // the file's modification time
    std::map<std::string, std::size_t> by_outcome;  // the default configuration's results
    std::string profile;                            // the chosen configuration's name, "" when none passed
    std::string gfx_target;                         // what torch reported
    std::string torch_version;
    std::string kernel;        // the machine the probe ran on (its `machine` summary)
    std::string rocm_version;  // the first ROCm install of that summary
    // What changed since: "kernel", "rocm", "torch" (each present when it differs now).
    std::vector<std::string> outdated_by;
};

struct IncidentCounts {
    std::map<std::string, std::size_t> by_classification;  // gpu-failure, stall, recovered, ...
    std::map<std::string, std::size_t> by_category;        // kb category of the matches, once per report
    std::size_t unreadable = 0;                            // files that are not an incident report
};

struct NodeMetrics {
    std::optional<Facts> facts;  // the effective facts (profile.env applied), when known
    std::string rmcp_version;
    std::string kb_version;
    std::string probe_result_path;  // logical path; "" when not asked
    std::optional<ProbeSummary> probe;
    std::string incident_dir;  // logical path; "" when not asked
    IncidentCounts incidents;
    double check_duration_s = 0;
    std::vector<std::string> warnings;  // input that could not be used, with path and cause (for stderr)
};

struct NodeSources {
    std::string probe_result;  // logical path of a saved probe result; "" for none
    std::string incident_dir;  // logical path of `rmcp run`'s incident directory; "" for none
};

// Reads the probe result and the incident directory through `root`. Missing files are no
// data (a node that never probed); unreadable or malformed ones become `warnings` (with
// path and cause) and count as missing, so one bad file never stops the metrics.
NodeMetrics collect_node_metrics(const Root& root, const Facts& facts, const NodeSources& sources);

// Pure: the probe result `doc` compared with the current facts (exposed for unit tests).
// Returns nullopt with `error` set when `doc` is not a probe result.
std::optional<ProbeSummary> summarize_probe_result(const nlohmann::json& doc, const Facts& facts, std::string& error);

}  // namespace rmcp
