// Terminal styling for text renderers; colour only when enabled (--color, NO_COLOR).
#pragma once

#include <string>
#include <string_view>

namespace rmcp {

enum class ColorMode { automatic, always, never };

class Style {
public:
    explicit Style(bool color = false) : m_color(color) {}
    [[nodiscard]] std::string bold(std::string_view s) const { return wrap("1", s); }
    [[nodiscard]] std::string red(std::string_view s) const { return wrap("31", s); }
    [[nodiscard]] std::string yellow(std::string_view s) const { return wrap("33", s); }
    [[nodiscard]] std::string green(std::string_view s) const { return wrap("32", s); }
    [[nodiscard]] std::string dim(std::string_view s) const { return wrap("2", s); }
    [[nodiscard]] bool color() const { return m_color; }

private:
    [[nodiscard]] std::string wrap(std::string_view code, std::string_view s) const {
        if (!m_color) return std::string(s);
        return "\x1b[" + std::string(code) + "m" + std::string(s) + "\x1b[0m";
    }
    bool m_color;
};

// Resolves --color against the stream and NO_COLOR (https://no-color.org).
bool use_color(ColorMode mode, int fd);

}  // namespace rmcp
