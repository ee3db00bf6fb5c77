// Loader validation: every error names file:line; the shipped kb/ loads.
#include "explain/diagnose.hpp"
#include "kb/kb.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {
using rmcp::kb::load_entry;

const std::string k_head = R"(id = "e"
title = "t"
category = "config-risk"
severity = "info"
confidence = "hypothesis"
summary = "s"
references = ["https://example.org/"]
)";

// Loads `text` as kb/e.toml and returns the error's "file:line" and cause.
std::pair<std::string, std::string> error_of(const std::string& text) {
    const auto e = load_entry(text, "kb/e.toml");
    if (e.ok()) return {"<loaded>", ""};
    EXPECT_EQ(e.error().code, rmcp::ExitCode::usage);
    return {e.error().path, e.error().cause};
}
}  // namespace

TEST(KbLoader, ShippedKnowledgeBaseLoads) {
    const auto kb = rmcp::kb::load(std::filesystem::path(RMCP_SOURCE_DIR) / "kb");
    ASSERT_TRUE(kb.ok()) << kb.error().message();
    EXPECT_GE(kb->entries.size(), 48U);
    for (const auto& e : kb->entries) {
        EXPECT_EQ(std::filesystem::path(e.file).stem(), e.id);
        EXPECT_TRUE(rmcp::kb::is_category(e.category)) << e.id;
        EXPECT_FALSE(e.references.empty()) << e.id;
    }
    ASSERT_NE(kb->find("rdna2-miopen-gemm-bwd-fault"), nullptr);
    EXPECT_EQ(kb->find("no-such-entry"), nullptr);
    const auto* gemm = kb->find("rdna2-miopen-gemm-bwd-fault");
    ASSERT_FALSE(gemm->signatures.empty());
    EXPECT_GT(gemm->signatures[0].line, 0U);
    EXPECT_EQ(gemm->signatures[0].window, 40U);
}

TEST(KbLoader, ValidEntryWithEveryPart) {
    const auto e = load_entry(k_head + R"(scope = "gpu"
[applies]
fact = "gpu.family"
equals = "RDNA1"
[[signatures]]
pattern = 'HIP error: invalid device function'
context = ["gfx1010"]
[[fixes]]
patch = "env-unset-override"
cost = "none"
)",
                              "kb/e.toml");
    ASSERT_TRUE(e.ok()) << e.error().message();
    EXPECT_EQ(e->scope, rmcp::kb::Scope::gpu);
    EXPECT_EQ(e->signatures.at(0).line, 12U);
    EXPECT_EQ(e->signatures.at(0).window, 20U);
    EXPECT_EQ(e->fixes.at(0).patch, "env-unset-override");
}

struct BadCase {
    std::string text;
    std::string where;  // expected "file:line"
    std::string cause;  // expected substring of the cause
};

class KbLoaderErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(KbLoaderErrors, NameFileAndLine) {
    const auto [where, cause] = error_of(GetParam().text);
    EXPECT_EQ(where, GetParam().where);
    EXPECT_NE(cause.find(GetParam().cause), std::string::npos) << cause;
}

const std::string k_applies = "[applies]\nfact = \"driver.loaded\"\nequals = true\n";

