// The incident report of `rmcp run` (docs/run.md "Incident report"): JSON for scripts and
// a short human summary on stderr.
#pragma once

#include "process/capture.hpp"
#include "run/supervisor.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace rmcp::run {

inline constexpr int k_report_schema_version = 1;

// The kernel's messages since the run started (process::read_kernel_log), as the report
// carries them.
struct KernelLogLines {
    std::string source;              // "journalctl", "dmesg", or "" when neither could be read
    std::vector<std::string> lines;  // oldest first, at most k_kernel_log_lines
    std::string error;               // why nothing could be read
    std::string cut;                 // the capture's note when the log was cut (process::CaptureLimits)
};

inline constexpr std::size_t k_kernel_log_lines = 400;
// A report waits this long for each of journalctl and dmesg (docs/run.md).
inline constexpr std::chrono::milliseconds k_kernel_log_timeout{3000};

KernelLogLines read_kernel_log_since(
    std::chrono::system_clock::time_point since,
    const process::CommandRunner& runner = process::system_runner(k_kernel_log_timeout));

struct ReportInputs {
    std::vector<std::string> command;
    std::string requested_profile;  // as given to --profile ("auto", a name, or "")
    std::string log_path;
    std::optional<nlohmann::json> facts;  // detect's JSON, reduced by relevant_facts()
    std::optional<KernelLogLines> kernel_log;
    // The nearest public threads (similar::reports_json), looked up on an incident only.
    nlohmann::json similar = nlohmann::json::array();
};

// The error lines a report's similar public reports are looked up by: each attempt's matched
// lines and output excerpt, and the kernel's messages since the start.
std::vector<std::string> incident_lines(const RunResult& result, const std::optional<KernelLogLines>& kernel_log);

nlohmann::json incident_report(const RunResult& result, const ReportInputs& inputs);

// The parts of `detect --format json` that explain a GPU failure: the GPUs and their
// targets, driver, device access, ROCm, PyTorch and the relevant environment.
nlohmann::json relevant_facts(const nlohmann::json& facts);

// A few lines for stderr: what died (one line per failed attempt, under rung_name()), then
// each problem recognised once, ranked as explain ranks them (ranked_gpu_matches: family
// entries only when no specific entry matched), with the line it matched, each distinct line
// quoted once. The caller adds the incident path and what to run next.
std::vector<std::string> summary_lines(const RunResult& result);
// The entry the summary names first: what `next` is about ("" when none).
std::string top_entry(const RunResult& result);

// $XDG_STATE_HOME/rmcp/incidents/<UTC time>-<pid>.json ($HOME/.local/state when unset).
std::string default_report_path(std::chrono::system_clock::time_point when);

std::string signal_name(int sig);
std::string iso_time(std::chrono::system_clock::time_point t);

}  // namespace rmcp::run
