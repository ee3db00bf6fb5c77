// libarchive opened with dlopen on first use (snapshot/libarchive.cpp): loaded once, every
// function bound, and the bound functions write a gzip-compressed pax archive that reads
// back (gunzip with zlib) with the entry's name and bytes.
#include "snapshot/libarchive.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

namespace rmcp {
namespace {

la_ssize_t append_to(struct archive* /*archive*/, void* out, const void* data, std::size_t size) {
    static_cast<std::string*>(out)->append(static_cast<const char*>(data), size);
    return static_cast<la_ssize_t>(size);
}

std::string gunzip(const std::string& bytes) {
    z_stream zs{};
    EXPECT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    zs.avail_in = static_cast<uInt>(bytes.size());
    std::string out;
    char buf[4096];
    int rc = Z_OK;
    while (rc == Z_OK) {
        zs.next_out = reinterpret_cast<Bytef*>(buf);
        zs.avail_out = sizeof buf;
        rc = inflate(&zs, Z_NO_FLUSH);
        out.append(buf, sizeof buf - zs.avail_out);
    }
    EXPECT_EQ(rc, Z_STREAM_END);
    inflateEnd(&zs);
    return out;
}

TEST(SnapshotLibarchive, LoadsOnceWithEveryFunctionBound) {
    const auto first = libarchive();
    ASSERT_TRUE(first.ok()) << first.error().message();
    const LibArchive& api = **first;
    EXPECT_NE(api.write_new, nullptr);
    EXPECT_NE(api.write_add_filter_gzip, nullptr);
    EXPECT_NE(api.write_set_format_pax_restricted, nullptr);
    EXPECT_NE(api.write_open, nullptr);
    EXPECT_NE(api.write_header, nullptr);
    EXPECT_NE(api.write_data, nullptr);
    EXPECT_NE(api.write_close, nullptr);
    EXPECT_NE(api.write_free, nullptr);
    EXPECT_NE(api.error_string, nullptr);
    EXPECT_NE(api.entry_new, nullptr);
    EXPECT_NE(api.entry_free, nullptr);
    EXPECT_NE(api.entry_set_pathname, nullptr);
    EXPECT_NE(api.entry_set_filetype, nullptr);
    EXPECT_NE(api.entry_set_perm, nullptr);
    EXPECT_NE(api.entry_set_size, nullptr);
    EXPECT_NE(api.entry_set_symlink, nullptr);
    const auto again = libarchive();
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *first);  // the same table: loaded once per process
}

TEST(SnapshotLibarchive, TheBoundFunctionsWriteAGzipPaxArchive) {
    const auto loaded = libarchive();
    ASSERT_TRUE(loaded.ok()) << loaded.error().message();
    const LibArchive& api = **loaded;
    std::string bytes;
    struct archive* a = api.write_new();
    ASSERT_NE(a, nullptr);
    ASSERT_EQ(api.write_add_filter_gzip(a), ARCHIVE_OK);
    ASSERT_EQ(api.write_set_format_pax_restricted(a), ARCHIVE_OK);
    ASSERT_EQ(api.write_open(a, &bytes, nullptr, append_to, nullptr), ARCHIVE_OK) << api.error_string(a);
    const std::string content = "ID=debian\n";
    struct archive_entry* e = api.entry_new();
    api.entry_set_pathname(e, "etc/os-release");
    api.entry_set_filetype(e, AE_IFREG);
    api.entry_set_perm(e, 0644);
    api.entry_set_size(e, static_cast<la_int64_t>(content.size()));
    EXPECT_EQ(api.write_header(a, e), ARCHIVE_OK) << api.error_string(a);
    EXPECT_EQ(api.write_data(a, content.data(), content.size()), static_cast<la_ssize_t>(content.size()));
    api.entry_free(e);
    EXPECT_EQ(api.write_close(a), ARCHIVE_OK);
    EXPECT_EQ(api.write_free(a), ARCHIVE_OK);

    ASSERT_GE(bytes.size(), 2U);
    EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1fU);  // gzip's magic (RFC 1952)
    EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8bU);
    const std::string tar = gunzip(bytes);
    ASSERT_GE(tar.size(), 512U);
    EXPECT_EQ(tar.compare(0, 14, "etc/os-release"), 0);  // the header's name field
    EXPECT_EQ(tar.compare(257, 5, "ustar"), 0);          // POSIX ustar magic
    EXPECT_EQ(tar.compare(512, content.size(), content), 0);
}

}  // namespace
}  // namespace rmcp