INSTANTIATE_TEST_SUITE_P(
    Every, KbLoaderErrors,
    ::testing::Values(
        BadCase{"id = \"e\"\ntitle = \"unterminated\n", "kb/e.toml:2", ""},  // TOML syntax
        // Regression (fuzz_kb_loader on CI): toml++ asserted on a key that cannot start a key;
        // every build type now reports it (util/toml.hpp).
        BadCase{k_head + "[!]\n", "kb/e.toml:8", "expected bare key starting character"},
        BadCase{k_head + "[ \\x]\n", "kb/e.toml:8", "expected bare key starting character"},
        // Regression (fuzz_kb_loader at -O1): a code point toml++ 3.3's Unicode tables miss
        // (U+0255) reached __builtin_unreachable() in its whitespace test; util/toml.hpp.
        BadCase{k_head + "D =7b\"\u0255\"\n", "kb/e.toml:8", "expected digit"},
        BadCase{k_head + "colour = 1\n" + k_applies, "kb/e.toml:8", "unknown key \"colour\""},
        BadCase{"id = \"other\"\n" + k_head.substr(k_head.find('\n') + 1) + k_applies, "kb/e.toml:1", "file name stem"},
        BadCase{k_head.substr(k_head.find('\n') + 1) + k_applies, "kb/e.toml:1", "missing required key \"id\""},
        BadCase{[] {
                    auto t = k_head;
                    t.replace(t.find("\"t\""), 3, "3");
                    return t;
                }() +
                    k_applies,
                "kb/e.toml:2", "\"title\" must be a string"},
        BadCase{[] {
                    auto t = k_head;
                    t.replace(t.find("config-risk"), 11, "crash");
                    return t;
                }() +
                    k_applies,
                "kb/e.toml:3", "unknown category"},
        BadCase{[] {
                    auto t = k_head;
                    t.replace(t.find("\"info\""), 6, "\"bad\"");
                    return t;
                }() +
                    k_applies,
                "kb/e.toml:4", "severity"},
        BadCase{[] {
                    auto t = k_head;
                    t.replace(t.find("hypothesis"), 10, "rumour");
                    return t;
                }() +
                    k_applies,
                "kb/e.toml:5", "confidence"},
        BadCase{k_head + "scope = \"node\"\n" + k_applies, "kb/e.toml:8", "scope"},
        BadCase{[] {
                    auto t = k_head;
                    t.replace(t.find("https://example.org/"), 20, "example.org");
                    return t;
                }() +
                    k_applies,
                "kb/e.toml:7", "not an http(s) URL"},
        BadCase{k_head, "kb/e.toml:1", "needs [applies] or [[signatures]]"},
        BadCase{k_head + "[applies]\nfact = \"gpuz.x\"\nequals = 1\n", "kb/e.toml:9",
                "does not start with a facts key"},
        BadCase{k_head + "[applies]\nfact = \"gpu.family\"\nequals = 1\n", "kb/e.toml:9", "scope is not \"gpu\""},
        BadCase{k_head + "[applies]\nfact = \"env..X\"\nequals = 1\n", "kb/e.toml:9", "invalid segment"},
        BadCase{k_head + "[applies]\nfact = \"env.X\"\nequal = 1\n", "kb/e.toml:10", "unknown key \"equal\""},
        BadCase{k_head + "[applies]\nfact = \"env.X\"\nequals = 1\nin = [1]\n", "kb/e.toml:11", "one operator"},
        BadCase{k_head + "[applies]\nfact = \"env.X\"\n", "kb/e.toml:8", "no operator"},
        BadCase{k_head + "[applies]\nfact = \"env.X\"\nin = []\n", "kb/e.toml:10", "at least one value"},
        BadCase{k_head + "[applies]\nfact = \"env.X\"\nmatches = \"(\"\n", "kb/e.toml:10",
                "invalid regular expression"},
        BadCase{k_head + "[applies]\nfact = \"env.X\"\nversion = \">=5.x\"\n", "kb/e.toml:10", "expected bounds"},
        BadCase{k_head + "[applies]\nfact = \"env.X\"\nexists = \"yes\"\n", "kb/e.toml:10", "true or false"},
        BadCase{k_head + "[applies]\nfact = \"env.X\"\ngt = \"5\"\n", "kb/e.toml:10", "a number"},
        BadCase{k_head + "[applies]\nfact = \"gpus\"\ncount = \"lots\"\n", "kb/e.toml:10", "comparison"},
        BadCase{k_head + "[applies]\nfact = \"env.X\"\nbits_set = 0\n", "kb/e.toml:10", "positive integer mask"},
        BadCase{k_head + "[applies]\nfact = \"env.X\"\nmajor_minor_differs = \"nowhere.x\"\n", "kb/e.toml:10",
                "facts key"},
        BadCase{k_head + "[applies]\nall = []\n", "kb/e.toml:9", "at least one predicate"},
        BadCase{
            k_head +
                "[applies]\nall = [ { fact = \"env.X\", exists = true } ]\nnot = { fact = \"env.Y\", exists = true }\n",
            "kb/e.toml:8", "exactly one of"},
        BadCase{k_head + "[applies]\nnone = 1\n", "kb/e.toml:8", "empty predicate"},
        BadCase{k_head + "[[signatures]]\npattern = '(a|b'\n", "kb/e.toml:9", "Hyperscan"},
        BadCase{k_head + "[[signatures]]\npattern = 'x*'\n", "kb/e.toml:9", "Hyperscan"},  // matches empty
        BadCase{k_head + "[[signatures]]\npattern = '(a)\\1'\n", "kb/e.toml:9", "Hyperscan"},
        BadCase{k_head + "[[signatures]]\npattern = 'ok'\nwindow = -1\n", "kb/e.toml:10", "window"},
        BadCase{k_head + "[[signatures]]\npattern = 'ok'\ncontext = [\"\"]\n", "kb/e.toml:10", "context word"},
        BadCase{k_head + "[[signatures]]\npattern = 'ok'\nflags = 1\n", "kb/e.toml:10", "unknown key \"flags\""},
        BadCase{k_head + k_applies + "[[fixes]]\npatch = \"Env_Override\"\ncost = \"c\"\n", "kb/e.toml:12", "patch id"},
        BadCase{k_head + k_applies + "[[fixes]]\npatch = \"env-x\"\n", "kb/e.toml:11",
                "missing required key \"cost\""}),
    // Stable names (case0, case1 ...): the default prints the struct's bytes, pointers included.
    [](const ::testing::TestParamInfo<BadCase>& info) { return "case" + std::to_string(info.index); });

