#include "explain/matcher.hpp"

#include "kb_test_entries.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

namespace rmcp::explain {
namespace {

using kb_test::compile;
using kb_test::entry;
using kb_test::sig;

// Scans `input` split into pieces of `piece` bytes (0: all at once).
std::vector<Match> scan(const std::shared_ptr<const SignatureSet>& set, std::string_view input, std::size_t piece = 0,
                        ScanLimits limits = {}, std::uint64_t* lines = nullptr) {
    std::vector<Match> out;
    LogScanner scanner(
        set, [&](const Match& m) { out.push_back(m); }, limits);
    if (piece == 0) piece = input.size() + 1;
    for (std::size_t i = 0; i < input.size(); i += piece) EXPECT_TRUE(scanner.feed(input.substr(i, piece)).ok());
    EXPECT_TRUE(scanner.finish().ok());
    if (lines) *lines = scanner.lines();
    return out;
}

std::vector<std::string> texts(const Match& m) {
    std::vector<std::string> out;
    for (const auto& l : m.excerpt) out.push_back(std::to_string(l.number) + ":" + l.text);
    return out;
}

const std::string k_fault_log = "epoch 1 loss 0.93\n"
                                "epoch 2 loss 0.71\n"
                                "  File \"train.py\", line 88, in <module>\n"
                                "Memory access fault by GPU node-1 (Agent handle: 0x55d1c0a3e2f0) on address "
                                "0x7f1c2e400000. Reason: Page not present or supervisor privilege.\n"
                                "GPU core dump failed\n"
                                "Aborted (core dumped)\n"
                                "trailing line\n";

TEST(ExplainMatcher, FindsMatchWithLineAndExcerpt) {
    auto set = compile({entry("fault", {sig("Memory access fault by GPU node-[0-9]+")})});
    std::uint64_t lines = 0;
    auto matches = scan(set, k_fault_log, 0, {}, &lines);
    ASSERT_EQ(matches.size(), 1U);
    EXPECT_EQ(matches[0].line, 4U);
    EXPECT_EQ(lines, 7U);
    EXPECT_EQ(texts(matches[0]),
              (std::vector<std::string>{"2:epoch 2 loss 0.71", "3:  File \"train.py\", line 88, in <module>",
                                        "4:" + std::string("Memory access fault by GPU node-1 (Agent handle: "
                                                           "0x55d1c0a3e2f0) on address 0x7f1c2e400000. Reason: Page "
                                                           "not present or supervisor privilege."),
                                        "5:GPU core dump failed", "6:Aborted (core dumped)"}));
    EXPECT_EQ(matches[0].excerpt[2].match_end, std::string("Memory access fault by GPU node-1").size());
}

TEST(ExplainMatcher, EveryChunkSplitGivesTheSameResult) {
    auto set = compile({entry("fault", {sig("Memory access fault by GPU node-[0-9]+", {"train.py", "core dump"})}),
                        entry("abort", {sig("^Aborted \\(core dumped\\)$")})});
    const auto whole = scan(set, k_fault_log);
    ASSERT_EQ(whole.size(), 2U);
    for (std::size_t piece = 1; piece < 64; ++piece) {
        const auto split = scan(set, k_fault_log, piece);
        ASSERT_EQ(split.size(), whole.size()) << "piece " << piece;
        for (std::size_t i = 0; i < whole.size(); ++i) {
            EXPECT_EQ(split[i].signature, whole[i].signature);
            EXPECT_EQ(split[i].line, whole[i].line) << "piece " << piece;
            EXPECT_EQ(texts(split[i]), texts(whole[i])) << "piece " << piece;
            EXPECT_EQ(split[i].context_found, whole[i].context_found) << "piece " << piece;
        }
    }
    EXPECT_EQ(whole[0].context_found, (std::vector<unsigned>{0, 1}));
    EXPECT_EQ(whole[1].line, 6U);
}

TEST(ExplainMatcher, CrlfLineEndsAreNotPartOfTheExcerptAndAnchorsStillWork) {
    std::string crlf;
    for (const char c : k_fault_log) {
        if (c == '\n') crlf += '\r';
        crlf += c;
    }
    auto set =
        compile({entry("abort", {sig("^Aborted \\(core dumped\\)\\r?$")}), entry("fault", {sig("Page not present")})});
    const auto matches = scan(set, crlf, 5);
    ASSERT_EQ(matches.size(), 2U);
    EXPECT_EQ(matches[0].line, 4U);
    EXPECT_EQ(matches[1].line, 6U);
    for (const auto& m : matches)
        for (const auto& l : m.excerpt) EXPECT_EQ(l.text.find('\r'), std::string::npos) << l.text;
}

TEST(ExplainMatcher, HugeLineKeepsBoundedExcerpt) {
    std::string input = "first line\n";
    input += std::string(8u << 20, 'x');
    input += " HIP error: invalid device function ";
    input += std::string(8u << 20, 'y');
    input += "\nlast line\n";
    auto set = compile({entry("nodev", {sig("HIP error: invalid device function")})});
    ScanLimits limits;
    const auto matches = scan(set, input, 1u << 16, limits);
    ASSERT_EQ(matches.size(), 1U);
    EXPECT_EQ(matches[0].line, 2U);
    const auto& lines = matches[0].excerpt;
    ASSERT_GE(lines.size(), 1U);
    const auto& hit = *std::find_if(lines.begin(), lines.end(), [](const ExcerptLine& l) { return l.number == 2; });
    EXPECT_TRUE(hit.truncated);
    EXPECT_LE(hit.text.size(), 2 * limits.line_bytes);
    EXPECT_NE(hit.text.find("HIP error: invalid device function"), std::string::npos);
    EXPECT_EQ(lines.back().text, "last line");
}

TEST(ExplainMatcher, InvalidUtf8AndNulBytesAreScannedAsBytes) {
    std::string input("ok\n\xff\xfe\x80garbage\0\xc3(", 14);
    input += " hipErrorNoBinaryForGpu: Unable to find code object\n";  // appended: g++ 12 warns on operator+ here
    auto set = compile({entry("nobin", {sig("hipErrorNoBinaryForGpu")})});
    const auto matches = scan(set, input, 3);
    ASSERT_EQ(matches.size(), 1U);
    EXPECT_EQ(matches[0].line, 2U);
    EXPECT_EQ(matches[0].excerpt.back().text.substr(0, 3), "\xff\xfe\x80");
}

TEST(ExplainMatcher, PatternAnchoredAtEndOfStreamWithoutNewline) {
    auto set = compile({entry("hang", {sig("reason :GPU Hang$")})});
    const auto matches = scan(set, "x\nHW Exception by GPU node-1 (Agent handle: 0x1) reason :GPU Hang", 7);
    ASSERT_EQ(matches.size(), 1U);
    EXPECT_EQ(matches[0].line, 2U);
}

// Regression (Hyperscan 5.4's AVX512VBMI matcher reads past the end of its buffer, see
// util/hyperscan.hpp): chunks that end where readable memory ends, a faulting page after.
TEST(ExplainMatcher, ChunksEndingAtAGuardPageAreScannedWithoutReadingPastThem) {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    void* map = ::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(map, MAP_FAILED);
    auto* base = static_cast<char*>(map);
    ASSERT_EQ(::mprotect(base + page, page, PROT_NONE), 0);
    auto set = compile({entry("fault", {sig("Memory access fault by GPU node-[0-9]+")})});
    const std::string text = std::string(k_fault_log);
    for (const std::size_t piece : {std::size_t{1}, std::size_t{40}, std::size_t{64}, std::size_t{65}, text.size()}) {
        std::vector<Match> got;
        LogScanner scanner(set, [&](const Match& m) { got.push_back(m); }, {});
        for (std::size_t i = 0; i < text.size(); i += piece) {
            const std::size_t n = std::min(piece, text.size() - i);
            char* chunk = base + page - n;  // each chunk's last byte is the page's last byte
            std::memcpy(chunk, text.data() + i, n);
            ASSERT_TRUE(scanner.feed(std::string_view(chunk, n)).ok());
        }
        ASSERT_TRUE(scanner.finish().ok());
        ASSERT_EQ(got.size(), 1U) << "piece " << piece;
        EXPECT_EQ(got[0].line, 4U) << "piece " << piece;
    }
    ::munmap(map, 2 * page);
}

TEST(ExplainMatcher, ContextWordsCountOnlyWithinWindow) {
    auto set = compile({entry("miopen", {sig("Page not present", {"MIOpen", "convolution"}, 3)})});
    std::string near =
        "miopen solver GemmBwdRest\nstep\nMemory access fault ... Page not present\nx\ntorch convolution backward\n";
    auto m = scan(set, near);
    ASSERT_EQ(m.size(), 1U);
    EXPECT_EQ(m[0].context_found, (std::vector<unsigned>{0, 1}));  // case-insensitive word match
    EXPECT_TRUE(m[0].context_complete);                            // the stream ended: nothing more can come

    std::string far = "MIOpen\n1\n2\n3\n4\nPage not present\n1\n2\n3\n4\nconvolution\n";
    m = scan(set, far);
    ASSERT_EQ(m.size(), 1U);
    EXPECT_TRUE(m[0].context_found.empty());
}

TEST(ExplainMatcher, FlushReportsPendingMatchesWithIncompleteContext) {
    auto set = compile({entry("oom", {sig("HIP out of memory", {"allocator"}, 5)})});
    std::vector<Match> out;
    LogScanner scanner(set, [&](const Match& m) { out.push_back(m); });
    ASSERT_TRUE(scanner.feed("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB\n").ok());
    EXPECT_TRUE(out.empty());  // waiting for the window after it
    scanner.flush();
    ASSERT_EQ(out.size(), 1U);
    EXPECT_FALSE(out[0].context_complete);
    ASSERT_TRUE(scanner.finish().ok());
    EXPECT_EQ(out.size(), 1U);
}

TEST(ExplainMatcher, ReportsOncePerLineAndHonoursLimits) {
    auto set = compile({entry("noise", {sig("amdgpu\\.ids")})});
    std::string input;
    for (int i = 0; i < 500; ++i) input += "/usr/share/libdrm/amdgpu.ids: No such file or directory amdgpu.ids\n";
    ScanLimits limits;
    limits.max_reports_per_signature = 10;
    limits.max_excerpts_per_signature = 2;
    std::vector<Match> out;
    LogScanner scanner(
        set, [&](const Match& m) { out.push_back(m); }, limits);
    ASSERT_TRUE(scanner.feed(input).ok());
    ASSERT_TRUE(scanner.finish().ok());
    ASSERT_EQ(out.size(), 10U);
    EXPECT_EQ(scanner.match_counts()[0], 500U);
    EXPECT_FALSE(out[1].excerpt.empty());
    EXPECT_TRUE(out[2].excerpt.empty());
    EXPECT_EQ(out[9].line, 10U);
}

TEST(ExplainMatcher, FirstOnlyReportingUsesSingleMatch) {
    auto set = compile({entry("noise", {sig("amdgpu\\.ids")})}, Reporting::first_only);
    const auto out = scan(set, "a amdgpu.ids\nb amdgpu.ids\n");
    ASSERT_EQ(out.size(), 1U);
    EXPECT_EQ(out[0].line, 1U);
}

TEST(ExplainMatcher, SkippedContextWordsAreNotLookedForAndDoNotDelayTheReport) {
    const std::vector<kb::Entry> entries{entry("oom", {sig("HIP out of memory", {"allocator"}, 5)})};
    auto set = SignatureSet::compile(entries, Reporting::first_only, ContextWords::skip);
    ASSERT_TRUE(set.ok());
    EXPECT_TRUE((*set)->context_words().empty());
    EXPECT_TRUE((*set)->signatures()[0].context_words.empty());
    std::vector<Match> out;
    LogScanner scanner(*set, [&](const Match& m) { out.push_back(m); });
    ASSERT_TRUE(scanner.feed("HIP out of memory. Tried to allocate 2.00 GiB\nallocator one\nallocator two\n").ok());
    // Reported once lines_after (2) lines have followed, not after the 5-line window.
    ASSERT_EQ(out.size(), 1U);
    EXPECT_TRUE(out[0].context_found.empty());
    EXPECT_EQ(out[0].excerpt.size(), 3U);
    ASSERT_TRUE(scanner.finish().ok());
    EXPECT_EQ(out.size(), 1U);
}

TEST(ExplainMatcher, CaseMattersUnlessThePatternSaysSo) {
    auto set = compile({entry("a", {sig("gpu hang")}), entry("b", {sig("(?i)gpu hang")})});
    const auto out = scan(set, "GPU Hang\n");
    ASSERT_EQ(out.size(), 1U);
    EXPECT_EQ(set->signatures()[out[0].signature].entry_id, "b");
}

TEST(ExplainMatcher, BadPatternNamesEntryFileAndLine) {
    auto set = SignatureSet::compile(std::vector<kb::Entry>{entry("broken", {sig("(unclosed")})});
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.error().path, "kb/broken.toml:7");
    EXPECT_EQ(set.error().code, ExitCode::usage);
    EXPECT_NE(set.error().cause.find("(unclosed"), std::string::npos);
}

TEST(ExplainMatcher, EmptySetCountsLines) {
    auto set = compile({});
    std::uint64_t lines = 0;
    EXPECT_TRUE(scan(set, "a\nb\nc", 0, {}, &lines).empty());
    EXPECT_EQ(lines, 3U);
}

// Line probes (report facts) ride in the signatures' database: whole lines plus the lines
// after them, in stream order, whatever the chunk boundaries.
std::vector<ProbeHit> probe_scan(std::span<const LineProbe> probes, std::string_view input, std::size_t piece,
                                 const std::vector<kb::Entry>& entries = {}, std::vector<Match>* matches = nullptr) {
    auto set = SignatureSet::compile(entries, Reporting::every_line, ContextWords::match, probes);
    EXPECT_TRUE(set.ok());
    std::vector<ProbeHit> hits;
    LogScanner scanner(*set, [&](const Match& m) {
        if (matches) matches->push_back(m);
    });
    scanner.on_probe([&](const ProbeHit& h) { hits.push_back(h); });
    if (piece == 0) piece = input.size() + 1;
    for (std::size_t i = 0; i < input.size(); i += piece) EXPECT_TRUE(scanner.feed(input.substr(i, piece)).ok());
    EXPECT_TRUE(scanner.finish().ok());
    return hits;
}

TEST(LineProbe, DeliversTheWholeLineAndTheLinesAfterItAtAnySplit) {
    const std::vector<LineProbe> probes{{"ROCm Version", 2}, {"^Name:\\s+gfx", 0}};
    const std::string input = "noise\n### ROCm Version\n\nROCm 6.1.0\nName:   gfx1031\r\ntail";
    for (const std::size_t piece : {0UL, 1UL, 3UL, 7UL}) {
        const auto hits = probe_scan(probes, input, piece);
        ASSERT_EQ(hits.size(), 2U) << "piece " << piece;
        EXPECT_EQ(hits[0].probe, 0U);
        EXPECT_EQ(hits[0].line, 2U);
        EXPECT_EQ(hits[0].lines, (std::vector<std::string>{"### ROCm Version", "", "ROCm 6.1.0"}));
        EXPECT_EQ(hits[1].probe, 1U);
        EXPECT_EQ(hits[1].line, 5U);
        EXPECT_EQ(hits[1].lines, (std::vector<std::string>{"Name:   gfx1031"}));
    }
}

TEST(LineProbe, StreamEndingEarlyGivesTheLinesThereAre) {
    const std::vector<LineProbe> probes{{"GPU models", 4}};
    const auto hits = probe_scan(probes, "GPU models and configuration: AMD Radeon RX 6800 (gfx1030)\nnext", 0);
    ASSERT_EQ(hits.size(), 1U);
    EXPECT_EQ(hits[0].lines,
              (std::vector<std::string>{"GPU models and configuration: AMD Radeon RX 6800 (gfx1030)", "next"}));
}

TEST(LineProbe, DoesNotDisturbSignatureMatches) {
    const std::vector<LineProbe> probes{{"Memory", 0}};
    std::vector<Match> with_probes;
    probe_scan(probes, "a\nMemory access fault by GPU node-1\nb\n", 0,
               {entry("fault", {sig("Memory access fault by GPU node-\\d+")})}, &with_probes);
    const auto without = scan(compile({entry("fault", {sig("Memory access fault by GPU node-\\d+")})}),
                              "a\nMemory access fault by GPU node-1\nb\n");
    ASSERT_EQ(with_probes.size(), 1U);
    ASSERT_EQ(without.size(), 1U);
    EXPECT_EQ(texts(with_probes[0]), texts(without[0]));
}

TEST(LineProbe, HitsAreBoundedPerStream) {
    const std::vector<LineProbe> probes{{"x", 0}};
    auto set = SignatureSet::compile({}, Reporting::every_line, ContextWords::match, probes);
    ASSERT_TRUE(set.ok());
    std::size_t hits = 0;
    ScanLimits limits;
    limits.max_probe_hits = 10;
    LogScanner scanner(*set, nullptr, limits);
    scanner.on_probe([&](const ProbeHit&) { ++hits; });
    std::string input;
    for (int i = 0; i < 100; ++i) input += "x\n";
    ASSERT_TRUE(scanner.feed(input).ok());
    ASSERT_TRUE(scanner.finish().ok());
    EXPECT_EQ(hits, 10U);
}

TEST(LineProbe, BadProbePatternIsAnEnvironmentError) {
    const std::vector<LineProbe> probes{{"(unclosed", 0}};
    auto set = SignatureSet::compile({}, Reporting::every_line, ContextWords::match, probes);
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.error().code, ExitCode::environment);
    EXPECT_NE(set.error().message().find("line probe"), std::string::npos);
}

