// The applies language: operators, absence, existential arrays, gpu scope, evidence.
#include "kb/kb.hpp"
#include "kb/predicate.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {
using nlohmann::json;
using rmcp::kb::load_entry;

const json k_facts = json::parse(R"({
  "gpus": [
    {"node": 1, "gfx_target": "gfx1031", "family": "RDNA2", "integrated": false, "visible": true,
     "vram_bytes": 12884901888, "override": {"relation": "same_family", "target": "gfx1030", "valid": true}},
    {"node": 2, "gfx_target": "gfx1036", "family": "RDNA2", "integrated": true, "visible": true,
     "vram_bytes": 536870912, "override": null}
  ],
  "driver": {"loaded": true, "dkms_version": null, "kernel_release": "6.8.0-45-generic",
             "params": {"cwsr_enable": "1", "ppfeaturemask": "0xffffffff", "lockup_timeout": ""}},
  "user": {"groups": [44, 109]},
  "rocm": [{"version": "6.1.3"}, {"version": "5.7.1"}],
  "torch": [{"version": "2.3.0+rocm6.0", "hip_version": "6.0.32830-d62f6a171"}],
  "env": {"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "PYTORCH_HIP_ALLOC_CONF": "expandable_segments:True"}
})");

// An entry with one predicate, in the given scope; the predicate is TOML inline-table text.
rmcp::kb::Entry entry(const std::string& predicate, const std::string& scope = "system") {
    const std::string text = "id = \"t\"\ntitle = \"t\"\ncategory = \"config-risk\"\nseverity = \"info\"\n"
                             "confidence = \"hypothesis\"\nscope = \"" +
                             scope +
                             "\"\nsummary = \"s\"\n"
                             "references = [\"https://example.org/\"]\napplies = " +
                             predicate + "\n";
    auto e = load_entry(text, "kb/t.toml");
    EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message());
    return e.ok() ? std::move(*e) : rmcp::kb::Entry{};
}

bool fires(const std::string& predicate, const std::string& scope = "system") {
    const auto e = entry(predicate, scope);
    return !rmcp::kb::evaluate(k_facts, e).empty();
}
}  // namespace

TEST(KbPredicate, EqualityAcrossTypes) {
    EXPECT_TRUE(fires(R"({ fact = "driver.loaded", equals = true })"));
    EXPECT_FALSE(fires(R"({ fact = "driver.loaded", equals = false })"));
    EXPECT_TRUE(fires(R"({ fact = "driver.params.cwsr_enable", equals = 1 })"));  // numeric string
    EXPECT_TRUE(fires(R"({ fact = "driver.params.cwsr_enable", equals = "1" })"));
    EXPECT_FALSE(fires(R"({ fact = "driver.params.cwsr_enable", equals = 0 })"));
    EXPECT_TRUE(fires(R"({ fact = "env.HSA_OVERRIDE_GFX_VERSION", not_equals = "11.0.0" })"));
}

TEST(KbPredicate, AbsentSatisfiesOnlyExistsFalse) {
    EXPECT_FALSE(fires(R"({ fact = "driver.dkms_version", not_equals = "6.7.0" })"));
    EXPECT_FALSE(fires(R"({ fact = "env.NOPE", not_in = ["a"] })"));
    EXPECT_TRUE(fires(R"({ fact = "driver.dkms_version", exists = false })"));
    EXPECT_TRUE(fires(R"({ fact = "libraries.torch.targets", exists = false })"));  // later producer
    EXPECT_TRUE(fires(R"({ fact = "env.HSA_OVERRIDE_GFX_VERSION", exists = true })"));
}

TEST(KbPredicate, SetsRegexAndNumbers) {
    EXPECT_TRUE(fires(R"({ fact = "gpus.gfx_target", in = ["gfx1036", "gfx1100"] })"));
    EXPECT_TRUE(fires(R"({ fact = "gpus.gfx_target", not_in = ["gfx1031"] })"));  // gfx1036 is not
    EXPECT_TRUE(fires(R"({ fact = "env.PYTORCH_HIP_ALLOC_CONF", matches = "expandable_segments:\\s*True" })"));
    EXPECT_FALSE(fires(R"({ fact = "env.PYTORCH_HIP_ALLOC_CONF", matches = "^max_split" })"));
    EXPECT_TRUE(fires(R"({ fact = "gpus.vram_bytes", le = 4294967296 })"));
    EXPECT_TRUE(fires(R"({ fact = "gpus.vram_bytes", gt = 8589934592 })"));
    EXPECT_FALSE(fires(R"({ fact = "gpus.vram_bytes", ge = 20000000000 })"));
    EXPECT_TRUE(fires(R"({ fact = "driver.params.ppfeaturemask", bits_set = 0x4000 })"));
    EXPECT_FALSE(fires(R"({ fact = "driver.params.lockup_timeout", gt = 0 })"));  // "" is not a number
}

