// `rmcp kb lint`: checks on the knowledge base beyond what the loader enforces
// (docs/kb-format.md, "Confidence" and "How to add an entry"): every confidence level has a
// source of the kind it requires, every fix says what it costs, every fix names a patch that
// exists, and no entry above `info` fires on a machine known to be healthy.
#pragma once

#include "kb/kb.hpp"

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp::kb {

// What a reference address is, judged from its host and path only: a vendor's own
// documentation, source or tracker (AMD/ROCm, PyTorch, the Linux kernel, LLVM, Python), and/or
// a discussion thread (an issue, pull request, discussion or forum post).
struct ReferenceKind {
    bool vendor = false;
    bool thread = false;
};
ReferenceKind classify_reference(std::string_view url);

// Why an address must not be cited, or empty: ROCm's issues are cited as users know them,
// github.com/ROCm/ROCm/issues/N, never as github.com/ROCm/legacy-rocm-build/issues/N, the name
// the tracker has in the search index the corpus was collected from (same numbers; issue 30,
// item 9). Checked by `rmcp kb lint` for kb entries and for patches.
std::string reference_address_problem(std::string_view url);

// A machine known to be healthy: its facts document as doctor evaluates it (detect's JSON with
// the `libraries` coverage facts merged).
struct HealthyMachine {
    std::string name;
    nlohmann::json facts;
};

struct LintProblem {
    std::string entry;  // entry id
    std::string file;   // the entry's file
    std::string check;  // confidence-source, cost, patch, healthy-fires, reference, reference-address
    std::string message;
};

// Pure. `patches`: the ids of the shipped patches (null: not checked).
std::vector<LintProblem> lint(const KnowledgeBase& kb, const std::set<std::string>* patches,
                              const std::vector<HealthyMachine>& healthy);

// Pure. A patch's references, by the same address rule: one problem per bad reference, with the
// patch id as `entry` and its file.
struct CitedBy {
    std::string id;
    std::string file;
    std::vector<std::string> references;
};
std::vector<LintProblem> lint_reference_addresses(const std::vector<CitedBy>& sources);

}  // namespace rmcp::kb
