// librmcp_preload.so — trace and steer HIP allocations without touching the program.
//
//   LD_PRELOAD=build/librmcp_preload.so RMCP_ALLOC=trace RMCP_ALLOC_LOG=alloc.json python train.py
//
// RMCP_ALLOC (comma-separated):
//   trace     count calls, bytes, live and peak bytes, failures, largest request, and keep a
//             ring of the last k_ring_size events; write a JSON summary at exit and on fatal
//             signals to RMCP_ALLOC_LOG (default: stderr).
//   uncached  serve hipMalloc with hipExtMallocWithFlags(..., hipDeviceMallocUncached).
//   (unset)   pass every call straight through.
//
// Rules this file keeps:
//   - The constructor makes no HIP call and loads nothing: the real symbols are resolved at
//     the first intercepted call, from libraries the process has already loaded.
//   - A program that never calls HIP is unaffected: no handlers, no output.
//   - Error codes are returned unchanged.
//   - Thread-safe; the common path takes one striped lock for the pointer→size table and
//     otherwise uses relaxed atomics.
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <mutex>
#include <pthread.h>
#include <unistd.h>

namespace {

// The ABI we intercept: hipError_t is an enum (int), hipStream_t a pointer.
using HipError = int;
using HipStream = void*;
constexpr HipError k_hip_success = 0;
constexpr HipError k_hip_symbol_not_found = 302;      // hipErrorSharedObjectSymbolNotFound
constexpr unsigned k_hip_device_malloc_uncached = 3;  // hipDeviceMallocUncached (HIP ≥ 5.3)

enum class Api : unsigned {
    malloc,
    free,
    malloc_managed,
    ext_malloc_with_flags,
    malloc_async,
    free_async,
    host_malloc,
    host_free,
    count
};
constexpr const char* k_api_names[] = {"hipMalloc",      "hipFree",      "hipMallocManaged", "hipExtMallocWithFlags",
                                       "hipMallocAsync", "hipFreeAsync", "hipHostMalloc",    "hipHostFree"};
constexpr std::size_t k_api_count = static_cast<std::size_t>(Api::count);

// ---- configuration, read once at the first intercepted call -------------------------------

struct Config {
    bool trace = false;
    bool uncached = false;
    char log_path[512] = {};
};

Config g_config;
std::once_flag g_config_once;

void read_config() {
    const char* mode = std::getenv("RMCP_ALLOC");
    if (mode) {
        const char* p = mode;
        while (*p) {
            const char* end = std::strchr(p, ',');
            const std::size_t n = end ? static_cast<std::size_t>(end - p) : std::strlen(p);
            if (n == 5 && std::strncmp(p, "trace", 5) == 0) g_config.trace = true;
            if (n == 8 && std::strncmp(p, "uncached", 8) == 0) g_config.uncached = true;
            p += n;
            if (*p == ',') ++p;
        }
    }
    if (const char* log = std::getenv("RMCP_ALLOC_LOG"))
        std::snprintf(g_config.log_path, sizeof g_config.log_path, "%s", log);
}

// ---- real symbol resolution --------------------------------------------------------------

// Finds a loaded library whose path names the HIP runtime, without loading anything.
int find_hip_runtime(dl_phdr_info* info, std::size_t, void* out) {
    if (info->dlpi_name && std::strstr(info->dlpi_name, "libamdhip64")) {
        *static_cast<void**>(out) = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
        return *static_cast<void**>(out) ? 1 : 0;
    }
    return 0;
}

void* resolve(const char* name) {
    // Usual case: the runtime is in the global scope after us.
    if (void* sym = dlsym(RTLD_NEXT, name)) return sym;
    // Python loads extensions RTLD_LOCAL, so libamdhip64 may be outside the global scope.
    // RTLD_NOLOAD guarantees we never load HIP ourselves.
    void* handle = nullptr;
    dl_iterate_phdr(find_hip_runtime, &handle);
    // Tests point at a stand-in runtime with this variable (see tests/preload/).
    if (!handle)
        if (const char* lib = std::getenv("RMCP_ALLOC_HIP_LIBRARY")) handle = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
    return handle ? dlsym(handle, name) : nullptr;
}

template <class Fn>
Fn real(std::atomic<void*>& slot, const char* name) {
    void* fn = slot.load(std::memory_order_acquire);
    if (!fn) {
        fn = resolve(name);  // idempotent: racing threads store the same pointer
        slot.store(fn, std::memory_order_release);
    }
    return reinterpret_cast<Fn>(fn);
}

std::atomic<void*> g_real[k_api_count];

// ---- statistics ----------------------------------------------------------------------------

struct Event {
    std::uint64_t time_ns;
    std::uint64_t size;
    std::uintptr_t ptr;
    std::uint32_t api;
    std::int32_t result;
};
constexpr std::size_t k_ring_size = 64;

struct Stats {
    std::atomic<std::uint64_t> calls[k_api_count];
    std::atomic<std::uint64_t> failures{0};
    std::atomic<std::uint64_t> bytes_allocated{0};
    std::atomic<std::uint64_t> live_bytes{0};
    std::atomic<std::uint64_t> live_allocations{0};
    std::atomic<std::uint64_t> peak_live_bytes{0};
    std::atomic<std::uint64_t> largest_request{0};
    std::atomic<std::uint64_t> last_failure_size{0};
    std::atomic<std::int32_t> last_failure_error{0};
    std::atomic<std::uint32_t> last_failure_api{0};
    std::atomic<std::uint64_t> ring_next{0};
    Event ring[k_ring_size];
};
Stats g_stats;
std::atomic<bool> g_used{false};

// Pointer → size: an open-addressing table (linear probing, tombstones) split into
// stripes, each behind its own spinlock, so the hot path never allocates and concurrent
// threads rarely meet on one lock. A full stripe stops tracking sizes (counted in
// "untracked"), it never blocks or fails the call.
constexpr std::size_t k_stripes = 64;
constexpr std::size_t k_stripe_slots = 8192;  // 64 × 8192 × 16 B = 8 MiB of address space, touched lazily
constexpr std::uintptr_t k_empty = 0;
constexpr std::uintptr_t k_tombstone = 1;

struct alignas(64) Stripe {
    std::atomic_flag lock = ATOMIC_FLAG_INIT;
    std::uintptr_t keys[k_stripe_slots];
    std::uint64_t sizes[k_stripe_slots];
};
Stripe* g_stripes = nullptr;  // mapped at first use (zeroed by calloc), kept until exit
std::atomic<std::uint64_t> g_untracked{0};

class StripeGuard {
public:
    explicit StripeGuard(Stripe& s) : m_s(s) {
        while (m_s.lock.test_and_set(std::memory_order_acquire)) {}
    }
    ~StripeGuard() { m_s.lock.clear(std::memory_order_release); }
    StripeGuard(const StripeGuard&) = delete;
    StripeGuard& operator=(const StripeGuard&) = delete;

private:
    Stripe& m_s;
};

std::size_t hash_ptr(std::uintptr_t v) {
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdULL;
    v ^= v >> 33;
    return static_cast<std::size_t>(v);
}

Stripe& stripe_for(std::uintptr_t key) { return g_stripes[hash_ptr(key) % k_stripes]; }

void table_insert(std::uintptr_t key, std::uint64_t size) {
    Stripe& s = stripe_for(key);
    StripeGuard guard(s);
    std::size_t i = (hash_ptr(key) / k_stripes) % k_stripe_slots;
    for (std::size_t probes = 0; probes < k_stripe_slots; ++probes, i = (i + 1) % k_stripe_slots) {
        if (s.keys[i] == k_empty || s.keys[i] == k_tombstone || s.keys[i] == key) {
            s.keys[i] = key;
            s.sizes[i] = size;
            return;
        }
    }
    g_untracked.fetch_add(1, std::memory_order_relaxed);
}

// Returns the size recorded for key and forgets it; nullopt-like 'false' when unknown.
bool table_erase(std::uintptr_t key, std::uint64_t& size) {
    Stripe& s = stripe_for(key);
    StripeGuard guard(s);
    std::size_t i = (hash_ptr(key) / k_stripes) % k_stripe_slots;
    for (std::size_t probes = 0; probes < k_stripe_slots; ++probes, i = (i + 1) % k_stripe_slots) {
        if (s.keys[i] == k_empty) return false;
        if (s.keys[i] == key) {
            size = s.sizes[i];
            s.keys[i] = k_tombstone;
            return true;
        }
    }
    return false;
}

std::uint64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);  // ~ms resolution is enough for a ring of events
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000U + static_cast<std::uint64_t>(ts.tv_nsec);
}

