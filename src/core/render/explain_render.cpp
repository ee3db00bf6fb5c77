#include "render/explain_render.hpp"

#include "util/strings.hpp"
#include "util/terminal.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rmcp::explain {

namespace {

// "   label: text", the text wrapped to the output's width (the terminal, else COLUMNS, else 80:
// style.width()) and its continuation lines indented under it (newcomer review, finding 19).
std::string labelled(const Style& style, std::string_view label, const std::string& text) {
    const std::string head = fmt::format("   {}: ", label);
    const auto width = static_cast<std::size_t>(style.width());
    return head + wrap_hanging(text, head.size(), head.size(), width) + "\n";
}

// ---- How sure an answer is (issue 31; docs/explain.md, "Basis"): one line per problem. ----
std::string basis_line(const Diagnosis& d, const Style& style) {
    const Basis basis = basis_of(d);
    const char* why = basis == Basis::signature ? "a signature of this specific entry matched"
                      : d.facts_only            ? "the reporter's machine predicts it; no log line shows it"
                      : d.entry->cause_varies   ? "several causes print this message; public threads with it had others"
                                                : "a family entry: the kind of message, not its cause";
    return labelled(style, basis_word(basis), why);
}

// ---- Similar public reports (issue 31; docs/explain.md, "Similar public reports"). ----
// "github.com/ROCm/ROCm/issues/2196": the address without its scheme, as people write it.
std::string short_url(const std::string& url) {
    const auto scheme = url.find("://");
    return scheme == std::string::npos ? url : url.substr(scheme + 3);
}

std::string similar_text(const ExplainReport& report, const Style& style) {
    std::string out;
    if (report.similar.empty()) return out;
    out += fmt::format("\n{}\n", style.bold("Similar public reports"));
    std::size_t n = 0;
    for (const auto& r : report.similar) {
        const auto& t = r.record;
        auto field = [&](const char* key) { return terminal_safe(t.value(key, std::string())); };
        std::string machine = field("gpu");
        if (!field("gfx_target").empty()) machine += (machine.empty() ? "" : " ") + ("(" + field("gfx_target") + ")");
        if (!field("rocm").empty()) machine += (machine.empty() ? "" : ", ") + ("ROCm " + field("rocm"));
        out += fmt::format("{}. {} similarity {:.2f}{}\n", ++n, field("url").empty() ? "" : short_url(field("url")),
                           r.similarity, machine.empty() ? "" : " · " + machine);
        std::string cause =
            field("kb_entry").empty() ? field("category") : field("kb_entry") + " [" + field("category") + "]";
        out += labelled(style, "cause", cause + ": " + field("cause"));
        out += labelled(style, "fixed", field("fixed").empty() ? "unresolved" : field("fixed"));
    }
    return out;
}

std::string severity_text(kb::Severity severity, const Style& style) {
    const std::string label(kb::severity_label(severity));
    return severity == kb::Severity::critical  ? style.red(label)
           : severity == kb::Severity::warning ? style.yellow(label)
                                               : style.dim(label);
}

// Text that may span lines in the kb (TOML's line continuations are already joined), on one.
std::string one_line(std::string_view text) {
    std::string out;
    for (const auto line : split_lines(text)) {
        const auto t = trim(line);
        if (t.empty()) continue;
        if (!out.empty()) out += ' ';
        out += t;
    }
    return out;
}

}  // namespace

Basis report_basis(const ExplainReport& report) {
    if (!report.diagnoses.empty()) return answer_basis(report.diagnoses);
    return report.vote ? Basis::similar : Basis::none;
}

std::string seen_line(const kb::Entry& entry, std::string_view source, std::uint64_t line) {
    return fmt::format("{}:{}: {} {}: {}", source, line, kb::severity_label(entry.severity), entry.id, entry.title);
}

