// What each knowledge-base signature costs the log matcher: every signature compiled alone
// into a SignatureSet and scanned over the same log, fastest of three runs each, against a
// set with no signature at all (the floor: reading and counting lines). For kb authors
// deciding between two ways of writing a pattern; figures in docs/PERFORMANCE.md.
// A pattern's cost alone is not what it adds to the whole set, where Hyperscan shares one literal
// matcher among all of them: bench/kb_pattern_cost.py measures that (each pattern left out in
// turn, instructions under callgrind), and is what found issue 13's expensive patterns.
//
//   build-release/bench/signature_cost kb/ /tmp/rmcp-explain-bench-1024M.log [TOP]
#include "explain/matcher.hpp"
#include "kb/kb.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

double scan_seconds(const std::vector<rmcp::kb::Entry>& entries, const std::string& log) {
    auto set = rmcp::explain::SignatureSet::compile(entries);
    if (!set) throw std::runtime_error(set.error().message());
    double best = 1e9;
    for (int run = 0; run < 3; ++run) {
        rmcp::explain::LogScanner scanner(*set, [](const rmcp::explain::Match&) {});
        const auto start = std::chrono::steady_clock::now();
        constexpr std::size_t k_chunk = std::size_t{256} << 10;
        for (std::size_t i = 0; i < log.size(); i += k_chunk)
            (void)scanner.feed(std::string_view(log).substr(i, k_chunk));
        (void)scanner.finish();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        fmt::print(stderr, "usage: {} KB_DIR LOG [TOP]\n", argv[0]);
        return 2;
    }
    auto kb = rmcp::kb::load(argv[1]);
    if (!kb) {
        fmt::print(stderr, "{}\n", kb.error().message());
        return 2;
    }
    std::ifstream in(argv[2], std::ios::binary);
    const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t top = argc > 3 ? std::stoul(argv[3]) : 15;

    const double floor = scan_seconds({}, log);
    const double all = scan_seconds(kb->entries, log);
    struct Row {
        double extra;
        std::string what;
    };
    std::vector<Row> rows;
    for (const auto& entry : kb->entries)
        for (std::size_t s = 0; s < entry.signatures.size(); ++s) {
            rmcp::kb::Entry one = entry;
            one.signatures = {entry.signatures[s]};
            rows.push_back(
                {scan_seconds({one}, log) - floor, fmt::format("{}#{} {}", entry.id, s, entry.signatures[s].pattern)});
        }
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.extra > b.extra; });
    fmt::print("{} bytes; no signatures {:.3f} s; all {} entries {:.3f} s ({:.2f} GB/s)\n", log.size(), floor,
               kb->entries.size(), all, static_cast<double>(log.size()) / all / 1e9);
    fmt::print("signature alone, seconds over the floor:\n");
    for (std::size_t i = 0; i < std::min(top, rows.size()); ++i)
        fmt::print("  {:+.3f}  {}\n", rows[i].extra, rows[i].what);
    return 0;
}