void record_event(Api api, const void* ptr, std::uint64_t size, HipError result) {
    const auto slot = g_stats.ring_next.fetch_add(1, std::memory_order_relaxed) % k_ring_size;
    g_stats.ring[slot] =
        Event{now_ns(), size, reinterpret_cast<std::uintptr_t>(ptr), static_cast<std::uint32_t>(api), result};
}

void on_alloc(Api api, void* ptr, std::uint64_t size, HipError result) {
    g_stats.calls[static_cast<std::size_t>(api)].fetch_add(1, std::memory_order_relaxed);
    std::uint64_t largest = g_stats.largest_request.load(std::memory_order_relaxed);
    while (size > largest && !g_stats.largest_request.compare_exchange_weak(largest, size)) {}
    record_event(api, ptr, size, result);
    if (result != k_hip_success || !ptr) {
        g_stats.failures.fetch_add(1, std::memory_order_relaxed);
        g_stats.last_failure_size.store(size, std::memory_order_relaxed);
        g_stats.last_failure_error.store(result, std::memory_order_relaxed);
        g_stats.last_failure_api.store(static_cast<std::uint32_t>(api), std::memory_order_relaxed);
        return;
    }
    table_insert(reinterpret_cast<std::uintptr_t>(ptr), size);
    g_stats.bytes_allocated.fetch_add(size, std::memory_order_relaxed);
    g_stats.live_allocations.fetch_add(1, std::memory_order_relaxed);
    const auto live = g_stats.live_bytes.fetch_add(size, std::memory_order_relaxed) + size;
    std::uint64_t peak = g_stats.peak_live_bytes.load(std::memory_order_relaxed);
    while (live > peak && !g_stats.peak_live_bytes.compare_exchange_weak(peak, live)) {}
}

