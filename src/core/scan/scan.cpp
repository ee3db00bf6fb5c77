#include "scan/scan.hpp"

#include "util/strings.hpp"
#include "scan/magic_search.hpp"

#include <fmt/format.h>

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <system_error>

namespace rmcp::scan {

namespace {

constexpr std::string_view k_elf_magic = "\x7f"
                                         "ELF";
constexpr std::string_view k_elf64le_magic = "\x7f"
                                             "ELF\x02\x01\x01";
// .hipFatBinSegment holds {u32 magic "HIPF", u32 version, u64 address of the fat binary,
// u64 unused} (clang CodeGen CGCUDANV.cpp, HIP wrapper).
constexpr std::uint32_t k_hip_fatbin_wrapper_magic = 0x48495046;
constexpr std::uint64_t k_sweep_window = std::uint64_t{1} << 20;
constexpr std::uint64_t k_max_sections = std::uint64_t{1} << 20;

struct Section {
    std::string name;
    std::uint32_t type = 0;
    std::uint64_t flags = 0;
    std::uint64_t addr = 0;
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
};

// Section table of a host ELF64LE, with names; every offset checked against the file.
std::vector<Section> read_sections(Bytes f, std::vector<Warning>& warnings) {
    std::vector<Section> out;
    const auto shoff = *read_le<std::uint64_t>(f, offsetof(Elf64_Ehdr, e_shoff));
    std::uint64_t shnum = *read_le<std::uint16_t>(f, offsetof(Elf64_Ehdr, e_shnum));
    const auto shentsize = *read_le<std::uint16_t>(f, offsetof(Elf64_Ehdr, e_shentsize));
    std::uint32_t shstrndx = *read_le<std::uint16_t>(f, offsetof(Elf64_Ehdr, e_shstrndx));
    if (shoff == 0) return out;
    if (shentsize != sizeof(Elf64_Shdr)) {
        warnings.push_back(
            {offsetof(Elf64_Ehdr, e_shentsize), fmt::format("ELF section header size is {}", shentsize)});
        return out;
    }
    const auto shdr_at = [&](std::uint64_t i) { return shoff + i * sizeof(Elf64_Shdr); };
    if (!in_bounds(f.size(), shoff, sizeof(Elf64_Shdr))) {
        warnings.push_back(
            {offsetof(Elf64_Ehdr, e_shoff), fmt::format("ELF section table at {} lies outside the file", shoff)});
        return out;
    }
    // Extended numbering (ELF gABI): counts that do not fit the header live in section 0.
    if (shnum == 0) shnum = *read_le<std::uint64_t>(f, shdr_at(0) + offsetof(Elf64_Shdr, sh_size));
    if (shstrndx == SHN_XINDEX) shstrndx = *read_le<std::uint32_t>(f, shdr_at(0) + offsetof(Elf64_Shdr, sh_link));
    if (shnum > k_max_sections || !in_bounds(f.size(), shoff, shnum * sizeof(Elf64_Shdr))) {
        warnings.push_back({shoff, fmt::format("ELF section table ({} entries) lies outside the file", shnum)});
        return out;
    }
    Bytes strtab;
    if (shstrndx < shnum) {
        const auto at = shdr_at(shstrndx);
        const auto off = *read_le<std::uint64_t>(f, at + offsetof(Elf64_Shdr, sh_offset));
        const auto size = *read_le<std::uint64_t>(f, at + offsetof(Elf64_Shdr, sh_size));
        if (auto s = sub(f, off, size)) strtab = *s;
        else warnings.push_back({at, "ELF section-name table lies outside the file"});
    }
    out.reserve(static_cast<std::size_t>(shnum));
    for (std::uint64_t i = 0; i < shnum; ++i) {
        const auto at = shdr_at(i);
        Section s;
        const auto name_off = *read_le<std::uint32_t>(f, at + offsetof(Elf64_Shdr, sh_name));
        s.type = *read_le<std::uint32_t>(f, at + offsetof(Elf64_Shdr, sh_type));
        s.flags = *read_le<std::uint64_t>(f, at + offsetof(Elf64_Shdr, sh_flags));
        s.addr = *read_le<std::uint64_t>(f, at + offsetof(Elf64_Shdr, sh_addr));
        s.offset = *read_le<std::uint64_t>(f, at + offsetof(Elf64_Shdr, sh_offset));
        s.size = *read_le<std::uint64_t>(f, at + offsetof(Elf64_Shdr, sh_size));
        if (name_off < strtab.size()) {
            const auto rest = as_chars(strtab.subspan(name_off));
            s.name = std::string(rest.substr(0, rest.find('\0')));
        }
        out.push_back(std::move(s));
    }
    return out;
}

// The extent of an AMDGPU code object found inside another file: its section table is
// its last part in practice; program segments bound it otherwise.
std::uint64_t code_object_extent(Bytes obj) {
    std::uint64_t end = sizeof(Elf64_Ehdr);
    const auto shoff = read_le<std::uint64_t>(obj, offsetof(Elf64_Ehdr, e_shoff)).value_or(0);
    const auto shnum = read_le<std::uint16_t>(obj, offsetof(Elf64_Ehdr, e_shnum)).value_or(0);
    if (shoff != 0 && in_bounds(obj.size(), shoff, std::uint64_t{shnum} * sizeof(Elf64_Shdr)))
        end = std::max<std::uint64_t>(end, shoff + std::uint64_t{shnum} * sizeof(Elf64_Shdr));
    const auto phoff = read_le<std::uint64_t>(obj, offsetof(Elf64_Ehdr, e_phoff)).value_or(0);
    const auto phnum = read_le<std::uint16_t>(obj, offsetof(Elf64_Ehdr, e_phnum)).value_or(0);
    if (phoff != 0 && in_bounds(obj.size(), phoff, std::uint64_t{phnum} * sizeof(Elf64_Phdr)))
        for (std::uint16_t i = 0; i < phnum; ++i) {
            const auto at = phoff + std::uint64_t{i} * sizeof(Elf64_Phdr);
            const auto off = *read_le<std::uint64_t>(obj, at + offsetof(Elf64_Phdr, p_offset));
            const auto size = *read_le<std::uint64_t>(obj, at + offsetof(Elf64_Phdr, p_filesz));
            if (in_bounds(obj.size(), off, size)) end = std::max(end, off + size);
        }
    return std::min<std::uint64_t>(end, obj.size());
}

class Scanner {
public:
    Scanner(Bytes data, const ScanLimits& limits, const MappedFile* mapping, FileScan& out)
        : m_data(data),
          m_limits(limits),
          m_mapping(mapping),
          m_out(out),
          m_budget(limits.embedded_search_limit == 0 ? UINT64_MAX : limits.embedded_search_limit) {}

