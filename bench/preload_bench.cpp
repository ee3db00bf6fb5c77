// Cost of one intercepted HIP allocation call. Run twice — plain, and with
// LD_PRELOAD=librmcp_preload.so RMCP_ALLOC=trace — and subtract (bench/preload_overhead.sh).
// The runtime underneath is the malloc-backed test double, so the difference is the shim.
#include <benchmark/benchmark.h>

#include <cstddef>

extern "C" int hipMalloc(void** ptr, std::size_t size);
extern "C" int hipFree(void* ptr);

static void malloc_free_pair(benchmark::State& state) {
    const auto size = static_cast<std::size_t>(state.range(0));
    for (auto _ : state) {
        void* p = nullptr;
        benchmark::DoNotOptimize(hipMalloc(&p, size));
        benchmark::DoNotOptimize(hipFree(p));
    }
    state.SetItemsProcessed(state.iterations() * 2);  // two intercepted calls per iteration
}
BENCHMARK(malloc_free_pair)->Arg(256)->Arg(1 << 20);
BENCHMARK(malloc_free_pair)->Arg(256)->Threads(2);

BENCHMARK_MAIN();
