// What surrounds a log line by the time someone pastes it: terminal colour codes, CRLF line
// ends, quote markers ("> " in issue replies), indentation, docker compose's service column
// ("ollama-1  | "). Signatures and report probes are written for the bare line; this module
// makes them match the wrapped one too.
//
//   log bytes → EscapeFilter (colour codes dropped, line numbers kept) → Hyperscan
//   pattern   → anchor_wrapped()  ("^" may be followed by a wrapper, "$" by a CR)
//   probe hit → unwrap()          (the reader parses the bare line)
//
// A wrapper only ever counts at the start of a line: a signature anchored with '^' still does
// not match in the middle of someone else's sentence. Only '^' and '$' need this: unanchored
// patterns match wherever the message sits on the line. Timestamp prefixes (journald, ISO)
// are left out on purpose (line_wrappers.cpp; docs/explain.md, "Pasted logs").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rmcp::explain {

// The wrapper grammar, in Hyperscan's syntax (unwrap() reads the same grammar by hand):
// quote markers and blanks, then optionally a compose service column and more of them.
extern const std::string_view k_line_wrapper;

// `pattern` (Hyperscan syntax, matched with HS_FLAG_MULTILINE) with k_line_wrapper after
// every line-start anchor '^' and an optional CR before every line-end anchor '$'; '^' and
// '$' inside character classes and escaped ones are left alone.
std::string anchor_wrapped(std::string_view pattern);

// `line` without its wrapper prefix and trailing CR.
std::string_view unwrap(std::string_view line);

// Drops ECMA-48 escape sequences (colour codes and the like: CSI "ESC [ ... final", OSC
// "ESC ] ... BEL or ESC \", two- and three-byte "ESC x") from a byte stream, across any chunk
// boundaries. A line end always passes and ends an unfinished sequence, so line numbers stay
// those of the raw log; a sequence longer than k_max_sequence is cut off there, so a hostile
// log cannot make a whole stretch vanish.
class EscapeFilter {
public:
    static constexpr std::size_t k_max_sequence = 256;

    // The bytes of `in` that are not part of an escape sequence: `in` itself when it holds
    // none (the usual case, no copy), else `scratch` refilled.
    std::string_view filter(std::string_view in, std::string& scratch);

private:
    enum class State { text, escape, intermediate, csi, osc, osc_escape };
    State m_state = State::text;
    std::size_t m_length = 0;  // bytes of the current sequence so far
};

}  // namespace rmcp::explain
