// The log matcher: every knowledge-base signature, compiled once into one Hyperscan
// streaming database, scanned over log bytes as they arrive.
//
//   log bytes → LogScanner::feed() → Match callbacks → diagnose() → Diagnosis
//
// Interface for callers that read logs incrementally (`rmcp explain` over files, stdin and
// the kernel log; the supervisor `rmcp run` over a child's stdout/stderr):
//
//   auto set = SignatureSet::compile(kb.entries);            // once; shared, immutable
//   if (!set) ...;                                           // error names the entry file:line
//   LogScanner scanner(*set, [&](const Match& m) { ... });   // one per byte stream
//   scanner.feed(bytes);  ...  scanner.feed(more_bytes);     // any sizes, any split points
//   scanner.flush();      // optional: report pending matches now (e.g. the child went quiet)
//   scanner.finish();     // end of stream: reports whatever is still pending
//
// Guarantees:
//   - Constant memory whatever the input size or line length: the scanner keeps the
//     Hyperscan stream state, a few KiB of history for excerpts, and a bounded number of
//     pending matches (ScanLimits).
//   - Bytes are bytes: invalid UTF-8, NUL, CR are scanned as they are. Lines end at '\n';
//     a CR before it ("\r\n") is not part of the excerpt text; excerpts keep raw bytes and
//     renderers make them printable. Escape sequences (terminal colours) are the exception:
//     they are dropped before scanning (excerpts never hold them), and anchored patterns
//     match lines wrapped as pasted logs wrap them (quote markers, compose columns, CRLF):
//     line_wrappers.hpp.
//   - A match is found whatever the chunk boundaries (Hyperscan keeps state across feeds).
//   - Line numbers are 1-based and count '\n' bytes before the match's last byte.
//   - A match is reported once the `window` lines after it have been seen (to collect the
//     trailing excerpt and the signature's context words), or on flush()/finish(). Reports
//     arrive in stream order.
//   - Within one stream, one signature is reported at most once per line.
//   - Not thread-safe per scanner; any number of scanners may share one SignatureSet
//     (each owns its Hyperscan scratch space).
#pragma once

#include "explain/line_wrappers.hpp"
#include "kb/kb.hpp"
#include "util/error.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp::explain {

// Which matches of a signature a scanner reports.
enum class Reporting {
    every_line,  // every line a signature matches (up to ScanLimits::max_reports_per_signature)
    first_only,  // the first match of each signature per stream (Hyperscan SINGLEMATCH)
};

// Whether a set looks for its signatures' context words. They only rank causes (explain);
// run and probe classify by entry, and skipping the words makes their scan cheaper
// (48 literals fewer in the shipped kb: docs/PERFORMANCE.md, "rmcp run").
enum class ContextWords {
    match,  // Match::context_found says which words appeared within the signature's window
    skip,   // context_found stays empty; a match is reported without waiting for its window
};

// A line the caller wants whole whenever it appears, with the `lines_after` lines that
// follow it (explain reads bug-report sections this way: `report_facts.hpp`). Probes ride
// in the same Hyperscan database as the signatures, so looking for them costs no second
// pass over the log.
struct LineProbe {
    std::string pattern;  // Hyperscan syntax, matched per line like a signature
    unsigned lines_after = 0;
    // 0: the probe shares ScanLimits::max_probe_hits with the other probes; else its own
    // budget of hits, so that a frequent probe (explain's error lines for the similar
    // reports, similar/terms.hpp) cannot starve the others (a bug report's sections).
    unsigned max_hits = 0;
};

// One compiled signature and where it came from.
struct CompiledSignature {
    std::size_t entry = 0;      // index into the entries given to compile()
    std::size_t signature = 0;  // index into that entry's signatures
    std::string entry_id;
    kb::Signature source;
    std::vector<unsigned> context_words;  // indices into SignatureSet::context_words()
};

