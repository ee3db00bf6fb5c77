// libFuzzer target: torch/version.py (parse_python_assignments).
#include "detect/parsers.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const auto& [name, value] : rmcp::parse_python_assignments(text)) {
        if (name.empty() || name.find_first_of(" ()[]:") != std::string::npos) std::abort();
        if (value && value->size() > size) std::abort();
    }
    return 0;
}
