// Where rmcp finds its own files (docs/install.md, "Layout"): relative to the binary when it
// is installed, so that any prefix works and a moved tree keeps working, else where
// RMCP_DATA_DIR points, else the checkout it was built from.
#pragma once

#include <filesystem>

namespace rmcp::cli {

// The directory holding kb/, patches/, profiles/, probe/ and python/: <bin>/../share/rmcp
// when it has a kb/, else $RMCP_DATA_DIR when set, else the source tree of this build.
std::filesystem::path shipped_data_dir();

// The installed private library directory (<bin>/../lib/<multiarch>/rmcp), where
// librmcp_preload.so lives; empty when the binary's own path is unknown.
std::filesystem::path installed_library_dir();

// The directory of the running binary (/proc/self/exe); empty when unknown.
std::filesystem::path executable_dir();

}  // namespace rmcp::cli