TEST(KbPredicate, VersionsCountsAndCrossFactComparison) {
    EXPECT_TRUE(fires(R"({ fact = "driver.kernel_release", version = ">=6.8, <6.9" })"));
    EXPECT_FALSE(fires(R"({ fact = "driver.kernel_release", version = ">=6.18" })"));
    EXPECT_TRUE(fires(R"({ fact = "gpus", count = 2 })"));
    EXPECT_TRUE(fires(R"({ fact = "user.groups", count = ">=2" })"));
    EXPECT_TRUE(fires(R"({ fact = "gpus.family", count = ">=2" })"));
    EXPECT_FALSE(fires(R"({ fact = "gpus.family", distinct = ">=2" })"));
    EXPECT_TRUE(fires(R"({ fact = "gpus.gfx_target", distinct = ">=2" })"));
    EXPECT_TRUE(fires(R"({ fact = "env.NOPE", count = "==0" })"));
    EXPECT_TRUE(fires(R"({ fact = "torch.hip_version", major_minor_differs = "rocm.version" })"));
}

TEST(KbPredicate, Combinators) {
    EXPECT_TRUE(fires(
        R"({ all = [ { fact = "gpus.integrated", equals = true }, { fact = "gpus.integrated", equals = false } ] })"));
    EXPECT_FALSE(
        fires(R"({ all = [ { fact = "driver.loaded", equals = true }, { fact = "env.NOPE", exists = true } ] })"));
    EXPECT_TRUE(
        fires(R"({ any = [ { fact = "env.NOPE", exists = true }, { fact = "driver.loaded", equals = true } ] })"));
    EXPECT_TRUE(fires(R"({ not = { fact = "env.NOPE", exists = true } })"));
    EXPECT_FALSE(fires(
        R"({ not = { any = [ { fact = "env.NOPE", exists = true }, { fact = "driver.loaded", equals = true } ] } })"));
}

TEST(KbPredicate, GpuScopeBindsOneGpuAtATime) {
    // System scope: both tests hold, but on different GPUs.
    EXPECT_TRUE(fires(
        R"({ all = [ { fact = "gpus.integrated", equals = true }, { fact = "gpus.override.valid", equals = true } ] })"));
    // Gpu scope: no single GPU is integrated and overridden.
    EXPECT_FALSE(fires(
        R"({ all = [ { fact = "gpu.integrated", equals = true }, { fact = "gpu.override.valid", equals = true } ] })",
        "gpu"));
    const auto e = entry(R"({ fact = "gpu.family", equals = "RDNA2" })", "gpu");
    const auto found = rmcp::kb::evaluate(k_facts, e);
    ASSERT_EQ(found.size(), 2U);
    EXPECT_EQ(found[0].gpu_node, 1U);
    EXPECT_EQ(found[1].gpu_node, 2U);
    EXPECT_EQ(found[1].evidence.at(0).fact, "gpus[1].family");
}

TEST(KbPredicate, EvidenceNamesTheDecidingLeaves) {
    const auto e = entry(
        R"({ all = [ { fact = "gpus.gfx_target", equals = "gfx1036" }, { not = { fact = "env.HIP_VISIBLE_DEVICES", exists = true } } ] })");
    const auto found = rmcp::kb::evaluate(k_facts, e);
    ASSERT_EQ(found.size(), 1U);
    const auto& ev = found[0].evidence;
    ASSERT_EQ(ev.size(), 2U);
    EXPECT_EQ(ev[0].fact, "gpus[1].gfx_target");
    EXPECT_EQ(ev[0].value, "gfx1036");
    EXPECT_EQ(ev[0].test, "equals gfx1036");
    EXPECT_EQ(ev[1].fact, "env.HIP_VISIBLE_DEVICES");
    EXPECT_TRUE(ev[1].value.is_null());
    EXPECT_EQ(ev[1].test, "not exists true");
}

TEST(KbPredicate, MatchesScansAMegabyteFactWithoutRecursion) {
    // D3 (adversarial review 2026-11-28): std::regex recursed once per blank of
    // "expandable_segments:\s*True" and a 50 KB value overflowed the stack. Hyperscan scans it.
    const auto e = entry(R"({ fact = "env.PYTORCH_HIP_ALLOC_CONF", matches = "expandable_segments:\\s*True" })");
    for (const auto& [value, holds] : {std::pair{"expandable_segments:" + std::string(1 << 20, ' ') + "x", false},
                                       std::pair{"expandable_segments:" + std::string(1 << 20, ' ') + "True", true},
                                       std::pair{std::string(1 << 20, 'e') + "expandable_segments:True", true}}) {
        json facts = k_facts;
        facts["env"]["PYTORCH_HIP_ALLOC_CONF"] = value;
        EXPECT_EQ(!rmcp::kb::evaluate(facts, e).empty(), holds);
    }
}

TEST(KbPredicate, MatchesRefusesWhatHyperscanCannotMatchWithoutBacktracking) {
    const std::string head = "id = \"t\"\ntitle = \"t\"\ncategory = \"config-risk\"\nseverity = \"info\"\n"
                             "confidence = \"hypothesis\"\nscope = \"system\"\nsummary = \"s\"\n"
                             "references = [\"https://example.org/\"]\n";
    // a back-reference: no automaton can match it, so the entry is refused at load, naming its line
    auto e = load_entry(head + "applies = { fact = \"env.X\", matches = '(a)\\1' }\n", "kb/t.toml");
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().message().find("kb/t.toml:9"), std::string::npos) << e.error().message();
    EXPECT_NE(e.error().message().find("invalid regular expression"), std::string::npos) << e.error().message();
}
