#include "util/terminal.hpp"

#include <cerrno>
#include <charconv>
#include <clocale>
#include <locale.h>
#include <cstdlib>
#include <cstring>
#include <langinfo.h>
#include <string>
#include <sys/ioctl.h>
#include <unistd.h>

namespace rmcp {

namespace {

// A positive integer from the environment variable `name`, else 0.
int positive_env(const char* name) {
    const char* v = std::getenv(name);
    if (!v || !*v) return 0;
    int n = 0;
    const auto* end = v + std::strlen(v);
    const auto [p, ec] = std::from_chars(v, end, n);
    return ec == std::errc() && p == end && n > 0 ? n : 0;
}

// The terminal's size on fd, when it is a terminal that knows it.
bool window_size(int fd, winsize& ws) {
    ws = {};
    return fd >= 0 && ::isatty(fd) == 1 && ::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0;
}

}  // namespace

bool use_color(ColorMode mode, int fd) {
    switch (mode) {
    case ColorMode::always: return true;
    case ColorMode::never: return false;
    case ColorMode::automatic: {
        const char* no_color = std::getenv("NO_COLOR");
        if (no_color && *no_color) return false;
        const char* term = std::getenv("TERM");
        if (term && std::string_view(term) == "dumb") return false;
        return ::isatty(fd) == 1;
    }
    }
    return false;
}

bool locale_is_utf8() {
    // newlocale(..., "", ...) resolves LC_ALL, LC_CTYPE and LANG in POSIX's order into a locale
    // object of its own: the process's locale (the "C" it starts with, which every parser in
    // rmcp relies on) is never changed, not even for a moment in another thread.
    if (locale_t loc = ::newlocale(LC_CTYPE_MASK, "", static_cast<locale_t>(nullptr))) {
        const char* codeset = ::nl_langinfo_l(CODESET, loc);
        const bool utf8 = codeset && (std::strcmp(codeset, "UTF-8") == 0 || std::strcmp(codeset, "utf8") == 0);
        ::freelocale(loc);
        return utf8;
    }
    // A locale that is named but not installed (en_US.UTF-8 in many containers): its name
    // says what the terminal was set up for.
    for (const char* name : {"LC_ALL", "LC_CTYPE", "LANG"}) {
        const char* v = std::getenv(name);
        if (!v || !*v) continue;
        std::string lower(v);
        for (auto& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        return lower.find("utf-8") != std::string::npos || lower.find("utf8") != std::string::npos;
    }
    return false;
}

int output_width(int fd) {
    winsize ws{};
    int width = window_size(fd, ws) ? ws.ws_col : positive_env("COLUMNS");
    if (width <= 0) width = 80;
    return width < 20 ? 20 : width;
}

int output_height(int fd) {
    winsize ws{};
    if (window_size(fd, ws) && ws.ws_row > 0) return ws.ws_row;
    const int lines = positive_env("LINES");
    return lines > 0 ? lines : 24;
}

std::string ascii_glyphs(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        bool replaced = false;
        for (std::size_t g = 0; g < std::size(k_unicode_glyphs); ++g) {
            if (text.substr(i).starts_with(k_unicode_glyphs[g])) {
                out += k_ascii_glyphs[g];
                i += k_unicode_glyphs[g].size();
                replaced = true;
                break;
            }
        }
        if (!replaced) out += text[i++];
    }
    return out;
}

std::size_t display_width(std::string_view text) {
    std::size_t width = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == 0x1b && i + 1 < text.size() && text[i + 1] == '[') {
            // A colour sequence: ESC [ parameters m; takes no column.
            std::size_t j = i + 2;
            while (j < text.size() && text[j] != 'm') ++j;
            i = j;
            continue;
        }
        if ((c & 0xC0) != 0x80) ++width;  // not a UTF-8 continuation byte
    }
    return width;
}

std::string wrap_text(std::string_view text, int width) {
    const std::size_t limit = width > 0 ? static_cast<std::size_t>(width) : 80;
    std::string out;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        const bool had_newline = nl != std::string_view::npos;
        if (display_width(line) <= limit) {
            out += line;
            if (had_newline) out += '\n';
            continue;
        }
        // The continuation indent: the line's leading spaces, plus an item marker's width.
        std::size_t lead = line.find_first_not_of(' ');
        if (lead == std::string_view::npos) lead = line.size();
        std::size_t indent = lead;
        if (line.substr(lead).starts_with("- ") || line.substr(lead).starts_with("* ")) indent += 2;
        if (indent > limit / 2) indent = limit / 2;
        const std::string pad(indent, ' ');
        std::string current(line.substr(0, lead));
        std::size_t current_width = lead;
        bool first_word = true;
        std::string_view rest = line.substr(lead);
        while (!rest.empty()) {
            const auto sp = rest.find(' ');
            const std::string_view word = rest.substr(0, sp);
            rest = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp + 1);
            if (word.empty()) {  // a run of spaces inside the line: keep one
                if (!first_word) {
                    current += ' ';
                    ++current_width;
                }
                continue;
            }
            const std::size_t w = display_width(word);
            const bool needs_space = !first_word && !current.empty() && current.back() != ' ';
            if (!first_word && current_width + (needs_space ? 1 : 0) + w > limit) {
                while (!current.empty() && current.back() == ' ') current.pop_back();
                out += current;
                out += '\n';
                current = pad;
                current_width = indent;
            } else if (needs_space) {
                current += ' ';
                ++current_width;
            }
            current += word;
            current_width += w;
            first_word = false;
        }
        while (!current.empty() && current.back() == ' ') current.pop_back();
        out += current;
        if (had_newline) out += '\n';
    }
    return out;
}

std::string wrap_hanging(std::string_view text, std::size_t first_cols, std::size_t indent, std::size_t width) {
    std::string out;
    std::size_t col = first_cols;
    bool line_empty = true;
    while (!text.empty()) {
        const auto start = text.find_first_not_of(" \n\t");
        if (start == std::string_view::npos) break;
        text.remove_prefix(start);
        const auto end = text.find_first_of(" \n\t");
        const auto word = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end);
        const auto w = display_width(word);
        if (!line_empty && col + 1 + w > width) {
            out += '\n' + std::string(indent, ' ');
            col = indent;
            line_empty = true;
        }
        if (!line_empty) {
            out += ' ';
            ++col;
        }
        out += word;
        col += w;
        line_empty = false;
    }
    return out;
}

}  // namespace rmcp
