// The knowledge base: one TOML file per known problem under kb/ (docs/kb-format.md).
// Knowledge is data; the evaluator is a pure function of (facts, entry) (ARCHITECTURE.md, principle 4).
#pragma once

#include "util/error.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

namespace rmcp::kb {

enum class Severity { info, warning, critical };
// `generic`: a family entry that answers for a whole message family (any HSA status error,
// any MIOpen error) when no specific entry recognises the line; it names the category the
// family implies and the next diagnostic step, never a cause (docs/kb-format.md).
enum class Confidence { vendor_confirmed, user_confirmed, reported, hypothesis, generic };
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
    std::string next_step;  // optional: the next diagnostic step (which log level or variable says more)
    // optional: what usually causes it, one or two sentences for a worried user (`rmcp explain`'s
    // `what:` line adds them to the summary's first sentence; newcomer review, finding 11)
    std::string causes;
    // optional: the entry recognises a message that several causes print, not one cause; the
    // real threads show it (docs/kb-format.md, "cause_varies"). Its answers have basis `family`
    // ("likely"), never `signature`: a user may trust a `signature` answer blindly.
    bool cause_varies = false;
    // optional: where the sources disagree with an earlier reading or with each other, and
    // what was decided (shown by `rmcp kb show`, not by doctor or explain)
    std::string notes;
    std::vector<std::string> references;
    std::shared_ptr<const Predicate> applies;  // null: never fires from facts (log-only entry)
    std::vector<Signature> signatures;
    std::vector<FixRef> fixes;
    std::string file;  // the TOML file it came from
};

// The fixed category list; scripts and reports group by it.
inline constexpr const char* k_categories[] = {
    "gpu-memory-fault",     "gpu-hang",       "hsa-runtime-error",   "missing-code-object",
    "rocblas-missing-arch", "miopen-failure", "kernel-driver-fault", "device-access",
    "fork-after-init",      "out-of-memory",  "install-mismatch",    "unsupported-gpu",
    "config-risk",
};

// A family entry (confidence `generic`) ranks after every specific entry.
inline bool is_family(const Entry& e) { return e.confidence == Confidence::generic; }

struct KnowledgeBase {
    std::vector<Entry> entries;  // sorted by id
    [[nodiscard]] const Entry* find(std::string_view id) const;
};

// Loads every *.toml under dir; the first malformed file is an error naming file:line.
Result<KnowledgeBase> load(const std::filesystem::path& dir);
// One entry from TOML text; `path` names it in errors and its stem must equal the id
// (tests and the fuzz target use this without touching the file system).
Result<Entry> load_entry(std::string_view text, const std::string& path);

// One leaf fact that decided a predicate: the concrete path ("gpus[1].gfx_target"),
// its value (null: absent) and the test applied ("equals gfx1010").
struct Evidence {
    std::string fact;
    nlohmann::json value;
    std::string test;
};

// Where a finding stands once the state rmcp put the machine in is taken into account
// (patch/doctor_fix.hpp decides it; the evaluator leaves every finding open):
//   open              it holds in the environment a training run would get
//   fixed_by_profile  it holds in the process environment, not with profile.env (or the
//                     profile asked for) applied, as `rmcp run` and `rmcp env` apply them
//   fixed             one of its fixes is applied and in place; facts cannot show the effect
//   pending           its applied fix takes effect after a reboot or a new login
// `info`: an info-severity entry is a fact about the machine, never a problem to fix, so it is
// never open and never counted by --fail-on (docs/kb-format.md, "Severity").
enum class FindingStatus { open, fixed_by_profile, fixed, pending, info };
std::string_view finding_status_name(FindingStatus s);

struct Finding {
    const Entry* entry = nullptr;            // owned by the KnowledgeBase
    std::optional<std::size_t> gpu_index;    // gpu scope: index into facts.gpus
    std::optional<unsigned> gpu_node;        // gpu scope: its KFD node, when it has one
    std::optional<unsigned> gpu_rocm_index;  // gpu scope: ROCm's device index ("GPU N"), when enumerated
    std::vector<Evidence> evidence;
    FindingStatus status = FindingStatus::open;
    std::string fixed_by;       // transaction id, when a journal names the fix
    std::string status_detail;  // in words: "by profile.env", "needs reboot", ...
    std::string next_command;   // the exact command (or advisory text) to run next; may be empty
    std::string chosen_fix;     // the first of the entry's fixes that plans on this machine
};

// Pure: the findings of one entry on a facts document (`detect --format json`).
// A system-scope entry yields at most one finding, a gpu-scope entry one per GPU.
std::vector<Finding> evaluate(const nlohmann::json& facts, const Entry& entry);

// The first sentence of a summary, on one line: what `rmcp explain` and `rmcp kb list`
// show. A sentence ends at ". ", "! " or "? " outside parentheses and quotes, or at the end.
std::string summary_line(std::string_view summary);

std::string_view severity_name(Severity s);
// How text output spells a severity, the same in every command (issue 30, one vocabulary):
// "CRITICAL", "WARNING", "INFO". JSON keeps severity_name().
std::string_view severity_label(Severity s);
std::string_view confidence_name(Confidence c);
std::string_view scope_name(Scope s);
std::optional<Severity> parse_severity(std::string_view name);
bool is_category(std::string_view name);

}  // namespace rmcp::kb
