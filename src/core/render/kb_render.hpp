// Renderers of the knowledge base as documentation: `rmcp kb list` (text, JSON), `rmcp kb
// show ID` (text, JSON), `rmcp kb render --format markdown` (one page per entry plus an
// index, checked in under docs/kb/), and `rmcp kb lint`'s report.
#pragma once

#include "kb/kb.hpp"
#include "kb/lint.hpp"
#include "util/style.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace rmcp {

inline constexpr int k_kb_schema_version = 1;

std::string render_kb_list_text(const kb::KnowledgeBase& kb, const Style& style);
nlohmann::json kb_list_json(const kb::KnowledgeBase& kb);

// `notes` are written for the knowledge base's maintainers (audit remarks, dates checked): shown
// only with `verbose` (`rmcp kb show ID -v`, issue 30 item 9); the JSON always carries them.
std::string render_kb_show_text(const kb::Entry& e, const Style& style, bool verbose);
nlohmann::json kb_show_json(const kb::Entry& e);

// One Markdown page per entry (file name: <id>.md) and index.md, as file name -> content.
std::map<std::string, std::string> render_kb_markdown(const kb::KnowledgeBase& kb);

std::string render_kb_lint_text(const std::vector<kb::LintProblem>& problems, std::size_t entries,
                                const std::vector<std::string>& healthy, const Style& style);
nlohmann::json kb_lint_json(const std::vector<kb::LintProblem>& problems, std::size_t entries,
                            const std::vector<std::string>& healthy);

}  // namespace rmcp
