#include "scan/magic_search.hpp"

#include "scan/bundle.hpp"
#include "util/hyperscan.hpp"

#include <hs/hs.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string_view>

namespace rmcp::scan {

namespace {

constexpr std::array<std::string_view, 3> k_magics = {std::string_view("\x7f"
                                                                       "ELF\x02\x01\x01",
                                                                       7),
                                                      k_bundle_magic, k_compressed_magic};

// nullptr when Hyperscan cannot compile here (a CPU without SSSE3): the caller falls back.
const hs_database_t* database() {
    static const hyperscan::Database compiled = []() -> hyperscan::Database {
        hs_database_t* db = nullptr;
        std::array<const char*, k_magics.size()> expressions{};
        std::array<std::size_t, k_magics.size()> lengths{};
        std::array<unsigned, k_magics.size()> ids{};
        std::array<unsigned, k_magics.size()> flags{};
        for (unsigned i = 0; i < k_magics.size(); ++i) {
            expressions[i] = k_magics[i].data();
            lengths[i] = k_magics[i].size();
            ids[i] = i;
        }
        hs_compile_error_t* error = nullptr;
        if (hs_compile_lit_multi(expressions.data(), flags.data(), ids.data(), lengths.data(),
                                 static_cast<unsigned>(k_magics.size()), HS_MODE_BLOCK, nullptr, &db,
                                 &error) != HS_SUCCESS) {
            if (error) hs_free_compile_error(error);
            return nullptr;
        }
        return hyperscan::Database(db);
    }();
    return compiled.get();
}

constexpr std::size_t k_longest_magic =
    std::max_element(k_magics.begin(), k_magics.end(), [](auto a, auto b) { return a.size() < b.size(); }) -> size();

struct Collect {
    std::vector<std::uint64_t>* hits;
    std::uint64_t starts_before;
    std::uint64_t offset = 0;      // of the scanned piece in the range
    std::uint64_t seen_until = 0;  // matches ending here or before were reported already
};

int on_match(unsigned id, unsigned long long /*from*/, unsigned long long to, unsigned /*flags*/, void* ctx) {
    auto& c = *static_cast<Collect*>(ctx);
    const std::uint64_t end = c.offset + to;
    const std::uint64_t start = end - k_magics[id].size();
    if (end > c.seen_until && start < c.starts_before) c.hits->push_back(start);
    return 0;
}

void find_with_memmem(Bytes range, std::uint64_t starts_before, std::vector<std::uint64_t>& hits) {
    for (const auto magic : k_magics) {
        std::uint64_t p = 0;
        while (p < starts_before && p < range.size()) {
            const void* h = ::memmem(range.data() + p, range.size() - p, magic.data(), magic.size());
            if (!h) break;
            const auto at = static_cast<std::uint64_t>(static_cast<const unsigned char*>(h) - range.data());
            if (at >= starts_before) break;
            hits.push_back(at);
            p = at + 1;
        }
    }
}

}  // namespace

void find_magics(Bytes range, std::uint64_t starts_before, std::vector<std::uint64_t>& hits) {
    const auto first = hits.size();
    const hs_database_t* db = database();
    thread_local hyperscan::Scratch scratch;
    // Hyperscan takes 32-bit lengths; the sweep hands it windows of a few MiB.
    const bool usable = db && range.size() <= UINT32_MAX && hyperscan::alloc_scratch(db, scratch) == HS_SUCCESS;
    Collect collect{&hits, starts_before};
    const auto scan_piece = [&](const char* data, std::size_t size, std::uint64_t offset, std::uint64_t seen_until) {
        collect.offset = offset;
        collect.seen_until = seen_until;
        return hs_scan(db, data, static_cast<unsigned>(size), 0, scratch.get(), &on_match, &collect);
    };
    if (!usable || hyperscan::scan_without_overread(as_chars(range), k_longest_magic - 1, hs_error_t{HS_SUCCESS},
                                                    scan_piece) != HS_SUCCESS) {
        hits.resize(first);
        find_with_memmem(range, starts_before, hits);
    }
    std::sort(hits.begin() + static_cast<std::ptrdiff_t>(first), hits.end());
}

}  // namespace rmcp::scan
