// Offload bundles and code objects built by hand: well-formed, truncated, corrupted and
// hostile. Every hostile case must end in warnings, never a crash or an out-of-bounds read
// (the ASan preset runs these).
#include "scan/bundle.hpp"
#include "scan/code_object.hpp"
#include "scan/scan.hpp"

#include <gtest/gtest.h>
#include <zstd.h>

#include <elf.h>

#include <cstring>
#include <string>
#include <vector>

using namespace rmcp::scan;

namespace {

using Buf = std::vector<unsigned char>;

void put_u64(Buf& b, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<unsigned char>(v >> (8 * i)));
}
void put_u32(Buf& b, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<unsigned char>(v >> (8 * i)));
}
void put_u16(Buf& b, std::uint16_t v) {
    for (int i = 0; i < 2; ++i) b.push_back(static_cast<unsigned char>(v >> (8 * i)));
}
void put_str(Buf& b, std::string_view s) { b.insert(b.end(), s.begin(), s.end()); }

// A minimal AMDGPU code object header: EM_AMDGPU, HSA OS/ABI, given ABI version and e_flags.
Buf code_object(std::uint32_t e_flags, std::uint8_t abi_version, std::size_t size = 256) {
    Buf b(size, 0);
    Elf64_Ehdr h{};
    std::memcpy(h.e_ident, ELFMAG, SELFMAG);
    h.e_ident[EI_CLASS] = ELFCLASS64;
    h.e_ident[EI_DATA] = ELFDATA2LSB;
    h.e_ident[EI_VERSION] = EV_CURRENT;
    h.e_ident[EI_OSABI] = 64;
    h.e_ident[EI_ABIVERSION] = abi_version;
    h.e_type = ET_DYN;
    h.e_machine = 224;
    h.e_version = EV_CURRENT;
    h.e_flags = e_flags;
    h.e_ehsize = sizeof(Elf64_Ehdr);
    std::memcpy(b.data(), &h, sizeof h);
    return b;
}

struct Entry {
    std::string id;
    Buf contents;
};

// Lays out a plain bundle the way clang-offload-bundler does (entries after the table).
Buf make_bundle(const std::vector<Entry>& entries, std::uint64_t align = 16) {
    std::uint64_t header = 24 + 8;
    for (const auto& e : entries) header += 24 + e.id.size();
    std::vector<std::uint64_t> offsets;
    std::uint64_t pos = header;
    for (const auto& e : entries) {
        pos = (pos + align - 1) / align * align;
        offsets.push_back(pos);
        pos += e.contents.size();
    }
    Buf b;
    put_str(b, k_bundle_magic);
    put_u64(b, entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
        put_u64(b, offsets[i]);
        put_u64(b, entries[i].contents.size());
        put_u64(b, entries[i].id.size());
        put_str(b, entries[i].id);
    }
    for (std::size_t i = 0; i < entries.size(); ++i) {
        b.resize(offsets[i], 0);
        b.insert(b.end(), entries[i].contents.begin(), entries[i].contents.end());
    }
    return b;
}

Buf make_ccob(const Buf& inner, std::uint16_t version, std::uint64_t claimed_uncompressed = 0) {
    Buf z(ZSTD_compressBound(inner.size()));
    const auto n = ZSTD_compress(z.data(), z.size(), inner.data(), inner.size(), 3);
    EXPECT_FALSE(ZSTD_isError(n));
    z.resize(n);
    const std::uint64_t uncompressed = claimed_uncompressed ? claimed_uncompressed : inner.size();
    Buf b;
    put_str(b, k_compressed_magic);
    put_u16(b, version);
    put_u16(b, 1);  // zstd
    const std::uint64_t header = version == 1 ? 20 : version == 2 ? 24 : 32;
    if (version == 1) put_u32(b, static_cast<std::uint32_t>(uncompressed));
    if (version == 2) {
        put_u32(b, static_cast<std::uint32_t>(header + n));
        put_u32(b, static_cast<std::uint32_t>(uncompressed));
    }
    if (version == 3) {
        put_u64(b, header + n);
        put_u64(b, uncompressed);
    }
    put_u64(b, 0x1234);  // hash: not checked by a scan
    b.insert(b.end(), z.begin(), z.end());
    return b;
}

