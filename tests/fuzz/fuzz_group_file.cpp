// libFuzzer target: /etc/group and /etc/passwd (parse_group_file, passwd_name_for, passwd_home_for).
#include "detect/parsers.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const auto& g : rmcp::parse_group_file(text)) {
        if (g.name.empty()) std::abort();
        for (const auto& m : g.members)
            if (m.empty()) std::abort();
        // The same bytes as a passwd file: every id found as a gid is a fair uid to ask about.
        const auto name = rmcp::passwd_name_for(text, g.gid);
        const auto home = rmcp::passwd_home_for(text, g.gid);
        if (name.has_value() != home.has_value()) std::abort();
    }
    (void)rmcp::passwd_name_for(text, 0);
    return 0;
}
