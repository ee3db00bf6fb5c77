// libFuzzer target: C headers with #define (parse_c_defines: hip_version.h, rocm_version.h).
#include "detect/parsers.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const auto& [name, value] : rmcp::parse_c_defines(text))
        if (name.empty() || value.size() > size) std::abort();
    return 0;
}
