#include "kb/content_hash.hpp"

#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {
fs::path fresh_dir(const std::string& name) {
    const auto dir = fs::temp_directory_path() / ("rmcp-kb-hash-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}
void write(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }
}  // namespace

// kb_version is the sha256sum listing's own SHA-256, cut to 16 hex digits (docs/install.md):
// here the listing is built by hand from the two files' digests.
TEST(KbContentHash, IsTheHashOfTheSha256sumListing) {
    const auto dir = fresh_dir("listing");
    write(dir / "b-entry.toml", "id = \"b-entry\"\n");
    write(dir / "a-entry.toml", "id = \"a-entry\"\n");
    write(dir / "README.md", "not an entry");
    fs::create_directories(dir / "sub.toml");  // a directory, not a file: kb::load skips it too
    const std::string listing = rmcp::sha256_hex("id = \"a-entry\"\n") + "  a-entry.toml\n" +
                                rmcp::sha256_hex("id = \"b-entry\"\n") + "  b-entry.toml\n";
    const auto hash = rmcp::kb::content_hash(dir);
    ASSERT_TRUE(hash.ok()) << hash.error().message();
    EXPECT_EQ(*hash, rmcp::sha256_hex(listing).substr(0, 16));
    fs::remove_all(dir);
}

TEST(KbContentHash, ChangesWithAnyEntryAndNotWithOtherFiles) {
    const auto dir = fresh_dir("changes");
    write(dir / "entry.toml", "id = \"entry\"\n");
    const auto before = rmcp::kb::content_hash(dir);
    write(dir / "notes.txt", "ignored");
    EXPECT_EQ(*rmcp::kb::content_hash(dir), *before);
    write(dir / "entry.toml", "id = \"entry\"\n# edited\n");
    EXPECT_NE(*rmcp::kb::content_hash(dir), *before);
    fs::remove_all(dir);
}

TEST(KbContentHash, MissingDirectoryIsAnError) {
    const auto hash = rmcp::kb::content_hash("/nonexistent/rmcp-kb");
    ASSERT_FALSE(hash.ok());
    EXPECT_NE(hash.error().message().find("/nonexistent/rmcp-kb"), std::string::npos);
}
