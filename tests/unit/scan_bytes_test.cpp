// Bounds-checked views and the read-only file mapping (scan/bytes.cpp): what a mapped file
// shows, and how opening fails (each failure names the file and keeps errno).
#include "scan/bytes.hpp"

#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rmcp::scan {
namespace {

namespace fs = std::filesystem;

class MappedFiles : public ::testing::Test {
protected:
    testing_support::ScratchDir m_scratch{"bytes"};
    fs::path m_dir = m_scratch.path();
};

TEST_F(MappedFiles, AFileIsMappedWhole) {
    const auto path = (m_dir / "lib.so").string();
    std::ofstream(path, std::ios::binary) << std::string("\x7f"
                                                         "ELF\x02\x01\x01",
                                                         7)
                                          << "rest";
    auto f = MappedFile::open(path);
    ASSERT_TRUE(f.ok()) << f.error().message();
    EXPECT_EQ(f->size(), 11U);
    EXPECT_TRUE(has_prefix(f->bytes(), 0,
                           std::string_view("\x7f"
                                            "ELF",
                                            4)));
    EXPECT_EQ(as_chars(f->bytes()).substr(7), "rest");
    EXPECT_EQ(read_le<std::uint32_t>(f->bytes(), 8), std::nullopt);  // would end past the file
    EXPECT_EQ(sub(f->bytes(), 7, 4).value().size(), 4U);
    EXPECT_EQ(sub(f->bytes(), 8, 4), std::nullopt);
    f->release(0, f->size());  // dropping pages leaves the content readable
    EXPECT_EQ(as_chars(f->bytes()).substr(7), "rest");
}

TEST_F(MappedFiles, AnEmptyFileHasNoBytes) {
    const auto path = (m_dir / "empty.so").string();
    std::ofstream{path};
    auto f = MappedFile::open(path);
    ASSERT_TRUE(f.ok()) << f.error().message();
    EXPECT_EQ(f->size(), 0U);
    EXPECT_TRUE(f->bytes().empty());
}

TEST_F(MappedFiles, FailuresNameTheFileAndKeepErrno) {
    const auto missing = (m_dir / "missing.so").string();
    auto a = MappedFile::open(missing);
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.error().message(), "opening " + missing + ": No such file or directory");
    EXPECT_EQ(a.error().os_error, ENOENT);
    EXPECT_EQ(a.error().code, ExitCode::environment);

    auto dir = MappedFile::open(m_dir.string());
    ASSERT_FALSE(dir.ok());
    EXPECT_EQ(dir.error().cause, "not a regular file");
    EXPECT_EQ(dir.error().code, ExitCode::usage);

    // A FIFO given by mistake must not hang the scan: it is refused, not read.
    const auto fifo = (m_dir / "fifo").string();
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    auto pipe = MappedFile::open(fifo);
    ASSERT_FALSE(pipe.ok());
    EXPECT_EQ(pipe.error().cause, "not a regular file");

    auto bad_fd = MappedFile::map(-1, "fd -1");
    ASSERT_FALSE(bad_fd.ok());
    EXPECT_EQ(bad_fd.error().message(), "inspecting fd -1: Bad file descriptor");
    EXPECT_EQ(bad_fd.error().os_error, EBADF);
}

}  // namespace
}  // namespace rmcp::scan