    void add_bundle(const Bundle& b, const std::string& container) {
        ++m_out.bundles;
        for (const auto& e : b.entries) {
            FoundCode c;
            c.container = container;
            c.id = e.id;
            c.target = e.parsed.target;
            if (c.target.empty() && e.parsed.kind != "host" && e.code_object) c.target = e.code_object->target.str();
            c.offset = e.offset;
            c.size = e.size;
            c.bundle_offset = b.offset;
            c.compression = b.compression;
            if (e.code_object) c.code_object_version = e.code_object->code_object_version;
            m_out.code.push_back(std::move(c));
        }
    }

    // Bundles laid end to end in [begin, end): clang aligns each translation unit's bundle
    // (roc-obj-ls steps to the next 4096 boundary); the gap is searched, not assumed.
    void walk_bundles(std::uint64_t begin, std::uint64_t end, const std::string& container) {
        std::uint64_t pos = begin;
        std::uint64_t count = 0;
        while (pos < end && count < m_limits.max_bundles_per_region) {
            const Bytes region = m_data.subspan(static_cast<std::size_t>(pos), static_cast<std::size_t>(end - pos));
            if (has_prefix(region, 0, k_bundle_magic) || has_prefix(region, 0, k_compressed_magic)) {
                ++count;
                const auto b = parse_bundle(region, pos, m_limits, m_out.warnings);
                std::uint64_t advance = k_compressed_magic.size();
                if (b) {
                    add_bundle(*b, container);
                    advance = std::max<std::uint64_t>(b->extent, advance);
                }
                pos += std::min(advance, end - pos);
                continue;
            }
            const auto next = find_bundle_magic(pos, end);
            if (!next) break;
            pos = *next;
        }
    }

