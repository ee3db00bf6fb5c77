// libFuzzer target: the snapshot metadata file (.rmcp-meta), through Root::open on a
// temporary directory, then the lookups that consult it.
#include "root/root.hpp"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {
const std::filesystem::path& scratch() {
    static const std::filesystem::path dir = [] {
        std::string templ = (std::filesystem::temp_directory_path() / "rmcp-fuzz-meta-XXXXXX").string();
        if (!::mkdtemp(templ.data())) std::abort();
        return std::filesystem::path(templ);
    }();
    return dir;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    {
        std::ofstream out(scratch() / ".rmcp-meta", std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    auto root = rmcp::Root::open(scratch());
    if (!root) {
        // A rejected file names file:line and is a usage error.
        if (root.error().code != rmcp::ExitCode::usage || root.error().path.find(".rmcp-meta:") == std::string::npos)
            std::abort();
        return 0;
    }
    for (const char* p : {"/dev/kfd", "/dev/dri/renderD128", "/sys/class/kfd/kfd/topology/nodes/1/properties"}) {
        (void)root->stat(p);
        (void)root->exists(p);
        (void)root->read_file(p);
    }
    return 0;
}
