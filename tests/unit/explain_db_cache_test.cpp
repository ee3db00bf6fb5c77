// The compiled-database cache (explain/db_cache.hpp): a file is used only when everything
// about it checks out, and any damage means "compile again", never a wrong database.
#include "explain/db_cache.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

using namespace rmcp::explain;
namespace fs = std::filesystem;

namespace {
class DbCache : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() /
                ("rmcp-db-cache-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
        fs::create_directories(m_dir);
        const char* old = std::getenv("XDG_CACHE_HOME");
        if (old) m_old = old;
        ::setenv("XDG_CACHE_HOME", m_dir.c_str(), 1);
        m_inputs = db_cache::inputs_blob(m_expressions, m_flags, m_ids, HS_MODE_STREAM);
        hs_compile_error_t* err = nullptr;
        ASSERT_EQ(hs_compile_multi(m_expressions.data(), m_flags.data(), m_ids.data(), 2, HS_MODE_STREAM, nullptr,
                                   &m_db, &err),
                  HS_SUCCESS);
    }
    void TearDown() override {
        if (m_db) hs_free_database(m_db);
        if (m_old) ::setenv("XDG_CACHE_HOME", m_old->c_str(), 1);
        else ::unsetenv("XDG_CACHE_HOME");
        fs::remove_all(m_dir);
    }
    // Matches in `text` (id list) with `db`.
    static std::vector<unsigned> scan(hs_database_t* db, std::string_view text) {
        hs_scratch_t* scratch = nullptr;
        EXPECT_EQ(hs_alloc_scratch(db, &scratch), HS_SUCCESS);
        hs_stream_t* stream = nullptr;
        EXPECT_EQ(hs_open_stream(db, 0, &stream), HS_SUCCESS);
        std::vector<unsigned> ids;
        const auto on = [](unsigned id, unsigned long long, unsigned long long, unsigned, void* ctx) {
            static_cast<std::vector<unsigned>*>(ctx)->push_back(id);
            return 0;
        };
        hs_scan_stream(stream, text.data(), static_cast<unsigned>(text.size()), 0, scratch, on, &ids);
        hs_close_stream(stream, scratch, on, &ids);
        hs_free_scratch(scratch);
        return ids;
    }
    fs::path m_dir;
    std::optional<std::string> m_old;
    std::vector<const char*> m_expressions{"Memory access fault by GPU node-[0-9]+", "invalid device function"};
    std::vector<unsigned> m_flags{HS_FLAG_MULTILINE, HS_FLAG_MULTILINE};
    std::vector<unsigned> m_ids{0, 1};
    std::string m_inputs;
    hs_database_t* m_db = nullptr;
};
}  // namespace

TEST_F(DbCache, StoresAndLoadsTheSameDatabase) {
    EXPECT_EQ(db_cache::load(m_inputs), nullptr);  // nothing yet
    db_cache::store(m_inputs, m_db);
    const auto file = db_cache::file_for(m_inputs);
    ASSERT_TRUE(fs::exists(file));
    EXPECT_EQ(file.parent_path(), m_dir / "rmcp");
    EXPECT_EQ(fs::status(file).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
    const rmcp::hyperscan::Database loaded = db_cache::load(m_inputs);
    ASSERT_NE(loaded, nullptr);
    EXPECT_EQ(scan(loaded.get(), "HIP error: invalid device function\n"), (std::vector<unsigned>{1}));
}

TEST_F(DbCache, OtherInputsGetAnotherFileAndNeverThisDatabase) {
    db_cache::store(m_inputs, m_db);
    std::vector<unsigned> flags{HS_FLAG_MULTILINE, HS_FLAG_MULTILINE | HS_FLAG_SINGLEMATCH};
    const auto other = db_cache::inputs_blob(m_expressions, flags, m_ids, HS_MODE_STREAM);
    EXPECT_NE(db_cache::file_for(other), db_cache::file_for(m_inputs));
    EXPECT_EQ(db_cache::load(other), nullptr);
    // Even under the same name (a hash collision, or a renamed file) the stored inputs differ.
    fs::copy_file(db_cache::file_for(m_inputs), db_cache::file_for(other));
    EXPECT_EQ(db_cache::load(other), nullptr);
}

TEST_F(DbCache, DamagedOrForeignFilesAreIgnored) {
    db_cache::store(m_inputs, m_db);
    const auto file = db_cache::file_for(m_inputs);
    std::string bytes;
    {
        std::ifstream in(file, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    const auto rewrite = [&](const std::string& b) {
        fs::remove(file);
        std::ofstream(file, std::ios::binary) << b;
        fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
    };
    std::string flipped = bytes;
    flipped[flipped.size() - 10] ^= 0x5a;  // inside the database bytes: checksum
    rewrite(flipped);
    EXPECT_EQ(db_cache::load(m_inputs), nullptr);
    rewrite(bytes.substr(0, bytes.size() / 2));  // truncated
    EXPECT_EQ(db_cache::load(m_inputs), nullptr);
    rewrite("RMCPHSDB");  // header only
    EXPECT_EQ(db_cache::load(m_inputs), nullptr);
    rewrite(std::string(64, '\xff'));
    EXPECT_EQ(db_cache::load(m_inputs), nullptr);
    rewrite(bytes);
    fs::permissions(file, fs::perms::group_write, fs::perm_options::add);  // someone else could have written it
    EXPECT_EQ(db_cache::load(m_inputs), nullptr);
    rewrite(bytes);
    const rmcp::hyperscan::Database ok = db_cache::load(m_inputs);
    EXPECT_NE(ok, nullptr);
}

TEST_F(DbCache, CreatesTheBaseOnlyInsideADirectoryThatExists) {
    const fs::path missing = m_dir / "no-such-home" / ".cache";
    ::setenv("XDG_CACHE_HOME", missing.c_str(), 1);
    db_cache::store(m_inputs, m_db);
    EXPECT_FALSE(fs::exists(m_dir / "no-such-home"));

    const fs::path fresh = m_dir / ".cache";
    ::setenv("XDG_CACHE_HOME", fresh.c_str(), 1);
    db_cache::store(m_inputs, m_db);
    EXPECT_TRUE(fs::exists(db_cache::file_for(m_inputs)));
    EXPECT_EQ(fs::status(fresh).permissions() & fs::perms::all, fs::perms::owner_all);
    const rmcp::hyperscan::Database loaded = db_cache::load(m_inputs);
    ASSERT_NE(loaded, nullptr);
}
