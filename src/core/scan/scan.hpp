// `rmcp scan`, per file: which GPU targets a library, binary, code object, rocBLAS Tensile
// file or MIOpen kernel database carries. Headers and tables only: the file is mapped
// read-only and the code objects themselves are never read beyond their ELF headers.
#pragma once

#include "scan/bundle.hpp"
#include "scan/bytes.hpp"
#include "scan/code_object.hpp"

#include "root/root.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp::scan {

enum class FileKind {
    host_elf,           // ELF for the CPU; code in .hip_fatbin or embedded elsewhere
    code_object,        // an AMDGPU ELF on its own (.co, .hsaco)
    bundle,             // a plain offload bundle file
    compressed_bundle,  // a CCOB file
    tensile_data,       // rocBLAS TensileLibrary*.dat: target from its name
    miopen_kdb,         // MIOpen kernel database: target from its name
    other,
};
std::string_view file_kind_name(FileKind k);

// One piece of device code found in a file (or, for name-only kinds, the file itself).
struct FoundCode {
    std::string container;     // ".hip_fatbin", another section name, "file", or "name"
    std::string id;            // offload-bundle entry id; empty for a bare code object
    std::string target;        // target id ("gfx90a:xnack+"); empty for host entries
    std::uint64_t offset = 0;  // absolute in the file; inside the inflated bundle when compressed
    std::uint64_t size = 0;
    std::optional<std::uint64_t> bundle_offset;  // the bundle (or CCOB) holding it
    Compression compression = Compression::none;
    int code_object_version = 0;  // 0: not read (or unknown)
};

struct FileScan {
    std::string path;
    FileKind kind = FileKind::other;
    std::uint64_t size = 0;
    std::size_t bundles = 0;
    std::vector<FoundCode> code;
    std::vector<Warning> warnings;
    bool unreadable = false;  // could not be opened; warnings say why

    // De-duplicated device target ids (host entries excluded), in target order
    // (target_order_less: gfx700 before gfx1010).
    [[nodiscard]] std::vector<std::string> targets() const;
};

// Scans one file at `path` (a path on this machine).
FileScan scan_file(const std::string& path, const ScanLimits& limits = {});
// Scans the regular file `fd` refers to (opened by Root); `shown` is its path in the report.
FileScan scan_fd(int fd, const std::string& shown, const ScanLimits& limits = {});

// Scans bytes already in memory (tests and the fuzz target); `name` decides name-only kinds.
// `mapping`, when given, is the mapping `data` comes from: swept ranges are released.
FileScan scan_image(Bytes data, std::string_view name, const ScanLimits& limits = {},
                    const MappedFile* mapping = nullptr);

// Target named by a Tensile or kdb file name, e.g. "TensileLibrary_lazy_gfx1030.dat" →
// gfx1030, "gfx90a6e.kdb" → gfx90a (MIOpen appends the CU count, in hex above 64).
std::optional<std::string> target_from_file_name(std::string_view name, FileKind kind);
// Which name-only kind a file name is, if any.
std::optional<FileKind> name_only_kind(std::string_view name);

// Whether a directory walk should scan this file name (.so*, .co, .hsaco, Tensile .dat, .kdb).
bool is_scannable_name(std::string_view name);

// Files to scan under `path` (itself when it is a file), recursively, de-duplicated by
// their real path inside `root` (Root::canonical), sorted. Problems (unreadable
// directories, link loops) become warnings.
std::vector<std::string> collect_files(const Root& root, const std::string& path, std::vector<std::string>& problems);

// The order targets are listed in: by generation, then minor version and stepping
// (gfx700 < gfx906 < gfx90a < gfx1010 < gfx1100), the way ROCm lists them; a target id's
// features (":xnack-") after its processor. Names that are no gfx target sort after, as text.
bool target_order_less(std::string_view a, std::string_view b);

}  // namespace rmcp::scan