// All signatures of all entries in one Hyperscan database. Immutable after compile();
// share it (by reference or shared_ptr) across any number of scanners and threads.
class SignatureSet {
public:
    // Patterns are PCRE-subset regexes (Hyperscan syntax), matched per line: '^'/'$' are
    // line anchors, '.' does not cross '\n', case matters unless the pattern says (?i).
    // Context words are literal and matched case-insensitively.
    // An empty entry list gives an empty set (scanners then only count lines).
    // Probes (optional) are compiled after the signatures; a bad probe pattern is an
    // environment error (probes are rmcp's own, not the knowledge base's).
    static Result<std::shared_ptr<const SignatureSet>> compile(std::span<const kb::Entry> entries,
                                                               Reporting reporting = Reporting::every_line,
                                                               ContextWords context = ContextWords::match,
                                                               std::span<const LineProbe> probes = {});

    [[nodiscard]] const std::vector<CompiledSignature>& signatures() const { return m_signatures; }
    [[nodiscard]] const std::vector<std::string>& context_words() const { return m_context_words; }
    [[nodiscard]] const std::vector<LineProbe>& probes() const { return m_probes; }
    [[nodiscard]] Reporting reporting() const { return m_reporting; }
    [[nodiscard]] std::size_t entry_count() const { return m_entry_count; }

    ~SignatureSet();
    SignatureSet(const SignatureSet&) = delete;
    SignatureSet& operator=(const SignatureSet&) = delete;

private:
    SignatureSet() = default;
    friend class LogScanner;

    std::vector<CompiledSignature> m_signatures;  // Hyperscan id i < size: signature i
    std::vector<std::string> m_context_words;     // id size()+j: context word j
    std::vector<LineProbe> m_probes;              // id size()+words+k: probe k
    Reporting m_reporting = Reporting::every_line;
    std::size_t m_entry_count = 0;
    struct Database;
    std::unique_ptr<Database> m_db;  // null when there is nothing to match
};

struct ExcerptLine {
    std::uint64_t number = 0;  // 1-based line number
    std::string text;          // raw bytes without the line end; at most ScanLimits::line_bytes
    bool truncated = false;    // the line was longer than what is kept
    // On the matched line: where the match ends in `text` (renderers show the part of a
    // progress-bar line that holds it); npos on the other lines.
    std::size_t match_end = std::string::npos;
};

// What a terminal shows of one raw log line: ANSI escapes dropped, a progress-bar line
// ('\r'-separated redraws) reduced to the redraw holding the match (or its last one),
// then util/text.hpp's terminal_safe(): controls (C0, DEL, C1 raw or UTF-8 encoded, bidi
// overrides) shown as '?', invalid UTF-8 as U+FFFD.
std::string printable_line(const ExcerptLine& line);

struct Match {
    std::size_t signature = 0;         // index into SignatureSet::signatures()
    std::uint64_t line = 0;            // 1-based line holding the match's last byte
    std::uint64_t end_offset = 0;      // byte offset just past the match in the stream
    std::vector<ExcerptLine> excerpt;  // lines around the match; empty past max_excerpts_per_signature
    // Context words seen within `window` lines: indices into CompiledSignature::context_words
    // (case-insensitive duplicates in the entry are merged).
    std::vector<unsigned> context_found;
    bool context_complete = true;  // false when flush() came before `window` lines after it
};

// A probe's line as it appeared: the matched line and the lines after it, each without
// its line end and capped at ScanLimits::line_bytes (shorter when the stream ended first).
struct ProbeHit {
    std::size_t probe = 0;   // index into SignatureSet::probes()
    std::uint64_t line = 0;  // 1-based line number of lines.front()
    std::vector<std::string> lines;
};

struct ScanLimits {
    unsigned lines_before = 2;     // excerpt lines before the matched line
    unsigned lines_after = 2;      // excerpt lines after it
    std::size_t line_bytes = 512;  // bytes kept per excerpt line (the matched line: on each side of the match end)
    unsigned max_reports_per_signature = 100;  // later matches are only counted
    unsigned max_excerpts_per_signature = 5;   // later reports carry no excerpt
    unsigned max_probe_hits = 4096;            // per stream, all probes together; later hits are dropped
};

class LogScanner {
public:
    using Callback = std::function<void(const Match&)>;
    using ProbeCallback = std::function<void(const ProbeHit&)>;
    // A signature seen on a line, at once: before its excerpt and context window are complete
    // (the Match for it comes later, through Callback). Once per signature and line, every
    // line counted (past the report limit too). `rmcp explain -` announces problems with it
    // as they appear, without changing what is reported and ranked.
    using SeenCallback = std::function<void(std::size_t signature, std::uint64_t line)>;

