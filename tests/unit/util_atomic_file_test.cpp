// Atomic writes inside a directory descriptor (util/atomic_file.hpp): the content and mode
// land in one rename, nothing is left behind, and a link at the name is replaced, never
// followed.
#include "util/atomic_file.hpp"
#include "util/unique_fd.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <random>
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
