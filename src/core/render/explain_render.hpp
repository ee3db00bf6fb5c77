// Renderers for `rmcp explain`: text for people, JSON (schema_version'd) for scripts.
#pragma once

#include "explain/diagnose.hpp"
#include "explain/report_facts.hpp"
#include "patch/next_step.hpp"
#include "similar/index.hpp"
#include "similar/message_causes.hpp"
#include "util/style.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rmcp::explain {

// 2: `next` (the command to run) replaced `next_step`, whose diagnostic text is now `check`;
// `fixes` is the list of patch ids, their costs are in `costs` (issue 30, one vocabulary).
inline constexpr int k_explain_schema_version = 2;

struct InputSummary {
    std::string source;
    std::uint64_t bytes = 0;
    std::uint64_t lines = 0;
    bool complete = true;  // false when reading it failed part-way
    std::string error;     // why it is not complete (the message of the failure); empty when complete
};

struct ExplainReport {
    std::vector<InputSummary> inputs;
    std::vector<Diagnosis> diagnoses;     // ranked
    std::string facts_from;               // "the report", "this machine", "--root DIR", or "" (not used)
    std::string facts_source = "none";    // "report", "this machine", "root" or "none"
    std::optional<ReportFacts> reporter;  // when facts_source is "report"
    // The nearest public threads (similar/index.hpp), shown above k_show_similarity; `vote`
    // when no entry recognised the log and they agree on a category (basis `similar`).
    std::vector<similar::SimilarReport> similar;
    std::optional<similar::Vote> vote;
    // Under a first answer of basis `family`: what the public threads answered with the same
    // entry turned out to be (similar/message_causes.hpp); absent when no thread was.
    std::optional<similar::MessageCauses> message_causes;
    // The fix each problem's `next` names, by entry id (patch/next_step.hpp); absent: none.
    std::map<std::string, patch::FixStep> fix_steps;
};

// The basis of the whole answer: its first problem's, else `similar` with a vote, else `none`.
Basis report_basis(const ExplainReport& report);

struct TextOptions {
    // -v: ranking reasons (`why here`), the facts behind a facts-only problem, the other
    // fixes, references. Without it: what, where, the excerpt, the next command and its cost.
    bool verbose = false;
};

std::string render_text(const ExplainReport& report, const Style& style, const TextOptions& options = {});
// One problem as `rmcp explain -` announces it the moment its line arrives, before ranking:
// "line N: CRITICAL id: title" (the summary at the end of input ranks them).
std::string seen_line(const kb::Entry& entry, std::string_view source, std::uint64_t line);
nlohmann::json render_json(const ExplainReport& report);

}  // namespace rmcp::explain
