// The knowledge base as documentation (render/kb_render.cpp): `kb list`, `kb show`, the
// Markdown pages and `kb lint`'s report, on hand-written entries loaded with kb::load_entry
// and on the shipped kb.
#include "render/kb_render.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace rmcp {
namespace {

// A doctor entry with a predicate and a fix, and no log signature.
const char* k_doctor_entry = R"(id = "x-doctor"
title = "Doctor | only"
category = "config-risk"
severity = "warning"
confidence = "reported"
summary = """
First sentence. Second
sentence on two lines."""
references = ["https://example.org/doctor"]

[applies]
all = [
  { fact = "driver.loaded", equals = true },
  { not = { fact = "driver.dkms_version", exists = true } },
]

[[fixes]]
patch = "advise-ignore"
cost = "none"
)";

// A log-only entry: a signature with context words, no predicate, no fix, a note.
const char* k_log_entry = R"(id = "x-log"
title = "Log only"
category = "gpu-hang"
severity = "critical"
confidence = "vendor-confirmed"
summary = "It hangs | stalls."
next_step = "Run with AMD_LOG_LEVEL=4."
notes = "Sources disagree."
references = ["https://example.org/log"]

[[signatures]]
pattern = 'ring gfx timeout'
context = ["amdgpu", "reset"]
window = 7
)";

kb::Entry load(const char* text, const std::string& path) {
    auto e = kb::load_entry(text, path);
    EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message());
    return e.ok() ? *e : kb::Entry{};
}

kb::KnowledgeBase two_entries() {
    kb::KnowledgeBase kb;
    kb.entries = {load(k_doctor_entry, "kb/x-doctor.toml"), load(k_log_entry, "kb/x-log.toml")};
    return kb;
}

TEST(KbRender, ListTextColumns) {
    // Widths: the longest id ("x-doctor", 8), category ("config-risk", 11) and confidence
    // ("vendor-confirmed", 16); SEVERITY is always 8 wide; two spaces between columns.
    EXPECT_EQ(render_kb_list_text(two_entries(), Style(false)),
              "ID        SEVERITY  CATEGORY     CONFIDENCE        TITLE\n"
              "x-doctor  warning   config-risk  reported          Doctor | only\n"
              "x-log     critical  gpu-hang     vendor-confirmed  Log only\n");
}

TEST(KbRender, ListJson) {
    const auto j = kb_list_json(two_entries());
    EXPECT_EQ(j["schema_version"], k_kb_schema_version);
    ASSERT_EQ(j["entries"].size(), 2U);
    EXPECT_EQ(j["entries"][0], (nlohmann::json{{"id", "x-doctor"},
                                               {"title", "Doctor | only"},
                                               {"severity", "warning"},
                                               {"category", "config-risk"},
                                               {"confidence", "reported"},
                                               {"scope", "system"},
                                               {"summary_line", "First sentence."},
                                               {"applies", true},
                                               {"signatures", 0},
                                               {"fixes", {"advise-ignore"}}}));
    EXPECT_EQ(j["entries"][1]["applies"], false);
    EXPECT_EQ(j["entries"][1]["signatures"], 1);
    EXPECT_EQ(j["entries"][1]["fixes"], nlohmann::json::array());
}

TEST(KbRender, ShowTextOfBothKinds) {
    const auto kb = two_entries();
    const auto doctor = render_kb_show_text(kb.entries[0], Style(false), false);
    EXPECT_TRUE(
        doctor.starts_with("x-doctor — Doctor | only\n"
                           "severity: warning   category: config-risk   confidence: reported   scope: system\n\n"
                           // Line breaks of the TOML text are flattened.
                           "First sentence. Second sentence on two lines.\n"
                           "\nWhen doctor reports it:\n"))
        << doctor;
    EXPECT_NE(doctor.find("\nLog signatures (rmcp explain):\n  none: doctor only\n"), std::string::npos);
    EXPECT_NE(doctor.find("\nFixes (first one first; rmcp patch show ID):\n  1. advise-ignore: none\n"),
              std::string::npos);
    EXPECT_NE(doctor.find("\nReferences:\n  https://example.org/doctor\n"), std::string::npos);
    EXPECT_TRUE(doctor.ends_with("\ndefined in kb/x-doctor.toml\n")) << doctor;
    EXPECT_EQ(doctor.find("otes:"), std::string::npos);
    EXPECT_EQ(doctor, render_kb_show_text(kb.entries[0], Style(false), true)) << "no notes: -v adds nothing";

    // Notes are for the knowledge base's maintainers: shown with -v only, and said to exist.
    const auto log = render_kb_show_text(kb.entries[1], Style(false), true);
    EXPECT_NE(log.find("\nNext step: Run with AMD_LOG_LEVEL=4.\n"), std::string::npos) << log;
    EXPECT_NE(log.find("  never from facts: this entry recognises log lines only (rmcp explain)\n"), std::string::npos);
    EXPECT_NE(log.find("  /ring gfx timeout/\n    context within 7 lines: amdgpu, reset\n"), std::string::npos) << log;
    EXPECT_NE(log.find("  none known; see the references\n"), std::string::npos);
    EXPECT_NE(log.find("\nMaintainer notes:\n  Sources disagree.\n"), std::string::npos) << log;
    const auto plain = render_kb_show_text(kb.entries[1], Style(false), false);
    EXPECT_EQ(plain.find("Sources disagree"), std::string::npos) << plain;
    EXPECT_TRUE(plain.ends_with("(add -v for maintainer notes)\n")) << plain;
}

