// Planning (patch/plan.cpp): derived override sets, the runtime that reads them, advisory
// commands, the start-up hook; and make_plan over a fixture root.
#include "patch/patch.hpp"

#include "facts/facts.hpp"
#include "patch/profile.hpp"
#include "render/plan_render.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace rmcp::patch {
namespace {

TEST(PatchPlan, StartupHookIsOneGuardedLine) {
    const auto hook = startup_hook_content();
    EXPECT_NE(hook.find("\nimport os; exec(\"try:"), std::string::npos);
    EXPECT_NE(hook.find("except Exception"), std::string::npos);
    EXPECT_EQ(std::count(hook.begin(), hook.end(), '\n'), 2);
}

// Derived override sets (docs/patches.md): the value comes from the GPU's family, global only
// when all GPUs are of one family, per node only where the runtime reads it (ROCm >= 6.3).
Gpu gpu_at(unsigned node, const char* target, bool supported) {
    Gpu g;
    g.node = node;
    g.gfx_target = Fact<std::string>::known(target);
    g.officially_supported = Fact<bool>::known(supported);
    return g;
}

Facts machine(std::vector<Gpu> gpus, const char* torch_hip) {
    Facts f;
    f.gpus = std::move(gpus);
    TorchInstall t;
    t.hip_version = Fact<std::string>::known(torch_hip);
    f.torch.push_back(t);
    return f;
}

Profile isa_rules() {
    Profile p;
    p.name = "isa-override";
    p.gfx_override = {{{"gfx1031", "gfx1032", "gfx1036"}, "10.3.0"}, {{"gfx1101", "gfx1102", "gfx1103"}, "11.0.0"}};
    return p;
}

TEST(PatchPlan, SameFamilyOverrideIsGlobalForOneFamily) {
    const auto rules = isa_rules();
    const auto d = machine_derived_sets(machine({gpu_at(1, "gfx1032", false)}, "6.1.40091-a8dbc0c19"), &rules);
    EXPECT_EQ(d.sets.at("same-family-override"),
              (std::map<std::string, std::string>{{"HSA_OVERRIDE_GFX_VERSION", "10.3.0"}}));
    // The per-node form would be ignored by a 6.1 runtime: refused, with the reason.
    EXPECT_TRUE(d.sets.at("per-node-override").empty());
    EXPECT_NE(d.why.at("per-node-override").find("does not read HSA_OVERRIDE_GFX_VERSION_<node>"), std::string::npos);
}

TEST(PatchPlan, MixedFamiliesGetPerNodeValuesOnlyFromRocm63) {
    const auto rules = isa_rules();
    const std::vector<Gpu> gpus{gpu_at(1, "gfx1100", true), gpu_at(2, "gfx1036", false)};
    auto d = machine_derived_sets(machine(gpus, "6.3.42131-fa1d09cbd"), &rules);
    const std::map<std::string, std::string> node2{{"HSA_OVERRIDE_GFX_VERSION_2", "10.3.0"}};
    EXPECT_EQ(d.sets.at("same-family-override"), node2);
    EXPECT_EQ(d.sets.at("per-node-override"), node2);
    d = machine_derived_sets(machine(gpus, "6.2.41133-dd7f95766"), &rules);
    EXPECT_TRUE(d.sets.at("same-family-override").empty());
    EXPECT_NE(d.why.at("same-family-override").find("different ISA families"), std::string::npos);
}

TEST(PatchPlan, CoverageDecidesWhoNeedsAnOverride) {
    const auto rules = isa_rules();
    const auto facts = machine({gpu_at(1, "gfx1101", true)}, "6.1.40091-a8dbc0c19");
    // AMD lists gfx1101: without coverage facts nothing is needed.
    EXPECT_TRUE(machine_derived_sets(facts, &rules).sets.at("same-family-override").empty());
    // torch 2.4 has gfx1100 but no gfx1101 code: the chip needs 11.0.0.
    nlohmann::json lib = {
        {"coverage", {{{"node", 1}, {"library", "torch_hip"}, {"chip_covered", false}, {"chip_override", "11.0.0"}}}}};
    EXPECT_EQ(machine_derived_sets(facts, &rules, &lib).sets.at("same-family-override"),
              (std::map<std::string, std::string>{{"HSA_OVERRIDE_GFX_VERSION", "11.0.0"}}));
    // A torch with gfx1101 code: nothing, even for a chip outside AMD's list (rules ignored).
    lib = {{"coverage", {{{"node", 1}, {"library", "torch_hip"}, {"chip_covered", true}, {"chip_override", nullptr}}}}};
    EXPECT_TRUE(machine_derived_sets(facts, &rules, &lib).sets.at("same-family-override").empty());
}

TEST(PatchPlan, RuntimeVersionPrefersTheWheel) {
    auto f = machine({}, "6.2.41133-dd7f95766");
    RocmInstall r;
    r.version = Fact<std::string>::known("6.4.1");
    f.rocm.push_back(r);
    EXPECT_EQ(runtime_version(f), "6.2.41133-dd7f95766");
    f.torch.clear();
    EXPECT_EQ(runtime_version(f), "6.4.1");
    f.rocm.clear();
    EXPECT_FALSE(runtime_version(f));
}

TEST(PatchPlan, AdvisoryCommandChosenByGpu) {
    const std::string head = "id = \"a-b\"\ntitle = \"t\"\nwhy = \"w\"\ncost = \"c\"\nevidence = \"reported\"\n";
    auto p = parse_patch(head + "[[operation]]\nkind = \"advisory\"\ncommand = \"default\"\n"
                                "[[operation.gpu]]\ntargets = [\"gfx1201\"]\ncommand = \"rdna4\"\n",
                         "p.toml");
    ASSERT_TRUE(p.ok()) << p.error().message();
    PatchSet set;
    set.patches.push_back(*p);
    const auto root = Root::open("/");
    ASSERT_TRUE(root.ok());
    PlanContext ctx;
    ctx.gpu_targets = {"gfx1100", "gfx1201"};
    auto plan = make_plan(*root, set, {"a-b"}, ctx);
    ASSERT_TRUE(plan.ok()) << plan.error().message();
    EXPECT_EQ(plan->steps.at(0).advisory, "rdna4\n");
    ctx.gpu_targets = {"gfx1030"};
    plan = make_plan(*root, set, {"a-b"}, ctx);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->steps.at(0).advisory, "default\n");
    // A gpu list needs a command for the other machines.
    EXPECT_FALSE(parse_patch(head + "[[operation]]\nkind = \"advisory\"\n[[operation.gpu]]\ntargets = [\"x\"]\n"
                                    "command = \"y\"\n",
                             "p.toml")
                     .ok());
}

