// Wrapped log lines: the wrapper forms are WRITTEN here from the formats the tools print
// (docker compose, terminal colours, issue-reply quotes, CRLF); the real corpus is checked under
// the same wrappers by tests/cli/test_explain_real.py (test_real_logs_read_the_same_wrapped).
#include "explain/line_wrappers.hpp"

#include "explain/matcher.hpp"
#include "kb_test_entries.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rmcp::explain {
namespace {

using kb_test::compile;
using kb_test::entry;
using kb_test::sig;

TEST(LineWrappers, AnchorsGetTheWrapperAndAnOptionalCr) {
    const std::string w(k_line_wrapper);
    EXPECT_EQ(anchor_wrapped("^abc$"), "^" + w + "abc\\r?$");
    EXPECT_EQ(anchor_wrapped("(?i)^a|x|^b"), "(?i)^" + w + "a|x|^" + w + "b");
    EXPECT_EQ(anchor_wrapped("no anchors"), "no anchors");
}

TEST(LineWrappers, ClassesAndEscapesAreLeftAlone) {
    EXPECT_EQ(anchor_wrapped(R"([^:\n]+)"), R"([^:\n]+)");
    EXPECT_EQ(anchor_wrapped(R"(\^x\$)"), R"(\^x\$)");
    EXPECT_EQ(anchor_wrapped(R"([]^$]x)"), R"([]^$]x)");
    EXPECT_EQ(anchor_wrapped(R"([^]^$]x)"), R"([^]^$]x)");
    EXPECT_EQ(anchor_wrapped(R"(a[\]^]b$)"), R"(a[\]^]b\r?$)");
}

TEST(LineWrappers, UnwrapStripsEachWrapperForm) {
    const std::vector<std::pair<std::string, std::string>> cases{
        {"Name:  gfx1030", "Name:  gfx1030"},
        {"  Name:  gfx1030\r", "Name:  gfx1030"},
        {"> > Name:  gfx1030", "Name:  gfx1030"},
        {"ollama-1  | Name:  gfx1030", "Name:  gfx1030"},
        {"comfyui_1 |   Name:  gfx1030", "Name:  gfx1030"},
    };
    for (const auto& [in, out] : cases) EXPECT_EQ(unwrap(in), out) << in;
}

TEST(LineWrappers, UnwrapLeavesProseMessagesAndTimestampsAlone) {
    // Timestamp prefixes are not wrappers (line_wrappers.cpp says why): they stay.
    for (const std::string line :
         {"RuntimeError: HIP error: invalid device function", "WARNING: 3 retries left: giving up",
          "time=2025-03-13T00:22:04.762+08:00 level=WARN msg=x", "| GPU | 0 |",
          "2025-03-13T00:22:04.762Z Name: gfx1030", "Feb 02 19:28:37 host ollama[20609]: Name: gfx1030"})
        EXPECT_EQ(unwrap(line), line) << line;
}

TEST(LineWrappers, UnwrapReadsLongLinesWithoutRecursion) {
    // std::regex recursed once per character here (docs/security.md, "Backtracking regex"):
    // a megabyte of quote markers and blanks, then of a service name, ends in linear time.
    const std::string quotes(1 << 20, '>');
    EXPECT_EQ(unwrap(quotes + "x"), "x");
    const std::string name(1 << 20, 'a');
    EXPECT_EQ(unwrap(name + " | x"), "x");
    EXPECT_EQ(unwrap(name + std::string(1 << 20, ' ') + "x"), name + std::string(1 << 20, ' ') + "x");
}

std::string filtered(EscapeFilter& f, std::string_view in) {
    std::string scratch;
    return std::string(f.filter(in, scratch));
}

TEST(LineWrappers, EscapeFilterDropsColourCodesAndKeepsLineEnds) {
    EscapeFilter f;
    EXPECT_EQ(filtered(f, "\x1b[1;31mRuntimeError\x1b[0m: HIP error\n"), "RuntimeError: HIP error\n");
    EXPECT_EQ(filtered(f, "\x1b]0;title\x07text\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n"), "textlink\n");
    EXPECT_EQ(filtered(f, "\x1b(Bplain\x1b"
                          "7saved\n"),
              "plainsaved\n");
    // A line end ends an unfinished sequence; the next line is text again.
    EXPECT_EQ(filtered(f, "a\x1b[12\nb\n"), "a\nb\n");
}

TEST(LineWrappers, EscapeFilterWithoutEscapesCopiesNothing) {
    EscapeFilter f;
    std::string scratch;
    const std::string_view in = "plain text\n";
    EXPECT_EQ(f.filter(in, scratch).data(), in.data());
}

TEST(LineWrappers, EscapeFilterGivesTheSameBytesWhateverTheChunks) {
    const std::string in = "x\x1b[38;5;196mred\x1b[0m y\x1b]0;t\x1b\\z\x1b(B\n\x1b[Knext\n";
    EscapeFilter whole;
    const auto expect = filtered(whole, in);
    EXPECT_EQ(expect, "xred yz\nnext\n");
    for (std::size_t piece = 1; piece < in.size(); ++piece) {
        EscapeFilter f;
        std::string out;
        for (std::size_t i = 0; i < in.size(); i += piece) out += filtered(f, std::string_view(in).substr(i, piece));
        EXPECT_EQ(out, expect) << "piece " << piece;
    }
}

TEST(LineWrappers, AnEndlessSequenceIsCutOffAndItsBytesComeBack) {
    // "ESC [" followed by parameter bytes forever: after k_max_sequence bytes the rest is text.
    EscapeFilter f;
    const std::string in = "\x1b[" + std::string(1000, '1') + "Memory access fault\n";
    const auto out = filtered(f, in);
    EXPECT_NE(out.find("Memory access fault\n"), std::string::npos);
    EXPECT_LT(out.size(), in.size());
}

std::vector<std::uint64_t> match_lines(std::string_view pattern, std::string_view input) {
    auto set = compile({entry("e", {sig(std::string(pattern))})});
    std::vector<std::uint64_t> lines;
    LogScanner scanner(set, [&](const Match& m) { lines.push_back(m.line); });
    EXPECT_TRUE(scanner.feed(input).ok());
    EXPECT_TRUE(scanner.finish().ok());
    return lines;
}

TEST(LineWrappers, AnchoredSignaturesMatchWrappedLines) {
    const std::string_view pattern = "^amdgpu/6\\.1\\.0[^:]*: added[ \\t]*$";
    for (const std::string line :
         {"amdgpu/6.1.0, 6.5.0-28-generic, x86_64: added", "amdgpu/6.1.0, 6.5.0-28-generic, x86_64: added\r",
          "> amdgpu/6.1.0, 6.5.0-28-generic, x86_64: added", "dkms-1  | amdgpu/6.1.0, 6.5.0-28-generic, x86_64: added",
          "\x1b[32mamdgpu/6.1.0, 6.5.0-28-generic, x86_64: added\x1b[0m"})
        EXPECT_EQ(match_lines(pattern, "first\n" + line + "\nlast\n"), std::vector<std::uint64_t>{2}) << line;
}

TEST(LineWrappers, AnAnchorStillRefusesTheMiddleOfALine) {
    EXPECT_TRUE(match_lines("^Aborted \\(core dumped\\)$", "the run was Aborted (core dumped)\n").empty());
    EXPECT_TRUE(match_lines("^Aborted \\(core dumped\\)$", "Aborted (core dumped) twice\n").empty());
}

TEST(LineWrappers, EscapesKeepLineNumbersAndByteCounts) {
    auto set = compile({entry("e", {sig("HIP error: invalid device function")})});
    std::vector<Match> got;
    LogScanner scanner(set, [&](const Match& m) { got.push_back(m); });
    const std::string input = "\x1b[33mwarn\x1b[0m\n\x1b[31mRuntimeError: HIP error: invalid device function\x1b[0m\n";
    ASSERT_TRUE(scanner.feed(input).ok());
    ASSERT_TRUE(scanner.finish().ok());
    ASSERT_EQ(got.size(), 1U);
    EXPECT_EQ(got[0].line, 2U);
    EXPECT_EQ(got[0].excerpt.back().text, "RuntimeError: HIP error: invalid device function");
    EXPECT_EQ(scanner.bytes(), input.size());
}

}  // namespace
}  // namespace rmcp::explain