TEST(KbRender, ShowJson) {
    const auto kb = two_entries();
    const auto d = kb_show_json(kb.entries[0]);
    EXPECT_EQ(d["summary"], "First sentence. Second sentence on two lines.");
    EXPECT_EQ(d["summary_line"], "First sentence.");
    EXPECT_TRUE(d["next_step"].is_null());
    EXPECT_TRUE(d["notes"].is_null());
    ASSERT_TRUE(d["applies"].is_array());
    ASSERT_FALSE(d["applies"].empty());
    EXPECT_EQ(d["applies"][0]["depth"], 0);  // the top of the predicate
    EXPECT_GT(d["applies"].back()["depth"], 0);
    EXPECT_EQ(d["fixes"], (nlohmann::json::array({{{"patch", "advise-ignore"}, {"cost", "none"}}})));
    EXPECT_EQ(d["file"], "kb/x-doctor.toml");

    const auto l = kb_show_json(kb.entries[1]);
    EXPECT_TRUE(l["applies"].is_null());  // log-only: null, not an empty list
    EXPECT_EQ(l["next_step"], "Run with AMD_LOG_LEVEL=4.");
    EXPECT_EQ(l["signatures"],
              (nlohmann::json::array(
                  {{{"pattern", "ring gfx timeout"}, {"context", {"amdgpu", "reset"}}, {"window", 7}}})));
}

TEST(KbRender, MarkdownPagesAndIndex) {
    const auto pages = render_kb_markdown(two_entries());
    ASSERT_EQ(pages.size(), 3U);
    ASSERT_TRUE(pages.count("index.md"));
    const auto& index = pages.at("index.md");
    // The doctor/explain columns say which tool uses an entry; a '|' in a summary is escaped.
    EXPECT_NE(index.find(
                  "| [x-doctor](x-doctor.md) | warning | config-risk | reported | yes | — | First sentence. |\n"),
              std::string::npos)
        << index;
    EXPECT_NE(index.find(
                  "| [x-log](x-log.md) | critical | gpu-hang | vendor-confirmed | — | 1 | It hangs \\| stalls. |\n"),
              std::string::npos)
        << index;
    const auto& log = pages.at("x-log.md");
    EXPECT_TRUE(log.starts_with("<!-- Generated by `rmcp kb render --format markdown`")) << log;
    EXPECT_NE(log.find("# x-log: Log only\n"), std::string::npos);
    EXPECT_NE(log.find("- `ring gfx timeout` (context within 7 lines: `amdgpu`, `reset`)\n"), std::string::npos) << log;
    EXPECT_NE(log.find("None known; see the references.\n"), std::string::npos);
    EXPECT_NE(log.find("- <https://example.org/log>\n"), std::string::npos);
    const auto& doctor = pages.at("x-doctor.md");
    EXPECT_NE(doctor.find("1. `advise-ignore`: none\n"), std::string::npos) << doctor;
    EXPECT_NE(doctor.find("None: `rmcp doctor` only.\n"), std::string::npos);
}

TEST(KbRender, MarkdownOfTheShippedKbHasAPagePerEntry) {
    auto kb = kb::load(std::filesystem::path(RMCP_SOURCE_DIR) / "kb");
    ASSERT_TRUE(kb.ok());
    const auto pages = render_kb_markdown(*kb);
    EXPECT_EQ(pages.size(), kb->entries.size() + 1);
    for (const auto& e : kb->entries) {
        ASSERT_TRUE(pages.count(e.id + ".md")) << e.id;
        EXPECT_NE(pages.at("index.md").find("| [" + e.id + "](" + e.id + ".md) |"), std::string::npos) << e.id;
    }
}

TEST(KbRender, LintReport) {
    const std::vector<kb::LintProblem> problems = {{"x-doctor", "kb/x-doctor.toml", "cost", "fix has no cost"}};
    EXPECT_EQ(render_kb_lint_text(problems, 2, {"rx7900xtx-healthy", "laptop-780m-healthy"}, Style(false)),
              "x-doctor (kb/x-doctor.toml) [cost]: fix has no cost\n"
              "2 entries checked, 1 problem; healthy machines: rx7900xtx-healthy, laptop-780m-healthy\n");
    EXPECT_EQ(render_kb_lint_text({}, 5, {}, Style(false)),
              "5 entries checked, 0 problems; healthy machines: none given\n");
    EXPECT_EQ(kb_lint_json(problems, 2, {"h"}), (nlohmann::json{{"schema_version", k_kb_schema_version},
                                                                {"entries", 2},
                                                                {"healthy", {"h"}},
                                                                {"problems",
                                                                 {{{"entry", "x-doctor"},
                                                                   {"file", "kb/x-doctor.toml"},
                                                                   {"check", "cost"},
                                                                   {"message", "fix has no cost"}}}}}));
}

}  // namespace
}  // namespace rmcp
