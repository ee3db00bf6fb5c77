#include "render/doctor_render.hpp"

#include <fmt/format.h>

#include "render/doctor_text.hpp"
#include "util/strings.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <array>

namespace rmcp {

namespace {
using kb::Finding;
using kb::Severity;

std::array<std::size_t, 3> count_by_severity(const kb::DoctorReport& r) {
    std::array<std::size_t, 3> n{};
    for (const auto& f : r.findings) ++n[static_cast<std::size_t>(f.entry->severity)];
    return n;
}

std::string gpu_label(const Finding& f) {
    if (f.gpu_node) return std::to_string(*f.gpu_node);
    if (f.gpu_index) return fmt::format("index{}", *f.gpu_index);
    return "";
}

std::string prom_escape(std::string_view s) {
    std::string out;
    for (const char c : s) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}
}  // namespace

nlohmann::json doctor_to_json(const kb::DoctorReport& r, const std::string& command_prefix) {
    using nlohmann::json;
    const auto n = count_by_severity(r);
    const auto steps = doctor_next_steps(r, command_prefix);
    json next_steps = json::array();
    for (const auto& st : steps)
        next_steps.push_back({{"next", st.command},
                              {"undo", st.undo.empty() ? json(nullptr) : json(st.undo)},
                              {"findings", st.finding_ids}});
    json findings = json::array();
    for (const auto& f : r.findings) {
        const auto& e = *f.entry;
        json evidence = json::array();
        for (const auto& ev : f.evidence)
            evidence.push_back({{"fact", ev.fact}, {"value", ev.value}, {"test", ev.test}});
        json fixes = json::array();
        for (const auto& fix : e.fixes) fixes.push_back({{"patch", fix.patch}, {"cost", fix.cost}});
        findings.push_back({
            {"id", e.id},
            {"title", e.title},
            {"category", e.category},
            {"severity", kb::severity_name(e.severity)},
            {"confidence", kb::confidence_name(e.confidence)},
            {"scope", kb::scope_name(e.scope)},
            {"gpu", f.gpu_index ? json{{"index", *f.gpu_index},
                                       {"rocm_index", f.gpu_rocm_index ? json(*f.gpu_rocm_index) : json(nullptr)},
                                       {"node", f.gpu_node ? json(*f.gpu_node) : json(nullptr)}}
                                : json(nullptr)},
            {"summary", e.summary},
            {"evidence", evidence},
            {"fixes", fixes},
            {"references", e.references},
            {"status", kb::finding_status_name(f.status)},
            {"status_detail", f.status_detail.empty() ? json(nullptr) : json(f.status_detail)},
            {"fixed_by", f.fixed_by.empty() ? json(nullptr) : json(f.fixed_by)},
            {"next", f.next_command.empty() ? json(nullptr) : json(f.next_command)},
            {"undo",
             [&] {
                 for (const auto& st : steps)
                     if (st.command == f.next_command && !st.undo.empty()) return json(st.undo);
                 return json(nullptr);
             }()},
        });
    }
    return json{
        {"schema_version", k_doctor_schema_version},
        {"entries_checked", r.entries_checked},
        {"gpus", r.gpus},
        {"notes", r.notes},
        {"summary",
         {{"critical", n[2]},
          {"warning", n[1]},
          {"info", n[0]},
          {"open", std::count_if(r.findings.begin(), r.findings.end(),
                                 [](const Finding& f) { return f.status == kb::FindingStatus::open; })}}},
        {"findings", findings},
        {"next_steps", next_steps},
    };
}

std::string render_doctor_prometheus(const kb::DoctorReport& r, double now_unix_s) {
    std::string out;
    out += "# HELP rmcp_finding A known ROCm problem that applies to this node (rmcp doctor); 1 while present.\n";
    out += "# TYPE rmcp_finding gauge\n";
    for (const auto& f : r.findings) {
        const auto& e = *f.entry;
        out += fmt::format("rmcp_finding{{id=\"{}\",severity=\"{}\",category=\"{}\",confidence=\"{}\",gpu=\"{}\"}} 1\n",
                           prom_escape(e.id), kb::severity_name(e.severity), prom_escape(e.category),
                           kb::confidence_name(e.confidence), prom_escape(gpu_label(f)));
    }
    const auto n = count_by_severity(r);
    // A count of what holds now is a gauge, and only counters end in _total
    // (https://prometheus.io/docs/practices/naming/).
    out += "# HELP rmcp_findings Findings of rmcp doctor on this node, by severity.\n";
    out += "# TYPE rmcp_findings gauge\n";
    for (const auto sev : {Severity::critical, Severity::warning, Severity::info})
        out += fmt::format("rmcp_findings{{severity=\"{}\"}} {}\n", kb::severity_name(sev),
                           n[static_cast<std::size_t>(sev)]);
    out += "# HELP rmcp_amd_gpus AMD GPUs rmcp detect found on this node.\n";
    out += "# TYPE rmcp_amd_gpus gauge\n";
    out += fmt::format("rmcp_amd_gpus {}\n", r.gpus);
    // So an alert can tell a stale textfile from a healthy node (the textfile collector's
    // own mtime metric says when the file changed, not that doctor ran).
    out += "# HELP rmcp_last_run_timestamp_seconds When rmcp doctor wrote this (Unix time).\n";
    out += "# TYPE rmcp_last_run_timestamp_seconds gauge\n";
    out += fmt::format("rmcp_last_run_timestamp_seconds {:.3f}\n", now_unix_s);
    return out;
}

}  // namespace rmcp
