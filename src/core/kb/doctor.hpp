// `rmcp doctor` as a library: every knowledge-base entry evaluated on one facts document.
#pragma once

#include "kb/kb.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace rmcp::kb {

struct DoctorReport {
    std::vector<Finding> findings;   // most severe first, then by id, then by GPU
    std::vector<std::string> notes;  // plain statements about what could not be checked
    std::size_t entries_checked = 0;
    std::size_t entries_log_only = 0;  // entries with signatures only: explain's, not doctor's
    std::size_t gpus = 0;              // AMD GPUs in the facts (visible or not)
};

DoctorReport run_doctor(const KnowledgeBase& kb, const nlohmann::json& facts);

// True when some open finding is at or above the threshold (the exit-1 rule of --fail-on):
// a finding that rmcp's own profile.env or an applied patch already answers does not count.
bool has_findings_at_or_above(const DoctorReport& report, Severity threshold);

}  // namespace rmcp::kb
