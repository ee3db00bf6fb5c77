// AMDGPU code objects (scan/code_object.cpp): ELF headers built in memory. What
// scan_bundle_test.cpp already checks (a few flag values, entry ids) is not repeated here:
// the whole EF_AMDGPU_MACH table of docs/domain.md, what is not an AMDGPU ELF, the ABI
// version byte, the v2 ISA note and target-id parsing.
#include "scan/code_object.hpp"

#include <gtest/gtest.h>

#include <elf.h>

#include <algorithm>
#include <cstring>

namespace rmcp::scan {
namespace {

using Buf = std::vector<unsigned char>;

Buf elf(std::uint32_t e_flags, std::uint8_t abi_version, std::uint8_t osabi = 64, std::uint16_t machine = 224) {
    Buf b(sizeof(Elf64_Ehdr), 0);
    Elf64_Ehdr h{};
    std::memcpy(h.e_ident, ELFMAG, SELFMAG);
    h.e_ident[EI_CLASS] = ELFCLASS64;
    h.e_ident[EI_DATA] = ELFDATA2LSB;
    h.e_ident[EI_VERSION] = EV_CURRENT;
    h.e_ident[EI_OSABI] = osabi;
    h.e_ident[EI_ABIVERSION] = abi_version;
    h.e_type = ET_DYN;
    h.e_machine = machine;
    h.e_version = EV_CURRENT;
    h.e_flags = e_flags;
    h.e_ehsize = sizeof(Elf64_Ehdr);
    std::memcpy(b.data(), &h, sizeof h);
    return b;
}

Bytes view(const Buf& b) { return {b.data(), b.size()}; }

template <class T>
void put(Buf& b, std::size_t at, T v) {
    std::memcpy(b.data() + at, &v, sizeof v);
}

// A code object v2: e_flags 0, one PT_NOTE segment holding the "AMD" ISA-version note.
Buf v2_with_note(std::uint32_t major, std::uint32_t minor, std::uint32_t stepping) {
    Buf b = elf(0, 0);
    const std::size_t phoff = b.size();
    b.resize(phoff + sizeof(Elf64_Phdr) + 12 + 4 + 16, 0);
    const std::size_t note = phoff + sizeof(Elf64_Phdr);
    put<std::uint64_t>(b, offsetof(Elf64_Ehdr, e_phoff), phoff);
    put<std::uint16_t>(b, offsetof(Elf64_Ehdr, e_phnum), 1);
    put<std::uint32_t>(b, phoff + offsetof(Elf64_Phdr, p_type), PT_NOTE);
    put<std::uint64_t>(b, phoff + offsetof(Elf64_Phdr, p_offset), note);
    put<std::uint64_t>(b, phoff + offsetof(Elf64_Phdr, p_filesz), 12 + 4 + 16);
    put<std::uint32_t>(b, note, 4);       // namesz: "AMD\0"
    put<std::uint32_t>(b, note + 4, 16);  // descsz
    put<std::uint32_t>(b, note + 8, 3);   // NT_AMD_HSA_ISA_VERSION
    std::memcpy(b.data() + note + 12, "AMD", 4);
    put<std::uint32_t>(b, note + 16 + 4, major);
    put<std::uint32_t>(b, note + 16 + 8, minor);
    put<std::uint32_t>(b, note + 16 + 12, stepping);
    return b;
}

TEST(CodeObject, EveryMachValueOfTheDomainTable) {
    // docs/domain.md: AMDGPU code objects, EF_AMDGPU_MACH.
    const std::pair<std::uint32_t, std::string_view> table[] = {
        {0x033, "gfx1010"},         {0x034, "gfx1011"},         {0x035, "gfx1012"},       {0x036, "gfx1030"},
        {0x037, "gfx1031"},         {0x038, "gfx1032"},         {0x03d, "gfx1035"},       {0x03e, "gfx1034"},
        {0x041, "gfx1100"},         {0x044, "gfx1103"},         {0x045, "gfx1036"},       {0x046, "gfx1101"},
        {0x047, "gfx1102"},         {0x048, "gfx1200"},         {0x04a, "gfx1151"},       {0x04e, "gfx1201"},
        {0x052, "gfx10-1-generic"}, {0x053, "gfx10-3-generic"}, {0x054, "gfx11-generic"}, {0x059, "gfx12-generic"},
    };
    const auto known = known_processors();
    for (const auto& [mach, name] : table) {
        EXPECT_EQ(amdgpu_mach_name(mach), name) << std::hex << mach;
        EXPECT_EQ(amdgpu_mach_value(name), mach) << name;
        EXPECT_NE(std::find(known.begin(), known.end(), name), known.end()) << name;
        // And read back from an ELF header (code object v5: ABI version byte 3).
        std::vector<Warning> w;
        const auto info = read_code_object(view(elf(mach, 3)), 0, w);
        ASSERT_TRUE(info) << name;
        EXPECT_EQ(info->target.str(), name);
        EXPECT_EQ(info->code_object_version, 5);
        EXPECT_EQ(info->e_flags, mach);
        EXPECT_TRUE(w.empty());
    }
    EXPECT_FALSE(amdgpu_mach_name(0));
    EXPECT_FALSE(amdgpu_mach_value("gfx9999"));
}

TEST(CodeObject, WhatIsNotAnAmdgpuElf) {
    EXPECT_TRUE(is_amdgpu_elf(view(elf(0x036, 2))));
    EXPECT_FALSE(is_amdgpu_elf(view(elf(0x036, 2, 64, EM_X86_64))));
    Buf elf32 = elf(0x036, 2);
    elf32[EI_CLASS] = ELFCLASS32;
    EXPECT_FALSE(is_amdgpu_elf(view(elf32)));
    Buf big_endian = elf(0x036, 2);
    big_endian[EI_DATA] = ELFDATA2MSB;
    EXPECT_FALSE(is_amdgpu_elf(view(big_endian)));
    Buf short_header = elf(0x036, 2);
    short_header.resize(sizeof(Elf64_Ehdr) - 1);
    EXPECT_FALSE(is_amdgpu_elf(view(short_header)));
    EXPECT_FALSE(is_amdgpu_elf(Bytes{}));
    std::vector<Warning> w;
    EXPECT_FALSE(read_code_object(view(short_header), 0, w));
    EXPECT_TRUE(w.empty());  // not a code object at all: nothing to warn about
}

TEST(CodeObject, AbiVersionByteGivesTheCodeObjectVersion) {
    std::vector<Warning> w;
    for (std::uint8_t abi = 0; abi <= 4; ++abi) {
        const auto info = read_code_object(view(elf(0x036, abi)), 0, w);
        ASSERT_TRUE(info);
        EXPECT_EQ(info->code_object_version, abi + 2);  // ELFABIVERSION_AMDGPU_HSA_V2..V6
    }
    // An unknown version byte, or another OS ABI: the version is unknown (0), the target is not.
    auto info = read_code_object(view(elf(0x036, 9)), 0, w);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->code_object_version, 0);
    EXPECT_EQ(info->target.str(), "gfx1030");
    info = read_code_object(view(elf(0x036, 2, 0)), 0, w);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->code_object_version, 0);
    EXPECT_TRUE(w.empty());
}