void on_free(Api api, void* ptr, HipError result) {
    g_stats.calls[static_cast<std::size_t>(api)].fetch_add(1, std::memory_order_relaxed);
    std::uint64_t size = 0;
    if (ptr && result == k_hip_success && table_erase(reinterpret_cast<std::uintptr_t>(ptr), size)) {
        g_stats.live_bytes.fetch_sub(size, std::memory_order_relaxed);
        g_stats.live_allocations.fetch_sub(1, std::memory_order_relaxed);
    }
    if (result != k_hip_success) {
        g_stats.failures.fetch_add(1, std::memory_order_relaxed);
        g_stats.last_failure_error.store(result, std::memory_order_relaxed);
        g_stats.last_failure_api.store(static_cast<std::uint32_t>(api), std::memory_order_relaxed);
    }
    record_event(api, ptr, size, result);
}

// ---- summary (async-signal-safe: fixed buffer, no allocation, write(2)) -------------------

class Writer {
public:
    void str(const char* s) {
        while (*s && m_len < sizeof m_buf) m_buf[m_len++] = *s++;
    }
    void num(std::uint64_t v) {
        char digits[24];
        int n = 0;
        do {
            digits[n++] = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v);
        while (n && m_len < sizeof m_buf) m_buf[m_len++] = digits[--n];
    }
    void snum(std::int64_t v) {
        if (v < 0) {
            str("-");
            num(static_cast<std::uint64_t>(-v));
        } else {
            num(static_cast<std::uint64_t>(v));
        }
    }
    void field(const char* key, std::uint64_t v, bool comma = true) {
        str("\"");
        str(key);
        str("\":");
        num(v);
        if (comma) str(",");
    }
    void flush(int fd) {
        std::size_t off = 0;
        while (off < m_len) {
            const ssize_t n = write(fd, m_buf + off, m_len - off);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            off += static_cast<std::size_t>(n);
        }
    }

private:
    char m_buf[16384];
    std::size_t m_len = 0;
};

