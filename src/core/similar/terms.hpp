// The words of an error line that say which failure it is, for the index of public threads
// (index.hpp): two logs of the same failure share them although their addresses, pids,
// timestamps, paths and sizes differ.
//
//   "[ 2650.75] amdgpu 0000:c5:00.0: amdgpu: MES failed to respond to msg=SUSPEND"
//     -> amdgpu mes failed respond msg suspend  +  pairs  mes_failed failed_respond ...
//
// Normalisation (issue 31): hexadecimal addresses, numbers, versions, timestamps and paths
// become placeholders, which are never terms themselves (a pair across one is not formed
// either); error names (HSA_STATUS_ERROR_*, hipError*, miopenStatus*, rocblas_status_*),
// function names, gfx targets and library names (libamdhip64.so) stay whole; every other
// word is lower-cased; neighbouring words of one line also give a pair term ("a_b").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp::similar {

// Bumped whenever terms() changes: an index built with other terms is rebuilt (index.cpp).
inline constexpr int k_terms_version = 1;

// Whether a line reports an error: it holds one of the error words (case-insensitive).
bool is_error_line(std::string_view line);
// The same test as a Hyperscan pattern, for explain's line probe (one list: k_error_words).
std::string error_line_pattern();

// The terms of one line (unigrams, then pairs), in order, duplicates kept.
std::vector<std::string> line_terms(std::string_view line);

// The terms of a log: the distinct terms of its first `max_lines` distinct error lines
// (identical after normalisation counts once), in order of first appearance.
class TermCollector {
public:
    explicit TermCollector(std::size_t max_lines = k_max_lines) : m_max_lines(max_lines) {}
    // Adds one line if it is an error line; false once the collector is full.
    bool add_line(std::string_view line);
    [[nodiscard]] const std::vector<std::string>& terms() const { return m_terms; }
    [[nodiscard]] std::size_t lines() const { return m_lines.size(); }

    static constexpr std::size_t k_max_lines = 200;

private:
    std::size_t m_max_lines;
    std::vector<std::string> m_lines;  // normalised error lines taken (sorted, for lookup)
    std::vector<std::string> m_terms;
    std::vector<std::string> m_seen;  // sorted m_terms
};

}  // namespace rmcp::similar
