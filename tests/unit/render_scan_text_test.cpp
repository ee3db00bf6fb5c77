// `rmcp scan`'s text (render/scan_text.cpp): files mode (targets per file, code objects with
// --verbose) and installations mode (libraries, then a coverage verdict per GPU and library).
#include "render/scan_text.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace rmcp::scan {
namespace {

std::string pad44(const std::string& s) { return s + std::string(44 - s.size(), ' '); }

FileScan torch_file() {
    FileScan f;
    f.path = "/x/libtorch_hip.so";
    f.kind = FileKind::host_elf;
    FoundCode plain;
    plain.container = ".hip_fatbin";
    plain.id = "hipv4-amdgcn-amd-amdhsa--gfx1030";
    plain.target = "gfx1030";
    plain.offset = 4096;
    plain.size = 100;
    plain.code_object_version = 5;
    FoundCode host;
    host.container = ".hip_fatbin";
    host.id = "host-x86_64-unknown-linux-gnu-";
    host.offset = 8192;
    FoundCode packed;
    packed.container = ".hip_fatbin";
    packed.id = "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+";
    packed.target = "gfx90a:xnack+";
    packed.offset = 16;
    packed.size = 200;
    packed.bundle_offset = 12288;
    packed.compression = Compression::zstd;
    f.code = {plain, host, packed};
    return f;
}

TEST(ScanText, FilesModeListsEachFilesTargets) {
    ScanReport r;
    r.files.push_back(torch_file());
    FileScan empty;
    empty.path = "/y/readme";
    r.files.push_back(empty);
    // Targets in target order (gfx90a before gfx1030) and de-duplicated; the host entry has
    // none. Only files with GPU code are listed, then the totals.
    EXPECT_EQ(render::scan_text(r, false, false, Style(false)), "/x/libtorch_hip.so  host-elf  gfx90a:xnack+ gfx1030\n"
                                                                "scanned 2 files, 1 with GPU code\n");
    EXPECT_EQ(render::scan_totals(r), "scanned 2 files, 1 with GPU code");
}

TEST(ScanText, TargetsSortByGenerationNotAsText) {
    std::vector<std::string> targets{"gfx1010",       "gfx90a",  "gfx700", "gfx1100", "gfx906",
                                     "gfx90a:xnack-", "gfx1035", "gfx701", "gfx942",  "other"};
    std::sort(targets.begin(), targets.end(), [](const auto& a, const auto& b) { return target_order_less(a, b); });
    EXPECT_EQ(targets, (std::vector<std::string>{"gfx700", "gfx701", "gfx906", "gfx90a", "gfx90a:xnack-", "gfx942",
                                                 "gfx1010", "gfx1035", "gfx1100", "other"}));
}

TEST(ScanText, FilesModeVerboseListsEachCodeObject) {
    ScanReport r;
    r.files.push_back(torch_file());
    FileScan bare;
    bare.path = "/k.hsaco";
    bare.kind = FileKind::code_object;
    FoundCode co;
    co.container = "file";
    co.target = "gfx1100";
    co.size = 64;
    bare.code = {co};
    r.files.push_back(bare);
    EXPECT_EQ(render::scan_text(r, false, true, Style(false)),
              "/x/libtorch_hip.so  host-elf  gfx90a:xnack+ gfx1030\n"
              "    " +
                  pad44("hipv4-amdgcn-amd-amdhsa--gfx1030") +
                  " offset 4096 size 100  (.hip_fatbin, code object v5)\n"
                  "    " +
                  pad44("host-x86_64-unknown-linux-gnu-") +
                  " offset 8192 size 0  (.hip_fatbin)\n"
                  "    " +
                  pad44("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+") +
                  " inflated offset 16 size 200 in zstd bundle at 12288  (.hip_fatbin)\n"
                  "/k.hsaco  code-object  gfx1100\n"
                  // A bare code object has no bundle id: its target names it.
                  "    " +
                  pad44("gfx1100") +
                  " offset 0 size 64  (file)\n"
                  "scanned 2 files, 2 with GPU code\n");
}

ScanReport installations_report() {
    ScanReport r;
    InstallationScan torch;
    torch.kind = "torch";
    torch.path = "/venv/torch";
    torch.libraries = {{"torch_hip", {"/venv/torch/lib/libtorch_hip.so"}, {"gfx1030", "gfx1100"}},
                       {"rocblas", {"/venv/torch/lib/librocblas.so"}, {}}};
    InstallationScan rocm;
    rocm.kind = "rocm";
    rocm.path = "/opt/rocm";
    rocm.libraries = {{"rocblas", {"/opt/rocm/lib/librocblas.so"}, {}}};
    r.installations = {torch, rocm};

    Coverage covered;
    covered.node = 1;
    covered.gpu_target = "gfx1030";
    covered.effective_target = "gfx1030";
    covered.installation = "/venv/torch";
    covered.library = "torch_hip";
    covered.covered = true;
    covered.covered_by = "gfx1030";

    Coverage same_family;
    same_family.node = 2;
    same_family.gpu_target = "gfx1031";
    same_family.effective_target = "gfx1031";
    same_family.installation = "/venv/torch";
    same_family.library = "torch_hip";
    same_family.nearest = "gfx1030";
    same_family.override_value = "10.3.0";
    same_family.reason = "unused when an override is proposed";

    Coverage none = same_family;
    none.library = "rocblas";
    none.nearest.reset();
    none.override_value.reset();
    none.reason = "no code for gfx1031 or its family";

    Coverage stale;
    stale.gpu_target = "gfx1100";
    stale.effective_target = "gfx1030";
    stale.installation = "/venv/torch";
    stale.library = "torch_hip";
    stale.remove_override = true;
    stale.reason = "gfx1100 is covered once HSA_OVERRIDE_GFX_VERSION is removed";
    r.coverage = {covered, same_family, none, stale};
    return r;
}

TEST(ScanText, InstallationsModeWithVerdicts) {
    EXPECT_EQ(render::scan_text(installations_report(), true, false, Style(false)),
              "PyTorch /venv/torch\n"
              "  torch_hip  gfx1030 gfx1100\n"  // rocblas has no GPU code: left out
              "ROCm /opt/rocm\n"
              "  (no library with GPU code)\n"
              "\nGPU coverage\n"
              "  GPU node 1 gfx1030\n"
              "    /venv/torch torch_hip: covered by gfx1030\n"
              "  GPU node 2 gfx1031\n"
              "    /venv/torch torch_hip: not covered; nearest gfx1030: HSA_OVERRIDE_GFX_VERSION=10.3.0\n"
              // Same GPU again: no second heading.
              "    /venv/torch rocblas: not covered; no code for gfx1031 or its family\n"
              "  GPU node ? gfx1100 (runs as gfx1030)\n"
              "    /venv/torch torch_hip: not covered; gfx1100 is covered once HSA_OVERRIDE_GFX_VERSION is removed\n");
}

TEST(ScanText, InstallationsModeVerboseShowsEmptyLibrariesAndFiles) {
    ScanReport r = installations_report();
    r.installations.resize(1);
    r.coverage.clear();
    // Names padded to the longest ("torch_hip", 9 characters).
    EXPECT_EQ(render::scan_text(r, true, true, Style(false)),
              "PyTorch /venv/torch\n"
              "  torch_hip  gfx1030 gfx1100\n"
              "               /venv/torch/lib/libtorch_hip.so\n"
              "  rocblas    (no GPU code)\n"
              "               /venv/torch/lib/librocblas.so\n"
              "\nGPU coverage\n"
              "  nothing to assess (no GPU detected, or no library with GPU code)\n");
}

TEST(ScanText, NoInstallations) {
    EXPECT_EQ(render::scan_text(ScanReport{}, true, false, Style(false)),
              "No ROCm or PyTorch installation found.\n"
              "\nGPU coverage\n"
              "  nothing to assess (no GPU detected, or no library with GPU code)\n");
}

TEST(ScanText, VerdictColoursWhenEnabled) {
    const auto text = render::scan_text(installations_report(), true, false, Style(true));
    EXPECT_NE(text.find("\x1b[32mcovered\x1b[0m by gfx1030"), std::string::npos);
    EXPECT_NE(text.find("\x1b[33mnot covered\x1b[0m; nearest gfx1030"), std::string::npos);
    EXPECT_NE(text.find("\x1b[31mnot covered\x1b[0m; no code for gfx1031"), std::string::npos);
    EXPECT_NE(text.find("\x1b[33mnot covered\x1b[0m; gfx1100 is covered"), std::string::npos);
}

}  // namespace
}  // namespace rmcp::scan