Bytes view(const Buf& b) { return {b.data(), b.size()}; }

const std::vector<Entry> k_sample = {
    {"host-x86_64-unknown-linux-gnu-", {}},
    {"hipv4-amdgcn-amd-amdhsa--gfx1030", code_object(0x036, 2)},
    {"hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", code_object(0x03f | 0x300, 2)},
    {"hipv4-amdgcn-amd-amdhsa--gfx906:sramecc-:xnack-", code_object(0x02f | 0x800 | 0x200, 2)},
};

}  // namespace

TEST(ScanCodeObject, TargetFromFlagsAndFeatures) {
    std::vector<Warning> w;
    auto info = read_code_object(view(code_object(0x037, 2)), 0, w);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->target.str(), "gfx1031");
    EXPECT_EQ(info->code_object_version, 4);
    info = read_code_object(view(code_object(0x02f | 0xc00 | 0x200, 3)), 0, w);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->target.str(), "gfx906:sramecc+:xnack-");
    EXPECT_EQ(info->code_object_version, 5);
    info = read_code_object(view(code_object(0x02c | 0x100, 1)), 0, w);  // v3: xnack bit means on
    ASSERT_TRUE(info);
    EXPECT_EQ(info->target.str(), "gfx900:xnack+");
    info = read_code_object(view(code_object(0x053 | (1u << 24), 4)), 0, w);  // generic, version byte
    ASSERT_TRUE(info);
    EXPECT_EQ(info->target.str(), "gfx10-3-generic");
    EXPECT_TRUE(w.empty());
    EXPECT_FALSE(read_code_object(view(code_object(0x0fe, 2)), 0, w));
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].message.find("unknown EF_AMDGPU_MACH"), std::string::npos);
}

TEST(ScanCodeObject, MachTableMatchesFacts) {
    // docs/domain.md, "ISA families and what an override can do".
    EXPECT_EQ(amdgpu_mach_value("gfx1010"), 0x033u);
    EXPECT_EQ(amdgpu_mach_value("gfx1035"), 0x03du);
    EXPECT_EQ(amdgpu_mach_value("gfx1034"), 0x03eu);
    EXPECT_EQ(amdgpu_mach_value("gfx1036"), 0x045u);
    EXPECT_EQ(amdgpu_mach_value("gfx1151"), 0x04au);
    EXPECT_EQ(amdgpu_mach_value("gfx1201"), 0x04eu);
    EXPECT_EQ(amdgpu_mach_value("gfx12-generic"), 0x059u);
    EXPECT_EQ(amdgpu_mach_name(0x041), "gfx1100");
}

TEST(ScanCodeObject, EntryIds) {
    auto e = parse_entry_id("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+");
    EXPECT_EQ(e.kind, "hipv4");
    EXPECT_EQ(e.triple, "amdgcn-amd-amdhsa-");
    EXPECT_EQ(e.target, "gfx90a:xnack+");
    e = parse_entry_id("host-x86_64-unknown-linux");
    EXPECT_EQ(e.kind, "host");
    EXPECT_EQ(e.target, "");
    e = parse_entry_id("hip-amdgcn-amd-amdhsa-gfx906");  // ROCm 3.x: three-part triple
    EXPECT_EQ(e.target, "gfx906");
    e = parse_entry_id("hipv4-amdgcn-amd-amdhsa--gfx10-3-generic");
    EXPECT_EQ(e.target, "gfx10-3-generic");
    EXPECT_FALSE(parse_target_id("gfx90a:xnack"));
    EXPECT_FALSE(parse_target_id("sm_80"));
}

