#include "install_paths.hpp"

#include <cstdlib>

// Set by src/cli/CMakeLists.txt from cmake/InstallDirs.cmake.
#ifndef RMCP_BIN_TO_DATADIR
#define RMCP_BIN_TO_DATADIR "../share/rmcp"
#endif
#ifndef RMCP_BIN_TO_PRIVLIBDIR
#define RMCP_BIN_TO_PRIVLIBDIR "../lib/rmcp"
#endif
#ifndef RMCP_DEFAULT_DATA_DIR
#define RMCP_DEFAULT_DATA_DIR "."
#endif

namespace rmcp::cli {

std::filesystem::path executable_dir() {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::filesystem::path() : exe.parent_path();
}

std::filesystem::path shipped_data_dir() {
    // The installed layout comes first: an installed rmcp uses the data it was shipped with,
    // even when RMCP_DATA_DIR is left over from a checkout (--kb DIR still overrides the kb).
    if (const auto bin = executable_dir(); !bin.empty()) {
        const auto installed = (bin / RMCP_BIN_TO_DATADIR).lexically_normal();
        std::error_code ec;
        if (std::filesystem::is_directory(installed / "kb", ec)) return installed;
    }
    if (const char* env = std::getenv("RMCP_DATA_DIR"); env && *env) return env;
    return RMCP_DEFAULT_DATA_DIR;
}

std::filesystem::path installed_library_dir() {
    const auto bin = executable_dir();
    return bin.empty() ? bin : (bin / RMCP_BIN_TO_PRIVLIBDIR).lexically_normal();
}

}  // namespace rmcp::cli
