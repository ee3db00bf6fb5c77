// Diagnostics (util/diag.cpp): the one message shape `rmcp: <level>: <message>`
// (docs/exit-codes.md), what -q and -v silence or add, and the count of warnings.
#include "util/diag.hpp"

#include "captured_output.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace rmcp {
namespace {

using Captured = testing_support::CapturedStream;

TEST(UtilDiag, EveryLevelHasTheOneMessageShape) {
    Captured out;
    ASSERT_NE(out.file(), nullptr);
    Diagnostics diag(out.file());
    diag.error(Error{"reading", "/etc/os-release", "Permission denied", ExitCode::environment});
    diag.warning("switch x left out");
    diag.note("wrote /tmp/page.html");
    EXPECT_EQ(out.text(), "rmcp: error: reading /etc/os-release: Permission denied\n"
                          "rmcp: warning: switch x left out\n"
                          "rmcp: note: wrote /tmp/page.html\n");
}

TEST(UtilDiag, QuietSilencesNotesAndWarningsButNeverErrors) {
    Captured out;
    Diagnostics diag(out.file(), Verbosity::quiet);
    diag.note("a note");
    diag.warning("a warning");
    diag.verbose("a detail");
    diag.report(MessageLevel::error, "it failed");
    EXPECT_EQ(out.text(), "rmcp: error: it failed\n");
    EXPECT_EQ(diag.warnings(), 1);  // counted though not shown
}

TEST(UtilDiag, VerboseLinesOnlyWithVerbosityVerbose) {
    Captured out;
    Diagnostics diag(out.file());
    diag.verbose("hidden at normal verbosity");
    EXPECT_EQ(out.text(), "");
    diag.set_verbosity(Verbosity::verbose);
    EXPECT_EQ(diag.verbosity(), Verbosity::verbose);
    diag.verbose("crashes not matched");
    EXPECT_EQ(out.text(), "rmcp: note: crashes not matched\n");
}

TEST(UtilDiag, CountsWarnings) {
    Captured out;
    Diagnostics diag(out.file());
    EXPECT_EQ(diag.warnings(), 0);
    diag.warning("one");
    diag.note("not a warning");
    diag.report(MessageLevel::warning, "two");
    EXPECT_EQ(diag.warnings(), 2);
}

}  // namespace
}  // namespace rmcp
