// The applier against a copy of a fixture root: real patches planned and applied, steps
// already in effect skipped, rollback restoring content, mode and absence byte for byte,
// and targets outside the allowlist refused (docs/patches.md).
#include "patch/applier.hpp"

#include "patch/patch.hpp"

#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

using namespace rmcp;
namespace fs = std::filesystem;

namespace {

const std::string k_home = "/home/tester";
const std::string k_env_file = k_home + "/.config/rmcp/profile.env";
const std::string k_modprobe = "/etc/modprobe.d/rmcp-cwsr.conf";

std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

void write_text(const fs::path& p, const std::string& text, fs::perms mode) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    fs::permissions(p, mode);
}

fs::perms mode_of(const fs::path& p) { return fs::status(p).permissions() & fs::perms::all; }

class Applier : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = m_tmp / "root";
        // The fixture is never written: the test works on a copy.
        fs::copy(fs::path(RMCP_SOURCE_DIR) / "tests/fixtures/rx6600-gfx1032", m_dir,
                 fs::copy_options::recursive | fs::copy_options::copy_symlinks);
        fs::create_directories(m_dir / "home/tester");
        auto root = Root::open(m_dir);
        ASSERT_TRUE(root.ok()) << root.error().message();
        m_root.emplace(std::move(*root));
        auto set = patch::load_patches(fs::path(RMCP_SOURCE_DIR) / "patches");
        ASSERT_TRUE(set.ok()) << set.error().message();
        m_set = std::move(*set);
        m_ctx.env = {{"HOME", k_home}, {"XDG_STATE_HOME", "/state"}};
        m_options.env = m_ctx.env;
        m_options.euid = 0;  // the modprobe target is a system file
    }

    patch::Plan plan(const std::vector<std::string>& ids) {
        auto p = patch::make_plan(*m_root, m_set, ids, m_ctx);
        EXPECT_TRUE(p.ok()) << p.error().message();
        return p.ok() ? std::move(*p) : patch::Plan{};
    }
    fs::path host(const std::string& logical) const { return m_dir / logical.substr(1); }

    testing_support::ScratchDir m_scratch{"applier"};
    fs::path m_tmp = m_scratch.path(), m_dir;
    std::optional<Root> m_root;
    patch::PatchSet m_set;
    patch::PlanContext m_ctx;
    patch::ApplyOptions m_options;
};

