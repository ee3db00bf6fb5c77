// From matches to a ranked diagnosis: which known problems a log shows, most likely first.
//
//   Matches (from one LogScanner per source) → DiagnosisBuilder → rank() → Diagnosis list
//
// Ranking (docs/explain.md, "Ranking"), in this order:
//   0. with a bug report's facts: entries matched in the log whose conditions hold there, then
//      entries that only the facts raise whose category is among the matched entries' (the
//      machine predicts the kind of failure the log shows), then the other matched entries,
//      then the other fact-only entries, config-risk ones (a setting the report shows) before
//      those predicting a failure the log does not show; family entries (confidence `generic`)
//      after every specific matched entry, and dropped where a specific entry matched all their
//      lines. On a log without a failure the facts speak only when a critical entry holds,
//      and then with the warnings that hold;
//   1. entries whose `applies` predicate holds on the facts in use (this machine, or --root)
//      come first: the log and the machine agree;
//   2. more distinct context words found near the entry's matches (a fault near MIOpen
//      frames points at the MIOpen entry, the same fault near a rocBLAS call does not);
//   3. an entry about a specific configuration (it has an `applies` predicate) whose context
//      words were found, then generic log-only entries, then specific entries none of whose
//      context words were found; 4. higher severity; 5. more of the entry's signatures
//      matched; 6. earlier first match; 7. entry id (a stable order).
#pragma once

#include "explain/matcher.hpp"
#include "kb/kb.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace rmcp::explain {

// Whether an entry's `applies` holds on the facts in use; nullopt when there are no facts
// or the entry has no predicate (log-only entries).
using AppliesFn = std::function<std::optional<bool>(const kb::Entry&)>;

// The AppliesFn over a facts document (`detect --format json`), via the kb evaluator.
AppliesFn applies_on(const nlohmann::json& facts);

struct Occurrence {
    std::string source;  // file path, "standard input", "kernel log (journalctl)"
    std::uint64_t line = 0;
    std::size_t signature = 0;               // index into the entry's signatures
    std::vector<ExcerptLine> excerpt;        // may be empty (excerpt limit reached)
    std::vector<std::string> context_found;  // context words seen near this match
};

struct Diagnosis {
    const kb::Entry* entry = nullptr;
    // From the reporter's facts alone: the entry's conditions hold on the machine a bug report
    // describes, but no line of the log matched it (occurrences is then empty).
    bool facts_only = false;
    std::vector<kb::Evidence> evidence;           // the facts that decided it (facts_only findings)
    std::vector<Occurrence> occurrences;          // stream order per source, sources in feed order; capped
    std::uint64_t total_matches = 0;              // every matching line, including those not kept
    std::vector<std::size_t> signatures_matched;  // indices into entry->signatures, ascending
    std::vector<std::string> context_found;       // distinct, in order of first appearance
    std::optional<bool> applies_here;
    std::string reason;  // why it ranks where it does, one line
};

// How sure an answer is (docs/explain.md, "Basis"): `signature`, a specific entry whose own
// lines matched the log (text: "recognised"); `family`, a family entry only, which names the
// kind of message and not its cause ("likely"); `similar`, no entry, the category the nearest
// public threads vote for ("resembles"; src/core/similar/); `none`. An entry raised by a bug
// report's facts alone, without a line of the log, is `family` too: the machine predicts the
// kind of failure, the log does not show it.
enum class Basis { signature, family, similar, none };
std::string_view basis_name(Basis b);
// The word the text uses for it: "recognised", "likely", "resembles", "nothing recognised".
std::string_view basis_word(Basis b);
Basis basis_of(const Diagnosis& d);
// The basis of an entry found by its own lines (run's watcher): signature or family.
Basis entry_basis(const kb::Entry& entry);
// The basis of a whole answer: that of its first diagnosis; `none` when there is none (the
// caller turns it into `similar` when the nearest threads agree).
Basis answer_basis(std::span<const Diagnosis> ranked);

// Whether a family entry whose every line sits in an error block a specific entry already
// recognised is kept (kb work, --all) or dropped (the default: it adds nothing but noise).
enum class FamilyEntries { drop_covered, keep_all };

class DiagnosisBuilder {
public:
    // `entries` must outlive the builder and the diagnoses (they point into it).
    DiagnosisBuilder(std::span<const kb::Entry> entries, std::shared_ptr<const SignatureSet> set);

    // A callback for the LogScanner of one source; matches are tagged with `source`.
    LogScanner::Callback collector(std::string source);
    void add(const std::string& source, const Match& match);
    // Adds the lines the scanner of `source` matched (including those past its report
    // limit) to the totals; call once per source after finish().
    void add_counts(const std::string& source, const LogScanner& scanner);
    // Forgets what one source contributed (a kernel-log reader that fell back).
    void drop_source(const std::string& source);

    // With `reporter_facts` (the facts document of the machine a bug report describes),
    // entries whose conditions hold there join the list even when no line matched them,
    // ranked by "Ranking" in docs/explain.md.
    [[nodiscard]] std::vector<Diagnosis> rank(const AppliesFn& applies, const nlohmann::json* reporter_facts = nullptr,
                                              FamilyEntries families = FamilyEntries::drop_covered) const;

    static constexpr std::size_t k_max_occurrences = 20;  // kept per entry

private:
    std::span<const kb::Entry> m_entries;
    std::shared_ptr<const SignatureSet> m_set;
    struct PerEntry {
        std::vector<Occurrence> occurrences;
        std::map<std::string, std::set<std::size_t>> signatures;  // by source: the entry's signatures that matched
        std::map<std::string, std::uint64_t> totals;              // by source
    };
    std::map<std::size_t, PerEntry> m_found;  // by entry index
};

}  // namespace rmcp::explain
