#include "detect/gfx.hpp"

#include "util/strings.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <span>

namespace rmcp {

std::optional<std::string> decode_gfx_target_version(std::uint64_t version) {
    if (version == 0) return std::nullopt;
    const auto major = version / 10000;
    const auto minor = (version / 100) % 100;
    const auto stepping = version % 100;
    // Each of minor and stepping is one hex digit in a target name.
    if (minor > 15 || stepping > 15 || major == 0) return std::nullopt;
    return fmt::format("gfx{}{:x}{:x}", major, minor, stepping);
}

std::optional<std::uint32_t> encode_gfx_target(std::string_view name) {
    if (!name.starts_with("gfx") || name.size() < 6) return std::nullopt;
    name.remove_prefix(3);
    const auto hexval = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    const int minor = hexval(name[name.size() - 2]);
    const int stepping = hexval(name[name.size() - 1]);
    const auto major = parse_u64(name.substr(0, name.size() - 2));
    if (minor < 0 || stepping < 0 || !major || *major == 0 || *major > 63) return std::nullopt;
    return static_cast<std::uint32_t>(*major * 10000 + static_cast<std::uint64_t>(minor) * 100 +
                                      static_cast<std::uint64_t>(stepping));
}

namespace {
struct FamilyRow {
    std::string_view gfx;
    std::string_view family;
    std::string_view generic;  // empty when LLVM has no generic target for it
};
// Families: AMD's ISA documents and LLVM AMDGPUUsage "Processors" and "Generic processors".
constexpr FamilyRow k_families[] = {
    {"gfx801", "GCN3", ""},
    {"gfx802", "GCN3", ""},
    {"gfx803", "GCN4", ""},
    {"gfx900", "GCN5", "gfx9-generic"},
    {"gfx902", "GCN5", "gfx9-generic"},
    {"gfx904", "GCN5", "gfx9-generic"},
    {"gfx906", "GCN5", "gfx9-generic"},
    {"gfx909", "GCN5", "gfx9-generic"},
    {"gfx90c", "GCN5", "gfx9-generic"},
    {"gfx908", "CDNA1", ""},
    {"gfx90a", "CDNA2", ""},
    {"gfx940", "CDNA3", ""},
    {"gfx941", "CDNA3", ""},
    {"gfx942", "CDNA3", ""},
    {"gfx950", "CDNA3", ""},
    {"gfx1010", "RDNA1", "gfx10-1-generic"},
    {"gfx1011", "RDNA1", "gfx10-1-generic"},
    {"gfx1012", "RDNA1", "gfx10-1-generic"},
    {"gfx1013", "RDNA1", "gfx10-1-generic"},
    {"gfx1030", "RDNA2", "gfx10-3-generic"},
    {"gfx1031", "RDNA2", "gfx10-3-generic"},
    {"gfx1032", "RDNA2", "gfx10-3-generic"},
    {"gfx1033", "RDNA2", "gfx10-3-generic"},
    {"gfx1034", "RDNA2", "gfx10-3-generic"},
    {"gfx1035", "RDNA2", "gfx10-3-generic"},
    {"gfx1036", "RDNA2", "gfx10-3-generic"},
    {"gfx1100", "RDNA3", "gfx11-generic"},
    {"gfx1101", "RDNA3", "gfx11-generic"},
    {"gfx1102", "RDNA3", "gfx11-generic"},
    {"gfx1103", "RDNA3", "gfx11-generic"},
    {"gfx1150", "RDNA3.5", "gfx11-generic"},
    {"gfx1151", "RDNA3.5", "gfx11-generic"},
    {"gfx1152", "RDNA3.5", "gfx11-generic"},
    {"gfx1153", "RDNA3.5", "gfx11-generic"},
    {"gfx1200", "RDNA4", "gfx12-generic"},
    {"gfx1201", "RDNA4", "gfx12-generic"},
};

const FamilyRow* find_family(std::string_view gfx) {
    // Feature suffixes (":xnack-") do not change the family.
    gfx = gfx.substr(0, gfx.find(':'));
    for (const auto& row : k_families)
        if (row.gfx == gfx) return &row;
    return nullptr;
}

// Targets in AMD's Linux support matrix for some ROCm release: the data file
// data/rocm-support.toml (sources, first release and the date it was checked) is the source;
// Gfx.SupportListIsTheDataFile keeps this copy equal to it.
constexpr std::string_view k_official[] = {
    "gfx900", "gfx906",  "gfx908",  "gfx90a",  "gfx940",  "gfx941",  "gfx942",
    "gfx950", "gfx1030", "gfx1100", "gfx1101", "gfx1151", "gfx1200", "gfx1201",
};
}  // namespace

std::vector<std::string> officially_supported_targets() { return {std::begin(k_official), std::end(k_official)}; }

std::optional<std::string> gfx_family(std::string_view gfx) {
    if (const auto* row = find_family(gfx)) return std::string(row->family);
    return std::nullopt;
}

std::optional<std::string> gfx_generic_target(std::string_view gfx) {
    if (const auto* row = find_family(gfx); row && !row->generic.empty()) return std::string(row->generic);
    return std::nullopt;
}

bool same_isa_family(std::string_view a, std::string_view b) {
    a = a.substr(0, a.find(':'));
    b = b.substr(0, b.find(':'));
    if (a == b) return true;
    const auto ga = gfx_generic_target(a);
    const auto gb = gfx_generic_target(b);
    return ga && gb && *ga == *gb;
}

bool gfx_officially_supported(std::string_view gfx) {
    gfx = gfx.substr(0, gfx.find(':'));
    for (const auto t : k_official)
        if (t == gfx) return true;
    return false;
}

namespace {
// The dGPU/APU column of LLVM AMDGPUUsage's processor table, for the targets rmcp meets.
// gfx940-gfx942 are left out: MI300A (an APU) and MI300X (a dGPU) share them.
constexpr std::string_view k_apu_only[] = {"gfx801",  "gfx810",  "gfx902",  "gfx909",  "gfx90c",  "gfx1013", "gfx1033",
                                           "gfx1035", "gfx1036", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"};
constexpr std::string_view k_dgpu_only[] = {"gfx802",  "gfx803",  "gfx805",  "gfx900",  "gfx904",  "gfx906",
                                            "gfx908",  "gfx90a",  "gfx950",  "gfx1010", "gfx1011", "gfx1012",
                                            "gfx1030", "gfx1031", "gfx1032", "gfx1034", "gfx1100", "gfx1101",
                                            "gfx1102", "gfx1200", "gfx1201"};
}  // namespace

std::optional<bool> gfx_integrated(std::string_view gfx) {
    gfx = gfx.substr(0, gfx.find(':'));
    for (const auto t : k_apu_only)
        if (t == gfx) return true;
    for (const auto t : k_dgpu_only)
        if (t == gfx) return false;
    return std::nullopt;
}

namespace {
struct ProductRow {
    std::string_view name;  // matched case-insensitively as a whole-word substring
    std::string_view gfx;
};
// Products per target: LLVM AMDGPUUsage, "Processors" (example products per gfx target),
// https://llvm.org/docs/AMDGPUUsage.html#processors, and AMD's product pages for the chip of
// each card (Navi 10/14/21/22/23/24/31/32/33/44/48, Phoenix, Strix, Strix Halo). Longer names
// first: "RX 6800M" (Navi 22) must not be read as "RX 6800" (Navi 21).
constexpr ProductRow k_products[] = {
    {"RX 6850M", "gfx1031"},     {"RX 6800M", "gfx1031"},  {"RX 6700M", "gfx1031"}, {"RX 6800S", "gfx1032"},
    {"RX 6700S", "gfx1032"},     {"RX 6650M", "gfx1032"},  {"RX 6600M", "gfx1032"}, {"RX 6500M", "gfx1034"},
    {"RX 5700M", "gfx1010"},     {"RX 5600M", "gfx1010"},  {"RX 5500M", "gfx1012"}, {"RX 5700", "gfx1010"},
    {"RX 5600", "gfx1010"},      {"Pro W5700", "gfx1010"}, {"Pro 5600", "gfx1010"}, {"RX 5500", "gfx1012"},
    {"RX 5300", "gfx1012"},      {"Pro W5500", "gfx1012"}, {"Pro 5500", "gfx1012"}, {"RX 6950", "gfx1030"},
    {"RX 6900", "gfx1030"},      {"RX 6800", "gfx1030"},   {"W6800", "gfx1030"},    {"V620", "gfx1030"},
    {"RX 6750", "gfx1031"},      {"RX 6700", "gfx1031"},   {"RX 6650", "gfx1032"},  {"RX 6600", "gfx1032"},
    {"W6600", "gfx1032"},        {"RX 6500", "gfx1034"},   {"RX 6400", "gfx1034"},  {"W6400", "gfx1034"},
    {"680M", "gfx1035"},         {"660M", "gfx1035"},      {"RX 7900", "gfx1100"},  {"W7900", "gfx1100"},
    {"W7800", "gfx1100"},        {"RX 7800", "gfx1101"},   {"RX 7700", "gfx1101"},  {"W7700", "gfx1101"},
    {"RX 7650", "gfx1102"},      {"RX 7600", "gfx1102"},   {"W7600", "gfx1102"},    {"W7500", "gfx1102"},
    {"780M", "gfx1103"},         {"760M", "gfx1103"},      {"740M", "gfx1103"},     {"890M", "gfx1150"},
    {"880M", "gfx1150"},         {"8060S", "gfx1151"},     {"8050S", "gfx1151"},    {"8040S", "gfx1151"},
    {"RX 9070", "gfx1201"},      {"R9700", "gfx1201"},     {"RX 9060", "gfx1200"},  {"Radeon VII", "gfx906"},
    {"MI50", "gfx906"},          {"MI60", "gfx906"},       {"Vega 64", "gfx900"},   {"Vega 56", "gfx900"},
    {"Vega Frontier", "gfx900"}, {"MI25", "gfx900"},       {"RX 590", "gfx803"},    {"RX 580", "gfx803"},
    {"RX 570", "gfx803"},        {"RX 480", "gfx803"},     {"RX 470", "gfx803"},    {"MI100", "gfx908"},
    {"MI210", "gfx90a"},         {"MI250", "gfx90a"},      {"MI300", "gfx942"},     {"MI325", "gfx942"},
    {"MI350", "gfx950"},         {"MI355", "gfx950"},
};

// Chips by their code names, as the PCI ID database names devices (what lspci, rocm-smi's
// "Card Series" and amd-smi's MARKET_NAME print: "Navi 48", "Lexa PRO [Radeon RX 550/550X]",
// "Rembrandt [Radeon 680M]"), read after the product names above. The older names are LLVM
// AMDGPUUsage's "alternative processor" names (tahiti ... stoney, polaris10/11); the newer ones
// are Mesa's chip list with the target it compiles for each (src/amd/common/amd_family.h,
// ac_llvm_util.c: CHIP_NAVI21 → gfx1030, CHIP_RAPHAEL_MENDOCINO → gfx1036, CHIP_GFX1103_R1/R2
// → gfx1103, CHIP_VEGAM → gfx803). Order matters where pci.ids puts a product name holding
// another code name in brackets ("Vega 12 [Radeon Pro Vega 20]") and for APUs marketed as
// "Vega 10 Graphics" (Raven Ridge, not the Vega 10 chip). Words used for other things are left
// out: "Strix" alone (ASUS's ROG Strix boards), "Phoenix" alone (a BIOS vendor).
constexpr ProductRow k_chips[] = {
    {"Vega 11 Graphics", "gfx902"},
    {"Vega 10 Graphics", "gfx902"},
    {"Vega 12", "gfx904"},
    {"Vega 10", "gfx900"},
    {"Vega 20", "gfx906"},
    {"Raven Ridge", "gfx902"},
    {"Picasso", "gfx902"},
    {"Raven 2", "gfx909"},
    {"Dali", "gfx909"},
    {"Pollock", "gfx909"},
    {"Renoir", "gfx90c"},
    {"Cezanne", "gfx90c"},
    {"Lucienne", "gfx90c"},
    {"Barcelo", "gfx90c"},
    {"Arcturus", "gfx908"},
    {"Aldebaran", "gfx90a"},
    {"Aqua Vanjaram", "gfx942"},
    {"Navi 10", "gfx1010"},
    {"Navi 12", "gfx1011"},
    {"Navi 14", "gfx1012"},
    {"Navi 21", "gfx1030"},
    {"Navi 22", "gfx1031"},
    {"Navi 23", "gfx1032"},
    {"Van Gogh", "gfx1033"},
    {"VanGogh", "gfx1033"},
    {"Navi 24", "gfx1034"},
    {"Rembrandt", "gfx1035"},
    {"Raphael", "gfx1036"},
    {"Granite Ridge", "gfx1036"},
    {"Mendocino", "gfx1036"},
    {"Navi 31", "gfx1100"},
    {"Navi 32", "gfx1101"},
    {"Navi 33", "gfx1102"},
    {"Phoenix1", "gfx1103"},
    {"Phoenix2", "gfx1103"},
    {"Phoenix3", "gfx1103"},
    {"Phoenix4", "gfx1103"},
    {"Hawk Point", "gfx1103"},
    {"Strix Halo", "gfx1151"},
    {"Strix Point", "gfx1150"},
    {"Krackan", "gfx1152"},
    {"Navi 44", "gfx1200"},
    {"Navi 48", "gfx1201"},
    {"Ellesmere", "gfx803"},
    {"Baffin", "gfx803"},
    {"Lexa", "gfx803"},
    {"Polaris 10", "gfx803"},
    {"Polaris 11", "gfx803"},
    {"Polaris 12", "gfx803"},
    {"Polaris 20", "gfx803"},
    {"Polaris 21", "gfx803"},
    {"Polaris 22", "gfx803"},
    {"Fiji", "gfx803"},
    {"Tonga", "gfx802"},
    {"Iceland", "gfx802"},
    {"Topaz", "gfx802"},
    {"Carrizo", "gfx801"},
    {"Stoney", "gfx810"},
    {"Hawaii", "gfx701"},
    {"Bonaire", "gfx704"},
    {"Kaveri", "gfx700"},
    {"Kabini", "gfx703"},
    {"Mullins", "gfx703"},
    {"Tahiti", "gfx600"},
    {"Pitcairn", "gfx601"},
    {"Curacao", "gfx601"},  // pci.ids names Pitcairn-based R7 370 / R9 270 boards so
    {"Cape Verde", "gfx601"},
    {"Oland", "gfx602"},
    {"Hainan", "gfx602"},
};

bool is_word_char(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::optional<std::string> find_row(std::string_view haystack, std::span<const ProductRow> rows) {
    for (const auto& row : rows) {
        const auto needle = to_lower(row.name);
        for (auto pos = haystack.find(needle); pos != std::string::npos; pos = haystack.find(needle, pos + 1)) {
            const auto end = pos + needle.size();
            // "RX 6800" must not match "RX 68000" nor the mobile "RX 6800M" (listed first when
            // known); "RX 6700XT" and "RX 7900GRE" are written without the space as often as with it.
            const auto rest = std::string_view(haystack).substr(end);
            const bool left_ok = pos == 0 || !is_word_char(haystack[pos - 1]);
            const bool right_ok =
                rest.empty() || !is_word_char(rest.front()) || rest.starts_with("xt") || rest.starts_with("gre");
            if (left_ok && right_ok) return std::string(row.gfx);
        }
    }
    return std::nullopt;
}
}  // namespace

std::optional<std::string> gfx_for_marketing_name(std::string_view name) {
    const auto haystack = to_lower(name);
    if (auto gfx = find_row(haystack, k_products)) return gfx;
    return find_row(haystack, k_chips);
}

std::optional<std::string> parse_gfx_override(std::string_view value) {
    std::array<std::uint32_t, 3> parts{};
    std::string_view rest = value;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), parts[i], 10);
        if (ec != std::errc{} || ptr == rest.data()) return std::nullopt;
        rest.remove_prefix(static_cast<std::size_t>(ptr - rest.data()));
        if (i + 1 < parts.size()) {
            if (rest.empty() || rest.front() != '.') return std::nullopt;
            rest.remove_prefix(1);
        }
    }
    if (!rest.empty()) return std::nullopt;
    if (parts[0] > 63 || parts[1] > 255 || parts[2] > 255 || parts[0] == 0) return std::nullopt;
    // Minor/stepping above 15 are accepted by the runtime but name no real target.
    if (parts[1] > 15 || parts[2] > 15) return fmt::format("gfx{}{}{}", parts[0], parts[1], parts[2]);
    return fmt::format("gfx{}{:x}{:x}", parts[0], parts[1], parts[2]);
}

}  // namespace rmcp
