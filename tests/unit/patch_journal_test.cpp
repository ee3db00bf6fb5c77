// The journal reader (docs/patches.md, "Journal"): every field of journal.json is checked,
// because a journal is data from a place anyone with the user's rights can write.
#include "patch/applier.hpp"
#include "patch/journal.hpp"

#include "scratch_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sys/file.h>

using namespace rmcp;
using nlohmann::json;

namespace {
const char* k_dir = "20260101T000000.123456789";

json valid() {
    return json{
        {"schema_version", 1},
        {"id", k_dir},
        {"state", "applied"},
        {"failed", false},
        {"system", false},
        {"created", "2026-01-01T00:00:00Z"},
        {"patches", {"env-miopen-no-gemm"}},
        {"created_dirs", {"/home/u/.config/rmcp"}},
        {"targets",
         {{{"path", "/home/u/.config/rmcp/profile.env"}, {"existed", true}, {"mode", 0600}, {"backup", "0.orig"}},
          {{"path", "/etc/modprobe.d/rmcp-cwsr.conf"}, {"existed", false}, {"mode", 0}, {"backup", ""}}}}};
}
}  // namespace

TEST(Journal, AValidJournalReadsBack) {
    auto t = patch::parse_journal(valid().dump(), k_dir);
    ASSERT_TRUE(t.ok()) << t.error().message();
    EXPECT_EQ(t->id, k_dir);
    EXPECT_EQ(t->targets.size(), 2U);
    EXPECT_EQ(t->targets[0].mode, 0600U);
    EXPECT_EQ(t->created_dirs, (std::vector<std::string>{"/home/u/.config/rmcp"}));
}

struct Tamper {
    const char* name;
    void (*edit)(json&);
    const char* cause;
};

class JournalTampering : public ::testing::TestWithParam<Tamper> {};

TEST_P(JournalTampering, IsRejectedWithAReason) {
    json j = valid();
    GetParam().edit(j);
    auto t = patch::parse_journal(j.dump(), k_dir);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.error().cause.find(GetParam().cause), std::string::npos) << t.error().cause;
}

INSTANTIATE_TEST_SUITE_P(
    Journal, JournalTampering,
    ::testing::Values(
        Tamper{"backup_escapes", [](json& j) { j["targets"][0]["backup"] = "../../../../etc/shadow"; },
               "must be \"0.orig\""},
        Tamper{"backup_absolute", [](json& j) { j["targets"][0]["backup"] = "/etc/shadow"; }, "must be"},
        Tamper{"backup_for_a_new_file", [](json& j) { j["targets"][1]["backup"] = "1.orig"; }, "must be empty"},
        Tamper{"mode_too_big", [](json& j) { j["targets"][0]["mode"] = 0104777; }, "not a permission mode"},
        Tamper{"mode_negative", [](json& j) { j["targets"][0]["mode"] = -1; }, "wrong type"},
        Tamper{"mode_float", [](json& j) { j["targets"][0]["mode"] = 4.5; }, "wrong type"},
        Tamper{"path_relative", [](json& j) { j["targets"][0]["path"] = "home/u/.config/rmcp/profile.env"; },
               "normalised"},
        Tamper{"path_dotdot", [](json& j) { j["targets"][0]["path"] = "/home/u/../../etc/rmcp/profile.env"; },
               "normalised"},
        Tamper{"path_not_ours", [](json& j) { j["targets"][0]["path"] = "/etc/shadow"; }, "not a file rmcp writes"},
        Tamper{"path_twice",
               [](json& j) {
                   j["targets"][1] = j["targets"][0];
                   j["targets"][1]["backup"] = "1.orig";
               },
               "twice"},
        Tamper{"extra_field", [](json& j) { j["targets"][0]["owner"] = 0; }, "exactly path"},
        Tamper{"created_dir_outside", [](json& j) { j["created_dirs"] = {"/../outside/emptydir"}; },
               "created directory"},
        Tamper{"created_dir_unrelated", [](json& j) { j["created_dirs"] = {"/srv"}; }, "above a target"},
        Tamper{"id_not_dir", [](json& j) { j["id"] = "20260101T000000.000000000"; }, "directory's name"},
        Tamper{"id_escape", [](json& j) { j["id"] = "../../escape"; }, "not a transaction id"},
        Tamper{"state_unknown", [](json& j) { j["state"] = "done"; }, "unknown \"state\""},
        Tamper{"schema", [](json& j) { j["schema_version"] = 2; }, "schema_version"},
        Tamper{"unknown_top", [](json& j) { j["hook"] = "rm -rf /"; }, "unknown field"},
        Tamper{"patches_bad", [](json& j) { j["patches"] = {"../x"}; }, "patch id"},
        Tamper{"targets_not_list", [](json& j) { j["targets"] = "x"; }, "must be a list"}),
    [](const ::testing::TestParamInfo<Tamper>& info) { return std::string(info.param.name); });

