// Clang offload bundles, plain ("__CLANG_OFFLOAD_BUNDLE__") and compressed ("CCOB").
//
// Plain layout (clang/lib/Driver/OffloadBundler.cpp, BinaryFileHandler; all little-endian):
//   magic[24], u64 entry count, then per entry u64 offset (from the bundle start),
//   u64 size, u64 id length, id bytes; then the entries' contents.
// Compressed layout (same file, CompressedOffloadBundle): "CCOB", u16 version, u16 method
//   (0 zlib, 1 zstd), then v1: u32 uncompressed size; v2: u32 total size, u32 uncompressed
//   size; v3: u64 total size, u64 uncompressed size; then u64 truncated MD5, then the
//   compressed plain bundle. Only as much is inflated as the entry table needs, under a cap.
#pragma once

#include "scan/bytes.hpp"
#include "scan/code_object.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp::scan {

// Limits that keep hostile inputs from costing time or memory.
struct ScanLimits {
    std::uint64_t max_entries = 65536;                              // real bundles hold tens of entries
    std::uint64_t max_entry_id = 4096;                              // real ids are ~40 bytes
    std::uint64_t max_inflated = std::uint64_t{1} << 20;            // bytes of a CCOB inflated to read its table
    std::uint64_t embedded_search_limit = std::uint64_t{64} << 20;  // per file; 0 = no limit
    std::uint64_t max_bundles_per_region = 100000;
    bool sweep_with_fatbin = false;  // also sweep data sections of files that have .hip_fatbin
    // Also sweep .data.rel.ro: data the dynamic linker relocates (pointer tables, vtables).
    // A code object is a byte array without pointers, which compilers put in .rodata or
    // .data; relocated data is a fifth of a big C++ library's data (libamd_comgr: 2.8 MB).
    bool sweep_relocated_data = false;
    // false: never sweep data sections (headers, section tables and .hip_fatbin only). doctor
    // runs this way: runtimes' raw blit kernels are not what a coverage rule asks about, and
    // a CPU torch's libtorch_cpu.so (hundreds of MB, no .hip_fatbin) would cost a 64 MiB sweep.
    bool sweep_data_sections = true;
};

inline constexpr std::string_view k_bundle_magic = "__CLANG_OFFLOAD_BUNDLE__";
inline constexpr std::string_view k_compressed_magic = "CCOB";

enum class Compression { none, zstd, zlib };
std::string_view compression_name(Compression c);

struct BundleEntry {
    std::string id;  // as stored; bytes outside printable ASCII escaped as \xNN
    EntryId parsed;
    std::uint64_t offset = 0;  // plain bundle: absolute in the file; compressed: in the inflated bundle
    std::uint64_t size = 0;
    std::optional<CodeObjectInfo> code_object;  // from the entry's ELF header, when it could be read
};

struct Bundle {
    std::uint64_t offset = 0;  // absolute start in the file
    std::uint64_t extent = 0;  // bytes it occupies in the file; 0 when unknown
    Compression compression = Compression::none;
    std::uint16_t compressed_version = 0;
    std::uint64_t uncompressed_size = 0;  // as claimed by a CCOB header
    std::vector<BundleEntry> entries;
};

// Parses the bundle that starts at data[0] (either magic); `base` is data[0]'s offset in
// the file. Problems become warnings; nullopt when nothing usable was found.
std::optional<Bundle> parse_bundle(Bytes data, std::uint64_t base, const ScanLimits& limits,
                                   std::vector<Warning>& warnings);

}  // namespace rmcp::scan