std::string render_text(const ExplainReport& report, const Style& style, const TextOptions& options) {
    std::string out;
    if (report.diagnoses.empty()) {
        std::uint64_t lines = 0;
        for (const auto& in : report.inputs) lines += in.lines;
        out += fmt::format("No known problem recognised in {} line{} ({}).\n", lines, lines == 1 ? "" : "s",
                           report.inputs.size() == 1 ? report.inputs.front().source
                                                     : fmt::format("{} inputs", report.inputs.size()));
        if (report.vote)
            out += fmt::format("{}: {} of the {} nearest public reports established {}.\n",
                               style.bold("resembles " + report.vote->category), report.vote->votes, report.vote->of,
                               report.vote->category);
        return out + similar_text(report, style);
    }
    if (report.reporter) out += fmt::format("facts from the report: {}\n\n", report_facts_line(*report.reporter));
    std::size_t rank = 0;
    for (const auto& d : report.diagnoses) {
        const auto& e = *d.entry;
        ++rank;
        if (rank > 1) out += '\n';
        out += fmt::format("{}. {} [{}] {}, {}\n", rank, style.bold(e.id), e.category, severity_text(e.severity, style),
                           kb::confidence_name(e.confidence));
        out += style.wrapped(fmt::format("   {}\n", e.title));
        // Prose is wrapped to the output's width (labelled()); the excerpt (machine output) and
        // the `next` command (for pasting) never are.
        out += basis_line(d, style);
        if (rank == 1 && report.message_causes)
            out += labelled(style, "public threads with this message",
                            similar::message_causes_text(*report.message_causes));
        // The entry's first sentence says what the problem is; `rmcp kb show ID` has the rest.
        // ... and what usually causes it, where the kb says (its `causes`).
        out += labelled(style, "what",
                        kb::summary_line(e.summary) +
                            (e.causes.empty() ? std::string() : " Usual causes: " + one_line(e.causes)));
        std::string where;
        const std::size_t shown = std::min<std::size_t>(d.occurrences.size(), 8);
        for (std::size_t i = 0; i < shown; ++i)
            where += fmt::format("{}{}:{}", i ? ", " : "", d.occurrences[i].source, d.occurrences[i].line);
        if (d.total_matches > shown) where += fmt::format(" (+{} more)", d.total_matches - shown);
        if (d.facts_only) where = "no log line; the reporter's machine";
        out += labelled(style, "at", where);
        if (options.verbose) {
            for (const auto& ev : d.evidence)
                out += fmt::format("   evidence: {} = {} ({})\n", ev.fact,
                                   ev.value.is_null() ? "absent" : json_text(ev.value), ev.test);
            out += fmt::format("   why here: {}\n", d.reason);
        }
        const auto first = std::find_if(d.occurrences.begin(), d.occurrences.end(),
                                        [](const Occurrence& o) { return !o.excerpt.empty(); });
        if (first != d.occurrences.end()) {
            std::size_t width = 0;
            for (const auto& l : first->excerpt) width = std::max(width, std::to_string(l.number).size());
            for (const auto& l : first->excerpt) {
                const bool hit = l.match_end != std::string::npos;
                const auto text = printable_line(l);
                out += fmt::format("   {} {:>{}} | {}\n", hit ? ">" : " ", l.number, width,
                                   hit ? style.bold(text) : style.dim(text));
            }
        }
        // The one command to run next, then its cost; the entry's diagnostic step says how to
        // learn more when there is no fix, or after it.
        const auto step = report.fix_steps.find(e.id);
        if (step != report.fix_steps.end()) {
            out += fmt::format("   next: {}\n", step->second.next);
            if (!step->second.cost.empty() && step->second.cost != "none")
                out += labelled(style, "cost", step->second.cost);
        }
        if (!e.next_step.empty()) out += labelled(style, "check", one_line(e.next_step));
        if (options.verbose) {
            for (const auto& fix : e.fixes)
                if (step == report.fix_steps.end() || fix.patch != step->second.patch)
                    out +=
                        fmt::format("   other fix: {}{}\n", fix.patch, fix.cost.empty() ? "" : " (" + fix.cost + ")");
            for (const auto& ref : e.references) out += fmt::format("   see: {}\n", ref);
        }
    }
    return out + similar_text(report, style);
}

