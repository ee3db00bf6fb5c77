// Atomic writes (util/atomic_file.hpp): the content and mode land in one rename and nothing
// is left behind. Inside a directory descriptor a link at the name is replaced, never
// followed; at a path the user names only a regular file or a missing path is written.
#include "util/atomic_file.hpp"
#include "util/test_delay.hpp"
#include "util/unique_fd.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace rmcp;
namespace fs = std::filesystem;

namespace {
class AtomicFile : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() /
                ("rmcp-atomic-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
        fs::create_directories(m_dir);
        m_fd.reset(::open(m_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        ASSERT_TRUE(m_fd);
    }
    void TearDown() override { fs::remove_all(m_dir); }
    std::string read(const fs::path& p) {
        std::ifstream in(p, std::ios::binary);
        return {std::istreambuf_iterator<char>(in), {}};
    }
    fs::path m_dir;
    UniqueFd m_fd;
};
}  // namespace

TEST_F(AtomicFile, WritesContentAndModeAndLeavesNoTemporary) {
    ASSERT_TRUE(write_file_atomic_at(m_fd.get(), "profile.env", "export A='1'\n", 0600, "profile.env").ok());
    EXPECT_EQ(read(m_dir / "profile.env"), "export A='1'\n");
    EXPECT_EQ(fs::status(m_dir / "profile.env").permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
    ASSERT_TRUE(write_file_atomic_at(m_fd.get(), "profile.env", "again\n", 0644, "profile.env").ok());
    EXPECT_EQ(read(m_dir / "profile.env"), "again\n");
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(m_dir)) ++entries;
    EXPECT_EQ(entries, 1U);
}

TEST_F(AtomicFile, ALinkAtTheNameIsReplacedNotFollowed) {
    const fs::path victim = m_dir / "victim";
    std::ofstream(victim) << "keep\n";
    fs::create_symlink(victim, m_dir / "target.conf");
    ASSERT_TRUE(write_file_atomic_at(m_fd.get(), "target.conf", "new\n", 0644, "target.conf").ok());
    EXPECT_EQ(read(victim), "keep\n");
    EXPECT_FALSE(fs::is_symlink(m_dir / "target.conf"));
    EXPECT_EQ(read(m_dir / "target.conf"), "new\n");
}

TEST_F(AtomicFile, FailureNamesTheTargetAndCleansUp) {
    fs::create_directories(m_dir / "sub");
    UniqueFd sub(::open((m_dir / "sub").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    fs::remove(m_dir / "sub");  // the directory is gone: creating the temporary file fails
    const auto s = write_file_atomic_at(sub.get(), "x", "y", 0644, "/shown/x");
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().path, "/shown/x");
    EXPECT_EQ(s.error().doing, "creating temporary file for");
}

// write_file_atomic: the path-based writer every user-named output goes through.
namespace {
bool only_entries(const fs::path& dir, std::initializer_list<std::string> names) {
    std::set<std::string> seen;
    for (const auto& e : fs::directory_iterator(dir)) seen.insert(e.path().filename().string());
    return seen == std::set<std::string>(names);
}
}  // namespace

TEST_F(AtomicFile, ReplacesARegularFileKeepingItsPermissionBits) {
    const fs::path out = m_dir / "report.json";
    std::ofstream(out) << "old\n";
    fs::permissions(out, fs::perms::owner_read | fs::perms::owner_write);
    ASSERT_TRUE(write_file_atomic(out.string(), "new\n", 0644).ok());
    EXPECT_EQ(read(out), "new\n");
    EXPECT_EQ(fs::status(out).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_TRUE(only_entries(m_dir, {"report.json"}));
}

TEST_F(AtomicFile, RefusesEveryTargetThatIsNotARegularFile) {
    ASSERT_EQ(::mkfifo((m_dir / "fifo").c_str(), 0600), 0);
    fs::create_directories(m_dir / "dir");
    fs::create_symlink("/dev/null", m_dir / "to-null");
    fs::create_symlink("/proc/self/fd/1", m_dir / "to-stdout");
    fs::create_symlink(m_dir / "nothing", m_dir / "dangling");
    fs::create_symlink(m_dir / "dir", m_dir / "to-dir");
    for (const std::string name : {"fifo", "dir", "to-null", "to-stdout", "dangling", "to-dir"}) {
        const auto s = write_file_atomic((m_dir / name).string(), "x", 0644);
        ASSERT_FALSE(s.ok()) << name;
        EXPECT_EQ(s.error().code, ExitCode::usage) << name;
        EXPECT_NE(s.error().cause.find("not a regular file"), std::string::npos) << s.error().message();
        EXPECT_EQ(s.error().path, (m_dir / name).string());
    }
    EXPECT_EQ(fs::status(m_dir / "fifo").type(), fs::file_type::fifo);
    EXPECT_TRUE(fs::is_symlink(m_dir / "to-null"));
    EXPECT_TRUE(fs::is_symlink(m_dir / "to-stdout"));
    EXPECT_TRUE(fs::is_symlink(m_dir / "dangling"));
    EXPECT_TRUE(only_entries(m_dir, {"fifo", "dir", "to-null", "to-stdout", "dangling", "to-dir"}));
    // The directory-descriptor writer refuses the nodes too (links there are replaced, not followed).
    EXPECT_FALSE(write_file_atomic_at(m_fd.get(), "fifo", "x", 0600, "fifo").ok());
    EXPECT_FALSE(write_file_atomic_at(m_fd.get(), "dir", "x", 0600, "dir").ok());
}

TEST_F(AtomicFile, ALinkToARegularFileIsRefusedAndBothKept) {
    std::ofstream(m_dir / "elsewhere") << "keep\n";
    fs::create_symlink(m_dir / "elsewhere", m_dir / "out");
    const auto s = write_file_atomic((m_dir / "out").string(), "new\n", 0644);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, ExitCode::usage);
    EXPECT_NE(s.error().cause.find("name the file itself"), std::string::npos) << s.error().message();
    EXPECT_TRUE(fs::is_symlink(m_dir / "out"));
    EXPECT_EQ(read(m_dir / "elsewhere"), "keep\n");
}

TEST_F(AtomicFile, DashAndNamesWithoutAFileAreRefused) {
    for (const std::string& path : std::vector<std::string>{"-", "", (m_dir / "sub/").string()}) {
        const auto s = write_file_atomic(path, "x", 0644);
        ASSERT_FALSE(s.ok()) << path;
        EXPECT_EQ(s.error().code, ExitCode::usage);
    }
    EXPECT_TRUE(check_output_file((m_dir / "new-file").string()).ok());
    EXPECT_TRUE(check_output_file((m_dir / "missing-dir/new-file").string()).ok());
    EXPECT_FALSE(check_output_file("-").ok());
}

TEST_F(AtomicFile, AMissingDirectoryIsAnEnvironmentError) {
    const auto s = write_file_atomic((m_dir / "missing/out").string(), "x", 0644);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, ExitCode::environment);
    EXPECT_EQ(s.error().os_error, ENOENT);
}

// Issue 32: a reader of the output's directory that skips dot files (NFD's features.d, watched
// with inotify) must never see the temporary file. Paused before the rename (the test-only
// delay), the temporary file of a named output is a dot file; one inside a patch target's
// directory keeps the name `patch status` cleans up (`<name>.rmcp-tmp-*`).
TEST_F(AtomicFile, TemporaryFileOfANamedOutputIsHidden) {
    const auto temporaries = [&] {
        std::set<std::string> names;
        for (const auto& e : fs::directory_iterator(m_dir))
            if (e.path().filename().string().find(k_temp_infix) != std::string::npos)
                names.insert(e.path().filename().string());
        return names;
    };
    test_hooks::set_delays("rename:300");
    std::set<std::string> seen_named, seen_at;
    std::thread named([&] { EXPECT_TRUE(write_file_atomic((m_dir / "rmcp").string(), "rmcp.healthy=true\n").ok()); });
    while (seen_named.empty()) seen_named = temporaries();
    named.join();
    std::thread at([&] { EXPECT_TRUE(write_file_atomic_at(m_fd.get(), "profile.env", "A=1\n", 0600, "p").ok()); });
    while (seen_at.empty()) seen_at = temporaries();
    at.join();
    test_hooks::set_delays("");
    ASSERT_EQ(seen_named.size(), 1U);
    EXPECT_EQ(seen_named.begin()->rfind(".rmcp" + std::string(k_temp_infix), 0), 0U) << *seen_named.begin();
    ASSERT_EQ(seen_at.size(), 1U);
    EXPECT_EQ(seen_at.begin()->rfind("profile.env" + std::string(k_temp_infix), 0), 0U) << *seen_at.begin();
    EXPECT_TRUE(temporaries().empty());
    EXPECT_EQ(read(m_dir / "rmcp"), "rmcp.healthy=true\n");
}