std::atomic<bool> g_summary_written{false};

void write_summary(const char* reason, int signal_number) {
    if (!g_config.trace || !g_used.load() || g_summary_written.exchange(true)) return;
    static Writer w;  // static: a signal handler may run on a small stack
    w.str("{\"schema_version\":1,\"tool\":\"librmcp_preload\",\"mode\":\"trace");
    if (g_config.uncached) w.str(",uncached");
    w.str("\",\"reason\":\"");
    w.str(reason);
    w.str("\",");
    w.field("signal", static_cast<std::uint64_t>(signal_number));
    w.field("pid", static_cast<std::uint64_t>(getpid()));
    w.str("\"calls\":{");
    for (std::size_t i = 0; i < k_api_count; ++i) w.field(k_api_names[i], g_stats.calls[i].load(), i + 1 < k_api_count);
    w.str("},");
    w.field("bytes_allocated", g_stats.bytes_allocated.load());
    w.field("live_bytes", g_stats.live_bytes.load());
    w.field("live_allocations", g_stats.live_allocations.load());
    w.field("peak_live_bytes", g_stats.peak_live_bytes.load());
    w.field("largest_request", g_stats.largest_request.load());
    w.field("failures", g_stats.failures.load());
    w.field("untracked", g_untracked.load());
    w.str("\"last_failure\":");
    if (g_stats.failures.load()) {
        w.str("{\"api\":\"");
        w.str(k_api_names[g_stats.last_failure_api.load() % k_api_count]);
        w.str("\",");
        w.field("size", g_stats.last_failure_size.load());
        w.str("\"error\":");
        w.snum(g_stats.last_failure_error.load());
        w.str("},");
    } else {
        w.str("null,");
    }
    w.str("\"events\":[");
    const auto total = g_stats.ring_next.load();
    const auto first = total > k_ring_size ? total - k_ring_size : 0;
    for (auto i = first; i < total; ++i) {
        const Event& e = g_stats.ring[i % k_ring_size];
        w.str("{\"api\":\"");
        w.str(k_api_names[e.api % k_api_count]);
        w.str("\",");
        w.field("t_ns", e.time_ns);
        w.field("size", e.size);
        w.field("ptr", e.ptr);
        w.str("\"result\":");
        w.snum(e.result);
        w.str(i + 1 < total ? "}," : "}");
    }
    w.str("]}\n");
    int fd = STDERR_FILENO;
    if (g_config.log_path[0]) {
        // rmcp run points this into a private directory (mkdtemp, 0700); never through a link.
        const int opened = open(g_config.log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (opened >= 0) fd = opened;
    }
    w.flush(fd);
    if (fd != STDERR_FILENO) close(fd);
}

constexpr int k_fatal_signals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE};
struct sigaction g_previous[sizeof k_fatal_signals / sizeof k_fatal_signals[0]];

void on_fatal_signal(int sig) {
    write_summary("signal", sig);
    // Restore what was there before us and let the signal do what it would have done.
    for (std::size_t i = 0; i < std::size(k_fatal_signals); ++i)
        if (k_fatal_signals[i] == sig) sigaction(sig, &g_previous[i], nullptr);
    raise(sig);
}

void at_exit_summary() { write_summary("exit", 0); }

// Called at the first intercepted call only, so a program without HIP sees no change.
std::atomic<bool> g_ready{false};