nlohmann::json render_json(const ExplainReport& report) {
    using nlohmann::json;
    json inputs = json::array();
    for (const auto& in : report.inputs)
        inputs.push_back({{"source", in.source},
                          {"bytes", in.bytes},
                          {"lines", in.lines},
                          {"complete", in.complete},
                          {"error", in.error.empty() ? json(nullptr) : json(in.error)}});
    json problems = json::array();
    std::size_t rank = 0;
    for (const auto& d : report.diagnoses) {
        const auto& e = *d.entry;
        json sigs = json::array();
        for (const auto i : d.signatures_matched) sigs.push_back({{"index", i}, {"pattern", e.signatures[i].pattern}});
        json occurrences = json::array();
        for (const auto& o : d.occurrences) {
            json excerpt = json::array();
            for (const auto& l : o.excerpt)
                excerpt.push_back({{"line", l.number},
                                   {"text", printable_line(l)},
                                   {"match", l.match_end != std::string::npos},
                                   {"truncated", l.truncated}});
            occurrences.push_back({{"source", o.source},
                                   {"line", o.line},
                                   {"signature", o.signature},
                                   {"context_found", o.context_found},
                                   {"excerpt", excerpt}});
        }
        json fixes = json::array();
        json costs = json::object();
        for (const auto& f : e.fixes) {
            fixes.push_back(f.patch);
            costs[f.patch] = f.cost;
        }
        const auto step = report.fix_steps.find(e.id);
        json evidence = json::array();
        for (const auto& ev : d.evidence)
            evidence.push_back({{"fact", ev.fact}, {"value", ev.value}, {"test", ev.test}});
        problems.push_back({{"rank", ++rank},
                            {"id", e.id},
                            {"basis", basis_name(basis_of(d))},
                            {"category", e.category},
                            {"title", e.title},
                            {"severity", kb::severity_name(e.severity)},
                            {"confidence", kb::confidence_name(e.confidence)},
                            {"summary", e.summary},
                            {"summary_line", kb::summary_line(e.summary)},
                            {"causes", e.causes.empty() ? json(nullptr) : json(one_line(e.causes))},
                            {"applies_here", d.applies_here ? json(*d.applies_here) : json(nullptr)},
                            {"reason", d.reason},
                            {"total_matches", d.total_matches},
                            {"signatures_matched", sigs},
                            {"context_found", d.context_found},
                            {"occurrences", occurrences},
                            {"fixes", fixes},
                            {"costs", costs},
                            {"next", step == report.fix_steps.end() ? json(nullptr) : json(step->second.next)},
                            {"check", e.next_step.empty() ? json(nullptr) : json(one_line(e.next_step))},
                            {"facts_only", d.facts_only},
                            {"evidence", evidence},
                            {"references", e.references}});
    }
    json out{{"schema_version", k_explain_schema_version},
             {"inputs", inputs},
             {"facts", report.facts_from.empty() ? json(nullptr) : json(report.facts_from)},
             {"facts_source", report.facts_source},
             {"recognised", report.diagnoses.size()},
             {"basis", basis_name(report_basis(report))},
             {"similar", similar::reports_json(report.similar)},
             {"problems", problems}};
    if (report.reporter) out["report_facts"] = report_facts_json(*report.reporter);
    out["message_causes"] =
        report.message_causes ? similar::message_causes_json(*report.message_causes) : json(nullptr);
    if (report.vote)
        out["similar_vote"] = {{"category", report.vote->category},
                               {"votes", report.vote->votes},
                               {"of", report.vote->of}};
    return out;
}

}  // namespace rmcp::explain
