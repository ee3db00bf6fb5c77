// What the terminal rmcp writes to can show, decided in one place for every command
// (issue 30, item 1; docs/ux.md): colour, the glyphs ✓ ✗ — → or their ASCII spellings, and
// the width text is wrapped to. Renderers get the answer through Style (util/style.hpp);
// the CLI builds it once per run (src/cli/context.cpp).
//
//   colour: --color always|never win; automatic is on only for a terminal, with NO_COLOR
//           unset or empty (https://no-color.org) and TERM not "dumb" (terminfo's name for a
//           terminal without cursor or colour control; git, ls and rg go by it too).
//   glyphs: UTF-8 when the locale's character set is (LC_ALL, else LC_CTYPE, else LANG, as
//           newlocale(LC_CTYPE_MASK, "") resolves them; nl_langinfo_l(CODESET) names the set;
//           the process's own locale is never changed), else the ASCII spellings of
//           ascii_glyphs().
//   width:  the terminal's columns (TIOCGWINSZ on the output), else $COLUMNS, else 80.
#pragma once

#include <string>
#include <string_view>

namespace rmcp {

enum class ColorMode { automatic, always, never };

// Resolves --color against the stream, NO_COLOR and TERM=dumb.
bool use_color(ColorMode mode, int fd);

// Whether the locale the environment selects uses UTF-8 (a locale that is named but not
// installed: whether its name says UTF-8). The process's own locale is not touched.
bool locale_is_utf8();

// The columns text is wrapped to on `fd`: the terminal's width when `fd` is one, else a
// positive $COLUMNS, else 80. Never below 20 (a narrower setting is taken as 20).
int output_width(int fd);
// The rows of the terminal on `fd`, else a positive $LINES, else 24 (the pager's test).
int output_height(int fd);

// The glyphs rmcp draws and their ASCII spellings, in one table (the order of both).
inline constexpr std::string_view k_unicode_glyphs[] = {"✓", "✗", "—", "→", "…", "≥", "≤", "·"};
inline constexpr std::string_view k_ascii_glyphs[] = {"+", "x", "--", "->", "...", ">=", "<=", "-"};

// `text` with every glyph of the table spelt in ASCII (for a locale that is not UTF-8).
std::string ascii_glyphs(std::string_view text);

// Columns `text` takes on a terminal: one per UTF-8 character, none for the colour
// sequences Style writes (ESC [ ... m). East Asian wide characters are not special-cased:
// rmcp's own text has none.
std::size_t display_width(std::string_view text);

// Word-wraps each line of `text` to `width` columns. A line that is wrapped continues
// with its own leading spaces (and a "- " or "* " item marker's width) as indent, so
// indented paragraphs and list items stay aligned. Words longer than a line stay whole.
// Lines already short enough, and blank lines, are kept as they are.
std::string wrap_text(std::string_view text, int width);

// Greedy word wrap of one paragraph with a hanging indent: the first line continues a line
// already `first_cols` wide, the others start with `indent` spaces; runs of blanks (and line
// breaks) become one space; a word longer than a line (a path, a URL) stays whole. No trailing
// newline. Doctor's checklist and explain's labelled lines are written with it.
std::string wrap_hanging(std::string_view text, std::size_t first_cols, std::size_t indent, std::size_t width);

}  // namespace rmcp
