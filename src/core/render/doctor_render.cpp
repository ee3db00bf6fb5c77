#include "render/doctor_render.hpp"

#include <fmt/format.h>

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

std::string value_text(const nlohmann::json& v) {
    if (v.is_null()) return "absent";
    return v.is_string() ? v.get<std::string>() : json_text(v);
}

std::string gpu_label(const Finding& f) {
    if (f.gpu_node) return std::to_string(*f.gpu_node);
    if (f.gpu_index) return fmt::format("index{}", *f.gpu_index);
    return "";
}

// Greedy word wrap for summaries, indented.
std::string wrap(std::string_view text, std::size_t indent, std::size_t width = 88) {
    std::string out(indent, ' ');
    std::size_t col = indent;
    bool first = true;
    while (!text.empty()) {
        const auto start = text.find_first_not_of(" \n\t");
        if (start == std::string_view::npos) break;
        text.remove_prefix(start);
        const auto end = text.find_first_of(" \n\t");
        const auto word = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end);
        if (!first && col + 1 + word.size() > width) {
            out += '\n' + std::string(indent, ' ');
            col = indent;
        } else if (!first) {
            out += ' ';
            ++col;
        }
        out += word;
        col += word.size();
        first = false;
    }
    return out + '\n';
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

std::string render_doctor_text(const kb::DoctorReport& r, const Style& s) {
    std::string out;
    const auto n = count_by_severity(r);
    const auto open_count =
        static_cast<std::size_t>(std::count_if(r.findings.begin(), r.findings.end(),
                                               [](const Finding& f) { return f.status == kb::FindingStatus::open; }));
    out += s.bold(fmt::format("rmcp doctor: {} finding{} ({} critical, {} warning, {} info; {} open) from {} checks; "
                              "{} AMD GPU{}",
                              r.findings.size(), r.findings.size() == 1 ? "" : "s", n[2], n[1], n[0], open_count,
                              r.entries_checked, r.gpus, r.gpus == 1 ? "" : "s")) +
           '\n';
    for (const auto& note : r.notes) out += fmt::format("note: {}\n", note);
    for (const auto& f : r.findings) {
        const auto& e = *f.entry;
        std::string sev(kb::severity_name(e.severity));
        for (auto& c : sev) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        sev = fmt::format("{:<8}", sev);
        sev = e.severity == Severity::critical  ? s.red(sev)
              : e.severity == Severity::warning ? s.yellow(sev)
                                                : s.dim(sev);
        out += '\n';
        out += fmt::format("{} {}  [{}, {}]{}\n", sev, s.bold(e.id), e.category, kb::confidence_name(e.confidence),
                           f.gpu_index ? fmt::format("  GPU {}", gpu_label(f)) : std::string{});
        out += fmt::format("  {}\n", e.title);
        out += wrap(e.summary, 2);
        out += "  evidence:\n";
        for (const auto& ev : f.evidence)
            out += fmt::format("    {} = {}  ({})\n", ev.fact, value_text(ev.value), ev.test);
        if (!e.fixes.empty()) {
            out += "  fixes:\n";
            for (const auto& fix : e.fixes) out += fmt::format("    {}  — {}\n", s.green(fix.patch), fix.cost);
        }
        out += "  references:\n";
        for (const auto& ref : e.references) out += fmt::format("    {}\n", ref);
        // Last, so the command to paste is where the eye ends (docs/patches.md, "From finding to fixed").
        if (f.status == kb::FindingStatus::open) out += "  status: " + s.bold("open") + '\n';
        else
            out += "  status: " +
                   s.green(f.status_detail.empty() ? std::string(kb::finding_status_name(f.status)) : f.status_detail) +
                   '\n';
        if (!f.next_command.empty()) {
            const auto lines = split_lines(f.next_command);
            out += fmt::format("  next: {}\n", lines.empty() ? std::string_view() : lines.front());
            for (std::size_t i = 1; i < lines.size(); ++i) out += fmt::format("        {}\n", lines[i]);
        }
    }
    if (r.findings.empty()) out += s.green("no known problem applies to this machine") + '\n';
    return out;
}

nlohmann::json doctor_to_json(const kb::DoctorReport& r) {
    using nlohmann::json;
    const auto n = count_by_severity(r);
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
            {"gpu", f.gpu_index
                        ? json{{"index", *f.gpu_index}, {"node", f.gpu_node ? json(*f.gpu_node) : json(nullptr)}}
                        : json(nullptr)},
            {"summary", e.summary},
            {"evidence", evidence},
            {"fixes", fixes},
            {"references", e.references},
            {"status", kb::finding_status_name(f.status)},
            {"status_detail", f.status_detail.empty() ? json(nullptr) : json(f.status_detail)},
            {"fixed_by", f.fixed_by.empty() ? json(nullptr) : json(f.fixed_by)},
            {"next_command", f.next_command.empty() ? json(nullptr) : json(f.next_command)},
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