    LogScanner(std::shared_ptr<const SignatureSet> set, Callback on_match, ScanLimits limits = {});
    ~LogScanner();
    LogScanner(const LogScanner&) = delete;
    LogScanner& operator=(const LogScanner&) = delete;

    // Where probe hits go (in stream order, interleaved with matches); without one,
    // probes are not collected.
    void on_probe(ProbeCallback callback) { m_on_probe = std::move(callback); }
    // Where signatures go the moment they are found (optional; see SeenCallback).
    void on_seen(SeenCallback callback) { m_on_seen = std::move(callback); }

    // Scans the next bytes of the stream. Fails only if Hyperscan does (out of memory).
    Status feed(std::string_view bytes);
    // Reports every pending match now, with the context seen so far.
    void flush();
    // Ends the stream (matches anchored at its end are found now) and reports the rest.
    // feed() after finish() is a programming error.
    Status finish();

    // Bytes fed so far, escape sequences included.
    [[nodiscard]] std::uint64_t bytes() const { return m_raw_bytes; }
    // Lines seen so far: '\n' count, plus one for an unterminated last line after finish().
    [[nodiscard]] std::uint64_t lines() const;
    // Lines each signature matched, including those past the report limit.
    [[nodiscard]] const std::vector<std::uint64_t>& match_counts() const { return m_match_counts; }

private:
    struct Event {
        unsigned id;
        std::uint64_t end;  // Hyperscan `to`
    };
    struct Pending;
    class View;

    static int on_hs_event(unsigned id, unsigned long long from, unsigned long long to, unsigned flags, void* self);
    Status process(std::string_view chunk, std::uint64_t chunk_start);
    // The steps of process(): one event by its kind, then the excerpt bytes the chunk adds.
    void on_probe(const Event& ev, std::size_t probe, std::uint64_t line, const View& view);
    void on_context_word(unsigned word, std::uint64_t line);
    void on_signature(const Event& ev, std::uint64_t line, const View& view);
    void collect_excerpts(const View& view);
    void start_excerpt(Pending& pending, const View& view, const Event& ev, std::uint64_t line, unsigned before,
                       unsigned after) const;
    void deliver(Pending& pending);
    void report_ready(std::uint64_t complete_lines);
    void flush_pending(bool stream_ended);
    void remember(std::string_view chunk);

    std::shared_ptr<const SignatureSet> m_set;
    Callback m_on_match;
    ProbeCallback m_on_probe;
    SeenCallback m_on_seen;
    ScanLimits m_limits;
    struct HsState;
    std::unique_ptr<HsState> m_hs;

    std::vector<Event> m_events;    // filled by Hyperscan during one scan call
    EscapeFilter m_escapes;         // colour codes never reach Hyperscan (line_wrappers.hpp)
    std::string m_unescaped;        // the filter's output when a chunk held escapes
    std::uint64_t m_raw_bytes = 0;  // bytes fed so far
    std::uint64_t m_offset = 0;     // bytes scanned so far (escape sequences dropped)
    std::uint64_t m_newlines = 0;   // '\n' in [0, m_offset)
    bool m_last_was_newline = true;
    bool m_finished = false;
    std::string m_history;  // the last bytes before the current chunk, for excerpts
    std::vector<std::uint64_t> m_match_counts;
    std::vector<std::uint64_t> m_last_line;           // per signature: last line reported (0: none)
    std::vector<unsigned> m_reports;                  // per signature: reports made
    std::vector<std::uint64_t> m_probe_line;          // per probe: last line reported (0: none)
    unsigned m_probe_hits = 0;                        // hits of the probes sharing max_probe_hits
    std::vector<unsigned> m_probe_own_hits;           // per probe with its own budget (LineProbe::max_hits)
    std::vector<std::uint64_t> m_context_seen;        // per context word: last line seen (0: never)
    std::vector<std::unique_ptr<Pending>> m_pending;  // in stream order
    std::size_t m_pending_head = 0;
};

}  // namespace rmcp::explain
