// libFuzzer target for the log matcher and the bug-report reader that rides on it:
// arbitrary bytes, split at arbitrary points, must give the same matches and the same
// reporter's facts as one feed, never crash, and keep excerpts within their limits.
#include "explain/matcher.hpp"
#include "explain/report_facts.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace {

using rmcp::explain::LogScanner;
using rmcp::explain::Match;
using rmcp::explain::SignatureSet;

std::shared_ptr<const SignatureSet> signatures() {
    static const auto set = [] {
        std::vector<rmcp::kb::Entry> entries(3);
        entries[0].id = "fault";
        entries[0].signatures = {
            {R"(Memory access fault by GPU node-\d+ \(Agent handle: 0x[0-9a-f]+\))", {"MIOpen", "conv"}, 3, 1},
            {"^Aborted", {}, 0, 2}};
        entries[1].id = "hang";
        entries[1].signatures = {{"reason ?: ?GPU Hang$", {"ring"}, 2, 3}, {"(?i)ring gfx_[0-9.]+ timeout", {}, 1, 4}};
        entries[2].id = "oom";
        entries[2].signatures = {{"HIP out of memory", {"\r", "a"}, 1, 5}};
        auto compiled = SignatureSet::compile(entries, rmcp::explain::Reporting::every_line,
                                              rmcp::explain::ContextWords::match, rmcp::explain::report_probes());
        if (!compiled) std::abort();
        return *compiled;
    }();
    return set;
}

struct Seen {
    std::size_t signature;
    std::uint64_t line;
    std::size_t excerpt_lines;
    bool operator==(const Seen&) const = default;
};

struct Result {
    std::vector<Seen> seen;
    std::string report;  // the reporter's facts as JSON, and the facts document built from them
    bool operator==(const Result&) const = default;
};

Result scan(std::string_view data, std::size_t piece) {
    std::vector<Seen> out;
    rmcp::explain::ReportReader reader;
    rmcp::explain::ScanLimits limits;
    limits.line_bytes = 16;  // small, so the truncation paths run
    LogScanner scanner(
        signatures(),
        [&](const Match& m) {
            for (const auto& l : m.excerpt)
                if (l.text.size() > 2 * limits.line_bytes) std::abort();
            out.push_back({m.signature, m.line, m.excerpt.size()});
        },
        limits);
    scanner.on_probe([&](const rmcp::explain::ProbeHit& hit) { reader.add("input", hit); });
    for (std::size_t i = 0; i < data.size(); i += piece)
        if (!scanner.feed(data.substr(i, piece))) std::abort();
    if (!scanner.finish()) std::abort();
    const auto facts = reader.facts();
    return {out, rmcp::explain::report_facts_json(facts).dump() + rmcp::explain::report_facts_document(facts).dump()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const std::size_t piece = 1 + data[0] % 37;
    const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
    if (scan(input, input.size() + 1) != scan(input, piece)) std::abort();
    return 0;
}
