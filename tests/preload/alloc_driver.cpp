// Drives the HIP allocation API for tests/cli/test_preload.py. Linked against the fake
// runtime (alloc_driver) or Debian's real libamdhip64 (alloc_driver_real).
//   alloc_driver basic          one of every call; prints each result code
//   alloc_driver threads T N    T threads × N malloc/free pairs of varying sizes
//   alloc_driver leak K SIZE    K allocations of SIZE bytes never freed
//   alloc_driver fail SIZE      one allocation expected to fail; prints its code
//   alloc_driver abort          allocate, then abort() like ROCr after a memory fault
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

extern "C" {
int hipMalloc(void** ptr, std::size_t size);
int hipExtMallocWithFlags(void** ptr, std::size_t size, unsigned flags);
int hipMallocManaged(void** ptr, std::size_t size, unsigned flags);
int hipMallocAsync(void** ptr, std::size_t size, void* stream);
int hipHostMalloc(void** ptr, std::size_t size, unsigned flags);
int hipFree(void* ptr);
int hipFreeAsync(void* ptr, void* stream);
int hipHostFree(void* ptr);
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "basic";
    void* p = nullptr;
    if (std::strcmp(mode, "basic") == 0) {
        std::printf("hipMalloc %d\n", hipMalloc(&p, 1000));
        std::printf("hipFree %d\n", hipFree(p));
        std::printf("hipExtMallocWithFlags %d\n", hipExtMallocWithFlags(&p, 2000, 1));
        std::printf("hipFree %d\n", hipFree(p));
        std::printf("hipMallocManaged %d\n", hipMallocManaged(&p, 3000, 1));
        std::printf("hipFree %d\n", hipFree(p));
        std::printf("hipMallocAsync %d\n", hipMallocAsync(&p, 4000, nullptr));
        std::printf("hipFreeAsync %d\n", hipFreeAsync(p, nullptr));
        std::printf("hipHostMalloc %d\n", hipHostMalloc(&p, 5000, 0));
        std::printf("hipHostFree %d\n", hipHostFree(p));
        return 0;
    }
    if (std::strcmp(mode, "threads") == 0 && argc > 3) {
        const int threads = std::atoi(argv[2]);
        const int pairs = std::atoi(argv[3]);
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([t, pairs] {
                for (int i = 0; i < pairs; ++i) {
                    void* q = nullptr;
                    if (hipMalloc(&q, static_cast<std::size_t>(64 + (t * 131 + i) % 4096)) == 0) hipFree(q);
                }
            });
        for (auto& th : pool) th.join();
        return 0;
    }
    if (std::strcmp(mode, "leak") == 0 && argc > 3) {
        const int count = std::atoi(argv[2]);
        const auto size = std::strtoull(argv[3], nullptr, 10);
        for (int i = 0; i < count; ++i) hipMalloc(&p, size);
        return 0;
    }
    if (std::strcmp(mode, "fail") == 0 && argc > 2) {
        std::printf("%d\n", hipMalloc(&p, std::strtoull(argv[2], nullptr, 10)));
        return 0;
    }
    if (std::strcmp(mode, "abort") == 0) {
        hipMalloc(&p, 1 << 20);
        std::fprintf(stderr, "Memory access fault by GPU node-1 (Agent handle: 0x5581c0a3e2a0) on address "
                             "0x7f3a1c000000. Reason: Page not present or supervisor privilege.\n");
        std::abort();
    }
    std::fprintf(stderr, "usage: alloc_driver basic|threads T N|leak K SIZE|fail SIZE|abort\n");
    return 2;
}
