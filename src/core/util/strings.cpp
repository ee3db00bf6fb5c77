#include "util/strings.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace rmcp {

std::string_view trim(std::string_view s) {
    const auto is_space = [](char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
    };
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        lines.push_back(line);
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
    }
    return lines;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
    if (s.size() < prefix.size()) return false;
    return std::equal(prefix.begin(), prefix.end(), s.begin(), [](char a, char b) { return (a | 0x20) == (b | 0x20); });
}

std::string to_lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); });
    return out;
}

std::optional<std::uint64_t> parse_u64(std::string_view s) {
    s = trim(s);
    if (s.empty()) return std::nullopt;
    std::uint64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
    if (ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

std::optional<std::uint64_t> parse_hex(std::string_view s) {
    s = trim(s);
    if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
    if (s.empty()) return std::nullopt;
    std::uint64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    if (ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

std::optional<std::int64_t> parse_i64(std::string_view s) {
    s = trim(s);
    bool negative = false;
    if (!s.empty() && s.front() == '-') {
        negative = true;
        s.remove_prefix(1);
    }
    std::optional<std::uint64_t> magnitude;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) magnitude = parse_hex(s);
    else magnitude = parse_u64(s);
    if (!magnitude || *magnitude > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
    const auto v = static_cast<std::int64_t>(*magnitude);
    return negative ? -v : v;
}

// Counting '\n' runs over every byte `explain` and `run` read, next to the Hyperscan scan. On
// x86-64 with GCC the function is compiled twice (target_clones) and the loader picks the AVX2
// clone where the CPU has it (docs/PERFORMANCE.md, issue 13): one 32-byte vector is one AVX2
// register there and two SSE2 registers in the baseline; NEON on arm64. GCC/Clang vector
// extension; per-lane counters are bytes, so at most 255 blocks are added before summing them.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
std::size_t
count_byte(std::string_view s, char c) {
    using Bytes = unsigned char __attribute__((vector_size(32)));
    const Bytes needle = Bytes{} + static_cast<unsigned char>(c);
    const char* p = s.data();
    std::size_t n = s.size();
    std::size_t total = 0;
    while (n >= sizeof(Bytes)) {
        const std::size_t blocks = std::min<std::size_t>(n / sizeof(Bytes), 255);
        Bytes counts{};
        for (std::size_t i = 0; i < blocks; ++i, p += sizeof(Bytes)) {
            Bytes v;
            std::memcpy(&v, p, sizeof v);
            counts -= reinterpret_cast<Bytes>(v == needle);  // equal lanes are 0xff, i.e. -1
        }
        n -= blocks * sizeof(Bytes);
        for (std::size_t k = 0; k < sizeof(Bytes); ++k) total += counts[k];
    }
    return total + static_cast<std::size_t>(std::count(p, p + n, c));
}

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    while (true) {
        const auto pos = s.find(sep);
        out.push_back(s.substr(0, pos));
        if (pos == std::string_view::npos) break;
        s.remove_prefix(pos + 1);
    }
    return out;
}

namespace {
template <class Parts>
std::string join_parts(const Parts& parts, std::string_view sep) {
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i > 0) out += sep;
        out += parts[i];
    }
    return out;
}
}  // namespace

std::string join(const std::vector<std::string>& parts, std::string_view sep) { return join_parts(parts, sep); }
std::string join(const std::vector<std::string_view>& parts, std::string_view sep) { return join_parts(parts, sep); }

std::string_view dirname(std::string_view path) {
    const auto slash = path.rfind('/');
    if (slash == std::string_view::npos) return ".";
    return slash == 0 ? std::string_view("/") : path.substr(0, slash);
}

std::string_view basename(std::string_view path) {
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool is_lower_name(std::string_view s, std::string_view also) {
    const auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (s.empty() || !lower_or_digit(s.front())) return false;
    return std::all_of(s.begin() + 1, s.end(),
                       [&](char c) { return lower_or_digit(c) || also.find(c) != std::string_view::npos; });
}

bool all_digits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string sh_word(std::string_view word) {
    const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               std::string_view("/._+-=:,@").find(c) != std::string_view::npos;
    });
    return plain ? std::string(word) : sh_quote(word);
}

std::string sh_quote(std::string_view word) {
    std::string out = "'";
    for (const char c : word) {
        if (c == '\'') out += "'\\''";
        else out += c;
    }
    return out + "'";
}

std::string fish_quote(std::string_view word) {
    std::string out = "'";
    for (const char c : word) {
        if (c == '\\' || c == '\'') out += '\\';
        out += c;
    }
    return out + "'";
}

}  // namespace rmcp
