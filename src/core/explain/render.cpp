#include "explain/render.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rmcp::explain {

namespace {

// Length of the valid UTF-8 sequence at s[i], or 0.
std::size_t utf8_length(std::string_view s, std::size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    unsigned min = 0;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        min = 0x10000;
    } else return 0;
    if (i + n > s.size()) return 0;
    unsigned cp = c & (0x7f >> n);
    for (std::size_t k = 1; k < n; ++k) {
        const auto d = static_cast<unsigned char>(s[i + k]);
        if ((d & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (d & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

// Drops ANSI escape sequences (CSI "ESC [ ... final", OSC "ESC ] ... BEL/ST", two-byte ESC x).
std::string strip_ansi(std::string_view s, std::size_t& keep_pos) {
    std::string out;
    const std::size_t mark = keep_pos;
    bool mark_set = false;
    for (std::size_t i = 0; i < s.size();) {
        if (!mark_set && i >= mark) {
            keep_pos = out.size();
            mark_set = true;
        }
        if (s[i] != '\x1b') {
            out += s[i++];
            continue;
        }
        if (i + 1 >= s.size()) break;
        if (s[i + 1] == '[') {
            i += 2;
            while (i < s.size() && !(s[i] >= 0x40 && s[i] <= 0x7e)) ++i;
            ++i;
        } else if (s[i + 1] == ']') {
            i += 2;
            while (i < s.size() && s[i] != '\x07' && !(s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '\\')) ++i;
            i += (i < s.size() && s[i] == '\x1b') ? 2U : 1U;
        } else {
            i += 2;
        }
    }
    if (!mark_set) keep_pos = out.size();
    return out;
}

}  // namespace

std::string printable_line(const ExcerptLine& line) {
    std::size_t match_pos = line.match_end == std::string::npos ? line.text.size() : line.match_end;
    std::string text = strip_ansi(line.text, match_pos);
    // Progress bars redraw with '\r': keep the redraw a terminal would have shown with the match.
    if (text.find('\r') != std::string::npos) {
        std::size_t begin = 0;
        std::size_t end = text.size();
        if (line.match_end != std::string::npos) {
            const auto before = text.rfind('\r', match_pos > 0 ? match_pos - 1 : 0);
            begin = (before == std::string::npos || before >= match_pos) ? 0 : before + 1;
            const auto after = text.find('\r', match_pos);
            end = after == std::string::npos ? text.size() : after;
        } else {
            // The last non-empty redraw.
            while (end > 0) {
                const auto cr = text.rfind('\r', end - 1);
                begin = cr == std::string::npos ? 0 : cr + 1;
                if (begin < end) break;
                if (cr == std::string::npos) break;
                end = cr;
            }
        }
        text = text.substr(begin, end - begin);
    }
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 && c != '\t') {
            out += '?';
            ++i;
        } else if (c == 0x7f) {
            out += '?';
            ++i;
        } else if (const auto n = utf8_length(text, i); n > 0) {
            out.append(text, i, n);
            i += n;
        } else {
            out += "\xef\xbf\xbd";
            ++i;
        }
    }
    if (line.truncated) out += " …";
    return out;
}

std::string render_text(const ExplainReport& report, const Style& style) {
    std::string out;
    if (report.diagnoses.empty()) {
        std::uint64_t lines = 0;
        for (const auto& in : report.inputs) lines += in.lines;
        out += fmt::format("No known problem recognised in {} line{} ({}).\n", lines, lines == 1 ? "" : "s",
                           report.inputs.size() == 1 ? report.inputs.front().source
                                                     : fmt::format("{} inputs", report.inputs.size()));
        return out;
    }
    if (report.reporter) out += fmt::format("facts from the report: {}\n\n", report_facts_line(*report.reporter));
    std::size_t rank = 0;
    for (const auto& d : report.diagnoses) {
        const auto& e = *d.entry;
        ++rank;
        if (rank > 1) out += '\n';
        const std::string severity(kb::severity_name(e.severity));
        const std::string sev = e.severity == kb::Severity::critical  ? style.red(severity)
                                : e.severity == kb::Severity::warning ? style.yellow(severity)
                                                                      : style.dim(severity);
        out += fmt::format("{}. {} [{}] {}, {}\n", rank, style.bold(e.id), e.category, sev,
                           kb::confidence_name(e.confidence));
        out += fmt::format("   {}\n", e.title);
        // The entry's first sentence says what the problem is; `rmcp kb show ID` has the rest.
        out += fmt::format("   what: {}\n", kb::summary_line(e.summary));
        std::string where;
        const std::size_t shown = std::min<std::size_t>(d.occurrences.size(), 8);
        for (std::size_t i = 0; i < shown; ++i)
            where += fmt::format("{}{}:{}", i ? ", " : "", d.occurrences[i].source, d.occurrences[i].line);
        if (d.total_matches > shown) where += fmt::format(" (+{} more)", d.total_matches - shown);
        if (d.facts_only) where = "no log line; the reporter's machine";
        out += fmt::format("   at: {}\n", where);
        for (const auto& ev : d.evidence)
            out += fmt::format("   evidence: {} = {} ({})\n", ev.fact, ev.value.is_null() ? "absent" : ev.value.dump(),
                               ev.test);
        out += fmt::format("   why here: {}\n", d.reason);
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
        for (const auto& fix : e.fixes)
            out += fmt::format("   fix: {}{}\n", fix.patch, fix.cost.empty() ? "" : " (" + fix.cost + ")");
        if (e.fixes.empty()) out += "   fix: none known; see the references\n";
        if (!e.next_step.empty()) out += fmt::format("   next: {}\n", e.next_step);
        for (const auto& ref : e.references) out += fmt::format("   see: {}\n", ref);
    }
    return out;
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
        for (const auto& f : e.fixes) fixes.push_back({{"patch", f.patch}, {"cost", f.cost}});
        json evidence = json::array();
        for (const auto& ev : d.evidence)
            evidence.push_back({{"fact", ev.fact}, {"value", ev.value}, {"test", ev.test}});
        problems.push_back({{"rank", ++rank},
                            {"id", e.id},
                            {"category", e.category},
                            {"title", e.title},
                            {"severity", kb::severity_name(e.severity)},
                            {"confidence", kb::confidence_name(e.confidence)},
                            {"summary", e.summary},
                            {"summary_line", kb::summary_line(e.summary)},
                            {"applies_here", d.applies_here ? json(*d.applies_here) : json(nullptr)},
                            {"reason", d.reason},
                            {"total_matches", d.total_matches},
                            {"signatures_matched", sigs},
                            {"context_found", d.context_found},
                            {"occurrences", occurrences},
                            {"fixes", fixes},
                            {"next_step", e.next_step.empty() ? json(nullptr) : json(e.next_step)},
                            {"facts_only", d.facts_only},
                            {"evidence", evidence},
                            {"references", e.references}});
    }
    json out{{"schema_version", k_explain_schema_version},
             {"inputs", inputs},
             {"facts", report.facts_from.empty() ? json(nullptr) : json(report.facts_from)},
             {"facts_source", report.facts_source},
             {"recognised", report.diagnoses.size()},
             {"problems", problems}};
    if (report.reporter) out["report_facts"] = report_facts_json(*report.reporter);
    return out;
}

}  // namespace rmcp::explain