TEST(CodeObject, V4FeatureSelectors) {
    std::vector<Warning> w;
    // gfx90a (0x03f) with sramecc off (0x800) and xnack on (0x300): alphabetical order.
    auto info = read_code_object(view(elf(0x03f | 0x800 | 0x300, 2)), 0, w);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->target.str(), "gfx90a:sramecc-:xnack+");
    // "any" (0x100 for xnack in v4) names no feature.
    info = read_code_object(view(elf(0x03f | 0x100, 2)), 0, w);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->target.str(), "gfx90a");
}

TEST(CodeObject, V2TargetFromTheIsaNote) {
    std::vector<Warning> w;
    auto info = read_code_object(view(v2_with_note(9, 0, 6)), 0, w);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->target.str(), "gfx906");
    info = read_code_object(view(v2_with_note(10, 3, 0)), 0, w);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->target.str(), "gfx1030");
    info = read_code_object(view(v2_with_note(9, 0, 10)), 0, w);  // stepping 10 is "a"
    ASSERT_TRUE(info);
    EXPECT_EQ(info->target.str(), "gfx90a");
    EXPECT_TRUE(w.empty());

    // EF_AMDGPU_MACH 0 and no note: a warning at the object's offset in the file.
    EXPECT_FALSE(read_code_object(view(elf(0, 0)), 4096, w));
    ASSERT_EQ(w.size(), 1U);
    EXPECT_EQ(w[0].offset, 4096U);
    EXPECT_NE(w[0].message.find("names no target"), std::string::npos);
    w.clear();
    // A note with major 0 names no valid target.
    EXPECT_FALSE(read_code_object(view(v2_with_note(0, 0, 0)), 0, w));
    ASSERT_FALSE(w.empty());
    EXPECT_NE(w[0].message.find("ISA note names no valid target"), std::string::npos);
}

TEST(CodeObject, TargetIds) {
    const auto t = parse_target_id("gfx90a:sramecc+:xnack-");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->processor, "gfx90a");
    EXPECT_EQ(t->features, (std::vector<std::string>{"sramecc+", "xnack-"}));
    EXPECT_EQ(t->str(), "gfx90a:sramecc+:xnack-");
    EXPECT_EQ(parse_target_id("gfx10-3-generic")->str(), "gfx10-3-generic");
    EXPECT_FALSE(parse_target_id("gfx"));
    EXPECT_FALSE(parse_target_id("gfx90A"));  // upper case is not a processor name
    EXPECT_FALSE(parse_target_id("gfx90a:"));
    EXPECT_FALSE(parse_target_id("gfx90a:Xnack+"));
    EXPECT_EQ((TargetId{"gfx1100", {}}.str()), "gfx1100");
}

}  // namespace
}  // namespace rmcp::scan
