// The probe catalogue (probe/catalogue.cpp): how a [[family]] expands into scenarios, the
// quick subset, selection by id or family, the JSON a worker receives and [[switch]] parsing.
// probe_probe_test.cpp covers the shipped file's counts, file:line errors, duplicate variables
// across switches and import_time; none of that is repeated here.
#include "probe/catalogue.hpp"

#include <gtest/gtest.h>

namespace rmcp::probe {
namespace {

const char* k_catalogue = R"(
[[family]]
name = "c2"
op = "conv2d"
input = [4, 8, 8]
weight = [6, 2, 3, 3]
groups = 2
padding = [1, 1]
batch = [1, 2]
directions = ["forward", "backward_weight"]
dtypes = ["float32", "float16"]
quick = { batch = [2], directions = ["forward"], dtypes = ["float16"] }

[[family]]
name = "c1"
op = "conv1d"
input = [3, 16]
weight = [5, 3, 4]
batch = [8]
directions = ["backward_data"]
dtypes = ["float32"]

[[switch]]
id = "no-gemm"
env = { MIOPEN_DEBUG_CONV_GEMM = "0" }
alternatives = [{ MIOPEN_DEBUG_CONV_GEMM = "1" }]
cost = "slower"
source = "https://example.org"

[[switch]]
id = "override"
profile = "isa-override"
cost = "none"
)";

Catalogue sample() {
    auto c = parse_catalogue(k_catalogue, "cat.toml");
    EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message());
    return c.ok() ? *c : Catalogue{};
}

std::vector<std::string> ids(const std::vector<Scenario>& v) {
    std::vector<std::string> out;
    for (const auto& s : v) out.push_back(s.id);
    return out;
}

TEST(ProbeCatalogueExpansion, BatchThenDirectionThenDtype) {
    const auto c = sample();
    EXPECT_EQ(c.file, "cat.toml");
    EXPECT_EQ(ids(c.scenarios), (std::vector<std::string>{
                                    "c2-b1-fwd-fp32",
                                    "c2-b1-fwd-fp16",
                                    "c2-b1-bwd-weight-fp32",
                                    "c2-b1-bwd-weight-fp16",
                                    "c2-b2-fwd-fp32",
                                    "c2-b2-fwd-fp16",
                                    "c2-b2-bwd-weight-fp32",
                                    "c2-b2-bwd-weight-fp16",
                                    "c1-b8-bwd-data-fp32",
                                }));
    const auto& s = c.scenarios[4];  // c2-b2-fwd-fp32
    EXPECT_EQ(s.family, "c2");
    EXPECT_EQ(s.op, "conv2d");
    EXPECT_EQ(s.direction, "forward");
    EXPECT_EQ(s.dtype, "float32");
    EXPECT_EQ(s.input, (std::vector<std::int64_t>{2, 4, 8, 8}));  // the batch comes first
    EXPECT_EQ(s.weight, (std::vector<std::int64_t>{6, 2, 3, 3}));
    EXPECT_EQ(s.padding, (std::vector<std::int64_t>{1, 1}));
    EXPECT_EQ(s.stride, (std::vector<std::int64_t>{1, 1}));    // default
    EXPECT_EQ(s.dilation, (std::vector<std::int64_t>{1, 1}));  // default
    EXPECT_EQ(s.groups, 2);
    // conv1d defaults have one value each.
    EXPECT_EQ(c.scenarios[8].padding, (std::vector<std::int64_t>{0}));
    EXPECT_EQ(c.scenarios[8].input, (std::vector<std::int64_t>{8, 3, 16}));
}

TEST(ProbeCatalogueExpansion, QuickIsTheIntersectionOfItsLists) {
    const auto c = sample();
    std::vector<std::string> quick;
    for (const auto& s : c.scenarios)
        if (s.quick) quick.push_back(s.id);
    EXPECT_EQ(quick, (std::vector<std::string>{"c2-b2-fwd-fp16"}));
}

TEST(ProbeCatalogueSelect, ByIdFamilyAndQuick) {
    const auto c = sample();
    auto all = select_scenarios(c, {}, false);
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(all->size(), 9U);
    auto quick = select_scenarios(c, {}, true);
    ASSERT_TRUE(quick.ok());
    EXPECT_EQ(ids(*quick), (std::vector<std::string>{"c2-b2-fwd-fp16"}));
    // Names in the order given; a scenario named twice (by id and by family) is taken once.
    auto named = select_scenarios(c, {"c1-b8-bwd-data-fp32", "c2", "c2-b2-fwd-fp16"}, true);
    ASSERT_TRUE(named.ok());
    EXPECT_EQ(ids(*named), (std::vector<std::string>{"c1-b8-bwd-data-fp32", "c2-b2-fwd-fp16"}));
    // A scenario id is taken even when it is not in the quick subset.
    auto by_id = select_scenarios(c, {"c2-b1-bwd-weight-fp32"}, true);
    ASSERT_TRUE(by_id.ok());
    EXPECT_EQ(ids(*by_id), (std::vector<std::string>{"c2-b1-bwd-weight-fp32"}));
    // A family with nothing in the quick subset is unknown under --quick.
    auto none = select_scenarios(c, {"c1"}, true);
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.error().code, ExitCode::usage);
    EXPECT_NE(none.error().cause.find("cat.toml"), std::string::npos);
}

