#include "patch/diff.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace rmcp::patch {

namespace {
struct Lines {
    std::vector<std::string_view> lines;
    bool missing_final_newline = false;
};

Lines split(std::string_view text) {
    Lines out;
    std::size_t start = 0;
    while (start < text.size()) {
        const auto nl = text.find('\n', start);
        if (nl == std::string_view::npos) {
            out.lines.push_back(text.substr(start));
            out.missing_final_newline = true;
            break;
        }
        out.lines.push_back(text.substr(start, nl - start));
        start = nl + 1;
    }
    return out;
}

enum class Tag { same, del, add };
struct Edit {
    Tag tag;
    std::size_t a;  // index in from (same/del)
    std::size_t b;  // index in to (same/add)
};

std::vector<Edit> edit_script(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
    const std::size_t n = a.size();
    const std::size_t m = b.size();
    std::vector<Edit> out;
    // Files too large for the table are shown as a whole replacement.
    if (n * m > 4'000'000) {
        for (std::size_t i = 0; i < n; ++i) out.push_back({Tag::del, i, 0});
        for (std::size_t j = 0; j < m; ++j) out.push_back({Tag::add, n, j});
        return out;
    }
    std::vector<std::vector<unsigned>> lcs(n + 1, std::vector<unsigned>(m + 1, 0));
    for (std::size_t i = n; i-- > 0;)
        for (std::size_t j = m; j-- > 0;)
            lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && a[i] == b[j]) {
            out.push_back({Tag::same, i++, j++});
        } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
            // Deletions before insertions, as diff(1) prints them.
            out.push_back({Tag::del, i++, j});
        } else {
            out.push_back({Tag::add, i, j++});
        }
    }
    return out;
}

std::string range(std::size_t start, std::size_t count) {
    // Unified-diff convention: an empty range names the line before it.
    if (count == 0) return fmt::format("{},0", start);
    if (count == 1) return fmt::format("{}", start + 1);
    return fmt::format("{},{}", start + 1, count);
}
}  // namespace

std::string unified_diff(std::string_view from, std::string_view to, std::string_view from_label,
                         std::string_view to_label, unsigned context) {
    if (from == to) return {};
    const Lines a = split(from);
    const Lines b = split(to);
    const auto edits = edit_script(a.lines, b.lines);
    std::string out = fmt::format("--- {}\n+++ {}\n", from_label, to_label);
    const auto line_text = [&](const Edit& e) -> std::string {
        const bool from_side = e.tag == Tag::del;
        const auto& src = from_side ? a : b;
        const std::size_t idx = from_side ? e.a : e.b;
        std::string s = std::string(e.tag == Tag::same ? " "
                                    : from_side        ? "-"
                                                       : "+") +
                        std::string(src.lines[idx]) + "\n";
        if (idx + 1 == src.lines.size() && src.missing_final_newline) s += "\\ No newline at end of file\n";
        return s;
    };
    std::size_t k = 0;
    while (k < edits.size()) {
        // Find the next change, then grow the hunk while changes are within 2*context.
        while (k < edits.size() && edits[k].tag == Tag::same) ++k;
        if (k == edits.size()) break;
        const std::size_t begin = k >= context ? k - context : 0;
        std::size_t end = k;
        std::size_t last_change = k;
        while (end < edits.size()) {
            if (edits[end].tag != Tag::same) last_change = end;
            if (end - last_change > 2 * context) break;
            ++end;
        }
        end = std::min(edits.size(), last_change + 1 + context);
        std::size_t a_start = edits[begin].a;
        std::size_t b_start = edits[begin].b;
        std::size_t a_count = 0;
        std::size_t b_count = 0;
        std::string body;
        for (std::size_t e = begin; e < end; ++e) {
            if (edits[e].tag != Tag::add) ++a_count;
            if (edits[e].tag != Tag::del) ++b_count;
            body += line_text(edits[e]);
        }
        out += fmt::format("@@ -{} +{} @@\n", range(a_start, a_count), range(b_start, b_count));
        out += body;
        k = end;
    }
    return out;
}

}  // namespace rmcp::patch
