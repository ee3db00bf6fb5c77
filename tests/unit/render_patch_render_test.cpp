// Patches and plans as JSON, one operation in words (render/patch_render.cpp).
#include "render/patch_render.hpp"

#include <gtest/gtest.h>

namespace rmcp::patch {
namespace {

Patch env_patch() {
    Patch p;
    p.id = "env-a";
    p.title = "Set A";
    p.why = "because";
    p.cost = "none";
    p.evidence = "reported";
    p.references = {"https://example.org/a"};
    Operation op;
    op.kind = OpKind::env;
    op.set = {{"A", "1"}, {"B", "2"}};
    op.unset = {"C"};
    op.remove = {"D"};
    op.note = "re-run";
    p.operations = {op};
    return p;
}

TEST(PatchRender, PatchJsonCarriesEveryNonEmptyField) {
    const auto j = render::patch_json(env_patch());
    EXPECT_EQ(j["id"], "env-a");
    EXPECT_EQ(j["title"], "Set A");
    EXPECT_EQ(j["why"], "because");
    EXPECT_EQ(j["cost"], "none");
    EXPECT_EQ(j["evidence"], "reported");
    EXPECT_EQ(j["references"], nlohmann::json::array({"https://example.org/a"}));
    EXPECT_EQ(j["reversible"], "yes");
    ASSERT_EQ(j["operations"].size(), 1U);
    const auto& op = j["operations"][0];
    EXPECT_EQ(op["kind"], "env");
    EXPECT_EQ(op["set"], (nlohmann::json{{"A", "1"}, {"B", "2"}}));
    EXPECT_EQ(op["unset"], nlohmann::json::array({"C"}));
    EXPECT_EQ(op["remove"], nlohmann::json::array({"D"}));
    EXPECT_EQ(op["note"], "re-run");
    // Empty fields are left out rather than written as "" or [].
    EXPECT_FALSE(op.contains("params"));
    EXPECT_FALSE(op.contains("file"));
    EXPECT_FALSE(op.contains("derived"));
    EXPECT_FALSE(op.contains("command"));
    EXPECT_FALSE(op.contains("distro"));
}

TEST(PatchRender, AnAdvisoryStepMakesThePatchOnlyPartlyReversible) {
    Patch p = env_patch();
    Operation adv;
    adv.kind = OpKind::advisory;
    adv.command = "sudo reboot";
    adv.by_distro = {{{"debian", "ubuntu"}, "sudo apt install x"}};
    p.operations.push_back(adv);
    const auto j = render::patch_json(p);
    EXPECT_EQ(j["reversible"], "partly");
    ASSERT_EQ(j["operations"].size(), 2U);
    const auto& op = j["operations"][1];
    EXPECT_EQ(op["kind"], "advisory");
    EXPECT_EQ(op["command"], "sudo reboot");
    ASSERT_EQ(op["distro"].size(), 1U);
    EXPECT_EQ(op["distro"][0]["ids"], nlohmann::json::array({"debian", "ubuntu"}));
    EXPECT_EQ(op["distro"][0]["command"], "sudo apt install x");
}

TEST(PatchRender, ModprobeAndHookKindNames) {
    Patch p;
    p.id = "m";
    Operation mod;
    mod.kind = OpKind::modprobe;
    mod.params = {{"cwsr_enable", "0"}};
    mod.file = "rmcp-m.conf";
    Operation hook;
    hook.kind = OpKind::python_hook;
    p.operations = {mod, hook};
    const auto j = render::patch_json(p);
    EXPECT_EQ(j["operations"][0]["kind"], "modprobe");
    EXPECT_EQ(j["operations"][0]["params"], (nlohmann::json{{"cwsr_enable", "0"}}));
    EXPECT_EQ(j["operations"][0]["file"], "rmcp-m.conf");
    EXPECT_EQ(j["operations"][1]["kind"], "python-hook");
    EXPECT_EQ(j["reversible"], "yes");
}

TEST(PatchRender, DescribeEachKindOfOperation) {
    EXPECT_EQ(render::describe_operation(env_patch().operations[0]),
              "set in the user's profile.env: A=1 B=2 unset C (forget D)");

    Operation mod;
    mod.kind = OpKind::modprobe;
    mod.params = {{"cwsr_enable", "0"}, {"mes", "1"}};
    EXPECT_EQ(render::describe_operation(mod),
              "write /etc/modprobe.d/rmcp-<id>.conf: options amdgpu cwsr_enable=0 mes=1");

    Operation hook;
    hook.kind = OpKind::python_hook;
    EXPECT_EQ(render::describe_operation(hook), "install the Python start-up hook (rmcp-startup.pth)");

    Operation adv;
    adv.kind = OpKind::advisory;
    EXPECT_EQ(render::describe_operation(adv), "advisory (rmcp never runs it):");
    adv.command = "sudo reboot";
    adv.by_distro = {{{"debian", "ubuntu"}, "sudo apt install x"}, {{"fedora"}, "sudo dnf install x"}};
    EXPECT_EQ(render::describe_operation(adv), "advisory (rmcp never runs it): sudo reboot\n"
                                               "       on debian/ubuntu: sudo apt install x\n"
                                               "       on fedora: sudo dnf install x");
}

TEST(PatchRender, PlanJsonFileStepsAndAdvisorySteps) {
    Patch env = env_patch();
    Patch adv_patch;
    adv_patch.id = "advise-b";
    Operation adv;
    adv.kind = OpKind::advisory;
    adv_patch.operations = {adv};

    Plan plan;
    plan.patch_ids = {"env-a", "advise-b"};
    PlannedStep write;
    write.patch = &env;
    write.op = &env.operations[0];
    write.target = "/home/u/.config/rmcp/profile.env";
    write.system = false;
    write.existed = true;
    write.in_effect = false;
    write.old_content = "A=0\n";
    write.new_content = "A=1\n";
    write.new_mode = 0600;
    write.summary = "set A=1";
    PlannedStep command;
    command.patch = &adv_patch;
    command.op = &adv_patch.operations[0];
    command.advisory = "sudo reboot\n";
    command.summary = "advisory";
    plan.steps = {write, command};

    const auto j = render::plan_json(plan);
    EXPECT_EQ(j["schema_version"], 1);
    EXPECT_EQ(j["patches"], nlohmann::json::array({"env-a", "advise-b"}));
    ASSERT_EQ(j["steps"].size(), 2U);
    const auto& s0 = j["steps"][0];
    EXPECT_EQ(s0["patch"], "env-a");
    EXPECT_EQ(s0["kind"], "env");
    EXPECT_EQ(s0["summary"], "set A=1");
    EXPECT_EQ(s0["target"], "/home/u/.config/rmcp/profile.env");
    EXPECT_EQ(s0["system"], false);
    EXPECT_EQ(s0["existed"], true);
    EXPECT_EQ(s0["in_effect"], false);
    EXPECT_EQ(s0["content"], "A=1\n");
    EXPECT_EQ(s0["mode"], 0600);  // 384: the mode is a number, not an octal string
    EXPECT_FALSE(s0.contains("command"));
    const auto& s1 = j["steps"][1];
    EXPECT_EQ(s1["patch"], "advise-b");
    EXPECT_EQ(s1["kind"], "advisory");
    EXPECT_EQ(s1["command"], "sudo reboot\n");
    // An advisory step writes nothing: no target, content or mode.
    EXPECT_FALSE(s1.contains("target"));
    EXPECT_FALSE(s1.contains("content"));
    EXPECT_FALSE(s1.contains("mode"));
}

TEST(PatchRender, EmptyPlan) {
    const auto j = render::plan_json(Plan{});
    EXPECT_EQ(j["patches"], nlohmann::json::array());
    EXPECT_EQ(j["steps"], nlohmann::json::array());
}

}  // namespace
}  // namespace rmcp::patch
