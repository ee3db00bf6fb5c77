#include "explain/diagnose.hpp"

#include "util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <set>

namespace rmcp::explain {

AppliesFn applies_on(const nlohmann::json& facts) {
    return [&facts](const kb::Entry& entry) -> std::optional<bool> {
        if (!entry.applies) return std::nullopt;
        return !kb::evaluate(facts, entry).empty();
    };
}

DiagnosisBuilder::DiagnosisBuilder(std::span<const kb::Entry> entries, std::shared_ptr<const SignatureSet> set)
    : m_entries(entries), m_set(std::move(set)) {}

LogScanner::Callback DiagnosisBuilder::collector(std::string source) {
    return [this, source = std::move(source)](const Match& m) { add(source, m); };
}

void DiagnosisBuilder::add(const std::string& source, const Match& match) {
    const auto& cs = m_set->signatures().at(match.signature);
    auto& per = m_found[cs.entry];
    per.signatures[source].insert(cs.signature);  // every signature that matched, kept occurrence or not
    if (per.occurrences.size() >= k_max_occurrences) return;
    Occurrence occ;
    occ.source = source;
    occ.line = match.line;
    occ.signature = cs.signature;
    occ.excerpt = match.excerpt;
    for (const auto k : match.context_found) occ.context_found.push_back(m_set->context_words()[cs.context_words[k]]);
    per.occurrences.push_back(std::move(occ));
}

void DiagnosisBuilder::add_counts(const std::string& source, const LogScanner& scanner) {
    const auto& counts = scanner.match_counts();
    for (std::size_t i = 0; i < counts.size(); ++i)
        if (counts[i] > 0) m_found[m_set->signatures()[i].entry].totals[source] += counts[i];
}

void DiagnosisBuilder::drop_source(const std::string& source) {
    for (auto it = m_found.begin(); it != m_found.end();) {
        auto& occ = it->second.occurrences;
        occ.erase(std::remove_if(occ.begin(), occ.end(), [&](const Occurrence& o) { return o.source == source; }),
                  occ.end());
        it->second.totals.erase(source);
        it->second.signatures.erase(source);
        it = occ.empty() ? m_found.erase(it) : std::next(it);
    }
}

namespace {

bool has_context_words(const kb::Entry& e) {
    return std::any_of(e.signatures.begin(), e.signatures.end(),
                       [](const kb::Signature& s) { return !s.context.empty(); });
}

// 2: specific entry confirmed by context; 1: generic, or specific without context words;
// 0: specific entry none of whose context words were found.
int specificity(const Diagnosis& d) {
    if (!d.entry->applies || !has_context_words(*d.entry)) return 1;
    return d.context_found.empty() ? 0 : 2;
}

// The one category that names a state of the configuration rather than a failure (docs/kb-format.md,
// "Categories"): an override, an allocator variable, a visible iGPU.
bool is_config_risk(const kb::Entry& e) { return e.category == "config-risk"; }

// An info-level entry explains a message that is harmless or only costs speed (PyTorch's hipBLASLt
// fallback warning, MIOpen's missing kernel database): a note on the log, never its failure. It
// hides a family entry only on its own line, does not make the log one that shows a failure, and
// ranks after the family entries that recognised an error line.
bool is_note(const kb::Entry& e) { return e.severity == kb::Severity::info; }

struct Ranked {
    Diagnosis diagnosis;
    std::size_t first_position = 0;  // order of its first occurrence among all kept ones
};

// Lines either side of a specific entry's match that belong to the same error block: a
// ring timeout's "*ERROR* Process information" line, a page fault's status lines.
constexpr std::uint64_t k_family_cover_lines = 5;

// A family entry whose every kept line sits in an error block a specific entry already
// recognised adds nothing but noise: the specific entry says more about the same text. A note
// covers only its own line (it explains that message, e.g. rocprofiler's 'aqlprofile API table
// load failed: HSA_STATUS_ERROR'), not an error a few lines away.
void drop_covered_family_entries(std::vector<Ranked>& ranked) {
    std::set<std::pair<std::string, std::uint64_t>> specific_lines;
    std::set<std::pair<std::string, std::uint64_t>> note_lines;
    for (const auto& r : ranked)
        if (!kb::is_family(*r.diagnosis.entry))
            for (const auto& occ : r.diagnosis.occurrences)
                (is_note(*r.diagnosis.entry) ? note_lines : specific_lines).emplace(occ.source, occ.line);
    const auto covered = [&](const Occurrence& occ) {
        if (note_lines.contains({occ.source, occ.line})) return true;
        const auto low = occ.line > k_family_cover_lines ? occ.line - k_family_cover_lines : 0;
        const auto it = specific_lines.lower_bound({occ.source, low});
        return it != specific_lines.end() && it->first == occ.source && it->second <= occ.line + k_family_cover_lines;
    };
    std::erase_if(ranked, [&](const Ranked& r) {
        return kb::is_family(*r.diagnosis.entry) &&
               std::all_of(r.diagnosis.occurrences.begin(), r.diagnosis.occurrences.end(), covered);
    });
}

}  // namespace

std::vector<Diagnosis> DiagnosisBuilder::rank(const AppliesFn& applies, const nlohmann::json* reporter_facts,
                                              FamilyEntries families) const {
    std::vector<Ranked> ranked;
    for (const auto& [index, per] : m_found) {
        if (per.occurrences.empty()) continue;
        Ranked r;
        Diagnosis& d = r.diagnosis;
        d.entry = &m_entries[index];
        d.occurrences = per.occurrences;
        d.total_matches = 0;
        for (const auto& [source, n] : per.totals) d.total_matches += n;
        d.total_matches = std::max<std::uint64_t>(d.total_matches, d.occurrences.size());
        std::set<std::size_t> matched;
        for (const auto& [source, indices] : per.signatures) matched.insert(indices.begin(), indices.end());
        d.signatures_matched.assign(matched.begin(), matched.end());
        for (const auto& occ : d.occurrences) {
            for (const auto& word : occ.context_found)
                if (std::find(d.context_found.begin(), d.context_found.end(), word) == d.context_found.end())
                    d.context_found.push_back(word);
        }
        if (applies) d.applies_here = applies(*d.entry);
        ranked.push_back(std::move(r));
    }

    // Where each entry first showed up: sources in the order they were fed, then line.
    std::vector<std::string> source_order;
    for (const auto& r : ranked)
        for (const auto& occ : r.diagnosis.occurrences)
            if (std::find(source_order.begin(), source_order.end(), occ.source) == source_order.end())
                source_order.push_back(occ.source);
    auto first_key = [&](const Diagnosis& d) {
        std::pair<std::size_t, std::uint64_t> best{SIZE_MAX, UINT64_MAX};
        for (const auto& occ : d.occurrences) {
            const auto s = static_cast<std::size_t>(std::find(source_order.begin(), source_order.end(), occ.source) -
                                                    source_order.begin());
            best = std::min(best, std::pair<std::size_t, std::uint64_t>{s, occ.line});
        }
        return best;
    };

    if (families == FamilyEntries::drop_covered) drop_covered_family_entries(ranked);
    std::set<std::string> matched_categories;
    for (const auto& r : ranked)
        if (!is_note(*r.diagnosis.entry)) matched_categories.insert(r.diagnosis.entry->category);
    // The reporter's facts complete the explanation of a failure the log shows (warning and
    // critical entries). On a log without a failure they speak only when a critical one holds:
    // a configuration that fails for certain (an RDNA1 card run as gfx1030), never a mere risk,
    // so a clean log of a healthy machine stays clean (kb lint holds the healthy fixtures to no
    // critical). Once one does, the warnings that hold on the same machine join it: the log is
    // no longer clean, and a warning may name the setting behind the critical state (one global
    // override on GPUs of two families, which gives one of them the other's target).
    if (reporter_facts) {
        const bool log_shows_failure =
            std::any_of(ranked.begin(), ranked.end(), [](const Ranked& r) { return !is_note(*r.diagnosis.entry); });
        bool critical_holds = false;
        std::vector<Ranked> raised;
        for (std::size_t i = 0; i < m_entries.size(); ++i) {
            const auto& entry = m_entries[i];
            if (!entry.applies || m_found.contains(i) || entry.severity < kb::Severity::warning) continue;
            auto findings = kb::evaluate(*reporter_facts, entry);
            if (findings.empty()) continue;
            critical_holds = critical_holds || entry.severity == kb::Severity::critical;
            Ranked r;
            r.diagnosis.entry = &entry;
            r.diagnosis.facts_only = true;
            r.diagnosis.applies_here = true;
            r.diagnosis.evidence = std::move(findings.front().evidence);
            raised.push_back(std::move(r));
        }
        if (log_shows_failure || critical_holds)
            for (auto& r : raised) ranked.push_back(std::move(r));
    }
    // 0: matched and holding on the reporter's machine; 1: raised by its facts, of a kind the
    // log shows; 2: matched; 3: family entries; 4: notes (info-level entries matched in the
    // log); 5: raised by the facts, a setting (config-risk) where the log shows no failure of
    // that kind; 6: raised by the facts, predicting a failure of a kind the log does not show.
    // Between the last two the setting comes first: the report shows it, while the failure the
    // others predict is not in the log.
    const auto tier = [&](const Diagnosis& d) {
        if (d.facts_only) {
            if (matched_categories.contains(d.entry->category)) return 1;
            return is_config_risk(*d.entry) ? 5 : 6;
        }
        if (kb::is_family(*d.entry)) return 3;
        if (is_note(*d.entry)) return 4;
        return reporter_facts && d.applies_here == true ? 0 : 2;
    };

    std::stable_sort(ranked.begin(), ranked.end(), [&](const Ranked& ra, const Ranked& rb) {
        const auto& a = ra.diagnosis;
        const auto& b = rb.diagnosis;
        if (tier(a) != tier(b)) return tier(a) < tier(b);
        const bool a_applies = a.applies_here.value_or(false);
        const bool b_applies = b.applies_here.value_or(false);
        if (a_applies != b_applies) return a_applies;
        if (a.context_found.size() != b.context_found.size()) return a.context_found.size() > b.context_found.size();
        // Equal evidence in the log: an entry about a specific configuration (it has an
        // `applies` predicate) says more than a generic log-only one matching the same text
        // when its context words were found, and less when they were all absent.
        if (specificity(a) != specificity(b)) return specificity(a) > specificity(b);
        if (a.entry->severity != b.entry->severity) return a.entry->severity > b.entry->severity;
        if (a.signatures_matched.size() != b.signatures_matched.size())
            return a.signatures_matched.size() > b.signatures_matched.size();
        const auto fa = first_key(a);
        const auto fb = first_key(b);
        if (fa != fb) return fa < fb;
        return a.entry->id < b.entry->id;
    });

    std::vector<Diagnosis> out;
    for (auto& r : ranked) {
        Diagnosis& d = r.diagnosis;
        std::vector<std::string> why;
        if (kb::is_family(*d.entry)) why.emplace_back("a message family: no specific entry recognised these lines");
        if (is_note(*d.entry))  // never facts-only: the report raises warning and critical entries alone
            why.emplace_back("a note: the message is harmless or costs speed, so it ranks after any failure");
        if (d.facts_only)
            why.emplace_back("no line of the log matched it; its conditions hold on the machine the report describes");
        else if (d.applies_here == true && reporter_facts)
            why.emplace_back("its conditions hold on the machine the report describes");
        else if (d.applies_here == false && reporter_facts)
            why.emplace_back("its conditions do not hold on the machine the report describes");
        else if (d.applies_here == true) why.emplace_back("its conditions hold on this machine");
        else if (d.applies_here == false) why.emplace_back("its conditions do not hold on this machine");
        if (!d.context_found.empty()) {
            std::string words;
            for (const auto& w : d.context_found) words += (words.empty() ? "'" : ", '") + w + "'";
            why.push_back(fmt::format("context {} near the match", words));
        } else if (has_context_words(*d.entry) && !d.facts_only) {
            why.emplace_back("none of its context words nearby");
        }
        if (!d.facts_only)
            why.push_back(fmt::format("{} of {} signature{} matched", d.signatures_matched.size(),
                                      d.entry->signatures.size(), d.entry->signatures.size() == 1 ? "" : "s"));
        why.push_back(fmt::format("severity {}", kb::severity_name(d.entry->severity)));
        d.reason = join(why, "; ");
        out.push_back(std::move(d));
    }
    return out;
}

std::string_view basis_name(Basis b) {
    switch (b) {
    case Basis::signature: return "signature";
    case Basis::family: return "family";
    case Basis::similar: return "similar";
    case Basis::none: break;
    }
    return "none";
}

std::string_view basis_word(Basis b) {
    switch (b) {
    case Basis::signature: return "recognised";
    case Basis::family: return "likely";
    case Basis::similar: return "resembles";
    case Basis::none: break;
    }
    return "nothing recognised";
}

Basis entry_basis(const kb::Entry& entry) {
    // A family entry names a kind of message; a `cause_varies` entry a message that several
    // causes print (the threads show it): neither says which cause this log has.
    return kb::is_family(entry) || entry.cause_varies ? Basis::family : Basis::signature;
}

Basis basis_of(const Diagnosis& d) {
    if (d.entry == nullptr) return Basis::none;
    return d.facts_only ? Basis::family : entry_basis(*d.entry);
}

Basis answer_basis(std::span<const Diagnosis> ranked) {
    return ranked.empty() ? Basis::none : basis_of(ranked.front());
}

}  // namespace rmcp::explain