    // Looks for offload bundles and AMDGPU code objects anywhere in [begin, end), e.g. in
    // .rodata/.data of a runtime library or in an unknown file. Candidates that do not
    // parse are strings or chance bytes and are dropped quietly.
    void search_embedded(std::uint64_t begin, std::uint64_t end, const std::string& container) {
        if (end <= begin) return;
        if (end - begin > m_budget) {
            m_out.warnings.push_back(
                {begin, fmt::format("{} not searched for embedded code beyond {} bytes (limit)", container, m_budget)});
            end = begin + m_budget;
        }
        m_budget -= end - begin;
        std::uint64_t skip_until = begin;
        std::vector<std::uint64_t> hits;
        for (std::uint64_t w = begin; w < end; w += k_sweep_window) {
            const std::uint64_t w_end = std::min(end, w + k_sweep_window);
            // Candidates may straddle the window edge: search a little past it.
            const std::uint64_t s_end = std::min<std::uint64_t>(end, w_end + k_bundle_magic.size());
            if (m_mapping) m_mapping->prefetch(w, s_end - w);
            hits.clear();
            find_magics(m_data.subspan(static_cast<std::size_t>(w), static_cast<std::size_t>(s_end - w)), w_end - w,
                        hits);
            for (const auto rel : hits) {
                const std::uint64_t at = w + rel;
                if (at < skip_until) continue;
                skip_until = std::max(skip_until, probe_embedded(at, container));
            }
            if (m_mapping) m_mapping->release(w, w_end - w);
        }
    }

    // The next bundle magic (plain or compressed) at or after `from`. Bundles lie close
    // together (aligned to 4096 bytes), so the window grows from 4 KiB and the second
    // magic is only looked for before the first one's hit: the cost follows the gap, not
    // the window (a 1 MiB search per bundle was most of a 111-bundle library's scan).
    std::optional<std::uint64_t> find_bundle_magic(std::uint64_t from, std::uint64_t end) {
        std::uint64_t span = 4096;
        for (std::uint64_t w = from; w < end; w += span, span = std::min(span * 2, k_sweep_window)) {
            const std::uint64_t s_end = std::min<std::uint64_t>(end, w + span + k_bundle_magic.size());
            std::optional<std::uint64_t> best;
            for (const std::string_view needle : {k_bundle_magic, k_compressed_magic}) {
                // A later needle only matters if it starts before the hit so far.
                const std::uint64_t limit = best ? std::min(s_end, *best + needle.size() - 1) : s_end;
                if (limit <= w || limit - w < needle.size()) continue;
                const void* h =
                    ::memmem(m_data.data() + w, static_cast<std::size_t>(limit - w), needle.data(), needle.size());
                if (!h) continue;
                best = static_cast<std::uint64_t>(static_cast<const unsigned char*>(h) - m_data.data());
            }
            if (best) return best;
        }
        return std::nullopt;
    }

private:
    // Returns the first offset after whatever was found at `at` (at+1 when nothing).
    std::uint64_t probe_embedded(std::uint64_t at, const std::string& container) {
        const Bytes rest = m_data.subspan(static_cast<std::size_t>(at));
        if (has_prefix(rest, 0, k_elf64le_magic)) {
            if (!is_amdgpu_elf(rest) || read_le<std::uint32_t>(rest, offsetof(Elf64_Ehdr, e_version)) != EV_CURRENT)
                return at + 1;
            std::vector<Warning> quiet;
            const auto info = read_code_object(rest, at, quiet);
            if (!info) return at + 1;
            FoundCode c;
            c.container = container;
            c.target = info->target.str();
            c.offset = at;
            c.size = code_object_extent(rest);
            c.code_object_version = info->code_object_version;
            const std::uint64_t extent = c.size;
            m_out.code.push_back(std::move(c));
            return at + std::max<std::uint64_t>(extent, 1);
        }
        std::vector<Warning> quiet;
        const auto b = parse_bundle(rest, at, m_limits, quiet);
        if (!b || b->entries.empty()) return at + 1;
        m_out.warnings.insert(m_out.warnings.end(), quiet.begin(), quiet.end());
        add_bundle(*b, container);
        return at + std::max<std::uint64_t>(b->extent, 1);
    }

