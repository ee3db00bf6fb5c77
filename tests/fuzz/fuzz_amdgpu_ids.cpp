// libFuzzer target: libdrm amdgpu.ids (parse_amdgpu_ids).
#include "detect/parsers.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto ids = rmcp::parse_amdgpu_ids(text);
    for (const auto& [key, name] : ids.names) {
        if (key.first > 0xffff || key.second > 0xff || name.empty()) std::abort();
        if (ids.lookup(key.first, key.second) != name) std::abort();
    }
    return 0;
}
