// TEST DOUBLE — not HIP. A stand-in runtime exporting the allocation API with the same
// signatures, backed by malloc, so librmcp_preload.so can be tested without a GPU.
// RMCP_FAKE_HIP_FAIL_ABOVE=N makes allocations larger than N bytes fail with
// hipErrorOutOfMemory (2), as a real runtime would when memory runs out.
#include <cstddef>
#include <cstdlib>

namespace {
constexpr int k_success = 0;
constexpr int k_invalid_value = 1;
constexpr int k_out_of_memory = 2;

int allocate(void** ptr, std::size_t size) {
    if (!ptr) return k_invalid_value;
    if (const char* limit = std::getenv("RMCP_FAKE_HIP_FAIL_ABOVE");
        limit && size > std::strtoull(limit, nullptr, 10)) {
        *ptr = nullptr;
        return k_out_of_memory;
    }
    *ptr = std::malloc(size ? size : 1);
    return *ptr ? k_success : k_out_of_memory;
}
}  // namespace

extern "C" {
int hipMalloc(void** ptr, std::size_t size) { return allocate(ptr, size); }
int hipExtMallocWithFlags(void** ptr, std::size_t size, unsigned) { return allocate(ptr, size); }
int hipMallocManaged(void** ptr, std::size_t size, unsigned) { return allocate(ptr, size); }
int hipMallocAsync(void** ptr, std::size_t size, void*) { return allocate(ptr, size); }
int hipHostMalloc(void** ptr, std::size_t size, unsigned) { return allocate(ptr, size); }
int hipFree(void* ptr) {
    std::free(ptr);
    return k_success;
}
int hipFreeAsync(void* ptr, void*) {
    std::free(ptr);
    return k_success;
}
int hipHostFree(void* ptr) {
    std::free(ptr);
    return k_success;
}
}
