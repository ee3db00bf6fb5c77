// Renderers for `rmcp explain`: text for people, JSON (schema_version'd) for scripts.
#pragma once

#include "explain/diagnose.hpp"
#include "explain/report_facts.hpp"
#include "similar/index.hpp"
#include "util/style.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace rmcp::explain {

inline constexpr int k_explain_schema_version = 1;

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
};

// The basis of the whole answer: its first problem's, else `similar` with a vote, else `none`.
Basis report_basis(const ExplainReport& report);

std::string render_text(const ExplainReport& report, const Style& style);
nlohmann::json render_json(const ExplainReport& report);

}  // namespace rmcp::explain
