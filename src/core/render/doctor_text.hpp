// `rmcp doctor`'s text: a checklist that fits one screen (the machine in one line, one line
// per check area with ✓ / ! / ✗, then the de-duplicated next steps, each with its undo), and
// under -v every finding's details (evidence in words, fixes with their costs, references).
// The model (kb/doctor.hpp, patch/doctor_fix.hpp) knows nothing of it.
#pragma once

#include "kb/doctor.hpp"
#include "util/style.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace rmcp {

struct DoctorTextOptions {
    // Width and glyphs are the Style's (util/style.hpp): one decision for every command.
    bool verbose = false;  // -v: every finding's details after the checklist
    bool quiet = false;    // -q: the summary line only
};

// One step of "Next steps": a command and what it answers.
struct DoctorNextStep {
    std::string command;                   // as printed by the finding (may be several lines)
    std::string undo;                      // the command that reverses it; empty when nothing to undo
    std::vector<std::string> finding_ids;  // the findings it answers, most severe first
};

// The next steps of a report: the open (and fixed-by-profile) findings' next commands,
// de-duplicated, the step answering the most severe finding first.
std::vector<DoctorNextStep> doctor_next_steps(const kb::DoctorReport& report, const std::string& command_prefix);

// The summary line (also all that -q prints).
std::string doctor_summary_line(const kb::DoctorReport& report);

// `facts`: the facts the report was evaluated on (patch::DoctorOutcome::facts);
// `command_prefix`: how the user runs rmcp ("rmcp", "rmcp --root DIR").
std::string render_doctor_text(const kb::DoctorReport& report, const nlohmann::json& facts,
                               const std::string& command_prefix, const DoctorTextOptions& options, const Style& style);

}  // namespace rmcp
