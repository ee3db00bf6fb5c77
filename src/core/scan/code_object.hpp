// AMDGPU code objects and target ids: what an ELF with e_machine EM_AMDGPU says about the
// GPU it was built for, and how offload-bundle entry ids name their target.
#pragma once

#include "scan/bytes.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp::scan {

// Something wrong in a file, at a byte offset (absolute in the file being scanned).
struct Warning {
    std::uint64_t offset = 0;
    std::string message;
};

// "gfx90a:sramecc+:xnack-" → processor "gfx90a", features {"sramecc+", "xnack-"}.
struct TargetId {
    std::string processor;
    std::vector<std::string> features;  // each "name+" or "name-", in the order written
    [[nodiscard]] std::string str() const;
};
// nullopt unless the processor looks like "gfx…" (a generic name "gfx10-3-generic" included).
std::optional<TargetId> parse_target_id(std::string_view text);

// Offload-bundle entry id: <kind>-<arch>-<vendor>-<os>-<env>[-<target id>]
// (clang OffloadTargetInfo). "hipv4-amdgcn-amd-amdhsa--gfx1030" → kind "hipv4",
// triple "amdgcn-amd-amdhsa-", target "gfx1030"; "host-x86_64-unknown-linux" → host, no target.
struct EntryId {
    std::string kind;
    std::string triple;
    std::string target;  // target id with features; empty for host entries
};
EntryId parse_entry_id(std::string_view id);

// Processor name for an EF_AMDGPU_MACH value (LLVM BinaryFormat/ELF.h); nullopt when unknown.
std::optional<std::string_view> amdgpu_mach_name(std::uint32_t mach);
// The inverse, for tests and for naming targets found only in file names.
std::optional<std::uint32_t> amdgpu_mach_value(std::string_view processor);
// Every processor name the table knows (for splitting names like "gfx90a6e.kdb").
std::vector<std::string_view> known_processors();

struct CodeObjectInfo {
    TargetId target;
    int code_object_version = 0;  // 2..6; 0 when the ABI version byte is unknown
    std::uint32_t e_flags = 0;
};

inline constexpr std::uint16_t k_em_amdgpu = 224;

// True when `b` starts with an ELF64 little-endian header for EM_AMDGPU.
bool is_amdgpu_elf(Bytes b);
// Reads the target from an AMDGPU code object: e_flags (v3+) or the "AMD" ISA note (v2).
// `base` is the object's offset in the scanned file, for warnings. Only headers, program
// headers and notes are read.
std::optional<CodeObjectInfo> read_code_object(Bytes b, std::uint64_t base, std::vector<Warning>& warnings);

}  // namespace rmcp::scan
