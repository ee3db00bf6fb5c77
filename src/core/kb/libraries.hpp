// Coverage facts for the knowledge base: doctor stores scan's `libraries` object in the
// facts document and gives every GPU its own view of the coverage rows, so that a
// gpu-scope entry can ask about *this* GPU (docs/kb-format.md, "Coverage facts").
#pragma once

#include <nlohmann/json.hpp>

namespace rmcp::kb {

// Pure. Stores `libraries` under facts["libraries"] and, for each element of facts.gpus
// with coverage rows (matched by KFD node), adds
//   gpus[i].coverage.<library>  : [rows of libraries.coverage for that GPU and library]
//   gpus[i].coverage_missing    : sorted library names with some row not covered
// Rows are copied as they are (covered, covered_by, nearest, override, ...). A GPU with no
// rows gets neither key: "absent" then means "not scanned, or nothing carries device code",
// which is what the knowledge base's version-based fallbacks test for.
void merge_libraries(nlohmann::json& facts, nlohmann::json libraries);

}  // namespace rmcp::kb
