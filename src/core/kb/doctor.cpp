#include "kb/doctor.hpp"

#include <algorithm>

namespace rmcp::kb {

DoctorReport run_doctor(const KnowledgeBase& kb, const nlohmann::json& facts) {
    DoctorReport report;
    for (const auto& entry : kb.entries) {
        if (!entry.applies) {  // log-only entries are explain's business
            ++report.entries_log_only;
            continue;
        }
        ++report.entries_checked;
        auto found = evaluate(facts, entry);
        report.findings.insert(report.findings.end(), std::make_move_iterator(found.begin()),
                               std::make_move_iterator(found.end()));
    }
    std::stable_sort(report.findings.begin(), report.findings.end(), [](const Finding& a, const Finding& b) {
        if (a.entry->severity != b.entry->severity) return a.entry->severity > b.entry->severity;
        if (a.entry->id != b.entry->id) return a.entry->id < b.entry->id;
        return a.gpu_index.value_or(0) < b.gpu_index.value_or(0);
    });
    if (const auto gpus = facts.find("gpus"); gpus != facts.end() && gpus->is_array()) report.gpus = gpus->size();
    if (report.gpus == 0)
        report.notes.emplace_back("no AMD GPU found on this machine; checked the driver, ROCm, PyTorch and "
                                  "environment only");
    return report;
}

bool has_findings_at_or_above(const DoctorReport& report, Severity threshold) {
    return std::any_of(report.findings.begin(), report.findings.end(), [&](const Finding& f) {
        return f.status == FindingStatus::open && f.entry->severity != Severity::info && f.entry->severity >= threshold;
    });
}

std::string_view finding_status_name(FindingStatus s) {
    switch (s) {
    case FindingStatus::open: return "open";
    case FindingStatus::fixed_by_profile: return "fixed-by-profile";
    case FindingStatus::fixed: return "fixed";
    case FindingStatus::pending: return "pending";
    case FindingStatus::info: return "info";
    }
    return "open";
}

}  // namespace rmcp::kb
