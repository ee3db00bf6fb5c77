// detect: read the machine through a Root into Facts, once.
#pragma once

#include "facts/facts.hpp"
#include "root/root.hpp"

#include <map>
#include <span>
#include <string>
#include <string_view>

namespace rmcp {

// Never fails: what cannot be read becomes an absent or unreadable fact.
Facts detect(const Root& root);

// Applies HSA_OVERRIDE_GFX_VERSION (or its per-node form for gpu.node) to a GPU whose
// gfx_target is known: fills effective_gfx_target and gfx_override (relation to the chip).
// Also used for a reporter's machine described by a bug report (explain/report_facts.hpp).
void apply_gfx_override(Gpu& gpu, const std::map<std::string, std::string>& env);

// Which GPUs the environment's *_VISIBLE_DEVICES hide from ROCm programs (Gpu::hidden_by):
// ROCR_VISIBLE_DEVICES selects among the agents in rocm_index order, then HIP_VISIBLE_DEVICES
// (or, when it is unset, CUDA_VISIBLE_DEVICES) among those left; an empty value hides all, a
// list with a UUID or anything else but indices decides nothing (ROCm's GPU isolation guide).
void apply_visibility(std::vector<Gpu>& gpus, const std::map<std::string, std::string>& env);

// Whether an environment variable is one detect reports (docs/domain.md lists why each matters).
bool is_relevant_env(std::string_view name);

// The same names as lists: those starting with one of `prefixes`, and the `exact` ones.
struct RelevantEnvNames {
    std::span<const std::string_view> prefixes;
    std::span<const std::string_view> exact;
};
RelevantEnvNames relevant_env_names();
// A Hyperscan pattern for a line naming one of them (a bug report's `export NAME=value`), built
// from the lists so that a report is read for every variable detect reports, no fewer.
std::string relevant_env_pattern();

}  // namespace rmcp