    Bytes m_data;
    const ScanLimits& m_limits;
    const MappedFile* m_mapping;
    FileScan& m_out;
    std::uint64_t m_budget;
};

void scan_host_elf(Bytes data, const ScanLimits& limits, const MappedFile* mapping, FileScan& out) {
    out.kind = FileKind::host_elf;
    const auto sections = read_sections(data, out.warnings);
    Scanner scanner(data, limits, mapping, out);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> walked;  // file ranges already read as bundles
    const auto walk = [&](const Section& s, const std::string& container, std::uint64_t from) {
        if (std::find(walked.begin(), walked.end(), std::pair{s.offset, s.size}) != walked.end()) return;
        walked.emplace_back(s.offset, s.size);
        scanner.walk_bundles(from, s.offset + s.size, container);
    };
    const auto usable = [&](const Section& s, std::size_t index) {
        if (s.type == SHT_NOBITS || s.size == 0) return false;
        if (!in_bounds(data.size(), s.offset, s.size)) {
            out.warnings.push_back({s.offset, fmt::format("section {} ({}) lies outside the file", index,
                                                          s.name.empty() ? "unnamed" : s.name)});
            return false;
        }
        return true;
    };
    std::vector<bool> ok(sections.size());
    for (std::size_t i = 0; i < sections.size(); ++i) ok[i] = usable(sections[i], i);
    for (std::size_t i = 0; i < sections.size(); ++i)
        if (ok[i] && sections[i].name == ".hip_fatbin") walk(sections[i], ".hip_fatbin", sections[i].offset);

    // The wrapper's pointer names the fat binary; usually .hip_fatbin, already walked.
    for (std::size_t i = 0; i < sections.size(); ++i) {
        if (!ok[i] || sections[i].name != ".hipFatBinSegment") continue;
        const auto& seg = sections[i];
        for (std::uint64_t rec = 0; rec + 24 <= seg.size; rec += 24) {
            const auto magic = read_le<std::uint32_t>(data, seg.offset + rec);
            const auto address = read_le<std::uint64_t>(data, seg.offset + rec + 8);
            if (magic != k_hip_fatbin_wrapper_magic) {
                out.warnings.push_back({seg.offset + rec, "hipFatBinSegment record has no HIPF magic"});
                break;
            }
            if (!address || *address == 0) continue;  // left to a dynamic relocation
            bool found = false;
            for (std::size_t j = 0; j < sections.size(); ++j) {
                const auto& s = sections[j];
                if (!ok[j] || s.addr == 0 || *address < s.addr || *address - s.addr >= s.size) continue;
                found = true;
                if (s.name != ".hip_fatbin") walk(s, s.name, s.offset + (*address - s.addr));
            }
            if (!found)
                out.warnings.push_back(
                    {seg.offset + rec + 8,
                     fmt::format("hipFatBinSegment points at 0x{:x}, outside every section", *address)});
        }
    }

    // Embedded code elsewhere: data sections only (code, symbols, strings and debug
    // information cannot hold loadable device code). A HIP-compiled library keeps its
    // device code in .hip_fatbin; raw embedded objects are how runtimes (ROCr's blit
    // kernels) ship theirs, so the sweep runs where there is no fat binary, or when asked.
    if (!limits.sweep_data_sections) return;
    if (!walked.empty() && !limits.sweep_with_fatbin) return;
    for (std::size_t i = 0; i < sections.size(); ++i) {
        const auto& s = sections[i];
        if (!ok[i] || s.type != SHT_PROGBITS || (s.flags & SHF_EXECINSTR) || (s.flags & SHF_ALLOC) == 0) continue;
        if (std::find_if(walked.begin(), walked.end(), [&](const auto& r) { return r.first == s.offset; }) !=
            walked.end())
            continue;
        if (s.name == ".hipFatBinSegment" || s.name.starts_with(".eh_frame") || s.name == ".gcc_except_table" ||
            s.name == ".got" || s.name == ".got.plt" || s.name == ".init_array" || s.name == ".fini_array")
            continue;
        if (s.name.starts_with(".data.rel.ro") && !limits.sweep_relocated_data) continue;
        scanner.search_embedded(s.offset, s.offset + s.size, s.name.empty() ? "section" : s.name);
    }
}

}  // namespace

std::string_view file_kind_name(FileKind k) {
    switch (k) {
    case FileKind::host_elf: return "host-elf";
    case FileKind::code_object: return "code-object";
    case FileKind::bundle: return "offload-bundle";
    case FileKind::compressed_bundle: return "compressed-bundle";
    case FileKind::tensile_data: return "tensile-data";
    case FileKind::miopen_kdb: return "miopen-kdb";
    default: return "other";
    }
}

namespace {
// gfxMAJOR MINOR STEPPING: the last two characters are minor and stepping (hexadecimal
// digits, LLVM AMDGPUUsage "Processors"), the decimal digits before them the generation.
struct TargetKey {
    bool gfx = false;
    unsigned long major = 0;
    int minor = 0, stepping = 0;
    std::string_view features;
};
int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}
TargetKey target_key(std::string_view t) {
    TargetKey k;
    const auto colon = t.find(':');
    const std::string_view processor = t.substr(0, colon);
    if (colon != std::string_view::npos) k.features = t.substr(colon);
    if (!processor.starts_with("gfx") || processor.size() < 6) return k;
    const std::string_view digits = processor.substr(3, processor.size() - 5);
    if (digits.find_first_not_of("0123456789") != std::string_view::npos) return k;
    k.minor = hex_value(processor[processor.size() - 2]);
    k.stepping = hex_value(processor[processor.size() - 1]);
    if (k.minor < 0 || k.stepping < 0) return k;
    k.major = std::stoul(std::string(digits));
    k.gfx = true;
    return k;
}
}  // namespace

