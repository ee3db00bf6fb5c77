// The text of `rmcp patch plan` (render/plan_render.cpp): the header line, advisory commands,
// steps already in effect, new files with their mode, diffs and notes.
#include "render/plan_render.hpp"

#include <gtest/gtest.h>

namespace rmcp::patch {
namespace {

TEST(PlanRender, EveryKindOfStep) {
    Patch env_patch;
    env_patch.id = "env-a";
    Patch advice;
    advice.id = "advise-b";
    Operation env_op;
    env_op.kind = OpKind::env;
    Operation advisory_op;
    advisory_op.kind = OpKind::advisory;
    advisory_op.note = "then reboot";

    Plan plan;
    plan.patch_ids = {"env-a", "advise-b"};
    PlannedStep in_effect;
    in_effect.patch = &env_patch;
    in_effect.op = &env_op;
    in_effect.target = "/home/u/.config/rmcp/profile.env";
    in_effect.in_effect = true;
    in_effect.summary = "set A=1";
    PlannedStep created = in_effect;
    created.in_effect = false;
    created.existed = false;
    created.new_content = "A=1\n";
    created.new_mode = 0600;
    PlannedStep changed = created;
    changed.existed = true;
    changed.old_content = "A=0\n";
    PlannedStep command;
    command.patch = &advice;
    command.op = &advisory_op;
    command.advisory = "sudo update-initramfs -u\n\nsudo reboot\n";
    command.summary = "advisory: run this yourself (rmcp never runs it)";
    plan.steps = {in_effect, created, changed, command};

    EXPECT_EQ(render::render_plan(plan),
              "plan for env-a advise-b: 4 step(s), 2 file(s) to write\n"
              "\n[1] env-a (env): set A=1\n"
              "    /home/u/.config/rmcp/profile.env: already in effect, skipped\n"
              "\n[2] env-a (env): set A=1\n"
              "    create /home/u/.config/rmcp/profile.env (mode 0600)\n"
              "--- /dev/null\n+++ b/home/u/.config/rmcp/profile.env\n@@ -0,0 +1 @@\n+A=1\n"
              "\n[3] env-a (env): set A=1\n"
              "--- a/home/u/.config/rmcp/profile.env\n+++ b/home/u/.config/rmcp/profile.env\n@@ -1 +1 @@\n-A=0\n+A=1\n"
              "\n[4] advise-b (advisory): advisory: run this yourself (rmcp never runs it)\n"
              "    $ sudo update-initramfs -u\n"
              "    $ sudo reboot\n"
              "    note: then reboot\n");
}

TEST(PlanRender, SystemTargetsSayTheyNeedRoot) {
    Plan plan;
    plan.patch_ids = {"modprobe-x"};
    EXPECT_EQ(render::render_plan(plan), "plan for modprobe-x: 0 step(s), 0 file(s) to write\n");
    PlannedStep s;
    s.target = "/etc/modprobe.d/rmcp-x.conf";
    s.system = true;
    plan.steps.push_back(s);
    EXPECT_TRUE(plan.has_system_targets());
}

}  // namespace
}  // namespace rmcp::patch
