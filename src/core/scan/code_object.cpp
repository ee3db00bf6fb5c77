#include "scan/code_object.hpp"

#include <fmt/format.h>

#include <elf.h>

#include <algorithm>

namespace rmcp::scan {

namespace {

struct MachRow {
    std::uint32_t value;
    std::string_view name;
};
// EF_AMDGPU_MACH values: LLVM llvm/include/llvm/BinaryFormat/ELF.h and AMDGPUUsage
// "AMDGPU EF_AMDGPU_MACH Values" (docs/domain.md lists the RDNA subset).
constexpr MachRow k_mach[] = {
    {0x020, "gfx600"},          {0x021, "gfx601"},          {0x022, "gfx700"},        {0x023, "gfx701"},
    {0x024, "gfx702"},          {0x025, "gfx703"},          {0x026, "gfx704"},        {0x028, "gfx801"},
    {0x029, "gfx802"},          {0x02a, "gfx803"},          {0x02b, "gfx810"},        {0x02c, "gfx900"},
    {0x02d, "gfx902"},          {0x02e, "gfx904"},          {0x02f, "gfx906"},        {0x030, "gfx908"},
    {0x031, "gfx909"},          {0x032, "gfx90c"},          {0x033, "gfx1010"},       {0x034, "gfx1011"},
    {0x035, "gfx1012"},         {0x036, "gfx1030"},         {0x037, "gfx1031"},       {0x038, "gfx1032"},
    {0x039, "gfx1033"},         {0x03a, "gfx602"},          {0x03b, "gfx705"},        {0x03c, "gfx805"},
    {0x03d, "gfx1035"},         {0x03e, "gfx1034"},         {0x03f, "gfx90a"},        {0x040, "gfx940"},
    {0x041, "gfx1100"},         {0x042, "gfx1013"},         {0x043, "gfx1150"},       {0x044, "gfx1103"},
    {0x045, "gfx1036"},         {0x046, "gfx1101"},         {0x047, "gfx1102"},       {0x048, "gfx1200"},
    {0x049, "gfx1250"},         {0x04a, "gfx1151"},         {0x04b, "gfx941"},        {0x04c, "gfx942"},
    {0x04e, "gfx1201"},         {0x04f, "gfx950"},          {0x050, "gfx1310"},       {0x051, "gfx9-generic"},
    {0x052, "gfx10-1-generic"}, {0x053, "gfx10-3-generic"}, {0x054, "gfx11-generic"}, {0x055, "gfx1152"},
    {0x058, "gfx1153"},         {0x059, "gfx12-generic"},   {0x05a, "gfx1251"},       {0x05b, "gfx12-5-generic"},
    {0x05c, "gfx1172"},         {0x05d, "gfx1170"},         {0x05e, "gfx1171"},       {0x05f, "gfx9-4-generic"},
};

constexpr std::uint32_t k_ef_amdgpu_mach = 0x0ff;
// Code-object v3 feature bits, and the v4+ two-bit selectors (AMDGPUUsage "ELF Header").
constexpr std::uint32_t k_xnack_v3 = 0x100;
constexpr std::uint32_t k_sramecc_v3 = 0x200;
constexpr std::uint32_t k_xnack_v4_mask = 0x300;
constexpr std::uint32_t k_xnack_v4_off = 0x200;
constexpr std::uint32_t k_xnack_v4_on = 0x300;
constexpr std::uint32_t k_sramecc_v4_mask = 0xc00;
constexpr std::uint32_t k_sramecc_v4_off = 0x800;
constexpr std::uint32_t k_sramecc_v4_on = 0xc00;
constexpr std::uint8_t k_osabi_amdgpu_hsa = 64;
// Code-object v2 note: owner "AMD", type NT_AMD_HSA_ISA_VERSION (3), descriptor
// {u16 vendor_size, u16 arch_size, u32 major, u32 minor, u32 stepping, names...}.
constexpr std::uint32_t k_nt_amd_hsa_isa_version = 3;

bool valid_feature(std::string_view f) {
    if (f.size() < 2 || (f.back() != '+' && f.back() != '-')) return false;
    return std::all_of(f.begin(), f.end() - 1, [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
}

// Walks one note area for the "AMD" ISA-version note; `at` is its offset in the object.
std::optional<TargetId> target_from_notes(Bytes notes, std::uint64_t at, std::vector<Warning>& warnings) {
    std::uint64_t pos = 0;
    while (in_bounds(notes.size(), pos, 12)) {
        const auto namesz = *read_le<std::uint32_t>(notes, pos);
        const auto descsz = *read_le<std::uint32_t>(notes, pos + 4);
        const auto type = *read_le<std::uint32_t>(notes, pos + 8);
        const std::uint64_t name_at = pos + 12;
        const std::uint64_t desc_at = name_at + ((std::uint64_t{namesz} + 3) & ~std::uint64_t{3});
        if (!in_bounds(notes.size(), name_at, namesz) || !in_bounds(notes.size(), desc_at, descsz)) break;
        const auto name = as_chars(notes.subspan(static_cast<std::size_t>(name_at), namesz));
        if (type == k_nt_amd_hsa_isa_version && (name == std::string_view("AMD\0", 4) || name == "AMD") &&
            descsz >= 16) {
            const auto major = *read_le<std::uint32_t>(notes, desc_at + 4);
            const auto minor = *read_le<std::uint32_t>(notes, desc_at + 8);
            const auto stepping = *read_le<std::uint32_t>(notes, desc_at + 12);
            if (major == 0 || major > 63 || minor > 15 || stepping > 15) {
                warnings.push_back({at + pos, "code object's ISA note names no valid target"});
                return std::nullopt;
            }
            return TargetId{fmt::format("gfx{}{:x}{:x}", major, minor, stepping), {}};
        }
        pos = desc_at + ((std::uint64_t{descsz} + 3) & ~std::uint64_t{3});
    }
    return std::nullopt;
}

// Code objects before v3 (and the older HSA finalizer format) name their target in an
// "AMD" note, found through PT_NOTE segments or SHT_NOTE sections.
std::optional<TargetId> target_from_v2_note(Bytes obj, std::uint64_t base, std::vector<Warning>& warnings) {
    const auto phoff = read_le<std::uint64_t>(obj, offsetof(Elf64_Ehdr, e_phoff)).value_or(0);
    const auto phnum = read_le<std::uint16_t>(obj, offsetof(Elf64_Ehdr, e_phnum)).value_or(0);
    if (phoff != 0 && in_bounds(obj.size(), phoff, std::uint64_t{phnum} * sizeof(Elf64_Phdr))) {
        for (std::uint16_t i = 0; i < phnum; ++i) {
            const std::uint64_t ph = phoff + std::uint64_t{i} * sizeof(Elf64_Phdr);
            if (read_le<std::uint32_t>(obj, ph + offsetof(Elf64_Phdr, p_type)) != PT_NOTE) continue;
            const auto off = *read_le<std::uint64_t>(obj, ph + offsetof(Elf64_Phdr, p_offset));
            const auto size = *read_le<std::uint64_t>(obj, ph + offsetof(Elf64_Phdr, p_filesz));
            if (const auto notes = sub(obj, off, size)) {
                if (auto t = target_from_notes(*notes, base + off, warnings)) return t;
            } else {
                warnings.push_back({base + ph, "code object's note segment lies outside it"});
            }
        }
    }
    const auto shoff = read_le<std::uint64_t>(obj, offsetof(Elf64_Ehdr, e_shoff)).value_or(0);
    const auto shnum = read_le<std::uint16_t>(obj, offsetof(Elf64_Ehdr, e_shnum)).value_or(0);
    if (shoff != 0 && in_bounds(obj.size(), shoff, std::uint64_t{shnum} * sizeof(Elf64_Shdr))) {
        for (std::uint16_t i = 0; i < shnum; ++i) {
            const std::uint64_t sh = shoff + std::uint64_t{i} * sizeof(Elf64_Shdr);
            if (read_le<std::uint32_t>(obj, sh + offsetof(Elf64_Shdr, sh_type)) != SHT_NOTE) continue;
            const auto off = *read_le<std::uint64_t>(obj, sh + offsetof(Elf64_Shdr, sh_offset));
            const auto size = *read_le<std::uint64_t>(obj, sh + offsetof(Elf64_Shdr, sh_size));
            if (const auto notes = sub(obj, off, size)) {
                if (auto t = target_from_notes(*notes, base + off, warnings)) return t;
            } else {
                warnings.push_back({base + sh, "code object's note section lies outside it"});
            }
        }
    }
    return std::nullopt;
}

}  // namespace

std::string TargetId::str() const {
    std::string out = processor;
    for (const auto& f : features) {
        out += ':';
        out += f;
    }
    return out;
}

std::optional<TargetId> parse_target_id(std::string_view text) {
    if (!text.starts_with("gfx") || text.size() < 4) return std::nullopt;
    TargetId t;
    const auto colon = text.find(':');
    t.processor = std::string(text.substr(0, colon));
    const bool processor_ok = std::all_of(t.processor.begin(), t.processor.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    });
    if (!processor_ok) return std::nullopt;
    if (colon == std::string_view::npos) return t;
    std::string_view rest = text.substr(colon + 1);
    while (true) {
        const auto next = rest.find(':');
        const auto feature = rest.substr(0, next);
        if (!valid_feature(feature)) return std::nullopt;
        t.features.emplace_back(feature);
        if (next == std::string_view::npos) break;
        rest.remove_prefix(next + 1);
    }
    return t;
}

EntryId parse_entry_id(std::string_view id) {
    EntryId e;
    // Split into at most 6 parts on '-': kind, arch, vendor, os, env, target id. The target
    // id may itself contain '-' (gfx10-3-generic), so the sixth part is the rest.
    std::vector<std::string_view> parts;
    std::string_view rest = id;
    while (parts.size() < 5) {
        const auto dash = rest.find('-');
        if (dash == std::string_view::npos) break;
        parts.push_back(rest.substr(0, dash));
        rest.remove_prefix(dash + 1);
    }
    parts.push_back(rest);
    e.kind = std::string(parts.front());
    if (parts.size() == 6) {
        if (parse_target_id(parts[5])) e.target = std::string(parts[5]);
        e.triple = fmt::format("{}-{}-{}-{}", parts[1], parts[2], parts[3], parts[4]);
    } else if (parts.size() > 1) {
        // Older ids have a three-part triple and the processor as the fourth component
        // ("hip-amdgcn-amd-amdhsa-gfx906"): take a trailing gfx name as the target.
        std::string triple;
        for (std::size_t i = 1; i < parts.size(); ++i) {
            if (i + 1 == parts.size() && parse_target_id(parts[i])) {
                e.target = std::string(parts[i]);
                break;
            }
            if (!triple.empty()) triple += '-';
            triple += parts[i];
        }
        e.triple = triple;
    }
    return e;
}

std::optional<std::string_view> amdgpu_mach_name(std::uint32_t mach) {
    for (const auto& row : k_mach)
        if (row.value == mach) return row.name;
    return std::nullopt;
}

std::optional<std::uint32_t> amdgpu_mach_value(std::string_view processor) {
    for (const auto& row : k_mach)
        if (row.name == processor) return row.value;
    return std::nullopt;
}

std::vector<std::string_view> known_processors() {
    std::vector<std::string_view> out;
    for (const auto& row : k_mach) out.push_back(row.name);
    return out;
}

bool is_amdgpu_elf(Bytes b) {
    return has_prefix(b, 0,
                      "\x7f"
                      "ELF") &&
           b.size() >= sizeof(Elf64_Ehdr) && b[EI_CLASS] == ELFCLASS64 && b[EI_DATA] == ELFDATA2LSB &&
           read_le<std::uint16_t>(b, offsetof(Elf64_Ehdr, e_machine)) == k_em_amdgpu;
}

std::optional<CodeObjectInfo> read_code_object(Bytes b, std::uint64_t base, std::vector<Warning>& warnings) {
    if (!is_amdgpu_elf(b)) return std::nullopt;
    CodeObjectInfo info;
    info.e_flags = *read_le<std::uint32_t>(b, offsetof(Elf64_Ehdr, e_flags));
    const std::uint8_t osabi = b[EI_OSABI];
    const std::uint8_t abi_version = b[EI_ABIVERSION];
    // ELFABIVERSION_AMDGPU_HSA_V2..V6 = 0..4 (AMDGPUUsage "ELF Header").
    if (osabi == k_osabi_amdgpu_hsa && abi_version <= 4) info.code_object_version = abi_version + 2;

    const std::uint32_t mach = info.e_flags & k_ef_amdgpu_mach;
    if (mach == 0) {
        // Code object v2 keeps the target in a note, not in e_flags.
        auto target = target_from_v2_note(b, base, warnings);
        if (!target) {
            warnings.push_back({base, "AMDGPU code object names no target (EF_AMDGPU_MACH is 0 and no ISA note)"});
            return std::nullopt;
        }
        info.target = std::move(*target);
        return info;
    }
    const auto name = amdgpu_mach_name(mach);
    if (!name) {
        warnings.push_back({base, fmt::format("AMDGPU code object has unknown EF_AMDGPU_MACH 0x{:03x}", mach)});
        return std::nullopt;
    }
    info.target.processor = std::string(*name);
    if (info.code_object_version == 3) {
        if (info.e_flags & k_sramecc_v3) info.target.features.emplace_back("sramecc+");
        if (info.e_flags & k_xnack_v3) info.target.features.emplace_back("xnack+");
    } else if (info.code_object_version >= 4) {
        // Target ids list features alphabetically (clang TargetID): sramecc before xnack.
        const auto sramecc = info.e_flags & k_sramecc_v4_mask;
        if (sramecc == k_sramecc_v4_on) info.target.features.emplace_back("sramecc+");
        if (sramecc == k_sramecc_v4_off) info.target.features.emplace_back("sramecc-");
        const auto xnack = info.e_flags & k_xnack_v4_mask;
        if (xnack == k_xnack_v4_on) info.target.features.emplace_back("xnack+");
        if (xnack == k_xnack_v4_off) info.target.features.emplace_back("xnack-");
    }
    return info;
}

}  // namespace rmcp::scan
