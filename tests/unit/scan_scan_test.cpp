// Per-file scanning (scan/scan.cpp): which files a walk takes, what their names say, and
// scan_file on real files: name-only kinds, empty and non-regular files, a directory tree
// inside a fixture root with links that loop or repeat.
#include "scan/scan.hpp"

#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>

using namespace rmcp;
using namespace rmcp::scan;
namespace fs = std::filesystem;

namespace {

TEST(ScanNames, TargetsFromTensileAndKdbNames) {
    EXPECT_EQ(target_from_file_name("TensileLibrary_lazy_gfx1030.dat", FileKind::tensile_data), "gfx1030");
    EXPECT_EQ(target_from_file_name("/opt/rocm/lib/rocblas/library/TensileLibrary_gfx90a.dat", FileKind::tensile_data),
              "gfx90a");
    EXPECT_EQ(target_from_file_name("TensileLibrary_gfx1030_fallback.dat", FileKind::tensile_data), "gfx1030");
    EXPECT_EQ(target_from_file_name("TensileLibrary_gfx9999.dat", FileKind::tensile_data), std::nullopt);
    EXPECT_EQ(target_from_file_name("gfx1030_30.kdb", FileKind::miopen_kdb), "gfx1030");
    EXPECT_EQ(target_from_file_name("gfx90a6e.kdb", FileKind::miopen_kdb), "gfx90a");
    EXPECT_EQ(target_from_file_name("gfx90a_xx.kdb", FileKind::miopen_kdb), std::nullopt);
    EXPECT_EQ(target_from_file_name("libfoo.so", FileKind::host_elf), std::nullopt);
}

TEST(ScanNames, WhichFilesAWalkTakes) {
    EXPECT_EQ(name_only_kind("/x/gfx1100_48.kdb"), FileKind::miopen_kdb);
    EXPECT_EQ(name_only_kind("TensileLibrary_lazy_gfx1100.dat"), FileKind::tensile_data);
    EXPECT_EQ(name_only_kind("other.dat"), std::nullopt);
    for (const char* yes : {"libtorch_hip.so", "librocblas.so.4.2", "kernel.co", "k.hsaco", "gfx1030_30.kdb",
                            "TensileLibrary_gfx1030.dat"})
        EXPECT_TRUE(is_scannable_name(yes)) << yes;
    for (const char* no : {"libfoo.a", "README", "soname.txt", "library.dat", "x.so~backup"})
        EXPECT_FALSE(is_scannable_name(no)) << no;
    EXPECT_EQ(file_kind_name(FileKind::compressed_bundle), "compressed-bundle");
}

class ScanFiles : public ::testing::Test {
protected:
    void SetUp() override {
        // A copy of a fixture's torch install (the fixture itself is never written).
        const fs::path lib = "home/alex/venv/lib/python3.12/site-packages/torch/lib";
        fs::create_directories(m_dir / lib);
        fs::copy_file(fs::path(RMCP_SOURCE_DIR) / "tests/fixtures/rx7900xtx-gfx1100" / lib / "libtorch_hip.so",
                      m_dir / lib / "libtorch_hip.so");
        m_lib = "/" + lib.string();
        write(m_lib + "/rocblas/library/TensileLibrary_lazy_gfx1100.dat", "tensile");
        write(m_lib + "/miopen/gfx1100_48.kdb", "kdb");
        write(m_lib + "/README.txt", "not scanned");
        fs::create_directory_symlink(".", m_dir / m_lib.substr(1) / "loop");                   // a loop
        fs::create_symlink("libtorch_hip.so", m_dir / m_lib.substr(1) / "libtorch_hip.so.2");  // the same file again
        auto root = Root::open(m_dir);
        ASSERT_TRUE(root.ok()) << root.error().message();
        m_root.emplace(std::move(*root));
    }
    void write(const std::string& logical, const std::string& text) {
        const fs::path p = m_dir / logical.substr(1);
        fs::create_directories(p.parent_path());
        std::ofstream(p) << text;
    }

    testing_support::ScratchDir m_scratch{"scan"};
    fs::path m_dir = m_scratch.path();
    std::string m_lib;
    std::optional<Root> m_root;
};

TEST_F(ScanFiles, AWalkTakesEachScannableFileOnceAndSurvivesLoops) {
    std::vector<std::string> problems;
    const auto files = collect_files(*m_root, m_lib, problems);
    EXPECT_EQ(files, (std::vector<std::string>{m_lib + "/libtorch_hip.so", m_lib + "/miopen/gfx1100_48.kdb",
                                               m_lib + "/rocblas/library/TensileLibrary_lazy_gfx1100.dat"}));
    // A single file is itself; a missing one is a problem, not a crash.
    EXPECT_EQ(collect_files(*m_root, m_lib + "/libtorch_hip.so.2", problems),
              (std::vector<std::string>{m_lib + "/libtorch_hip.so"}));
    const auto before = problems.size();
    EXPECT_TRUE(collect_files(*m_root, "/no/such/dir", problems).empty());
    EXPECT_EQ(problems.size(), before + 1);
}

TEST_F(ScanFiles, NameOnlyKindsTakeTheirTargetFromTheName) {
    const auto dat = scan_file((m_dir / m_lib.substr(1) / "rocblas/library/TensileLibrary_lazy_gfx1100.dat").string());
    EXPECT_EQ(dat.kind, FileKind::tensile_data);
    EXPECT_EQ(dat.targets(), (std::vector<std::string>{"gfx1100"}));
    const auto kdb = scan_file((m_dir / m_lib.substr(1) / "miopen/gfx1100_48.kdb").string());
    EXPECT_EQ(kdb.kind, FileKind::miopen_kdb);
    EXPECT_EQ(kdb.targets(), (std::vector<std::string>{"gfx1100"}));
}

TEST_F(ScanFiles, EmptyMissingAndNonRegularFilesHaveNoCode) {
    const auto empty = scan_file((m_dir / m_lib.substr(1) / "libtorch_hip.so").string());
    EXPECT_FALSE(empty.unreadable);
    EXPECT_EQ(empty.size, 0U);
    EXPECT_TRUE(empty.code.empty());
    EXPECT_TRUE(empty.targets().empty());

    const auto missing = scan_file((m_dir / "nope.so").string());
    EXPECT_TRUE(missing.unreadable);
    ASSERT_FALSE(missing.warnings.empty());

    const auto dir = scan_file(m_dir.string());
    EXPECT_TRUE(dir.unreadable);
    EXPECT_TRUE(dir.code.empty());
}

}  // namespace