TEST(Journal, NotJsonOrNotAnObject) {
    EXPECT_EQ(patch::parse_journal("{not json", k_dir).error().cause, "not valid JSON");
    EXPECT_EQ(patch::parse_journal("[]", k_dir).error().cause, "not a JSON object");
    EXPECT_EQ(patch::parse_journal("", k_dir).error().cause, "not valid JSON");
}

namespace {

class JournalFiles : public ::testing::Test {
protected:
    void SetUp() override {
        auto root = Root::open(m_dir);
        ASSERT_TRUE(root.ok()) << root.error().message();
        m_root.emplace(std::move(*root));
    }
    void put(const std::string& logical, const std::string& text) {
        const auto p = m_dir / logical.substr(1);
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p) << text;
    }
    testing_support::ScratchDir m_scratch{"journal"};
    std::filesystem::path m_dir = m_scratch.path();
    std::optional<Root> m_root;
    std::map<std::string, std::string> m_env{{"HOME", "/home/u"}, {"XDG_STATE_HOME", "/state"}};
};

TEST_F(JournalFiles, ACorruptJournalIsListedAsSuchBesideTheValidOnes) {
    const std::string base = "/state/rmcp/transactions/";
    put(base + k_dir + "/journal.json", valid().dump());
    put(base + "20260102T000000.000000001/journal.json", "{\"schema_version\": 1");
    put(base + "20260103T000000.000000002/unrelated", "no journal: killed before it was written");
    auto listed = patch::list_transactions(*m_root, m_env);
    ASSERT_TRUE(listed.ok()) << listed.error().message();
    ASSERT_EQ(listed->size(), 2U);  // the directory without a journal touched nothing
    EXPECT_EQ((*listed)[0].id, k_dir);
    EXPECT_TRUE((*listed)[0].corrupt.empty());
    EXPECT_EQ((*listed)[0].journal_dir, base + k_dir);
    EXPECT_EQ((*listed)[1].id, "20260102T000000.000000001");
    EXPECT_EQ((*listed)[1].corrupt, "not valid JSON");
}

TEST_F(JournalFiles, OneApplyOrRollbackAtATime) {
    auto first = patch::JournalLock::acquire(*m_root, "/state/rmcp");
    ASSERT_TRUE(first.ok()) << first.error().message();
    auto second = patch::JournalLock::acquire(*m_root, "/state/rmcp");
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.error().cause.find("another rmcp patch apply or rollback is running"), std::string::npos);
    EXPECT_FALSE(patch::JournalLock::try_existing(*m_root, "/state/rmcp").has_value());
    first = patch::JournalLock{};  // released
    EXPECT_TRUE(patch::JournalLock::try_existing(*m_root, "/state/rmcp").has_value());
    // A base that does not exist has nobody in it, and is not created.
    EXPECT_TRUE(patch::JournalLock::try_existing(*m_root, "/nowhere").has_value());
    EXPECT_FALSE(std::filesystem::exists(m_dir / "nowhere"));
}

TEST_F(JournalFiles, TemporaryFilesAreRemovedOnlyWhenNoWriterHoldsTheirDirectory) {
    // D10: a temporary file is recognised as left behind by its writer's lock, not its name.
    put("/home/u/.config/rmcp/profile.env.rmcp-tmp-AbC123", "half written");
    const auto stray = m_dir / "home/u/.config/rmcp/profile.env.rmcp-tmp-AbC123";
    auto dir = m_root->open_dir("/home/u/.config/rmcp");
    ASSERT_TRUE(dir.ok());
    {
        // A writer at work in that directory (what write_owned_at holds from before its
        // temporary file exists until after the rename).
        UniqueFd writer(::open((m_dir / "home/u/.config/rmcp").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        ASSERT_EQ(::flock(writer.get(), LOCK_SH), 0);
        patch::remove_temporaries(dir->get(), "profile.env");
        EXPECT_TRUE(std::filesystem::exists(stray));
    }
    patch::remove_temporaries(dir->get(), "profile.env");  // the writer is gone
    EXPECT_FALSE(std::filesystem::exists(stray));
    // The owned write itself leaves no temporary file and writes the content.
    ASSERT_TRUE(patch::write_owned_at(dir->get(), "profile.env", "x=1\n", 0600, "profile.env").ok());
    std::ifstream in(m_dir / "home/u/.config/rmcp/profile.env");
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "x=1\n");
}

TEST(JournalIds, NewIdsAreTransactionIdsAndSortByTime) {
    const auto a = patch::new_txn_id();
    const auto b = patch::new_txn_id();
    EXPECT_TRUE(patch::is_txn_id(a)) << a;
    EXPECT_LE(a, b);
    EXPECT_FALSE(patch::is_txn_id("../20260101T000000.000000000"));
    EXPECT_FALSE(patch::is_txn_id("20260101T000000"));
    EXPECT_TRUE(patch::under("/home/u/.config/rmcp/profile.env", "/home/u"));
    EXPECT_FALSE(patch::under("/home/user2/x", "/home/u"));
    EXPECT_FALSE(patch::under("/home/u", "/home/u"));
}

}  // namespace
