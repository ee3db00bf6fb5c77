// Version strings and ranges as the knowledge base compares them: numeric segment by
// segment, tolerant of build suffixes ("2.3.0+rocm6.0", "6.1.0-18-amd64", "1.13.0a0").
#pragma once

#include "util/error.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp::kb {

// The leading numeric part of a version: "6.1.0-18-amd64" → {6,1,0}. nullopt when the
// string does not start with a digit (after an optional 'v').
std::optional<std::vector<unsigned long>> parse_version(std::string_view text);

// -1, 0, 1; missing trailing segments count as 0 (6.2 == 6.2.0).
int compare_versions(const std::vector<unsigned long>& a, const std::vector<unsigned long>& b);

enum class VersionOp { lt, le, gt, ge, eq, ne };

struct VersionBound {
    VersionOp op = VersionOp::eq;
    std::vector<unsigned long> version;
};

// A conjunction of bounds: ">=5.7, <6.2". A bare version means "==".
class VersionRange {
public:
    static Result<VersionRange> parse(std::string_view text);
    [[nodiscard]] bool contains(const std::vector<unsigned long>& v) const;
    [[nodiscard]] bool contains(std::string_view version) const;  // false when unparsable
    [[nodiscard]] const std::string& text() const { return m_text; }
    // True when some bound limits the range from above (<, <=, ==) or from below (>, >=, ==).
    [[nodiscard]] bool bounded_above() const;
    [[nodiscard]] bool bounded_below() const;

private:
    std::vector<VersionBound> m_bounds;
    std::string m_text;
};

}  // namespace rmcp::kb
