// The incident report of `rmcp run` (docs/run.md "Incident report"): JSON for scripts and
// a short human summary on stderr.
#pragma once

#include "run/kernel_log.hpp"
#include "run/supervisor.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace rmcp::run {

inline constexpr int k_report_schema_version = 1;

struct ReportInputs {
    std::vector<std::string> command;
    std::string requested_profile;          // as given to --profile ("auto", a name, or "")
    std::string log_path;
    std::optional<nlohmann::json> facts;    // detect's JSON, reduced by relevant_facts()
    std::optional<KernelLog> kernel_log;
};

nlohmann::json incident_report(const RunResult& result, const ReportInputs& inputs);

// The parts of `detect --format json` that explain a GPU failure: the GPUs and their
// targets, driver, device access, ROCm, PyTorch and the relevant environment.
nlohmann::json relevant_facts(const nlohmann::json& facts);

// A few lines for stderr: what died, of what, and what rmcp recognised.
std::vector<std::string> summary_lines(const RunResult& result);

// $XDG_STATE_HOME/rmcp/incidents/<UTC time>-<pid>.json ($HOME/.local/state when unset).
std::string default_report_path(std::chrono::system_clock::time_point when);

std::string signal_name(int sig);
std::string iso_time(std::chrono::system_clock::time_point t);

}  // namespace rmcp::run