TEST(PatchPlan, PlansAgainstAFixtureAndRendersTheDiff) {
    auto root = Root::open(std::string(RMCP_SOURCE_DIR) + "/tests/fixtures/rx6600-gfx1032");
    ASSERT_TRUE(root.ok()) << root.error().message();
    auto set = load_patches(std::string(RMCP_SOURCE_DIR) + "/patches");
    ASSERT_TRUE(set.ok()) << set.error().message();
    PlanContext ctx;
    ctx.env = {{"HOME", "/home/tester"}};
    read_distro(*root, ctx);
    EXPECT_FALSE(ctx.distro_id.empty());
    auto plan = make_plan(*root, *set, {"env-miopen-no-gemm", "modprobe-cwsr-disable", "env-miopen-no-gemm"}, ctx);
    ASSERT_TRUE(plan.ok()) << plan.error().message();
    EXPECT_EQ(plan->patch_ids, (std::vector<std::string>{"env-miopen-no-gemm", "modprobe-cwsr-disable"}));
    ASSERT_EQ(plan->steps.size(), 4U);  // env, modprobe, two advisories (initramfs, reboot)
    EXPECT_EQ(plan->steps[0].target, "/home/tester/.config/rmcp/profile.env");
    EXPECT_FALSE(plan->steps[0].existed);
    EXPECT_NE(plan->steps[0].new_content.find("export MIOPEN_DEBUG_CONV_GEMM='0'\n"), std::string::npos);
    EXPECT_EQ(plan->steps[1].target, "/etc/modprobe.d/rmcp-cwsr.conf");
    EXPECT_TRUE(plan->steps[1].system);
    EXPECT_TRUE(plan->steps[2].target.empty());
    EXPECT_NE(plan->steps[2].advisory.find("mkinitcpio"), std::string::npos);  // the fixture is Arch Linux
    EXPECT_EQ(plan->writes(), 2U);
    EXPECT_TRUE(plan->has_system_targets());

    const std::string text = render::render_plan(*plan);
    EXPECT_EQ(text.rfind("plan for env-miopen-no-gemm modprobe-cwsr-disable: 4 step(s), 2 file(s) to write, needs root "
                         "(writes under /etc)\n",
                         0),
              0U)
        << text;
    EXPECT_NE(text.find("create /home/tester/.config/rmcp/profile.env (mode 0644)"), std::string::npos) << text;
    EXPECT_NE(text.find("--- /dev/null\n+++ b/etc/modprobe.d/rmcp-cwsr.conf\n"), std::string::npos) << text;
    EXPECT_NE(text.find("[3] modprobe-cwsr-disable (advisory)"), std::string::npos) << text;
}

TEST(PatchPlan, AnUnknownPatchIsAUsageError) {
    auto root = Root::open(std::string(RMCP_SOURCE_DIR) + "/tests/fixtures/rx6600-gfx1032");
    ASSERT_TRUE(root.ok());
    auto set = load_patches(std::string(RMCP_SOURCE_DIR) + "/patches");
    ASSERT_TRUE(set.ok());
    auto plan = make_plan(*root, *set, {"no-such-patch"}, PlanContext{});
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.error().code, ExitCode::usage);
    EXPECT_NE(plan.error().cause.find("no such patch (known: "), std::string::npos);
}

}  // namespace
}  // namespace rmcp::patch
