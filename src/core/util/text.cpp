#include "util/text.hpp"

#include <nlohmann/json.hpp>

#include <array>

namespace rmcp {

namespace {

// U+202A..U+202E (LRE RLE PDF LRO RLO) and U+2066..U+2069 (LRI RLI FSI PDI), as UTF-8: the
// Unicode bidirectional algorithm's explicit formatting characters (UAX #9, 2.1 and 2.2).
bool is_bidi_control(std::string_view s, std::size_t i, std::size_t n) {
    if (n != 3 || static_cast<unsigned char>(s[i]) != 0xe2) return false;
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    const auto b2 = static_cast<unsigned char>(s[i + 2]);
    return (b1 == 0x80 && b2 >= 0xaa && b2 <= 0xae) || (b1 == 0x81 && b2 >= 0xa6 && b2 <= 0xa9);
}

// U+0080..U+009F encoded: C2 80..C2 9F.
bool is_c1_encoded(std::string_view s, std::size_t i, std::size_t n) {
    return n == 2 && static_cast<unsigned char>(s[i]) == 0xc2 && static_cast<unsigned char>(s[i + 1]) <= 0x9f;
}

// The colour sequences Style writes (util/style.hpp), and nothing else.
std::size_t style_sequence_length(std::string_view s, std::size_t i) {
    static constexpr std::array<std::string_view, 6> k_sequences{"\x1b[0m",  "\x1b[1m",  "\x1b[2m",
                                                                 "\x1b[31m", "\x1b[32m", "\x1b[33m"};
    for (const auto seq : k_sequences)
        if (s.substr(i, seq.size()) == seq) return seq.size();
    return 0;
}

std::string u_escape(unsigned cp) {
    static constexpr std::string_view k_hex = "0123456789abcdef";
    std::string out = "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out += k_hex[(cp >> static_cast<unsigned>(shift)) & 0xfU];
    return out;
}

}  // namespace

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
    } else {
        return 0;
    }
    if (i + n > s.size()) return 0;
    unsigned cp = c & (0x7fU >> n);
    for (std::size_t k = 1; k < n; ++k) {
        const auto d = static_cast<unsigned char>(s[i + k]);
        if ((d & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (d & 0x3fU);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

namespace {

enum class Piece { text, control, invalid };

// Calls on(piece, length) for each run terminal_safe() treats as one: a character (or a style
// sequence) kept as it is, a control, or a byte that is not UTF-8.
template <class On>
void each_piece(std::string_view s, Shown shown, On&& on) {
    const bool lines = shown != Shown::line;
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            if (c == 0x1b && shown == Shown::styled_lines)
                if (const auto n = style_sequence_length(s, i); n > 0) {
                    on(Piece::text, i, n);
                    i += n;
                    continue;
                }
            const bool control = (c < 0x20 && c != '\t' && !(c == '\n' && lines)) || c == 0x7f;
            on(control ? Piece::control : Piece::text, i, 1);
            ++i;
            continue;
        }
        const std::size_t n = utf8_length(s, i);
        if (n == 0) {
            on(c <= 0x9f ? Piece::control : Piece::invalid, i, 1);  // a raw C1 byte (8-bit terminals)
            ++i;
        } else {
            on(is_c1_encoded(s, i, n) || is_bidi_control(s, i, n) ? Piece::control : Piece::text, i, n);
            i += n;
        }
    }
}

}  // namespace

std::string terminal_safe(std::string_view s, Shown shown) {
    std::string out;
    out.reserve(s.size());
    each_piece(s, shown, [&](Piece piece, std::size_t i, std::size_t n) {
        switch (piece) {
        case Piece::text: out.append(s, i, n); break;
        case Piece::control: out += '?'; break;
        case Piece::invalid: out += "\xef\xbf\xbd"; break;  // U+FFFD REPLACEMENT CHARACTER
        }
    });
    return out;
}

bool has_terminal_controls(std::string_view s, Shown shown) {
    bool found = false;
    each_piece(s, shown, [&](Piece piece, std::size_t, std::size_t) { found = found || piece == Piece::control; });
    return found;
}

std::string json_text(const nlohmann::json& doc, int indent) {
    // The one dump() in src/ (CTest raw_dump_check).
    const std::string raw = doc.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
    // The text is valid UTF-8 now, and every byte >= 0x80 is inside a string: \u-escaping a
    // character there changes no value (RFC 8259, section 7).
    std::string out;
    out.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size();) {
        const auto c = static_cast<unsigned char>(raw[i]);
        if (c == 0x7f) {
            out += "\\u007f";
            ++i;
            continue;
        }
        if (c < 0x80) {
            out += static_cast<char>(c);
            ++i;
            continue;
        }
        const std::size_t n = utf8_length(raw, i);
        if (n == 0) {  // cannot happen after the replace handler; kept total all the same
            out += "\\ufffd";
            ++i;
        } else if (is_c1_encoded(raw, i, n)) {
            out += u_escape(0x80U | (static_cast<unsigned char>(raw[i + 1]) & 0x1fU));
            i += n;
        } else if (is_bidi_control(raw, i, n)) {
            const unsigned cp = 0x2000U | ((static_cast<unsigned char>(raw[i + 1]) & 0x3fU) << 6) |
                                (static_cast<unsigned char>(raw[i + 2]) & 0x3fU);
            out += u_escape(cp);
            i += n;
        } else {
            out.append(raw, i, n);
            i += n;
        }
    }
    return out;
}

}  // namespace rmcp
