// libFuzzer target: dpkg status file (dpkg_installed_version). The first line names the package
// to look up, the rest is the status file.
#include "detect/parsers.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto nl = text.find('\n');
    const auto package = text.substr(0, nl);
    const auto status = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (const auto v = rmcp::dpkg_installed_version(status, package); v && v->size() > status.size()) std::abort();
    (void)rmcp::dpkg_installed_version(status, "libamdhip64-5");
    return 0;
}