TEST(ProbeCatalogueJson, ScenarioAsTheWorkerGetsIt) {
    const auto c = sample();
    EXPECT_EQ(scenario_to_json(c.scenarios[8]), (nlohmann::json{{"id", "c1-b8-bwd-data-fp32"},
                                                                {"op", "conv1d"},
                                                                {"direction", "backward_data"},
                                                                {"dtype", "float32"},
                                                                {"input", {8, 3, 16}},
                                                                {"weight", {5, 3, 4}},
                                                                {"stride", {1}},
                                                                {"padding", {0}},
                                                                {"dilation", {1}},
                                                                {"groups", 1}}));
}

TEST(ProbeCatalogueJson, Tags) {
    EXPECT_EQ(direction_tag("forward"), "fwd");
    EXPECT_EQ(direction_tag("backward_data"), "bwd-data");
    EXPECT_EQ(direction_tag("backward_weight"), "bwd-weight");
    EXPECT_EQ(dtype_tag("float32"), "fp32");
    EXPECT_EQ(dtype_tag("float16"), "fp16");
}

TEST(ProbeCatalogueSwitch, EnvAlternativesAndProfile) {
    const auto c = sample();
    ASSERT_EQ(c.switches.size(), 2U);
    const auto& gemm = c.switches[0];
    EXPECT_EQ(gemm.id, "no-gemm");
    EXPECT_EQ(gemm.env, (EnvMap{{"MIOPEN_DEBUG_CONV_GEMM", "0"}}));
    EXPECT_EQ(gemm.alternatives, (std::vector<EnvMap>{{{"MIOPEN_DEBUG_CONV_GEMM", "1"}}}));
    EXPECT_EQ(gemm.cost, "slower");
    EXPECT_EQ(gemm.source, "https://example.org");
    EXPECT_TRUE(gemm.profile.empty());
    const auto& override = c.switches[1];
    EXPECT_EQ(override.profile, "isa-override");
    EXPECT_TRUE(override.env.empty());
    EXPECT_TRUE(override.source.empty());
}

std::string family_with(const std::string& extra) {
    return "[[family]]\nname = \"f\"\nop = \"conv1d\"\ninput = [2, 9]\nweight = [2, 2, 3]\nbatch = [1]\n"
           "directions = [\"forward\"]\ndtypes = [\"float32\"]\n" +
           extra;
}

TEST(ProbeCatalogueErrors, RefusedInputs) {
    EXPECT_TRUE(parse_catalogue(family_with(""), "cat.toml").ok());
    // A switch needs exactly one of env and profile.
    auto both =
        parse_catalogue(family_with("[[switch]]\nid = \"s\"\nenv = { A = \"1\" }\nprofile = \"p\"\ncost = \"c\"\n"),
                        "cat.toml");
    ASSERT_FALSE(both.ok());
    EXPECT_NE(both.error().cause.find("exactly one of 'env' and 'profile'"), std::string::npos);
    EXPECT_FALSE(parse_catalogue(family_with("[[switch]]\nid = \"s\"\ncost = \"c\"\n"), "cat.toml").ok());
    // An alternative may only give other values of the switch's own variables.
    auto alt = parse_catalogue(
        family_with("[[switch]]\nid = \"s\"\nenv = { A = \"1\" }\nalternatives = [{ B = \"2\" }]\ncost = \"c\"\n"),
        "cat.toml");
    ASSERT_FALSE(alt.ok());
    EXPECT_NE(alt.error().cause.find("'B'"), std::string::npos);
    auto dup = parse_catalogue(family_with("[[switch]]\nid = \"s\"\nenv = { A = \"1\" }\ncost = \"c\"\n"
                                           "[[switch]]\nid = \"s\"\nenv = { B = \"1\" }\ncost = \"c\"\n"),
                               "cat.toml");
    ASSERT_FALSE(dup.ok());
    EXPECT_NE(dup.error().cause.find("duplicate switch id 's'"), std::string::npos);
    // Channels must match groups: weight[1] * groups == C.
    EXPECT_FALSE(parse_catalogue(family_with("groups = 2\n"), "cat.toml").ok());
    // Unknown direction or dtype; an empty list; a family expanded twice to the same ids.
    EXPECT_FALSE(parse_catalogue("[[family]]\nname = \"f\"\nop = \"conv1d\"\ninput = [2, 9]\nweight = [2, 2, 3]\n"
                                 "batch = [1]\ndirections = [\"sideways\"]\ndtypes = [\"float32\"]\n",
                                 "cat.toml")
                     .ok());
    EXPECT_FALSE(parse_catalogue("[[family]]\nname = \"f\"\nop = \"conv1d\"\ninput = [2, 9]\nweight = [2, 2, 3]\n"
                                 "batch = []\ndirections = [\"forward\"]\ndtypes = [\"float32\"]\n",
                                 "cat.toml")
                     .ok());
    auto twice = parse_catalogue(family_with(family_with("")), "cat.toml");
    ASSERT_FALSE(twice.ok());
    EXPECT_NE(twice.error().cause.find("duplicate scenario id 'f-b1-fwd-fp32'"), std::string::npos);
    // Wrong-rank shapes, and a file with no family at all.
    EXPECT_FALSE(parse_catalogue("[[family]]\nname = \"f\"\nop = \"conv2d\"\ninput = [2, 9]\nweight = [2, 2, 3]\n"
                                 "batch = [1]\ndirections = [\"forward\"]\ndtypes = [\"float32\"]\n",
                                 "cat.toml")
                     .ok());
    EXPECT_FALSE(parse_catalogue("import_time = []\n", "cat.toml").ok());
    EXPECT_FALSE(load_catalogue("/nonexistent/catalogue.toml").ok());
}

}  // namespace
}  // namespace rmcp::probe
