// libFuzzer target: gfx names and HSA_OVERRIDE_GFX_VERSION values (detect/gfx.hpp).
#include "detect/gfx.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    (void)rmcp::parse_gfx_override(text);
    if (const auto v = rmcp::encode_gfx_target(text)) (void)rmcp::decode_gfx_target_version(*v);
    (void)rmcp::gfx_family(text);
    (void)rmcp::same_isa_family(text, "gfx1030");
    // decode → encode must give the number back.
    std::uint64_t version = 0;
    std::memcpy(&version, data, size < sizeof version ? size : sizeof version);
    version %= 640000;  // majors above 63 name no target (libhsakmt caps overrides there too)
    if (const auto name = rmcp::decode_gfx_target_version(version)) {
        const auto again = rmcp::encode_gfx_target(*name);
        if (!again || *again != version) std::abort();
    }
    return 0;
}
