#include "detect/gfx.hpp"

#include "util/strings.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>

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
    {"gfx801", "GCN3", ""},   {"gfx802", "GCN3", ""},   {"gfx803", "GCN4", ""},
    {"gfx900", "GCN5", "gfx9-generic"}, {"gfx902", "GCN5", "gfx9-generic"}, {"gfx904", "GCN5", "gfx9-generic"},
    {"gfx906", "GCN5", "gfx9-generic"}, {"gfx909", "GCN5", "gfx9-generic"}, {"gfx90c", "GCN5", "gfx9-generic"},
    {"gfx908", "CDNA1", ""},  {"gfx90a", "CDNA2", ""},  {"gfx940", "CDNA3", ""},
    {"gfx941", "CDNA3", ""},  {"gfx942", "CDNA3", ""},  {"gfx950", "CDNA3", ""},
    {"gfx1010", "RDNA1", "gfx10-1-generic"}, {"gfx1011", "RDNA1", "gfx10-1-generic"},
    {"gfx1012", "RDNA1", "gfx10-1-generic"}, {"gfx1013", "RDNA1", "gfx10-1-generic"},
    {"gfx1030", "RDNA2", "gfx10-3-generic"}, {"gfx1031", "RDNA2", "gfx10-3-generic"},
    {"gfx1032", "RDNA2", "gfx10-3-generic"}, {"gfx1033", "RDNA2", "gfx10-3-generic"},
    {"gfx1034", "RDNA2", "gfx10-3-generic"}, {"gfx1035", "RDNA2", "gfx10-3-generic"},
    {"gfx1036", "RDNA2", "gfx10-3-generic"},
    {"gfx1100", "RDNA3", "gfx11-generic"}, {"gfx1101", "RDNA3", "gfx11-generic"},
    {"gfx1102", "RDNA3", "gfx11-generic"}, {"gfx1103", "RDNA3", "gfx11-generic"},
    {"gfx1150", "RDNA3.5", "gfx11-generic"}, {"gfx1151", "RDNA3.5", "gfx11-generic"},
    {"gfx1152", "RDNA3.5", "gfx11-generic"}, {"gfx1153", "RDNA3.5", "gfx11-generic"},
    {"gfx1200", "RDNA4", "gfx12-generic"}, {"gfx1201", "RDNA4", "gfx12-generic"},
};

const FamilyRow* find_family(std::string_view gfx) {
    // Feature suffixes (":xnack-") do not change the family.
    gfx = gfx.substr(0, gfx.find(':'));
    for (const auto& row : k_families)
        if (row.gfx == gfx) return &row;
    return nullptr;
}

// Targets in AMD's Linux support matrix for some ROCm release (ROCm "System requirements
// (Linux)" pages, 5.0–6.4). Consumer RDNA2 other than gfx1030 and all RDNA1 are absent.
constexpr std::string_view k_official[] = {
    "gfx900", "gfx906", "gfx908", "gfx90a", "gfx940", "gfx941", "gfx942",
    "gfx1030", "gfx1100", "gfx1101", "gfx1200", "gfx1201",
};
}  // namespace

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
