// libFuzzer target: /proc/self/environ (parse_environ) and the relevance filter snapshot uses.
#include "detect/detect.hpp"
#include "detect/parsers.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const auto& [key, value] : rmcp::parse_environ(text)) {
        if (key.empty() || key.find('=') != std::string_view::npos || key.find('\0') != std::string_view::npos)
            std::abort();
        (void)rmcp::is_relevant_env(key);
    }
    return 0;
}