TEST(KbLoader, DirectoryErrors) {
    const auto dir = std::filesystem::path(RMCP_BINARY_DIR) / "kb_loader_test";
    std::filesystem::remove_all(dir);
    EXPECT_FALSE(rmcp::kb::load(dir).ok());  // missing
    std::filesystem::create_directories(dir);
    const auto empty = rmcp::kb::load(dir);
    ASSERT_FALSE(empty.ok());
    EXPECT_NE(empty.error().cause.find("no *.toml"), std::string::npos);
    std::ofstream(dir / "good.toml") << "id = \"good\"\n" << k_head.substr(k_head.find('\n') + 1) << k_applies;
    std::ofstream(dir / "notes.txt") << "ignored";
    ASSERT_TRUE(rmcp::kb::load(dir).ok());
    std::ofstream(dir / "zz.toml") << "id = \"zz\"\nsevrity = 1\n";
    const auto bad = rmcp::kb::load(dir);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().path, (dir / "zz.toml").string() + ":2");
    std::filesystem::remove_all(dir);
}

TEST(KbLoader, NotesAreOptionalText) {
    auto e = load_entry(k_head + "notes = \"where sources disagree\"\n[[signatures]]\npattern = 'x'\n", "kb/e.toml");
    ASSERT_TRUE(e.ok()) << e.error().message();
    EXPECT_EQ(e->notes, "where sources disagree");
    EXPECT_EQ(error_of(k_head + "notes = 1\n[[signatures]]\npattern = 'x'\n").second,
              "\"notes\" must be a string, not integer");
}

TEST(KbLoader, CauseVariesIsABooleanThatMakesAnswersFamily) {
    auto e = load_entry(k_head + "cause_varies = true\n[[signatures]]\npattern = 'x'\n", "kb/e.toml");
    ASSERT_TRUE(e.ok()) << e.error().message();
    EXPECT_TRUE(e->cause_varies);
    // A message of several causes is never a `signature` answer (docs/explain.md, "Basis").
    EXPECT_EQ(rmcp::explain::entry_basis(*e), rmcp::explain::Basis::family);
    auto plain = load_entry(k_head + "[[signatures]]\npattern = 'x'\n", "kb/e.toml");
    ASSERT_TRUE(plain.ok());
    EXPECT_FALSE(plain->cause_varies);
    EXPECT_EQ(rmcp::explain::entry_basis(*plain), rmcp::explain::Basis::signature);
    EXPECT_EQ(error_of(k_head + "cause_varies = \"yes\"\n[[signatures]]\npattern = 'x'\n"),
              (std::pair<std::string, std::string>{"kb/e.toml:8", "cause_varies must be true or false"}));
}
