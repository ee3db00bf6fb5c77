#include "util/toml_guard.hpp"

namespace rmcp {

std::optional<std::size_t> toml_non_ascii_outside_strings(std::string_view text) {
    enum class State { code, comment, basic, literal, multi_basic, multi_literal };
    State state = State::code;
    std::size_t line = 1;
    const auto at = [&](std::size_t i, std::string_view s) { return text.substr(i, s.size()) == s; };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n') {
            ++line;
            // Single-line strings and comments end here (an unterminated string is toml++'s
            // error to report); multi-line strings go on.
            if (state == State::comment || state == State::basic || state == State::literal) state = State::code;
            continue;
        }
        switch (state) {
        case State::code:
            if (static_cast<unsigned char>(c) >= 0x80) return line;
            if (c == '#') state = State::comment;
            else if (at(i, "\"\"\"")) state = State::multi_basic, i += 2;
            else if (at(i, "'''")) state = State::multi_literal, i += 2;
            else if (c == '"') state = State::basic;
            else if (c == '\'') state = State::literal;
            break;
        case State::comment: break;
        case State::basic:
            if (c == '\\') ++i;
            else if (c == '"') state = State::code;
            break;
        case State::literal:
            if (c == '\'') state = State::code;
            break;
        case State::multi_basic:
            if (c == '\\') ++i;
            else if (at(i, "\"\"\"")) state = State::code, i += 2;
            break;
        case State::multi_literal:
            if (at(i, "'''")) state = State::code, i += 2;
            break;
        }
    }
    return std::nullopt;
}

}  // namespace rmcp
