// libFuzzer target: os-release(5) (parse_os_release).
#include "detect/parsers.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const auto& [key, value] : rmcp::parse_os_release(text))
        if (key.empty() || value.size() > size) std::abort();
    return 0;
}
