// libFuzzer target: KFD topology `properties` (parse_kfd_properties).
#include "detect/parsers.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto props = rmcp::parse_kfd_properties(text);
    // Bad lines are reported once each, in order.
    for (std::size_t i = 1; i < props.bad_lines.size(); ++i)
        if (props.bad_lines[i] <= props.bad_lines[i - 1]) std::abort();
    for (const auto& [key, value] : props.values)
        if (key.empty() || props.get(key) != value) std::abort();
    // A key is either a value or bad (its last line decides), never both.
    for (const auto& [key, line] : props.bad_values)
        if (props.values.count(key) != 0 || line == 0 || props.bad_line_of(key) != line) std::abort();
    return 0;
}