bool target_order_less(std::string_view a, std::string_view b) {
    const auto ka = target_key(a), kb = target_key(b);
    if (ka.gfx != kb.gfx) return ka.gfx;
    if (!ka.gfx) return a < b;
    if (ka.major != kb.major) return ka.major < kb.major;
    if (ka.minor != kb.minor) return ka.minor < kb.minor;
    if (ka.stepping != kb.stepping) return ka.stepping < kb.stepping;
    return ka.features < kb.features;
}

std::vector<std::string> FileScan::targets() const {
    std::set<std::string> s;
    for (const auto& c : code)
        if (!c.target.empty()) s.insert(c.target);
    std::vector<std::string> out(s.begin(), s.end());
    std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return target_order_less(x, y); });
    return out;
}

std::optional<FileKind> name_only_kind(std::string_view name) {
    name = basename(name);
    if (name.ends_with(".kdb")) return FileKind::miopen_kdb;
    if (name.starts_with("TensileLibrary") && name.ends_with(".dat")) return FileKind::tensile_data;
    return std::nullopt;
}

std::optional<std::string> target_from_file_name(std::string_view name, FileKind kind) {
    name = basename(name);
    const auto is_name_char = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (kind == FileKind::tensile_data) {
        // TensileLibrary_lazy_gfx1030.dat, TensileLibrary_gfx90a.dat, ..._gfx1030_fallback.dat
        const auto at = name.rfind("gfx");
        if (at == std::string_view::npos) return std::nullopt;
        std::size_t end = at + 3;
        while (end < name.size() && is_name_char(name[end])) ++end;
        std::string candidate(name.substr(at, end - at));
        if (!amdgpu_mach_value(candidate)) return std::nullopt;
        return candidate;
    }
    if (kind == FileKind::miopen_kdb) {
        // MIOpen names kernel databases <processor>_<CUs> (≤ 64 CUs) or <processor><CUs in
        // hex> (MIOpen Handle::GetDbBasename), e.g. gfx1030_30.kdb, gfx90a6e.kdb.
        auto stem = name.substr(0, name.rfind(".kdb"));
        std::string_view best;
        for (const auto p : known_processors())
            if (stem.starts_with(p) && p.size() > best.size()) best = p;
        if (best.empty()) return std::nullopt;
        const auto rest = stem.substr(best.size());
        const bool decimal_suffix =
            rest.size() > 1 && rest.front() == '_' &&
            std::all_of(rest.begin() + 1, rest.end(), [](char c) { return c >= '0' && c <= '9'; });
        const bool hex_suffix = std::all_of(rest.begin(), rest.end(),
                                            [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
        if (!rest.empty() && !decimal_suffix && !hex_suffix) return std::nullopt;
        return std::string(best);
    }
    return std::nullopt;
}

bool is_scannable_name(std::string_view name) {
    name = basename(name);
    if (name_only_kind(name)) return true;
    if (name.ends_with(".co") || name.ends_with(".hsaco")) return true;
    return name.ends_with(".so") || name.find(".so.") != std::string_view::npos;
}

FileScan scan_image(Bytes data, std::string_view name, const ScanLimits& limits, const MappedFile* mapping) {
    FileScan out;
    out.path = std::string(name);
    out.size = data.size();
    if (const auto kind = name_only_kind(name)) {
        // rocBLAS and MIOpen pick these files by name; their contents (msgpack, SQLite) do
        // not name a target more precisely.
        out.kind = *kind;
        if (auto t = target_from_file_name(name, *kind)) {
            FoundCode c;
            c.container = "name";
            c.target = *t;
            c.size = data.size();
            out.code.push_back(std::move(c));
        } else if (*kind == FileKind::miopen_kdb) {
            out.warnings.push_back({0, "kernel database name names no known target"});
        }
        return out;
    }
    if (has_prefix(data, 0, k_elf_magic)) {
        if (!has_prefix(data, 0, k_elf64le_magic) || data.size() < sizeof(Elf64_Ehdr)) {
            out.warnings.push_back({0, "not a 64-bit little-endian ELF file (or truncated header); skipped"});
            return out;
        }
        if (is_amdgpu_elf(data)) {
            out.kind = FileKind::code_object;
            if (const auto info = read_code_object(data, 0, out.warnings)) {
                FoundCode c;
                c.container = "file";
                c.target = info->target.str();
                c.size = data.size();
                c.code_object_version = info->code_object_version;
                out.code.push_back(std::move(c));
            }
            return out;
        }
        scan_host_elf(data, limits, mapping, out);
        return out;
    }
    Scanner scanner(data, limits, mapping, out);
    if (has_prefix(data, 0, k_bundle_magic) || has_prefix(data, 0, k_compressed_magic)) {
        out.kind = has_prefix(data, 0, k_bundle_magic) ? FileKind::bundle : FileKind::compressed_bundle;
        scanner.walk_bundles(0, data.size(), "file");
        return out;
    }
    if (limits.sweep_data_sections) scanner.search_embedded(0, data.size(), "file");
    return out;
}

namespace {
FileScan scan_mapping(Result<MappedFile> mapped, const std::string& path, const ScanLimits& limits) {
    if (!mapped) {
        FileScan out;
        out.path = path;
        out.unreadable = true;
        out.warnings.push_back({0, mapped.error().cause});
        return out;
    }
    // Name-only kinds are decided before any byte is touched.
    return scan_image(mapped->bytes(), path, limits, &*mapped);
}
}  // namespace

FileScan scan_file(const std::string& path, const ScanLimits& limits) {
    return scan_mapping(MappedFile::open(path), path, limits);
}

FileScan scan_fd(int fd, const std::string& shown, const ScanLimits& limits) {
    return scan_mapping(MappedFile::map(fd, shown), shown, limits);
}

namespace {
// Depth-first over `dir` through the Root; `visited` holds the real directories seen, so a
// link back up the tree is walked once.
void collect_dir(const Root& root, const std::string& dir, int depth, std::set<std::string>& visited,
                 std::set<std::string>& found, std::vector<std::string>& problems) {
    constexpr int k_max_depth = 64;
    auto names = root.list_dir(dir);
    if (!names) {
        problems.push_back(fmt::format("{}: {}", dir, names.error().cause));
        return;
    }
    for (const auto& name : *names) {
        const std::string path = (dir == "/" ? "" : dir) + "/" + name;
        const auto st = root.stat(path);
        if (!st) {
            // Dangling links are normal in packaged trees; loops and the rest are worth a word.
            if (st.error().os_error != ENOENT) problems.push_back(fmt::format("{}: {}", path, st.error().cause));
            continue;
        }
        if (st->type == FileType::directory) {
            const auto real = root.canonical(path);
            if (!real || depth >= k_max_depth || !visited.insert(*real).second) continue;
            collect_dir(root, path, depth + 1, visited, found, problems);
            continue;
        }
        if (st->type != FileType::regular || !is_scannable_name(name)) continue;
        // A library is usually reached through .so and .so.N links: scan the real file once.
        if (const auto real = root.canonical(path)) found.insert(*real);
    }
}
}  // namespace

std::vector<std::string> collect_files(const Root& root, const std::string& path, std::vector<std::string>& problems) {
    std::set<std::string> found;
    const auto st = root.stat(path);
    if (!st) {
        problems.push_back(fmt::format("{}: {}", path, st.error().cause));
        return {};
    }
    const auto real = root.canonical(path);
    if (!real) {
        problems.push_back(fmt::format("{}: {}", path, real.error().cause));
        return {};
    }
    if (st->type != FileType::directory) {
        found.insert(*real);
        return {found.begin(), found.end()};
    }
    std::set<std::string> visited{*real};
    collect_dir(root, *real, 0, visited, found, problems);
    return {found.begin(), found.end()};
}

}  // namespace rmcp::scan
