// Terminal styling for text renderers: colour only when enabled, the glyphs the terminal can
// show, and the width to wrap to. What the terminal can do is decided once, in
// util/terminal.hpp (--color, NO_COLOR, TERM=dumb, the locale, the window size); a renderer
// only asks its Style.
#pragma once

#include "util/terminal.hpp"

#include <string>
#include <string_view>

namespace rmcp {

class Style {
public:
    // Plain text: no colour, UTF-8 glyphs, 80 columns (files, tests, JSON-embedded text).
    explicit Style(bool color = false, bool unicode = true, int width = 80)
        : m_color(color), m_unicode(unicode), m_width(width > 0 ? width : 80) {}
    [[nodiscard]] std::string bold(std::string_view s) const { return wrap("1", s); }
    [[nodiscard]] std::string red(std::string_view s) const { return wrap("31", s); }
    [[nodiscard]] std::string yellow(std::string_view s) const { return wrap("33", s); }
    [[nodiscard]] std::string green(std::string_view s) const { return wrap("32", s); }
    [[nodiscard]] std::string dim(std::string_view s) const { return wrap("2", s); }
    [[nodiscard]] bool color() const { return m_color; }
    // Whether ✓ ✗ — → · may be written as they are (else ascii_glyphs() spells them).
    [[nodiscard]] bool unicode() const { return m_unicode; }
    // Columns to wrap text to (util/terminal.hpp, output_width).
    [[nodiscard]] int width() const { return m_width; }
    // The glyphs, or their ASCII spellings (util/terminal.hpp's table).
    [[nodiscard]] std::string_view check() const { return glyph(0); }
    [[nodiscard]] std::string_view cross() const { return glyph(1); }
    [[nodiscard]] std::string_view dash() const { return glyph(2); }
    [[nodiscard]] std::string_view arrow() const { return glyph(3); }
    [[nodiscard]] std::string_view dot() const { return glyph(7); }
    // `text` wrapped to width() (util/terminal.hpp, wrap_text).
    [[nodiscard]] std::string wrapped(std::string_view text) const { return wrap_text(text, m_width); }

private:
    [[nodiscard]] std::string wrap(std::string_view code, std::string_view s) const {
        if (!m_color) return std::string(s);
        return "\x1b[" + std::string(code) + "m" + std::string(s) + "\x1b[0m";
    }
    [[nodiscard]] std::string_view glyph(std::size_t i) const {
        return m_unicode ? k_unicode_glyphs[i] : k_ascii_glyphs[i];
    }
    bool m_color;
    bool m_unicode;
    int m_width;
};

// The Style for output on `fd`: colour by use_color(mode, fd), glyphs by the locale, width
// by output_width(fd).
Style terminal_style(ColorMode mode, int fd);

}  // namespace rmcp
