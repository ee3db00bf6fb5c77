// Text is bytes until it is shown. Whatever rmcp read (a path, a value detect read, a log
// line, an argument, an environment value) may hold any byte; these are the two ways it
// leaves rmcp as text (docs/security.md, "Text from input"):
//
//   - json_text(): every JSON document and every JSON value shown as text. nlohmann::json's
//     dump() throws type_error 316 on invalid UTF-8 by default; here an invalid byte becomes
//     U+FFFD, and DEL, the C1 controls U+0080..U+009F and the bidirectional overrides are
//     written as \u escapes, so the document parses back to the same characters and a
//     terminal showing it sees no control. (C0 controls are \u-escaped by nlohmann already.)
//     CTest `raw_dump_check` fails on a `.dump(` anywhere else in src/.
//
//   - terminal_safe(): text for a terminal. Each control is shown as '?': C0 (tab, and newline
//     where the text is lines by design, excepted), DEL, C1 both as a raw byte 0x80..0x9F and
//     as its UTF-8 encoding (U+009B is CSI, U+009D OSC: terminals such as xterm act on them),
//     ESC (so an escape sequence loses its introducer and shows as inert text), and the
//     bidirectional overrides and isolates U+202A..U+202E, U+2066..U+2069 (they reorder what
//     follows: CVE-2021-42574). A byte that is not part of valid UTF-8 is shown as U+FFFD.
//     '?' is what explain always showed for a control byte; one column, like what it replaces.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace rmcp {

// The document as text: compact (indent < 0) or indented, never throws on string contents.
std::string json_text(const nlohmann::json& doc, int indent = -1);

enum class Shown {
    line,   // one line: a newline is a control too
    lines,  // text that is several lines by design (a message, a rendered page)
    // lines, keeping the colour sequences Style writes (ESC [ 0|1|2|31|32|33 m) when the user
    // asked for colour: nothing from input can reach the terminal through them but a colour
    styled_lines,
};

std::string terminal_safe(std::string_view bytes, Shown shown = Shown::line);

// Whether terminal_safe(bytes, shown) would show a control as '?' (a byte that is only invalid
// UTF-8, outside 0x80..0x9F, is not a control: it becomes U+FFFD and controls nothing).
bool has_terminal_controls(std::string_view bytes, Shown shown = Shown::line);

// Length of the valid UTF-8 sequence at s[i] (shortest form, no surrogates, at most
// U+10FFFF), or 0 when the byte there does not start one.
std::size_t utf8_length(std::string_view s, std::size_t i);

}  // namespace rmcp
