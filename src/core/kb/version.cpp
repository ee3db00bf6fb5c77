#include "kb/version.hpp"

#include <algorithm>

#include <cctype>

namespace rmcp::kb {

std::optional<std::vector<unsigned long>> parse_version(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    if (!text.empty() && (text.front() == 'v' || text.front() == 'V')) text.remove_prefix(1);
    std::vector<unsigned long> out;
    std::size_t i = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
        unsigned long segment = 0;
        std::size_t digits = 0;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
            if (digits++ < 12) segment = segment * 10 + static_cast<unsigned long>(text[i] - '0');
            ++i;
        }
        out.push_back(segment);
        // A dot continues the version only when a digit follows ("6.1." ends at "6.1").
        if (i + 1 < text.size() && text[i] == '.' && std::isdigit(static_cast<unsigned char>(text[i + 1]))) ++i;
        else break;
    }
    if (out.empty()) return std::nullopt;
    return out;
}

int compare_versions(const std::vector<unsigned long>& a, const std::vector<unsigned long>& b) {
    const std::size_t n = std::max(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
        const unsigned long x = i < a.size() ? a[i] : 0;
        const unsigned long y = i < b.size() ? b[i] : 0;
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

namespace {
std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}
}  // namespace

bool VersionRange::bounded_above() const {
    return std::any_of(m_bounds.begin(), m_bounds.end(), [](const VersionBound& b) {
        return b.op == VersionOp::lt || b.op == VersionOp::le || b.op == VersionOp::eq;
    });
}

bool VersionRange::bounded_below() const {
    return std::any_of(m_bounds.begin(), m_bounds.end(), [](const VersionBound& b) {
        return b.op == VersionOp::gt || b.op == VersionOp::ge || b.op == VersionOp::eq;
    });
}

Result<VersionRange> VersionRange::parse(std::string_view text) {
    VersionRange range;
    range.m_text = std::string(text);
    std::string_view rest = text;
    if (trim(rest).empty()) return Error{"parsing version range", "", "empty range", ExitCode::usage};
    while (true) {
        const auto comma = rest.find(',');
        std::string_view part = trim(rest.substr(0, comma));
        VersionBound bound;
        if (part.starts_with(">=")) bound.op = VersionOp::ge, part.remove_prefix(2);
        else if (part.starts_with("<=")) bound.op = VersionOp::le, part.remove_prefix(2);
        else if (part.starts_with("==")) bound.op = VersionOp::eq, part.remove_prefix(2);
        else if (part.starts_with("!=")) bound.op = VersionOp::ne, part.remove_prefix(2);
        else if (part.starts_with(">")) bound.op = VersionOp::gt, part.remove_prefix(1);
        else if (part.starts_with("<")) bound.op = VersionOp::lt, part.remove_prefix(1);
        else if (part.starts_with("=")) bound.op = VersionOp::eq, part.remove_prefix(1);
        part = trim(part);
        // Bounds are plain dotted numbers; suffixes belong to facts, not to rules.
        const bool well_formed = !part.empty() && std::isdigit(static_cast<unsigned char>(part.front())) &&
                                 std::isdigit(static_cast<unsigned char>(part.back())) &&
                                 part.find_first_not_of("0123456789.") == std::string_view::npos &&
                                 part.find("..") == std::string_view::npos;
        if (!well_formed)
            return Error{"parsing version range", "",
                         "\"" + std::string(text) + "\": expected bounds like \">=5.7, <6.2\"", ExitCode::usage};
        bound.version = *parse_version(part);
        range.m_bounds.push_back(std::move(bound));
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
    }
    return range;
}

bool VersionRange::contains(const std::vector<unsigned long>& v) const {
    for (const auto& b : m_bounds) {
        const int c = compare_versions(v, b.version);
        bool ok = false;
        switch (b.op) {
        case VersionOp::lt: ok = c < 0; break;
        case VersionOp::le: ok = c <= 0; break;
        case VersionOp::gt: ok = c > 0; break;
        case VersionOp::ge: ok = c >= 0; break;
        case VersionOp::eq: ok = c == 0; break;
        case VersionOp::ne: ok = c != 0; break;
        }
        if (!ok) return false;
    }
    return true;
}

bool VersionRange::contains(std::string_view version) const {
    const auto v = parse_version(version);
    return v && contains(*v);
}

}  // namespace rmcp::kb
