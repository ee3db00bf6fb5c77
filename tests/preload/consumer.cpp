// A library that uses HIP the way libtorch_hip does, loaded by alloc_driver with
// dlopen(RTLD_LOCAL) — as Python loads extension modules — so the runtime it links is
// outside the global symbol scope and the shim's RTLD_NEXT lookup cannot see it.
#include <cstddef>

extern "C" int hipMalloc(void** ptr, std::size_t size);
extern "C" int hipFree(void* ptr);

extern "C" int rmcp_test_consume(std::size_t size) {
    void* p = nullptr;
    const int r = hipMalloc(&p, size);
    if (r == 0) hipFree(p);
    return r;
}
