#include "patch/patch.hpp"

#include "facts/facts.hpp"
#include "patch/profile.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace rmcp::patch {
namespace {

TEST(PatchPatch, OnlyKnownAmdgpuParametersWithValidValues) {
    EXPECT_FALSE(check_amdgpu_parameter("cwsr_enable", "0"));
    EXPECT_FALSE(check_amdgpu_parameter("noretry", "-1"));
    EXPECT_FALSE(check_amdgpu_parameter("ppfeaturemask", "0xfff7bfff"));
    EXPECT_FALSE(check_amdgpu_parameter("lockup_timeout", "10000,10000,-1,0"));
    EXPECT_FALSE(check_amdgpu_parameter("vm_fragment_size", "9"));
    EXPECT_TRUE(check_amdgpu_parameter("cwsr_enable", "2"));
    EXPECT_TRUE(check_amdgpu_parameter("cwsr_enable", "0; rm -rf /"));
    EXPECT_TRUE(check_amdgpu_parameter("ppfeaturemask", "0x1ffffffff"));
    EXPECT_TRUE(check_amdgpu_parameter("lockup_timeout", "1,2,3,4,5"));
    EXPECT_TRUE(check_amdgpu_parameter("vm_fragment_size", "3"));
    const auto unknown = check_amdgpu_parameter("dc", "0");
    ASSERT_TRUE(unknown);
    EXPECT_NE(unknown->find("unknown amdgpu module parameter 'dc'"), std::string::npos);
}

TEST(PatchPatch, ShippedPatchesLoad) {
    auto set = load_patches(std::string(RMCP_SOURCE_DIR) + "/patches");
    ASSERT_TRUE(set.ok()) << set.error().message();
    EXPECT_NE(set->find("modprobe-cwsr-disable"), nullptr);
    for (const auto& p : set->patches) {
        EXPECT_FALSE(p.operations.empty()) << p.id;
        EXPECT_EQ(p.file.substr(p.file.rfind('/') + 1), p.id + ".toml");
    }
}

TEST(PatchPatch, MalformedPatchNamesTheLine) {
    const std::string head = "id = \"a-b\"\ntitle = \"t\"\nwhy = \"w\"\ncost = \"c\"\nevidence = \"reported\"\n";
    auto p = parse_patch(head + "\n[[operation]]\nkind = \"env\"\nset = { \"A B\" = \"1\" }\n", "p.toml");
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().path, "p.toml:7");
    p = parse_patch(head + "evidence2 = 1\n", "p.toml");
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().path, "p.toml:6");
    p = parse_patch(head, "p.toml");
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().cause.find("[[operation]]"), std::string::npos);
}

TEST(PatchPatch, StartupHookIsOneGuardedLine) {
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

TEST(PatchPatch, SameFamilyOverrideIsGlobalForOneFamily) {
    const auto rules = isa_rules();
    const auto d = machine_derived_sets(machine({gpu_at(1, "gfx1032", false)}, "6.1.40091-a8dbc0c19"), &rules);
    EXPECT_EQ(d.sets.at("same-family-override"),
              (std::map<std::string, std::string>{{"HSA_OVERRIDE_GFX_VERSION", "10.3.0"}}));
    // The per-node form would be ignored by a 6.1 runtime: refused, with the reason.
    EXPECT_TRUE(d.sets.at("per-node-override").empty());
    EXPECT_NE(d.why.at("per-node-override").find("does not read HSA_OVERRIDE_GFX_VERSION_<node>"), std::string::npos);
}

TEST(PatchPatch, MixedFamiliesGetPerNodeValuesOnlyFromRocm63) {
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

TEST(PatchPatch, CoverageDecidesWhoNeedsAnOverride) {
    const auto rules = isa_rules();
    const auto facts = machine({gpu_at(1, "gfx1101", true)}, "6.1.40091-a8dbc0c19");
    // AMD lists gfx1101: without coverage facts nothing is needed.
    EXPECT_TRUE(machine_derived_sets(facts, &rules).sets.at("same-family-override").empty());
    // torch 2.4 has gfx1100 but no gfx1101 code: the chip needs 11.0.0.
    nlohmann::json lib = {{"coverage", {{{"node", 1}, {"library", "torch_hip"}, {"chip_covered", false},
                                         {"chip_override", "11.0.0"}}}}};
    EXPECT_EQ(machine_derived_sets(facts, &rules, &lib).sets.at("same-family-override"),
              (std::map<std::string, std::string>{{"HSA_OVERRIDE_GFX_VERSION", "11.0.0"}}));
    // A torch with gfx1101 code: nothing, even for a chip outside AMD's list (rules ignored).
    lib = {{"coverage", {{{"node", 1}, {"library", "torch_hip"}, {"chip_covered", true}, {"chip_override", nullptr}}}}};
    EXPECT_TRUE(machine_derived_sets(facts, &rules, &lib).sets.at("same-family-override").empty());
}

TEST(PatchPatch, RuntimeVersionPrefersTheWheel) {
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

TEST(PatchPatch, AdvisoryCommandChosenByGpu) {
    const std::string head = "id = \"a-b\"\ntitle = \"t\"\nwhy = \"w\"\ncost = \"c\"\nevidence = \"reported\"\n";
    auto p = parse_patch(head + "[[operation]]\nkind = \"advisory\"\ncommand = \"default\"\n"
                                "[[operation.gpu]]\ntargets = [\"gfx1201\"]\ncommand = \"rdna4\"\n", "p.toml");
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
                                    "command = \"y\"\n", "p.toml").ok());
}

}  // namespace
}  // namespace rmcp::patch

// takes_effect: at-once by default, re-login for an advisory whose result a running login does
// not see (docs/patches.md, "From finding to fixed"); anything else names its line.
TEST(PatchPatch, TakesEffectIsAtOnceOrRelogin) {
    const std::string head = "id = \"advise-x\"\ntitle = \"t\"\nwhy = \"w\"\ncost = \"c\"\nevidence = \"reported\"\n";
    const std::string op = "[[operation]]\nkind = \"advisory\"\ncommand = \"true\"\n";
    auto plain = rmcp::patch::parse_patch(head + op, "p.toml");
    ASSERT_TRUE(plain) << plain.error().message();
    EXPECT_EQ(plain->takes_effect, rmcp::patch::TakesEffect::at_once);
    auto relogin = rmcp::patch::parse_patch(head + "takes_effect = \"re-login\"\n" + op, "p.toml");
    ASSERT_TRUE(relogin) << relogin.error().message();
    EXPECT_EQ(relogin->takes_effect, rmcp::patch::TakesEffect::relogin);
    auto bad = rmcp::patch::parse_patch(head + "takes_effect = \"reboot\"\n" + op, "p.toml");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().path, "p.toml:6");
}
