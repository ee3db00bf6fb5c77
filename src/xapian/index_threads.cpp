// rmcp_index_threads THREADS_DIR OUT_DIR MODULE: the build step that writes the shipped index
// of the public threads (src/core/similar/index.hpp), installed as share/rmcp/threads/index.
#include "similar/index.hpp"

#include <cstdio>
#include <filesystem>

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s THREADS_DIR OUT_DIR LIBRMCP_XAPIAN_SO\n", argv[0]);
        return 2;
    }
    std::error_code ec;
    std::filesystem::remove_all(argv[2], ec);  // a build step rewrites its output whole
    const auto built = rmcp::similar::ThreadIndex::build(argv[1], argv[2], {{argv[3]}});
    if (!built) {
        std::fprintf(stderr, "rmcp_index_threads: %s\n", built.error().message().c_str());
        return 1;
    }
    return 0;
}
