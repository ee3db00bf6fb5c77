// libFuzzer target: /proc/self/status (parse_proc_status).
#include "detect/parsers.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto st = rmcp::parse_proc_status(text);
    if (st.groups.size() > size) std::abort();  // each group needs at least one digit
    return 0;
}
