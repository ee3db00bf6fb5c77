// Log sources (explain/log_source.cpp): files, standard input and pipes, plain or gzip with
// any number of members; unreadable input is a usage error naming the source.
#include "explain/log_source.hpp"

#include "kb_test_entries.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <cerrno>
#include <unistd.h>

namespace rmcp::explain {
namespace {

using kb_test::compile;
using kb_test::entry;
using kb_test::sig;

// gzip bytes of `text`, one member.
std::string gzip_bytes(const std::string& text) {
    z_stream zs{};
    EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    std::string out(deflateBound(&zs, static_cast<uLong>(text.size())) + 32, '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    zs.avail_in = static_cast<uInt>(text.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    return out;
}

// Scans what a writer thread pushes through a pipe in pieces of `piece` bytes.
std::vector<Match> scan_through_pipe(const std::string& bytes, std::size_t piece, std::uint64_t* lines) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    std::thread writer([&] {
        for (std::size_t i = 0; i < bytes.size(); i += piece) {
            const std::size_t n = std::min(piece, bytes.size() - i);
            EXPECT_EQ(::write(fds[1], bytes.data() + i, n), static_cast<ssize_t>(n));
        }
        ::close(fds[1]);
    });
    auto set = compile({entry("nodev", {sig("HIP error: invalid device function")})});
    std::vector<Match> out;
    LogScanner scanner(set, [&](const Match& m) { out.push_back(m); });
    EXPECT_TRUE(scan_fd(fds[0], "the pipe", scanner).ok());
    writer.join();
    ::close(fds[0]);
    *lines = scanner.lines();
    return out;
}

class ExplainLogSourceFiles : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir =
            std::filesystem::temp_directory_path() / ("rmcp-matcher-" + std::to_string(::getpid()) + "-" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(m_dir);
    }
    void TearDown() override { std::filesystem::remove_all(m_dir); }
    std::filesystem::path m_dir;
};

TEST_F(ExplainLogSourceFiles, GzipFilesAreInflatedTransparentlyIncludingConcatenatedMembers) {
    const auto path = (m_dir / "train.log.gz").string();
    for (int member = 0; member < 2; ++member) {
        gzFile gz = gzopen(path.c_str(), member == 0 ? "wb" : "ab");
        ASSERT_NE(gz, nullptr);
        std::string text;
        for (int i = 0; i < 20000; ++i) text += "step " + std::to_string(i) + " loss 0.5\n";
        if (member == 1) text += "RuntimeError: HIP error: invalid device function\n";
        gzwrite(gz, text.data(), static_cast<unsigned>(text.size()));
        gzclose(gz);
    }
    auto set = compile({entry("nodev", {sig("HIP error: invalid device function")})});
    std::vector<Match> out;
    LogScanner scanner(set, [&](const Match& m) { out.push_back(m); });
    ASSERT_TRUE(scan_path(path, scanner).ok());
    ASSERT_EQ(out.size(), 1U);
    EXPECT_EQ(out[0].line, 40001U);
    EXPECT_EQ(scanner.lines(), 40001U);
}

TEST_F(ExplainLogSourceFiles, CorruptOrTruncatedGzipIsBadInput) {
    const auto path = (m_dir / "broken.gz").string();
    gzFile gz = gzopen(path.c_str(), "wb");
    std::string text(100000, 'a');
    gzwrite(gz, text.data(), static_cast<unsigned>(text.size()));
    gzclose(gz);
    std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
    auto set = compile({entry("x", {sig("zzz")})});
    LogScanner scanner(set, nullptr);
    const auto status = scan_path(path, scanner);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code, ExitCode::usage);
    EXPECT_EQ(status.error().doing, "reading");
    EXPECT_EQ(status.error().path, path);

    std::ofstream(m_dir / "garbage.gz") << "\x1f\x8bthis is not deflate data at all";
    LogScanner scanner2(set, nullptr);
    EXPECT_FALSE(scan_path((m_dir / "garbage.gz").string(), scanner2).ok());
}

TEST_F(ExplainLogSourceFiles, MissingFileAndDirectoryAreBadInput) {
    auto set = compile({entry("x", {sig("zzz")})});
    LogScanner a(set, nullptr);
    auto status = scan_path((m_dir / "nope.log").string(), a);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().message(), "reading " + (m_dir / "nope.log").string() + ": No such file or directory");
    EXPECT_EQ(status.error().code, ExitCode::usage);
    LogScanner b(set, nullptr);
    status = scan_path(m_dir.string(), b);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().cause, "Is a directory");
}

TEST(ExplainLogSource, APipeIsReadPlainOrGzipWhateverItsPieces) {
    const std::string text = "one\ntwo\nRuntimeError: HIP error: invalid device function\nfour\n";
    for (const std::size_t piece : {1UL, 2UL, 5UL, 4096UL}) {
        std::uint64_t lines = 0;
        auto plain = scan_through_pipe(text, piece, &lines);
        ASSERT_EQ(plain.size(), 1U) << piece;
        EXPECT_EQ(plain[0].line, 3U);
        EXPECT_EQ(lines, 4U);
        auto gz = scan_through_pipe(gzip_bytes(text) + gzip_bytes("five\n"), piece, &lines);
        ASSERT_EQ(gz.size(), 1U) << piece;
        EXPECT_EQ(gz[0].line, 3U);
        EXPECT_EQ(lines, 5U);
    }
}

TEST(ExplainLogSource, OneByteIsNotGzipAndAnEmptySourceIsFine) {
    std::uint64_t lines = 0;
    EXPECT_TRUE(scan_through_pipe("\x1f", 1, &lines).empty());
    EXPECT_EQ(lines, 1U);
    EXPECT_TRUE(scan_through_pipe("", 1, &lines).empty());
    EXPECT_EQ(lines, 0U);
}

TEST(ExplainLogSource, AnUnreadableFileKeepsItsErrno) {
    auto set = compile({entry("x", {sig("zzz")})});
    LogScanner scanner(set, nullptr);
    const auto status = scan_path("/nonexistent/rmcp/log.txt", scanner);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().os_error, ENOENT);
    EXPECT_EQ(status.error().path, "/nonexistent/rmcp/log.txt");
}

}  // namespace
}  // namespace rmcp::explain