TEST(ScanBundle, PlainBundleEntriesOffsetsSizes) {
    const Buf b = make_bundle(k_sample);
    std::vector<Warning> w;
    const auto bundle = parse_bundle(view(b), 1000, {}, w);
    ASSERT_TRUE(bundle);
    EXPECT_TRUE(w.empty()) << w[0].message;
    ASSERT_EQ(bundle->entries.size(), 4u);
    EXPECT_EQ(bundle->entries[1].parsed.target, "gfx1030");
    EXPECT_EQ(bundle->entries[1].size, 256u);
    EXPECT_EQ(bundle->entries[2].code_object->target.str(), "gfx90a:xnack+");
    EXPECT_EQ(bundle->entries[3].code_object->target.str(), "gfx906:sramecc-:xnack-");
    EXPECT_EQ(bundle->extent, b.size());
    // Offsets are absolute: the bundle started at 1000.
    EXPECT_EQ(bundle->entries[3].offset, 1000 + b.size() - 256);
}

TEST(ScanBundle, CompressedBundlesAllVersions) {
    const Buf inner = make_bundle(k_sample);
    for (std::uint16_t version : {1, 2, 3}) {
        const Buf c = make_ccob(inner, version);
        std::vector<Warning> w;
        const auto bundle = parse_bundle(view(c), 0, {}, w);
        ASSERT_TRUE(bundle) << version;
        EXPECT_TRUE(w.empty()) << version << ": " << w[0].message;
        EXPECT_EQ(bundle->compression, Compression::zstd);
        EXPECT_EQ(bundle->compressed_version, version);
        EXPECT_EQ(bundle->extent, c.size());
        ASSERT_EQ(bundle->entries.size(), 4u);
        EXPECT_EQ(bundle->entries[2].parsed.target, "gfx90a:xnack+");
    }
}

TEST(ScanBundle, ZstdBombClaimIsNotTrusted) {
    // A table that cannot be read within the inflation cap: warning, bounded work.
    std::vector<Entry> many;
    for (int i = 0; i < 3000; ++i) many.push_back({"hipv4-amdgcn-amd-amdhsa--gfx1030" + std::string(300, 'x'), {}});
    const Buf c = make_ccob(make_bundle(many, 1), 3, std::uint64_t{1} << 50);
    std::vector<Warning> w;
    ScanLimits limits;
    limits.max_inflated = 64 * 1024;
    const auto bundle = parse_bundle(view(c), 0, limits, w);
    ASSERT_TRUE(bundle);
    // Entries whose records fit under the cap are reported; the rest is a warning.
    EXPECT_LT(bundle->entries.size(), 3000u);
    ASSERT_FALSE(w.empty());
    EXPECT_NE(w[0].message.find("inspection cap"), std::string::npos) << w[0].message;
}

TEST(ScanBundle, TruncatedCompressedBundle) {
    Buf c = make_ccob(make_bundle(k_sample), 3);
    c.resize(40);
    std::vector<Warning> w;
    parse_bundle(view(c), 0, {}, w);
    ASSERT_FALSE(w.empty());
    c.resize(10);  // inside the header
    w.clear();
    EXPECT_FALSE(parse_bundle(view(c), 0, {}, w));
    ASSERT_FALSE(w.empty());
}

TEST(ScanBundle, HostileTables) {
    // Huge entry count.
    Buf b;
    put_str(b, k_bundle_magic);
    put_u64(b, UINT64_MAX);
    std::vector<Warning> w;
    EXPECT_FALSE(parse_bundle(view(b), 0, {}, w));
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0].offset, 24u);

    // An entry pointing far outside the file, next to a good one.
    b = make_bundle(k_sample);
    std::uint64_t huge = UINT64_MAX - 8;
    std::memcpy(b.data() + 32 + 24 + k_sample[0].id.size(), &huge, 8);  // entry 1 offset
    w.clear();
    auto bundle = parse_bundle(view(b), 0, {}, w);
    ASSERT_TRUE(bundle);
    EXPECT_EQ(bundle->entries.size(), 3u);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].message.find("outside the bundle"), std::string::npos);

    // Huge id length, and a truncated table.
    b = make_bundle(k_sample);
    std::memcpy(b.data() + 32 + 16, &huge, 8);
    w.clear();
    EXPECT_FALSE(parse_bundle(view(b), 0, {}, w));
    EXPECT_FALSE(w.empty());
    b = make_bundle(k_sample);
    b.resize(70);
    w.clear();
    bundle = parse_bundle(view(b), 0, {}, w);
    EXPECT_FALSE(w.empty());

    // Non-printable id bytes are escaped, not passed on raw.
    b = make_bundle({{std::string("hipv4-amdgcn-amd-amdhsa--gfx1030\xff\x01", 34), code_object(0x36, 2)}});
    w.clear();
    bundle = parse_bundle(view(b), 0, {}, w);
    ASSERT_TRUE(bundle);
    EXPECT_EQ(bundle->entries[0].id, "hipv4-amdgcn-amd-amdhsa--gfx1030\\xff\\x01");
}

