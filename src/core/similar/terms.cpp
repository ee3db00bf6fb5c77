#include "similar/terms.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace rmcp::similar {

namespace {

// Words that mark an error line, lower case. Written from the messages the kb's families
// name (HSA_STATUS_ERROR_*, hipError*, "HIP error", MIOpen/rocBLAS errors, amdgpu page faults,
// ring timeouts and resets, "terminate called", Python exceptions) and from how the
// frameworks of threads/ word failures (out of memory, not supported, illegal instruction).
constexpr std::array<std::string_view, 22> k_error_words{
    "error",        "fault",       "fail",      "abort",          "exception",     "terminate called",
    "segmentation", "core dumped", "timeout",   "timed out",      "not supported", "unsupported",
    "invalid",      "illegal",     "unable to", "cannot",         "denied",        "out of memory",
    "panic",        "hang",        "reset",     "no kernel image"};

// Too common to tell failures apart; a thread never differs from another by them.
constexpr std::array<std::string_view, 24> k_stop_words{"the",  "a",   "an",  "of",  "to", "in",   "at",   "on",
                                                        "is",   "for", "by",  "and", "or", "with", "from", "this",
                                                        "that", "be",  "was", "it",  "as", "are",  "file", "line"};

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool all_of(std::string_view s, int (*pred)(int)) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [pred](char c) { return pred(static_cast<unsigned char>(c)) != 0; });
}

bool is_hex_word(std::string_view w) {
    if (w.size() > 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X')) return all_of(w.substr(2), isxdigit);
    // Long hexadecimal runs without 0x (handles, hashes, uuids' parts) when they hold a digit.
    return w.size() >= 8 && all_of(w, isxdigit) &&
           std::any_of(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// A gfx target (gfx90a, gfx1100, gfx942) stays whole although it holds digits.
bool is_gfx_target(std::string_view w) {
    return w.size() >= 6 && w.size() <= 8 && lower(w.substr(0, 3)) == "gfx" && all_of(w.substr(3), isxdigit);
}

// A word that starts with a digit is a number, or one with a unit ("2.00GiB" splits at the
// '.', "00GiB" then starts with digits): a placeholder.
bool is_number_like(std::string_view w) { return std::isdigit(static_cast<unsigned char>(w.front())) != 0; }

// Xapian refuses terms over 245 bytes; a word's first 64 bytes tell it apart (a pair of two
// is then at most 129).
constexpr std::size_t k_max_word = 64;

// The last path component when it names a library or source file worth keeping whole
// (librocblas.so.4 -> librocblas.so, conv.py), else "" (the path is a placeholder).
std::string kept_file_name(std::string_view path) {
    const auto slash = path.find_last_of('/');
    std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    while (!name.empty() && !word_char(name.back())) name.remove_suffix(1);
    if (const auto so = name.find(".so"); so != std::string_view::npos && so > 0) return lower(name.substr(0, so + 3));
    for (std::string_view ext : {".py", ".cpp", ".hpp", ".h", ".cc"})
        if (name.size() > ext.size() && name.ends_with(ext)) return lower(name);
    return {};
}

void add_pair(std::vector<std::string>& pairs, const std::string& a, const std::string& b) {
    if (!a.empty() && !b.empty()) pairs.push_back(a + "_" + b);
}

}  // namespace

bool is_error_line(std::string_view line) {
    const std::string l = lower(line);
    return std::any_of(k_error_words.begin(), k_error_words.end(),
                       [&](std::string_view w) { return l.find(w) != std::string::npos; });
}

std::string error_line_pattern() {
    std::string out = "(?i)(?:";
    for (std::size_t i = 0; i < k_error_words.size(); ++i) {
        if (i) out += '|';
        out += k_error_words[i];  // letters and spaces only: nothing to escape
    }
    return out + ")";
}

std::vector<std::string> line_terms(std::string_view line) {
    // Split at white space first: a path or an address is one token, whatever it holds.
    std::vector<std::string> words;  // "" marks a placeholder
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
        std::size_t j = i;
        while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
        std::string_view token = line.substr(i, j - i);
        i = j;
        if (token.empty()) continue;
        if (std::count(token.begin(), token.end(), '/') >= 2 || token.starts_with('/') || token.starts_with("\"/")) {
            words.push_back(kept_file_name(token).substr(0, k_max_word));
            continue;
        }
        if (token.find(".so") != std::string_view::npos) {
            if (auto kept = kept_file_name(token); !kept.empty()) {
                words.push_back(kept.substr(0, k_max_word));
                continue;
            }
        }
        // Words: runs of letters, digits and '_' (error names, function names stay whole).
        std::size_t k = 0;
        while (k < token.size()) {
            if (!word_char(token[k])) {
                ++k;
                continue;
            }
            std::size_t e = k;
            while (e < token.size() && word_char(token[e])) ++e;
            std::string_view w = token.substr(k, e - k);
            k = e;
            if (is_gfx_target(w)) words.push_back(lower(w));
            else if (is_hex_word(w) || is_number_like(w) || w.size() < 2) words.emplace_back();
            else words.push_back(lower(w.substr(0, k_max_word)));  // mangled C++ names run to hundreds
        }
    }
    std::vector<std::string> terms;
    std::vector<std::string> pairs;
    std::string previous;
    for (auto& w : words) {
        const bool stop = !w.empty() && std::find(k_stop_words.begin(), k_stop_words.end(), w) != k_stop_words.end();
        if (w.empty()) {
            previous.clear();
            continue;
        }
        if (stop) continue;  // pairs join across a stop word: "failed to respond" -> failed_respond
        terms.push_back(w);
        add_pair(pairs, previous, w);
        previous = w;
    }
    terms.insert(terms.end(), pairs.begin(), pairs.end());
    return terms;
}

bool TermCollector::add_line(std::string_view line) {
    if (m_lines.size() >= m_max_lines) return false;
    if (!is_error_line(line)) return true;
    auto terms = line_terms(line);
    if (terms.empty()) return true;
    std::string key;
    for (const auto& t : terms) key += t + ' ';
    const auto at = std::lower_bound(m_lines.begin(), m_lines.end(), key);
    if (at != m_lines.end() && *at == key) return true;
    m_lines.insert(at, key);
    for (auto& t : terms) {
        const auto seen = std::lower_bound(m_seen.begin(), m_seen.end(), t);
        if (seen != m_seen.end() && *seen == t) continue;
        m_seen.insert(seen, t);
        m_terms.push_back(std::move(t));
    }
    return m_lines.size() < m_max_lines;
}

}  // namespace rmcp::similar
