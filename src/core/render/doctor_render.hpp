// Renderers of a doctor report: JSON (schema_version'd) and the Prometheus
// node_exporter textfile format. The model (kb/doctor.hpp) knows nothing of them.
#pragma once

#include "kb/doctor.hpp"
#include "util/style.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace rmcp {

inline constexpr int k_doctor_schema_version = 1;

// The text renderer is render/doctor_text.hpp. `command_prefix` ("rmcp", "rmcp --root DIR")
// starts the next steps' undo commands.
nlohmann::json doctor_to_json(const kb::DoctorReport& report, const std::string& command_prefix = "rmcp");
// node_exporter's textfile format; `now_unix_s` becomes rmcp_last_run_timestamp_seconds.
std::string render_doctor_prometheus(const kb::DoctorReport& report, double now_unix_s);

}  // namespace rmcp
