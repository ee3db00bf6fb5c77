// alloc_loader LIB SIZE: dlopen(LIB, RTLD_LOCAL) — as Python loads extension modules — and
// allocate through it. The HIP runtime LIB links is then outside the global scope, which
// is the case the shim's fallback lookup exists for.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: alloc_loader LIB SIZE\n");
        return 2;
    }
    void* lib = dlopen(argv[1], RTLD_LOCAL | RTLD_NOW);
    if (!lib) {
        std::fprintf(stderr, "%s\n", dlerror());
        return 3;
    }
    using Consume = int (*)(std::size_t);
    const auto consume = reinterpret_cast<Consume>(dlsym(lib, "rmcp_test_consume"));
    std::printf("%d\n", consume(std::strtoull(argv[2], nullptr, 10)));
    return 0;
}
