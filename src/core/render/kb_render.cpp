#include "render/kb_render.hpp"

#include "kb/describe.hpp"
#include "kb/predicate.hpp"
#include "util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rmcp {

namespace {
using nlohmann::json;

std::string flat(std::string_view text) {
    std::string out;
    for (char c : text) {
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
        if (c == ' ' && !out.empty() && out.back() == ' ') continue;
        out += c;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}

std::vector<kb::DescribedLine> applies_lines(const kb::Entry& e) {
    if (!e.applies) return {};
    return kb::describe_predicate(*e.applies);
}

json signatures_json(const kb::Entry& e) {
    json sigs = json::array();
    for (const auto& s : e.signatures)
        sigs.push_back({{"pattern", s.pattern}, {"context", s.context}, {"window", s.window}});
    return sigs;
}

json fixes_json(const kb::Entry& e) {
    json fixes = json::array();
    for (const auto& f : e.fixes) fixes.push_back({{"patch", f.patch}, {"cost", f.cost}});
    return fixes;
}

// Markdown: backslash-escape what would start markup inside table cells and prose.
std::string md_cell(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (c == '|') out += "\\|";
        else out += c;
    }
    return out;
}

std::string md_code(std::string_view s) {
    // A code span must use more backticks than the text contains in a row.
    std::size_t run = 0, longest = 0;
    for (char c : s) {
        run = c == '`' ? run + 1 : 0;
        longest = std::max(longest, run);
    }
    const std::string ticks(longest + 1, '`');
    const bool pad = !s.empty() && (s.front() == '`' || s.back() == '`');
    return ticks + (pad ? " " : "") + std::string(s) + (pad ? " " : "") + ticks;
}

}  // namespace

std::string render_kb_list_text(const kb::KnowledgeBase& kb, const Style& style) {
    std::size_t id_w = 2, cat_w = 8, conf_w = 10;
    for (const auto& e : kb.entries) {
        id_w = std::max(id_w, e.id.size());
        cat_w = std::max(cat_w, e.category.size());
        conf_w = std::max(conf_w, kb::confidence_name(e.confidence).size());
    }
    std::string out = style.bold(fmt::format("{:<{}}  {:<8}  {:<{}}  {:<{}}  {}", "ID", id_w, "SEVERITY", "CATEGORY",
                                             cat_w, "CONFIDENCE", conf_w, "TITLE")) +
                      "\n";
    for (const auto& e : kb.entries)
        out += fmt::format("{:<{}}  {:<8}  {:<{}}  {:<{}}  {}\n", e.id, id_w, kb::severity_name(e.severity), e.category,
                           cat_w, kb::confidence_name(e.confidence), conf_w, e.title);
    return out;
}

json kb_list_json(const kb::KnowledgeBase& kb) {
    json entries = json::array();
    for (const auto& e : kb.entries) {
        json fixes = json::array();
        for (const auto& f : e.fixes) fixes.push_back(f.patch);
        entries.push_back({{"id", e.id},
                           {"title", e.title},
                           {"severity", kb::severity_name(e.severity)},
                           {"category", e.category},
                           {"confidence", kb::confidence_name(e.confidence)},
                           {"scope", kb::scope_name(e.scope)},
                           {"summary_line", kb::summary_line(e.summary)},
                           {"applies", e.applies != nullptr},
                           {"signatures", e.signatures.size()},
                           {"fixes", fixes}});
    }
    return {{"schema_version", k_kb_schema_version}, {"entries", entries}};
}

std::string render_kb_show_text(const kb::Entry& e, const Style& style, bool verbose) {
    std::string out = style.bold(e.id) + " — " + e.title + "\n";
    out += fmt::format("severity: {}   category: {}   confidence: {}   scope: {}\n\n", kb::severity_name(e.severity),
                       e.category, kb::confidence_name(e.confidence), kb::scope_name(e.scope));
    out += flat(e.summary) + "\n";
    if (!e.next_step.empty()) out += "\n" + style.bold("Next step:") + " " + flat(e.next_step) + "\n";
    out += "\n" + style.bold("When doctor reports it:") + "\n";
    if (!e.applies) out += "  never from facts: this entry recognises log lines only (rmcp explain)\n";
    for (const auto& l : applies_lines(e)) out += std::string(2 + 2 * l.depth, ' ') + l.text + "\n";
    out += "\n" + style.bold("Log signatures (rmcp explain):") + "\n";
    if (e.signatures.empty()) out += "  none: doctor only\n";
    if (e.cause_varies)
        out += "  a message that several causes print: explain answers it as \"likely\", not \"recognised\"\n";
    for (const auto& s : e.signatures) {
        out += "  /" + s.pattern + "/\n";
        if (!s.context.empty()) {
            out += fmt::format("    context within {} lines: {}\n", s.window, join(s.context, ", "));
        }
    }
    out += "\n" + style.bold("Fixes (first one first; rmcp patch show ID):") + "\n";
    if (e.fixes.empty()) out += "  none known; see the references\n";
    std::size_t n = 0;
    for (const auto& f : e.fixes) out += fmt::format("  {}. {}: {}\n", ++n, f.patch, f.cost);
    out += "\n" + style.bold("References:") + "\n";
    for (const auto& r : e.references) out += "  " + r + "\n";
    if (verbose && !e.notes.empty()) out += "\n" + style.bold("Maintainer notes:") + "\n  " + flat(e.notes) + "\n";
    out += "\n" + style.dim("defined in " + e.file) + "\n";
    // On its own line: a long path must not wrap the hint apart (-v replaces exactly this line).
    if (!verbose && !e.notes.empty()) out += style.dim("(add -v for maintainer notes)") + "\n";
    return out;
}

