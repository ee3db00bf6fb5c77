// Doctor's checklist text (render/doctor_text.cpp): the machine line, one line per check area,
// the de-duplicated next steps with their undo, -q's one line, -v's details, the width and the
// ASCII glyphs. On the shipped kb for fixture roots and on hand-built findings.
#include "render/doctor_text.hpp"

#include "detect/detect.hpp"
#include "facts/facts_json.hpp"
#include "kb/libraries.hpp"
#include "scan/coverage.hpp"
#include "util/strings.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace rmcp {
namespace {

namespace fs = std::filesystem;

const kb::KnowledgeBase& shipped_kb() {
    static const kb::KnowledgeBase kb = [] {
        auto loaded = kb::load(fs::path(RMCP_SOURCE_DIR) / "kb");
        EXPECT_TRUE(loaded.ok());
        return loaded.ok() ? std::move(*loaded) : kb::KnowledgeBase{};
    }();
    return kb;
}

struct Checked {
    nlohmann::json facts;
    kb::DoctorReport report;
};

Checked doctor_on(const std::string& fixture) {
    auto root = Root::open(fs::path(RMCP_SOURCE_DIR) / "tests" / "fixtures" / fixture);
    EXPECT_TRUE(root.ok());
    if (!root.ok()) return {};
    const auto facts = detect(*root);
    Checked c;
    c.facts = facts_to_json(facts);
    kb::merge_libraries(c.facts, scan::libraries_facts(*root, facts));
    c.report = kb::run_doctor(shipped_kb(), c.facts);
    return c;
}

std::size_t max_columns(const std::string& text) {
    std::size_t most = 0;
    for (const auto line : split_lines(text)) {
        std::size_t cols = 0;
        for (const char ch : line) cols += (static_cast<unsigned char>(ch) & 0xC0U) != 0x80U ? 1 : 0;
        most = std::max(most, cols);
    }
    return most;
}

TEST(DoctorText, ChecklistNamesEveryAreaAndTheGpuByItsRocmIndex) {
    const auto c = doctor_on("desktop-igpu-dgpu");
    DoctorTextOptions o;
    const auto text = render_doctor_text(c.report, c.facts, "rmcp", o, Style(false));
    EXPECT_TRUE(text.starts_with("rmcp doctor · GPU 0 Radeon RX 7900 XTX (gfx1100) · GPU 1 Radeon Graphics")) << text;
    for (const char* area : {" Driver and device nodes", " GPU 0 gfx1100: override", " GPU 1 gfx1036: override",
                             " GPU 0 gfx1100: code", " ROCm and PyTorch", " Environment"})
        EXPECT_NE(text.find(area), std::string::npos) << area << "\n" << text;
    // The critical finding on the iGPU marks its line ✗; nothing says "node" or "index".
    EXPECT_NE(text.find("[✗] GPU 1 gfx1036: override"), std::string::npos) << text;
    EXPECT_EQ(text.find("index"), std::string::npos) << text;
    EXPECT_LE(max_columns(text), 80U) << text;
    // Without -v no evidence, references or fix lists.
    EXPECT_EQ(text.find("references:"), std::string::npos) << text;
    EXPECT_NE(text.find("Details: add -v"), std::string::npos) << text;
}

TEST(DoctorText, NarrowTerminalAndAsciiLocale) {
    const auto c = doctor_on("desktop-igpu-dgpu");
    const auto text = render_doctor_text(c.report, c.facts, "rmcp", {}, Style(false, false, 60));
    EXPECT_LE(max_columns(text), 60U) << text;
    for (const unsigned char ch : text) EXPECT_LT(ch, 0x80U) << text;
    EXPECT_NE(text.find("[x] GPU 1"), std::string::npos) << text;
}

TEST(DoctorText, QuietIsTheSummaryLine) {
    const auto c = doctor_on("rx6700xt-gfx1031");
    DoctorTextOptions o;
    o.quiet = true;
    const auto text = render_doctor_text(c.report, c.facts, "rmcp", o, Style(false));
    EXPECT_EQ(text, doctor_summary_line(c.report) + "\n");
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
}

TEST(DoctorText, VerboseShowsEvidenceInWords) {
    const auto c = doctor_on("rx6700xt-gfx1031");
    DoctorTextOptions o;
    o.verbose = true;
    const auto text = render_doctor_text(c.report, c.facts, "rmcp", o, Style(false));
    EXPECT_NE(text.find("\nCRITICAL rdna2-no-override  [rocblas-missing-arch, user-confirmed]  GPU 0\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("    GPU 0: the GPU's chip target is gfx1031\n"), std::string::npos) << text;
    EXPECT_NE(text.find("    GPU 0: an HSA_OVERRIDE_GFX_VERSION that applies to this GPU is absent\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  fixes:\n    env-override-same-family — "), std::string::npos) << text;
    EXPECT_EQ(text.find("(not exists true)"), std::string::npos) << text;  // rule syntax stays in kb show
}

TEST(DoctorText, NextStepsAreDeduplicatedWithUndo) {
    kb::Entry a;
    a.id = "a-entry";
    a.severity = kb::Severity::critical;
    a.category = "config-risk";
    a.fixes = {{"env-x", "the x cost"}};
    kb::Entry b = a;
    b.id = "b-entry";
    b.severity = kb::Severity::warning;
    kb::Finding fa;
    fa.entry = &a;
    fa.next_command = "rmcp --root R patch apply env-x";
    fa.chosen_fix = "env-x";
    kb::Finding fb = fa;
    fb.entry = &b;
    kb::DoctorReport r;
    r.findings = {fa, fb};
    const auto steps = doctor_next_steps(r, "rmcp --root R");
    ASSERT_EQ(steps.size(), 1U);
    EXPECT_EQ(steps[0].undo, "rmcp --root R patch rollback");
    EXPECT_EQ(steps[0].finding_ids, (std::vector<std::string>{"a-entry", "b-entry"}));
    const auto text = render_doctor_text(r, nlohmann::json::object(), "rmcp --root R", {}, Style(false));
    EXPECT_NE(text.find("Next step (1 command for 2 findings):\n  1. rmcp --root R patch apply env-x\n"
                        "     for a-entry, b-entry; cost: the x cost\n     undo: rmcp --root R patch rollback\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("patch apply env-x", text.find("patch apply env-x") + 1), std::string::npos) << text;
    // A system patch on the live machine is applied with sudo, and undone with it.
    kb::DoctorReport live;
    live.findings = {fa};
    live.findings[0].next_command = "sudo rmcp patch apply env-x";
    const auto sudo_steps = doctor_next_steps(live, "rmcp");
    ASSERT_EQ(sudo_steps.size(), 1U);
    EXPECT_EQ(sudo_steps[0].undo, "sudo rmcp patch rollback");
    // Anything else has no undo to offer.
    live.findings[0].next_command = "rmcp scan";
    EXPECT_EQ(doctor_next_steps(live, "rmcp").at(0).undo, "");
}

TEST(DoctorText, HealthyMachineSaysSo) {
    const auto c = doctor_on("rx7900xtx-healthy");
    const auto text = render_doctor_text(c.report, c.facts, "rmcp", {}, Style(false));
    EXPECT_EQ(text.find("[✗]"), std::string::npos) << text;
    EXPECT_EQ(text.find("[!]"), std::string::npos) << text;
}

}  // namespace
}  // namespace rmcp
