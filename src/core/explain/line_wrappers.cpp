#include "explain/line_wrappers.hpp"

#include <cstring>

namespace rmcp::explain {

// Quote markers and blanks, then optionally a compose column ("ollama-1  | ", "ollama_1  | ")
// and quote markers and blanks again. Timestamp prefixes are not in it: a journald prefix made
// the scan of every log 2 to 3.7 times the work, an ISO one 6.5% more next to the compose
// column; the signatures that use '^' are few and not for lines that go through journald
// (docs/PERFORMANCE.md, "Pasted logs").
const std::string_view k_line_wrapper = R"([ \t>]*(?:[A-Za-z0-9][A-Za-z0-9_.-]*[ \t]+\|[ \t>]*)?)";

std::string anchor_wrapped(std::string_view pattern) {
    std::string out;
    out.reserve(pattern.size() + 16);
    bool in_class = false;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\') {  // an escape: the next character is never an anchor or a class bracket
            out += c;
            if (i + 1 < pattern.size()) out += pattern[++i];
            continue;
        }
        if (in_class) {
            out += c;
            if (c == ']') in_class = false;
            continue;
        }
        if (c == '[') {
            // "[^...]" negates, "[]...]" and "[^]...]" hold a literal ']'.
            in_class = true;
            out += c;
            if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
            if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
            continue;
        }
        if (c == '^') {
            out += '^';
            out += k_line_wrapper;
        } else if (c == '$') {
            out += "\\r?$";
        } else {
            out += c;
        }
    }
    return out;
}

namespace {
bool is_quote_or_blank(char c) { return c == ' ' || c == '\t' || c == '>'; }
bool is_alnum(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
}  // namespace

// k_line_wrapper by hand: the pieces (quote markers and blanks; a service name; blanks; '|')
// are disjoint character sets, so the greedy reading is the only one and nothing is tried
// twice. (std::regex recursed once per character here: no backtracking engine on input,
// docs/security.md.)
std::string_view unwrap(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::size_t i = 0;
    while (i < line.size() && is_quote_or_blank(line[i])) ++i;
    if (i < line.size() && is_alnum(line[i])) {
        std::size_t j = i + 1;
        while (j < line.size() && (is_alnum(line[j]) || line[j] == '_' || line[j] == '.' || line[j] == '-')) ++j;
        std::size_t k = j;
        while (k < line.size() && (line[k] == ' ' || line[k] == '\t')) ++k;
        if (k > j && k < line.size() && line[k] == '|') {
            i = k + 1;
            while (i < line.size() && is_quote_or_blank(line[i])) ++i;
        }
    }
    line.remove_prefix(i);
    return line;
}

std::string_view EscapeFilter::filter(std::string_view in, std::string& scratch) {
    if (m_state == State::text && std::memchr(in.data(), '\x1b', in.size()) == nullptr) return in;
    scratch.clear();
    scratch.reserve(in.size());
    for (const char c : in) {
        const auto b = static_cast<unsigned char>(c);
        if (m_state != State::text && (c == '\n' || ++m_length > k_max_sequence)) m_state = State::text;
        switch (m_state) {
        case State::text:
            if (c == '\x1b') {
                m_state = State::escape;
                m_length = 1;
            } else {
                scratch += c;
            }
            break;
        case State::escape:
            if (c == '[') m_state = State::csi;
            else if (c == ']') m_state = State::osc;
            else if (b >= 0x20 && b <= 0x2f) m_state = State::intermediate;  // "ESC ( B"
            else if (c == '\x1b') m_length = 1;
            else m_state = State::text;  // "ESC x": the sequence ends with x
            break;
        case State::intermediate:
            if (b >= 0x30 && b <= 0x7e) m_state = State::text;
            else if (b < 0x20 || b > 0x7e) {  // not a sequence after all: the byte is text
                m_state = State::text;
                scratch += c;
            }
            break;
        case State::csi:
            if (b >= 0x40 && b <= 0x7e) m_state = State::text;  // the final byte
            else if (b < 0x20 || b > 0x3f) {                    // broken off: the byte is text
                m_state = c == '\x1b' ? State::escape : State::text;
                m_length = 1;
                if (c != '\x1b') scratch += c;
            }
            break;
        case State::osc:
            if (c == '\x07') m_state = State::text;
            else if (c == '\x1b') m_state = State::osc_escape;
            break;
        case State::osc_escape:
            // ESC \ ends the OSC; ESC followed by anything else stays inside it.
            m_state = c == '\\' ? State::text : State::osc;
            break;
        }
    }
    return scratch;
}

}  // namespace rmcp::explain