ExcerptLine line(std::string text, std::size_t match_end = std::string::npos, bool truncated = false) {
    ExcerptLine l;
    l.number = 1;
    l.text = std::move(text);
    l.match_end = match_end;
    l.truncated = truncated;
    return l;
}

TEST(ExplainMatcher, PrintableLine) {
    EXPECT_EQ(printable_line(line("plain text")), "plain text");
    // ANSI colour (CSI) and a title (OSC ... BEL) are dropped.
    EXPECT_EQ(printable_line(line("\x1b[31mred\x1b[0m \x1b]0;title\x07ok")), "red ok");
    // Control bytes other than tab become '?'; so does DEL.
    EXPECT_EQ(printable_line(line("a\x01"
                                  "b\tc\x7f")),
              "a?b\tc?");
    // Valid UTF-8 is kept, an invalid byte becomes U+FFFD.
    EXPECT_EQ(printable_line(line("caf\xc3\xa9 \xff!")), "caf\xc3\xa9 \xef\xbf\xbd!");
    EXPECT_EQ(printable_line(line("cut", std::string::npos, true)), "cut …");
    // A progress bar: without a match the last non-empty redraw; with one, the redraw holding it.
    EXPECT_EQ(printable_line(line("10%\r50%\r100%\r")), "100%");
    const std::string bar = "10%\rERROR here\r20%";
    EXPECT_EQ(printable_line(line(bar, bar.find(" here") + 5)), "ERROR here");
}

}  // namespace
}  // namespace rmcp::explain