json kb_show_json(const kb::Entry& e) {
    json applies = json::array();
    for (const auto& l : applies_lines(e)) applies.push_back({{"depth", l.depth}, {"text", l.text}});
    return {{"schema_version", k_kb_schema_version},
            {"id", e.id},
            {"title", e.title},
            {"severity", kb::severity_name(e.severity)},
            {"category", e.category},
            {"confidence", kb::confidence_name(e.confidence)},
            {"scope", kb::scope_name(e.scope)},
            {"summary", flat(e.summary)},
            {"summary_line", kb::summary_line(e.summary)},
            {"next_step", e.next_step.empty() ? json(nullptr) : json(flat(e.next_step))},
            {"applies", e.applies ? applies : json(nullptr)},
            {"signatures", signatures_json(e)},
            {"fixes", fixes_json(e)},
            {"references", e.references},
            {"cause_varies", e.cause_varies},
            {"notes", e.notes.empty() ? json(nullptr) : json(flat(e.notes))},
            {"file", e.file}};
}

std::map<std::string, std::string> render_kb_markdown(const kb::KnowledgeBase& kb) {
    std::map<std::string, std::string> pages;
    const std::string generated = "<!-- Generated by `rmcp kb render --format markdown` from kb/*.toml "
                                  "(scripts/render-kb.sh). Edit the TOML, not this page. -->\n\n";
    std::string index = generated + "# Knowledge base\n\n"
                                    "Every known problem rmcp checks for (`rmcp doctor`) or recognises in logs "
                                    "(`rmcp explain`). Format and confidence levels: "
                                    "[docs/kb-format.md](../kb-format.md).\n\n"
                                    "| entry | severity | category | confidence | doctor | explain | summary |\n"
                                    "| --- | --- | --- | --- | --- | --- | --- |\n";
    for (const auto& e : kb.entries) {
        index += fmt::format("| [{}]({}.md) | {} | {} | {} | {} | {} | {} |\n", e.id, e.id,
                             kb::severity_name(e.severity), e.category, kb::confidence_name(e.confidence),
                             e.applies ? "yes" : "—", e.signatures.empty() ? "—" : std::to_string(e.signatures.size()),
                             md_cell(kb::summary_line(e.summary)));
        std::string page = generated;
        page += fmt::format("# {}: {}\n\n", e.id, e.title);
        page += fmt::format(
            "| severity | category | confidence | scope |\n| --- | --- | --- | --- |\n| {} | {} | {} | {} |\n\n",
            kb::severity_name(e.severity), e.category, kb::confidence_name(e.confidence), kb::scope_name(e.scope));
        page += flat(e.summary) + "\n\n";
        if (!e.next_step.empty()) page += "**Next step:** " + flat(e.next_step) + "\n\n";
        page += "## When doctor reports it\n\n";
        if (!e.applies) page += "Never from facts: this entry recognises log lines only (`rmcp explain`).\n\n";
        for (const auto& l : applies_lines(e)) page += std::string(2 * l.depth, ' ') + "- " + l.text + "\n";
        if (e.applies) page += "\n";
        page += "## Log signatures\n\n";
        if (e.signatures.empty()) page += "None: `rmcp doctor` only.\n\n";
        if (e.cause_varies)
            page += "A message that several causes print (`cause_varies`): `rmcp explain` answers it as "
                    "\"likely\" (basis `family`), not \"recognised\".\n\n";
        for (const auto& s : e.signatures) {
            page += "- " + md_code(s.pattern);
            if (!s.context.empty()) {
                std::string words;
                for (const auto& w : s.context) words += (words.empty() ? "" : ", ") + md_code(w);
                page += fmt::format(" (context within {} lines: {})", s.window, words);
            }
            page += "\n";
        }
        if (!e.signatures.empty()) page += "\n";
        page += "## Fixes\n\n";
        if (e.fixes.empty()) page += "None known; see the references.\n\n";
        std::size_t n = 0;
        for (const auto& f : e.fixes) page += fmt::format("{}. `{}`: {}\n", ++n, f.patch, f.cost);
        if (!e.fixes.empty()) page += "\n";
        page += "## References\n\n";
        for (const auto& r : e.references) page += "- <" + r + ">\n";
        if (!e.notes.empty()) page += "\n## Notes\n\n" + flat(e.notes) + "\n";
        pages[e.id + ".md"] = std::move(page);
    }
    pages["index.md"] = std::move(index);
    return pages;
}

std::string render_kb_lint_text(const std::vector<kb::LintProblem>& problems, std::size_t entries,
                                const std::vector<std::string>& healthy, const Style& style) {
    std::string out;
    for (const auto& p : problems)
        out +=
            fmt::format("{} {} [{}]: {}\n", style.yellow(p.entry), style.dim("(" + p.file + ")"), p.check, p.message);
    const std::string machines = join(healthy, ", ");
    out += fmt::format("{} entries checked, {} problem{}; healthy machines: {}\n", entries, problems.size(),
                       problems.size() == 1 ? "" : "s", machines.empty() ? "none given" : machines);
    return out;
}

json kb_lint_json(const std::vector<kb::LintProblem>& problems, std::size_t entries,
                  const std::vector<std::string>& healthy) {
    json list = json::array();
    for (const auto& p : problems)
        list.push_back({{"entry", p.entry}, {"file", p.file}, {"check", p.check}, {"message", p.message}});
    return {{"schema_version", k_kb_schema_version}, {"entries", entries}, {"healthy", healthy}, {"problems", list}};
}

}  // namespace rmcp
