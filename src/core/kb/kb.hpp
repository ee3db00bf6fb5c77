// The knowledge base: one TOML file per known problem under kb/ (docs/kb-format.md).
// Knowledge is data; the evaluator is a pure function of (facts, entry) (STYLE.md, 4).
#pragma once

#include "util/error.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace rmcp::kb {

enum class Severity { info, warning, critical };
enum class Confidence { vendor_confirmed, user_confirmed, reported, hypothesis };
enum class Scope { system, gpu };  // gpu: evaluated once per GPU, "gpu." paths bind to it

// A log pattern (a regular expression in Hyperscan's PCRE subset) and optional
// context words whose presence near the match raises its rank.
struct Signature {
    std::string pattern;
    std::vector<std::string> context;
    unsigned window = 20;  // lines either side searched for context words
    unsigned line = 0;     // where it was defined in the entry's file
};

struct FixRef {
    std::string patch;  // patch id (patches/ or kb fixes; the patch manager implements them)
    std::string cost;   // "conv backward ~20% slower", "needs reboot"
};

class Predicate;  // defined in kb/predicate.hpp

struct Entry {
    std::string id;
    std::string title;
    std::string category;  // one of k_categories
    Severity severity = Severity::info;
    Confidence confidence = Confidence::hypothesis;
    Scope scope = Scope::system;
    std::string summary;
    std::vector<std::string> references;
    std::shared_ptr<const Predicate> applies;  // null: never fires from facts (log-only entry)
    std::vector<Signature> signatures;
    std::vector<FixRef> fixes;
    std::string file;  // the TOML file it came from
};

// The fixed category list (issue 3); scripts and reports group by it.
inline constexpr const char* k_categories[] = {
    "gpu-memory-fault", "gpu-hang",        "hsa-runtime-error", "missing-code-object", "rocblas-missing-arch",
    "miopen-failure",   "kernel-driver-fault", "device-access", "fork-after-init",     "out-of-memory",
    "install-mismatch", "unsupported-gpu", "config-risk",
};

struct KnowledgeBase {
    std::vector<Entry> entries;  // sorted by id
    [[nodiscard]] const Entry* find(std::string_view id) const;
};

// Loads every *.toml under dir; the first malformed file is an error naming file:line.
Result<KnowledgeBase> load(const std::filesystem::path& dir);

std::string_view severity_name(Severity s);
std::string_view confidence_name(Confidence c);

}  // namespace rmcp::kb
