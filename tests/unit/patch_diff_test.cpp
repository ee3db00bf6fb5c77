#include "patch/diff.hpp"

#include <gtest/gtest.h>

using rmcp::patch::unified_diff;

TEST(PatchDiff, EqualTextsGiveNothing) { EXPECT_EQ(unified_diff("a\nb\n", "a\nb\n", "x", "y"), ""); }

TEST(PatchDiff, NewFileIsOneHunkFromLineZero) {
    EXPECT_EQ(unified_diff("", "one\ntwo\n", "/dev/null", "b/f"),
              "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+one\n+two\n");
}

TEST(PatchDiff, ChangeInTheMiddleKeepsThreeLinesOfContext) {
    const std::string a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
    const std::string b = "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n";
    EXPECT_EQ(unified_diff(a, b, "a/f", "b/f"),
              "--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n");
}

TEST(PatchDiff, DistantChangesMakeTwoHunks) {
    std::string a;
    for (int i = 1; i <= 20; ++i) a += std::to_string(i) + "\n";
    std::string b = a;
    b.replace(b.find("2\n"), 2, "two\n");
    b.replace(b.find("19\n"), 3, "nineteen\n");
    const auto d = unified_diff(a, b, "a/f", "b/f");
    EXPECT_NE(d.find("@@ -1,5 +1,5 @@\n 1\n-2\n+two\n"), std::string::npos) << d;
    EXPECT_NE(d.find("@@ -16,5 +16,5 @@\n 16\n 17\n 18\n-19\n+nineteen\n 20\n"), std::string::npos) << d;
}

TEST(PatchDiff, MissingFinalNewlineIsMarked) {
    const auto d = unified_diff("", "x", "/dev/null", "b/f");
    EXPECT_EQ(d, "--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n");
}
