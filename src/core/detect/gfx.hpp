// GPU target names and ISA families (docs/domain.md, "ISA families and what an override can do").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp {

// gfx_target_version V → "gfx" + dec(V/10000) + hex((V/100)%100) + hex(V%100).
// Returns nullopt for 0 (CPU nodes) and for values whose parts do not fit.
std::optional<std::string> decode_gfx_target_version(std::uint64_t version);

// "gfx1031" → 100301; nullopt when the name is not a gfx target.
std::optional<std::uint32_t> encode_gfx_target(std::string_view name);

// Architecture generation: GCN3, GCN4, GCN5, CDNA1..3, RDNA1..4; nullopt when unknown.
std::optional<std::string> gfx_family(std::string_view gfx);

// LLVM generic target that covers gfx (gfx10-1-generic, ...); nullopt when none.
std::optional<std::string> gfx_generic_target(std::string_view gfx);

// Whether `a` and `b` run the same ISA (same generic target, or identical).
bool same_isa_family(std::string_view a, std::string_view b);

// AMD's official ROCm support on Linux covers this target (in some ROCm release).
bool gfx_officially_supported(std::string_view gfx);
// Every target of that list (data/rocm-support.toml is its source).
std::vector<std::string> officially_supported_targets();

// Whether the target exists only as an integrated GPU (true: an APU's, such as gfx1036, the
// desktop Ryzen 7000/9000 graphics) or only as a discrete one (false), by LLVM AMDGPUUsage's
// processor table; nullopt when both exist (gfx942: MI300A and MI300X) or the target is unknown.
std::optional<bool> gfx_integrated(std::string_view gfx);

// The gfx target of a Radeon/Instinct product from its marketing name ("AMD Radeon RX 6700 XT"
// → gfx1031), for text that names the card but not the chip (bug reports, rocminfo under an
// override, which shows the overridden target next to the real name). nullopt when the name
// is generic ("AMD Radeon Graphics") or not in the table.
std::optional<std::string> gfx_for_marketing_name(std::string_view name);

// HSA_OVERRIDE_GFX_VERSION value, as libhsakmt parses it: "%u.%u.%u", major ≤ 63,
// minor and stepping ≤ 255. Returns the target name, or nullopt when malformed.
std::optional<std::string> parse_gfx_override(std::string_view value);

}  // namespace rmcp