TEST_F(Applier, AppliesThenRollsBackContentModeAndAbsence) {
    const std::string mine = "# mine\nexport FOO='1'\n";
    write_text(host(k_env_file), mine, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    ASSERT_FALSE(fs::exists(host(k_modprobe)));
    const bool modprobe_dir_existed = fs::exists(host("/etc/modprobe.d"));

    const auto p = plan({"env-miopen-no-gemm", "modprobe-cwsr-disable"});
    ASSERT_EQ(p.writes(), 2U);
    auto applied = patch::apply_plan(*m_root, p, m_options);
    ASSERT_TRUE(applied.ok()) << applied.error().message();
    EXPECT_FALSE(applied->txn_id.empty());
    EXPECT_EQ(applied->written, (std::vector<std::string>{k_env_file, k_modprobe}));
    EXPECT_TRUE(applied->skipped.empty());

    const std::string env_text = read_text(host(k_env_file));
    EXPECT_NE(env_text.find("export FOO="), std::string::npos) << env_text;  // what was set stays set
    EXPECT_NE(env_text.find("export MIOPEN_DEBUG_CONV_GEMM='0'"), std::string::npos) << env_text;
    EXPECT_NE(read_text(host(k_modprobe)).find("cwsr_enable=0"), std::string::npos);

    auto listed = patch::list_transactions(*m_root, m_options.env);
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ(listed->size(), 1U);
    EXPECT_EQ(listed->front().id, applied->txn_id);
    EXPECT_EQ(listed->front().state, patch::TxnState::applied);
    EXPECT_TRUE(listed->front().system);

    auto rolled = patch::rollback(*m_root, std::nullopt, m_options);
    ASSERT_TRUE(rolled.ok()) << rolled.error().message();
    ASSERT_TRUE(rolled->has_value());
    EXPECT_EQ((*rolled)->id, applied->txn_id);
    EXPECT_EQ(read_text(host(k_env_file)), mine);
    EXPECT_EQ(mode_of(host(k_env_file)), fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    EXPECT_FALSE(fs::exists(host(k_modprobe)));
    EXPECT_EQ(fs::exists(host("/etc/modprobe.d")), modprobe_dir_existed);  // a directory it created goes too

    auto after = patch::list_transactions(*m_root, m_options.env);
    ASSERT_TRUE(after.ok());
    ASSERT_EQ(after->size(), 1U);
    EXPECT_EQ(after->front().state, patch::TxnState::rolled_back);
    // Nothing left to roll back.
    auto again = patch::rollback(*m_root, std::nullopt, m_options);
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(again->has_value());
}

TEST_F(Applier, AnAbsentFileIsAbsentAgainAfterRollback) {
    ASSERT_FALSE(fs::exists(host(k_env_file)));
    auto applied = patch::apply_plan(*m_root, plan({"env-miopen-no-gemm"}), m_options);
    ASSERT_TRUE(applied.ok()) << applied.error().message();
    ASSERT_TRUE(fs::exists(host(k_env_file)));
    auto rolled = patch::rollback(*m_root, applied->txn_id, m_options);
    ASSERT_TRUE(rolled.ok()) << rolled.error().message();
    EXPECT_FALSE(fs::exists(host(k_env_file)));
    EXPECT_FALSE(fs::exists(host(k_home + "/.config/rmcp")));
}

TEST_F(Applier, SkipsWhatIsAlreadyInEffect) {
    auto first = patch::apply_plan(*m_root, plan({"env-miopen-no-gemm"}), m_options);
    ASSERT_TRUE(first.ok()) << first.error().message();
    const std::string written = read_text(host(k_env_file));

    const auto second_plan = plan({"env-miopen-no-gemm"});
    EXPECT_EQ(second_plan.writes(), 0U);
    auto second = patch::apply_plan(*m_root, second_plan, m_options);
    ASSERT_TRUE(second.ok()) << second.error().message();
    EXPECT_TRUE(second->txn_id.empty());  // no transaction for nothing
    EXPECT_TRUE(second->written.empty());
    EXPECT_EQ(second->skipped, (std::vector<std::string>{k_env_file}));
    EXPECT_EQ(read_text(host(k_env_file)), written);
    auto listed = patch::list_transactions(*m_root, m_options.env);
    ASSERT_TRUE(listed.ok());
    EXPECT_EQ(listed->size(), 1U);
}

TEST_F(Applier, AFailedStepRollsEverythingBack) {
    write_text(host(k_env_file), "export KEEP='1'\n", fs::perms::owner_read | fs::perms::owner_write);
    m_options.fail_step = 2;
    auto applied = patch::apply_plan(*m_root, plan({"env-miopen-no-gemm", "modprobe-cwsr-disable"}), m_options);
    ASSERT_FALSE(applied.ok());
    EXPECT_EQ(applied.error().code, ExitCode::apply_rolled_back);
    EXPECT_NE(applied.error().cause.find("every change was rolled back"), std::string::npos) << applied.error().cause;
    EXPECT_EQ(read_text(host(k_env_file)), "export KEEP='1'\n");
    EXPECT_EQ(mode_of(host(k_env_file)), fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_FALSE(fs::exists(host(k_modprobe)));
}

TEST_F(Applier, APlanMadeStaleIsNotApplied) {
    const auto p = plan({"env-miopen-no-gemm"});
    write_text(host(k_env_file), "export CHANGED=1\n", fs::perms::owner_read | fs::perms::owner_write);
    auto applied = patch::apply_plan(*m_root, p, m_options);
    ASSERT_FALSE(applied.ok());
    EXPECT_NE(applied.error().cause.find("changed after the plan was made"), std::string::npos);
    EXPECT_EQ(read_text(host(k_env_file)), "export CHANGED=1\n");
    auto listed = patch::list_transactions(*m_root, m_options.env);
    ASSERT_TRUE(listed.ok());
    EXPECT_TRUE(listed->empty());
}

TEST_F(Applier, RefusesTargetsOutsideTheAllowlist) {
    const std::string passwd_before = read_text(host("/etc/passwd"));
    patch::Plan p;
    p.patch_ids = {"hand-made"};
    patch::PlannedStep step;
    step.target = "/etc/passwd";
    step.existed = true;
    step.old_content = passwd_before;
    step.new_content = "root::0:0::/root:/bin/sh\n";
    p.steps.push_back(step);
    auto applied = patch::apply_plan(*m_root, p, m_options);
    ASSERT_FALSE(applied.ok());
    EXPECT_EQ(applied.error().code, ExitCode::usage);
    EXPECT_NE(applied.error().cause.find("outside the allowlist"), std::string::npos) << applied.error().cause;
    EXPECT_EQ(read_text(host("/etc/passwd")), passwd_before);

    for (const std::string& bad :
         std::vector<std::string>{"relative/profile.env", k_home + "/.config/rmcp/../../../etc/passwd"}) {
        auto r = patch::resolve_target(*m_root, bad, m_options.env);
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_EQ(r.error().code, ExitCode::usage) << bad;
    }
    // A link inside the allowed place that leads out of it is refused as where it leads.
    fs::create_directories(host(k_home + "/.config"));
    fs::create_directory_symlink("../../../etc", host(k_home + "/.config/rmcp"));
    auto via_link = patch::resolve_target(*m_root, k_env_file, m_options.env);
    ASSERT_FALSE(via_link.ok());
    EXPECT_EQ(via_link.error().code, ExitCode::usage);
}

TEST_F(Applier, SystemTargetsNeedRoot) {
    m_options.euid = 1000;
    auto applied = patch::apply_plan(*m_root, plan({"modprobe-cwsr-disable"}), m_options);
    ASSERT_FALSE(applied.ok());
    EXPECT_NE(applied.error().cause.find("needs root"), std::string::npos) << applied.error().cause;
    EXPECT_FALSE(fs::exists(host(k_modprobe)));
}

}  // namespace
