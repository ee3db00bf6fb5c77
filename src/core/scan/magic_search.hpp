// Where embedded device code may start inside a byte range: the sweep of a library's data
// sections for raw AMDGPU code objects and offload bundles (scan.cpp, search_embedded).
//
// The three magics ("\x7fELF" ELF64LE, "__CLANG_OFFLOAD_BUNDLE__", "CCOB") are found in
// one pass by a Hyperscan literal database, compiled once per process, rather than one
// memmem() pass per magic: the sweep is most of what `rmcp scan` costs on a large
// library without a fat binary (docs/PERFORMANCE.md, "scan").
#pragma once

#include "scan/bytes.hpp"

#include <cstdint>
#include <vector>

namespace rmcp::scan {

// Appends to `hits`, in increasing order, the offset in `range` of every magic that lies
// wholly inside `range` and starts before `starts_before`.
void find_magics(Bytes range, std::uint64_t starts_before, std::vector<std::uint64_t>& hits);

}  // namespace rmcp::scan