void first_use() {
    if (g_ready.load(std::memory_order_acquire)) return;
    std::call_once(g_config_once, [] {
        read_config();
        g_used.store(true, std::memory_order_relaxed);
        if (!g_config.trace) return;
        g_stripes = static_cast<Stripe*>(std::calloc(k_stripes, sizeof(Stripe)));
        if (!g_stripes) {  // no table: count calls only
            g_config.trace = false;
            return;
        }
        std::atexit(at_exit_summary);
        for (std::size_t i = 0; i < std::size(k_fatal_signals); ++i) {
            struct sigaction sa {};
            sa.sa_handler = on_fatal_signal;
            sigemptyset(&sa.sa_mask);
            sa.sa_flags = static_cast<int>(SA_RESETHAND | SA_NODEFER);
            sigaction(k_fatal_signals[i], &sa, &g_previous[i]);
        }
    });
    g_ready.store(true, std::memory_order_release);
}

using MallocFn = HipError (*)(void**, std::size_t);
using MallocFlagsFn = HipError (*)(void**, std::size_t, unsigned);
using MallocAsyncFn = HipError (*)(void**, std::size_t, HipStream);
using FreeFn = HipError (*)(void*);
using FreeAsyncFn = HipError (*)(void*, HipStream);

template <class Fn>
Fn real_of(Api api) {
    return real<Fn>(g_real[static_cast<std::size_t>(api)], k_api_names[static_cast<std::size_t>(api)]);
}

// One wrapper shape for every allocating call: resolve, call, record.
template <class Fn, class... Args>
HipError intercept_alloc(Api api, void** ptr, std::size_t size, Args... args) {
    first_use();
    const auto fn = real_of<Fn>(api);
    const HipError result = fn ? fn(ptr, size, args...) : k_hip_symbol_not_found;
    if (g_config.trace) on_alloc(api, result == k_hip_success && ptr ? *ptr : nullptr, size, result);
    return result;
}

template <class Fn, class... Args>
HipError intercept_free(Api api, void* ptr, Args... args) {
    first_use();
    const auto fn = real_of<Fn>(api);
    const HipError result = fn ? fn(ptr, args...) : k_hip_symbol_not_found;
    if (g_config.trace) on_free(api, ptr, result);
    return result;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) HipError hipMalloc(void** ptr, std::size_t size) {
    first_use();
    if (g_config.uncached)
        return intercept_alloc<MallocFlagsFn>(Api::ext_malloc_with_flags, ptr, size, k_hip_device_malloc_uncached);
    return intercept_alloc<MallocFn>(Api::malloc, ptr, size);
}

__attribute__((visibility("default"))) HipError hipExtMallocWithFlags(void** ptr, std::size_t size, unsigned flags) {
    return intercept_alloc<MallocFlagsFn>(Api::ext_malloc_with_flags, ptr, size, flags);
}

__attribute__((visibility("default"))) HipError hipMallocManaged(void** ptr, std::size_t size, unsigned flags) {
    return intercept_alloc<MallocFlagsFn>(Api::malloc_managed, ptr, size, flags);
}

__attribute__((visibility("default"))) HipError hipMallocAsync(void** ptr, std::size_t size, HipStream stream) {
    return intercept_alloc<MallocAsyncFn>(Api::malloc_async, ptr, size, stream);
}

__attribute__((visibility("default"))) HipError hipHostMalloc(void** ptr, std::size_t size, unsigned flags) {
    return intercept_alloc<MallocFlagsFn>(Api::host_malloc, ptr, size, flags);
}

__attribute__((visibility("default"))) HipError hipFree(void* ptr) { return intercept_free<FreeFn>(Api::free, ptr); }

__attribute__((visibility("default"))) HipError hipFreeAsync(void* ptr, HipStream stream) {
    return intercept_free<FreeAsyncFn>(Api::free_async, ptr, stream);
}

__attribute__((visibility("default"))) HipError hipHostFree(void* ptr) {
    return intercept_free<FreeFn>(Api::host_free, ptr);
}

}  // extern "C"
