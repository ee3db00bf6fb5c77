// Renderers of Facts other than JSON: the human summary and NFD feature lines.
#pragma once

#include "facts/facts.hpp"
#include "util/style.hpp"

#include <string>

namespace rmcp {

std::string render_facts_text(const Facts& facts, const Style& style);

// Kubernetes Node Feature Discovery "feature file" lines (key=value), one GPU prefix per
// node: rmcp.gpu_count=1, rmcp.gfx_target=gfx1031, rmcp.gpu1.family=RDNA2 ...
std::string render_facts_nfd(const Facts& facts);

std::string human_bytes(std::uint64_t bytes);

}  // namespace rmcp
