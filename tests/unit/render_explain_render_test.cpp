// explain's text and JSON (render/explain_render.cpp): a diagnosis built from a small log
// against the shipped kb, and the "nothing recognised" line.
#include "render/explain_render.hpp"

#include "util/terminal.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace rmcp::explain {
namespace {

const kb::KnowledgeBase& shipped_kb() {
    static const kb::KnowledgeBase kb = [] {
        auto loaded = kb::load(std::filesystem::path(RMCP_SOURCE_DIR) / "kb");
        EXPECT_TRUE(loaded.ok());
        return loaded.ok() ? std::move(*loaded) : kb::KnowledgeBase{};
    }();
    return kb;
}

const std::string k_log = "epoch 1\n"
                          "Memory access fault by GPU node-1 (Agent handle: 0x55d0) on address 0x7f00. Reason: "
                          "Page not present or supervisor privilege.\n"
                          "Aborted (core dumped)\n";

// The diagnoses of k_log as the file "train.log", without facts.
std::vector<Diagnosis> diagnose_log() {
    const auto& kb = shipped_kb();
    auto set = SignatureSet::compile(kb.entries);
    EXPECT_TRUE(set.ok());
    if (!set.ok()) return {};
    DiagnosisBuilder builder(kb.entries, *set);
    LogScanner scanner(*set, builder.collector("train.log"));
    EXPECT_TRUE(scanner.feed(k_log).ok());
    EXPECT_TRUE(scanner.finish().ok());
    builder.add_counts("train.log", scanner);
    return builder.rank({});
}

ExplainReport memory_fault_report() {
    ExplainReport r;
    r.inputs = {{"train.log", k_log.size(), 3, true, ""}};
    for (auto& d : diagnose_log())
        if (d.entry->id == "memory-access-fault") r.diagnoses.push_back(std::move(d));
    return r;
}

TEST(ExplainRender, TextOfAMemoryAccessFault) {
    auto r = memory_fault_report();
    ASSERT_EQ(r.diagnoses.size(), 1U);
    r.fix_steps.emplace("memory-access-fault",
                        patch::FixStep{"env-serialize-kernels", "rmcp patch apply env-serialize-kernels",
                                       "much slower; only to find the kernel that faults"});
    const auto text = render_text(r, Style(false, true, 1000));  // wide: one line per label
    // Severity as doctor spells it (kb::severity_label); the one command to run next.
    EXPECT_TRUE(
        text.starts_with("1. memory-access-fault [gpu-memory-fault] CRITICAL, vendor-confirmed\n"
                         "   ROCr: Memory access fault by GPU\n"
                         // kb: cause_varies (the threads show other causes behind this message)
                         "   likely: several causes print this message; public threads with it had others\n"
                         "   what: A GPU kernel accessed memory it may not. Usual causes: an override that runs "
                         "the GPU as a chip of another ISA family"))
        << text;
    EXPECT_NE(text.find(" yours or a library's.\n   at: train.log:2\n"), std::string::npos) << text;
    // The matched line is marked; the excerpt is numbered from the log.
    EXPECT_NE(text.find("\n   > 2 | Memory access fault by GPU node-1 (Agent handle: 0x55d0)"), std::string::npos)
        << text;
    EXPECT_NE(text.find("\n   next: rmcp patch apply env-serialize-kernels\n"
                        "   cost: much slower; only to find the kernel that faults\n"),
              std::string::npos)
        << text;
    // Ranking reasons and references are -v's (issue 30: -v is where evidence and reasons go).
    EXPECT_EQ(text.find("why here:"), std::string::npos) << text;
    EXPECT_EQ(text.find("see: "), std::string::npos) << text;
    EXPECT_EQ(text.find("fix: "), std::string::npos) << text;
    const auto verbose = render_text(r, Style(false), TextOptions{true});
    EXPECT_NE(verbose.find("\n   why here: "), std::string::npos);
    EXPECT_NE(verbose.find("\n   see: https://github.com/ROCm/MIOpen/issues/3540\n"), std::string::npos);
}

// Newcomer review, finding 19: prose (what, basis, cost, check) is wrapped to the width, its
// continuation indented under the text; the excerpt (machine output) and `next` (a command to
// paste) stay whole whatever the width.
TEST(ExplainRender, ProseWrapsToTheWidthExcerptAndCommandDoNot) {
    auto r = memory_fault_report();
    ASSERT_EQ(r.diagnoses.size(), 1U);
    const std::string command = "rmcp patch apply env-serialize-kernels --and-a-long-argument-that-does-not-fit";
    r.fix_steps.emplace("memory-access-fault", patch::FixStep{"env-serialize-kernels", command,
                                                              "much slower; only to find the kernel that faults"});
    const auto text = render_text(r, Style(false, true, 50));
    EXPECT_NE(text.find("   what: A GPU kernel accessed memory it may not.\n         Usual causes: an override"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("   next: " + command + "\n"), std::string::npos) << text;
    EXPECT_NE(text.find("   > 2 | Memory access fault by GPU node-1 (Agent handle: 0x55d0) on address 0x7f00. Reason: "
                        "Page not present or supervisor privilege.\n"),
              std::string::npos)
        << text;
    for (std::size_t start = 0; start < text.size();) {
        const auto end = text.find('\n', start);
        const auto line = text.substr(start, end - start);
        start = end == std::string::npos ? text.size() : end + 1;
        // the rank line (id, category, severity) is a heading, the excerpt machine output
        const bool whole =
            line.starts_with("1. ") || line.starts_with("   next: ") || line.find(" | ") != std::string::npos;
        // a single word longer than the room stays whole (a path, a URL)
        const bool one_long_word = line.find(' ', line.find_first_not_of(' ')) == std::string::npos ||
                                   line.substr(line.find_first_not_of(' ')).find(' ') == std::string::npos;
        if (!whole && !one_long_word) EXPECT_LE(display_width(line), 50U) << line;
    }
}

TEST(ExplainRender, JsonOfAMemoryAccessFault) {
    const auto r = memory_fault_report();
    ASSERT_EQ(r.diagnoses.size(), 1U);
    const auto j = render_json(r);
    EXPECT_EQ(j["schema_version"], k_explain_schema_version);
    EXPECT_EQ(j["inputs"][0], (nlohmann::json{{"source", "train.log"},
                                              {"bytes", k_log.size()},
                                              {"lines", 3},
                                              {"complete", true},
                                              {"error", nullptr}}));
    EXPECT_TRUE(j["facts"].is_null());
    EXPECT_EQ(j["facts_source"], "none");
    EXPECT_EQ(j["recognised"], 1);
    EXPECT_FALSE(j.contains("report_facts"));
    const auto& p = j["problems"][0];
    EXPECT_EQ(p["rank"], 1);
    EXPECT_EQ(p["id"], "memory-access-fault");
    EXPECT_EQ(p["severity"], "critical");
    EXPECT_EQ(p["summary_line"], "A GPU kernel accessed memory it may not.");
    EXPECT_TRUE(p["causes"].get<std::string>().starts_with("an override that runs the GPU as a chip of another"));
    EXPECT_TRUE(p["applies_here"].is_null());  // no facts in use
    EXPECT_EQ(p["total_matches"], 1);
    EXPECT_EQ(p["signatures_matched"][0]["index"], 0);  // the ROCr message, the entry's first signature
    EXPECT_EQ(p["facts_only"], false);
    EXPECT_EQ(p["fixes"][0], "env-serialize-kernels");
    EXPECT_EQ(p["costs"]["env-serialize-kernels"], "much slower; only to find the kernel that faults");
    EXPECT_TRUE(p["next"].is_null());  // no fix step given: no command
    EXPECT_FALSE(p.contains("next_step"));
    ASSERT_EQ(p["occurrences"].size(), 1U);
    const auto& o = p["occurrences"][0];
    EXPECT_EQ(o["source"], "train.log");
    EXPECT_EQ(o["line"], 2);
    // "Aborted" is one of the signature's context words and sits on the next line.
    EXPECT_NE(std::find(o["context_found"].begin(), o["context_found"].end(), "Aborted"), o["context_found"].end());
    const auto hit = std::find_if(o["excerpt"].begin(), o["excerpt"].end(),
                                  [](const nlohmann::json& l) { return l["match"] == true; });
    ASSERT_NE(hit, o["excerpt"].end());
    EXPECT_EQ((*hit)["line"], 2);
    EXPECT_TRUE((*hit)["text"].get<std::string>().starts_with("Memory access fault by GPU node-1"));
}

TEST(ExplainRender, NothingRecognised) {
    ExplainReport r;
    r.inputs = {{"clean.log", 10, 1, true, ""}};
    EXPECT_EQ(render_text(r, Style(false)), "No known problem recognised in 1 line (clean.log).\n");
    r.inputs.push_back({"standard input", 20, 4, false, "read error"});
    EXPECT_EQ(render_text(r, Style(false)), "No known problem recognised in 5 lines (2 inputs).\n");
    const auto j = render_json(r);
    EXPECT_EQ(j["recognised"], 0);
    EXPECT_EQ(j["problems"], nlohmann::json::array());
    EXPECT_EQ(j["inputs"][1]["complete"], false);
    EXPECT_EQ(j["inputs"][1]["error"], "read error");
}

TEST(ExplainRender, SimilarReportsAndTheirVote) {
    // No entry recognised the log; the nearest public threads agree (basis `similar`).
    ExplainReport r;
    r.inputs = {{"train.log", 10, 3, true, ""}};
    similar::SimilarReport near;
    near.record = {{"url", "https://github.com/ROCm/ROCm/issues/2196"},
                   {"gpu", "AMD RX 7900 XTX"},
                   {"gfx_target", "gfx1100"},
                   {"rocm", "6.0"},
                   {"category", "gpu-hang"},
                   {"kb_entry", "mes-hang"},
                   {"cause", "MES firmware hang"},
                   {"fixed", "newer firmware"},
                   {"clean", false}};
    near.similarity = 0.614;
    r.similar = {near};
    r.vote = similar::Vote{"gpu-hang", 2, 3};
    const auto text = render_text(r, Style(false));
    EXPECT_NE(text.find("resembles gpu-hang: 2 of the 3 nearest public reports established gpu-hang.\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("Similar public reports\n1. github.com/ROCm/ROCm/issues/2196 similarity 0.61 · AMD RX 7900 "
                        "XTX (gfx1100), ROCm 6.0\n   cause: mes-hang [gpu-hang]: MES firmware hang\n"
                        "   fixed: newer firmware\n"),
              std::string::npos)
        << text;
    const auto j = render_json(r);
    EXPECT_EQ(j["basis"], "similar");
    EXPECT_EQ(j["similar_vote"]["votes"], 2);
    EXPECT_EQ(j["similar"][0]["similarity"], 0.61);
    EXPECT_FALSE(j["similar"][0].contains("clean"));
    r.vote.reset();
    EXPECT_EQ(render_json(r)["basis"], "none");
}

TEST(ExplainRender, CleanLogMatchesNothingInTheShippedKb) {
    const auto& kb = shipped_kb();
    auto set = SignatureSet::compile(kb.entries);
    ASSERT_TRUE(set.ok());
    DiagnosisBuilder builder(kb.entries, *set);
    LogScanner scanner(*set, builder.collector("clean.log"));
    ASSERT_TRUE(scanner.feed("epoch 1 loss 0.25\nepoch 2 loss 0.19\n").ok());
    ASSERT_TRUE(scanner.finish().ok());
    builder.add_counts("clean.log", scanner);
    EXPECT_TRUE(builder.rank({}).empty());
}

}  // namespace
}  // namespace rmcp::explain
