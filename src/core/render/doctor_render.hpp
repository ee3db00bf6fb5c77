// Renderers of a doctor report: JSON (schema_version'd) and the Prometheus
// node_exporter textfile format. The model (kb/doctor.hpp) knows nothing of them.
#pragma once

#include "kb/doctor.hpp"
#include "render/node_metrics.hpp"
#include "util/style.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace rmcp {

inline constexpr int k_doctor_schema_version = 1;

// The text renderer is render/doctor_text.hpp. `command_prefix` ("rmcp", "rmcp --root DIR")
// starts the next steps' undo commands.
nlohmann::json doctor_to_json(const kb::DoctorReport& report, const std::string& command_prefix = "rmcp");
// node_exporter's textfile format (docs/fleet.md, "Metrics"); `now_unix_s` becomes
// rmcp_last_run_timestamp_seconds. `node` adds GPUs, versions, the probe result and incident
// counters (empty: the findings alone).
std::string render_doctor_prometheus(const kb::DoctorReport& report, double now_unix_s, const NodeMetrics& node = {});
// Node Feature Discovery's feature-file format: detect's labels (render_facts_nfd) plus
// rmcp.healthy (no open critical finding) and rmcp.probe_passed (docs/fleet.md, "Kubernetes").
std::string render_doctor_nfd(const kb::DoctorReport& report, const NodeMetrics& node);

}  // namespace rmcp
