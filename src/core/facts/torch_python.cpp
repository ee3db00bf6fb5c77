#include "facts/torch_python.hpp"

namespace rmcp {

std::string torch_python(std::string_view torch_dir, std::string_view origin) {
    if (!torch_dir.ends_with("/torch")) return {};
    std::string_view site = torch_dir.substr(0, torch_dir.size() - 6);  // .../site-packages
    if (site == "/usr/lib/python3/dist-packages") return "/usr/bin/python3";
    const auto slash = site.rfind('/');
    if (slash == std::string_view::npos) return {};
    const std::string_view kind = site.substr(slash + 1);  // site-packages | dist-packages
    if (kind != "site-packages" && kind != "dist-packages") return {};
    const std::string_view version_dir = site.substr(0, slash);  // PREFIX/lib/python3.X
    const auto lib_slash = version_dir.rfind('/');
    if (lib_slash == std::string_view::npos) return {};
    const std::string_view python = version_dir.substr(lib_slash + 1);  // python3.X
    if (!python.starts_with("python3")) return {};
    const std::string_view lib = version_dir.substr(0, lib_slash);  // PREFIX/lib
    if (!lib.ends_with("/lib")) return {};
    const std::string_view prefix = lib.substr(0, lib.size() - 4);
    if (origin == "user") return "/usr/bin/" + std::string(python);
    // Debian's python3.X reads /usr/local/lib/python3.X/dist-packages (what pip installs into).
    if (prefix == "/usr/local" && kind == "dist-packages") return "/usr/bin/" + std::string(python);
    return std::string(prefix) + "/bin/" + std::string(python);
}

}  // namespace rmcp
