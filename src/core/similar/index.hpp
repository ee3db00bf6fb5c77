// The index of public threads (threads.hpp) and the lookup "which public reports does this
// log resemble" (issue 31; docs/explain.md, "Similar public reports").
//
//   log lines ─► TermCollector (terms.hpp) ─► ThreadIndex::nearest ─► SimilarReport list ─► vote
//
// The index is a Xapian database (BM25 over the error-line terms of each thread's excerpt).
// Xapian lives in librmcp_xapian.so (src/core/similar/xapian_abi.h), opened on the first lookup
// only. The shipped index (share/rmcp/threads/index, built with the build) is used when it
// was built from exactly the records and terms in use (its "rmcp-digest" metadata); otherwise
// the index is built into the user's cache ($XDG_CACHE_HOME/rmcp/threads-<digest>), like the
// Hyperscan database cache (explain/db_cache.hpp), and reused while the records stay the same.
#pragma once

#include "util/error.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rmcp::similar {

struct SimilarReport {
    nlohmann::json record;  // threads.hpp record_json()
    double similarity = 0;  // cosine of the idf-weighted term sets, 0..1
    [[nodiscard]] std::string category() const { return record.value("category", ""); }
    [[nodiscard]] bool clean() const { return record.value("clean", false); }
};

// What the nearest threads say when no entry recognised the log.
struct Vote {
    std::string category;  // the category most of them established
    unsigned votes = 0;    // threads that established it
    unsigned of = 0;       // threads that voted (above k_vote_similarity)
};

// Calibrated on the dev threads, leave-one-thread-out (bench/explain_accuracy.py, docs/explain-accuracy.md):
// below k_show_similarity a thread is not shown; the vote counts the first k_vote_threads
// threads at or above k_vote_similarity.
// (Defined in index.cpp, so that a recalibration recompiles one file.)
extern const double k_show_similarity;
extern const double k_vote_similarity;
inline constexpr std::size_t k_vote_threads = 3;
inline constexpr unsigned k_min_votes = 2;  // threads that must agree on the category

// Where librmcp_xapian.so may be, in order of preference.
struct ModulePaths {
    std::vector<std::filesystem::path> candidates;
};
// The index the build writes beside the binary (build/threads-index, src/xapian/CMakeLists.txt);
// empty when the binary's directory is unknown.
std::filesystem::path build_tree_index(const std::filesystem::path& executable_dir);
// Beside the binary (the build tree), then the installed private library directory
// (docs/install.md, "Layout"); an empty directory is skipped.
ModulePaths module_paths(const std::filesystem::path& executable_dir, const std::filesystem::path& library_dir);

class ThreadIndex {
public:
    // The index for the records under `threads_dir` (threads.toml, excerpts/): the shipped one
    // (`threads_dir`/index, else `build_index`: the build tree's, beside the binary) when built
    // from exactly these records, else the user's cache, built there when missing or stale.
    static Result<ThreadIndex> open(const std::filesystem::path& threads_dir, const ModulePaths& module,
                                    const std::filesystem::path& build_index = {});

    // Builds the index of the records under `threads_dir` at `out` (a directory that must not
    // exist yet), with its digest as metadata: the shipped index is built so at build time.
    static Status build(const std::filesystem::path& threads_dir, const std::filesystem::path& out,
                        const ModulePaths& module);

    // The threads nearest to `terms`, best first, at most `limit`, leaving out those whose URL
    // is in `exclude` (measurement: a thread must not retrieve itself).
    [[nodiscard]] Result<std::vector<SimilarReport>> nearest(const std::vector<std::string>& terms, std::size_t limit,
                                                             const std::vector<std::string>& exclude = {}) const;

    [[nodiscard]] const std::filesystem::path& path() const { return m_path; }

    struct Module;

private:
    std::filesystem::path m_path;
    std::shared_ptr<const Module> m_module;
};

// The digest (for staleness, not security) of what an index of `threads_dir` is built from: the terms version, the records
// and the name and size of every excerpt. Empty with an error when the records are unreadable.
Result<std::string> threads_digest(const std::filesystem::path& threads_dir);

// The vote of the first k_vote_threads reports at or above k_vote_similarity: the category
// at least k_min_votes of them established; nullopt otherwise, or when clean runs win.
std::optional<Vote> vote(const std::vector<SimilarReport>& nearest);

// What an answer shows: the reports at or above k_show_similarity that are no clean runs, at
// most `limit`, best first.
std::vector<SimilarReport> shown(std::vector<SimilarReport> nearest, std::size_t limit);

// The JSON of shown reports (explain's `similar[]`, run's incident report): each record with
// its similarity, rounded to 2 decimals.
nlohmann::json reports_json(const std::vector<SimilarReport>& reports);

}  // namespace rmcp::similar