TEST(ScanImage, FilesOfEveryKind) {
    const Buf bundle = make_bundle(k_sample);
    auto f = scan_image(view(bundle), "x.co");
    EXPECT_EQ(f.kind, FileKind::bundle);
    // In target order (gfx906 < gfx90a < gfx1030), not as text.
    EXPECT_EQ(f.targets(), (std::vector<std::string>{"gfx906:sramecc-:xnack-", "gfx90a:xnack+", "gfx1030"}));

    // Two bundles back to back, 4096-aligned, the way .hip_fatbin holds them.
    Buf two = bundle;
    two.resize(4096, 0);
    const Buf second = make_bundle({{"hipv4-amdgcn-amd-amdhsa--gfx1010", code_object(0x33, 2)}});
    two.insert(two.end(), second.begin(), second.end());
    f = scan_image(view(two), "fat.bin");
    EXPECT_EQ(f.bundles, 2u);
    EXPECT_EQ(f.targets().size(), 4u);

    // A code object inside an unknown blob is found by the embedded search.
    Buf blob(1000, 'a');
    const Buf obj = code_object(0x37, 2);
    blob.insert(blob.end(), obj.begin(), obj.end());
    blob.resize(3000, 'z');
    f = scan_image(view(blob), "blob.bin");
    ASSERT_EQ(f.code.size(), 1u);
    EXPECT_EQ(f.code[0].offset, 1000u);
    EXPECT_EQ(f.code[0].target, "gfx1031");

    f = scan_image(view(obj), "k.hsaco");
    EXPECT_EQ(f.kind, FileKind::code_object);
    EXPECT_EQ(f.targets(), std::vector<std::string>{"gfx1031"});

    f = scan_image({}, "/x/rocblas/library/TensileLibrary_lazy_gfx1030.dat");
    EXPECT_EQ(f.kind, FileKind::tensile_data);
    EXPECT_EQ(f.targets(), std::vector<std::string>{"gfx1030"});
    EXPECT_EQ(target_from_file_name("gfx90a6e.kdb", FileKind::miopen_kdb), "gfx90a");
    EXPECT_EQ(target_from_file_name("gfx1030_30.kdb", FileKind::miopen_kdb), "gfx1030");
    EXPECT_EQ(target_from_file_name("gfx90878.kdb", FileKind::miopen_kdb), "gfx908");
    EXPECT_FALSE(target_from_file_name("notes.kdb", FileKind::miopen_kdb));
}

TEST(ScanImage, CorruptHostElf) {
    // A host ELF header whose section table points past the end of the file.
    Buf b(128, 0);
    Elf64_Ehdr h{};
    std::memcpy(h.e_ident, ELFMAG, SELFMAG);
    h.e_ident[EI_CLASS] = ELFCLASS64;
    h.e_ident[EI_DATA] = ELFDATA2LSB;
    h.e_ident[EI_VERSION] = EV_CURRENT;
    h.e_machine = EM_X86_64;
    h.e_shoff = 1u << 30;
    h.e_shnum = 40;
    h.e_shentsize = sizeof(Elf64_Shdr);
    std::memcpy(b.data(), &h, sizeof h);
    const auto f = scan_image(view(b), "bad.so");
    EXPECT_EQ(f.kind, FileKind::host_elf);
    ASSERT_EQ(f.warnings.size(), 1u);
    EXPECT_NE(f.warnings[0].message.find("outside the file"), std::string::npos);
}
