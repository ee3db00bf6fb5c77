// Hyperscan calls that never read past the end of the caller's bytes.
//
// Hyperscan 5.4.0, as Debian 12 ships it, loads whole vectors near the end of the buffer it
// scans on CPUs with AVX512VBMI (its Teddy literal matcher): up to 64 bytes beyond the last
// byte it was given. A buffer that ends where a mapping ends then faults. fuzz_scan hit it
// on the CI machine (an input ending on a page boundary); the same defect upstream is
// VectorCamp/vectorscan#322, fixed by #333, after 5.4.0. So every hs_scan / hs_scan_stream
// in rmcp hands Hyperscan the last k_overread bytes from a padded copy instead of in place.
#pragma once

#include <hs/hs.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace rmcp::hyperscan {

// Owners of what Hyperscan allocates: one way to free a database or a scratch space.
struct FreeDatabase {
    void operator()(hs_database_t* db) const noexcept { hs_free_database(db); }
};
struct FreeScratch {
    void operator()(hs_scratch_t* scratch) const noexcept { hs_free_scratch(scratch); }
};
using Database = std::unique_ptr<hs_database_t, FreeDatabase>;
using Scratch = std::unique_ptr<hs_scratch_t, FreeScratch>;

// hs_alloc_scratch on an owned scratch: grows it in place for `db` (or allocates it).
inline hs_error_t alloc_scratch(const hs_database_t* db, Scratch& scratch) {
    hs_scratch_t* raw = scratch.release();
    const hs_error_t rc = hs_alloc_scratch(db, &raw);
    scratch.reset(raw);
    return rc;
}

// How far past the end of its buffer Hyperscan may read (one AVX-512 vector).
inline constexpr std::size_t k_overread = 64;
// The most bytes a caller may ask to see again before the cut (see scan_without_overread).
inline constexpr std::size_t k_max_overlap = 64;

// Calls `scan(const char* data, std::size_t size, std::uint64_t offset, std::uint64_t seen_until)`
// over `bytes`, where `offset` is the position of `data` in `bytes`, so that Hyperscan is
// never handed a buffer whose end is the end of `bytes`: bytes[0, n - k_overread) in place,
// then the rest from a copy followed by k_overread zero bytes. Stream mode continues across
// the calls as it does across any two. Block mode passes `overlap` (its longest pattern minus
// one, at most k_max_overlap) so that the copy starts that many bytes early and a match
// across the cut is found whole; a match of the copy that ends at or before `seen_until`
// (a position in `bytes`) was found by the first call already. Returns the first result
// that is not `ok`.
template <class Scan, class Status>
Status scan_without_overread(std::string_view bytes, std::size_t overlap, Status ok, Scan&& scan) {
    overlap = std::min(overlap, k_max_overlap);
    const std::size_t n = bytes.size();
    const std::size_t cut = n > k_overread ? n - k_overread : 0;
    if (cut > 0)
        if (const Status s = scan(bytes.data(), cut, std::uint64_t{0}, std::uint64_t{0}); s != ok) return s;
    const std::size_t from = cut > overlap ? cut - overlap : 0;
    std::array<char, k_max_overlap + 2 * k_overread> copy{};
    std::copy(bytes.begin() + static_cast<std::ptrdiff_t>(from), bytes.end(), copy.begin());
    return scan(copy.data(), n - from, std::uint64_t{from}, std::uint64_t{cut});
}

}  // namespace rmcp::hyperscan
