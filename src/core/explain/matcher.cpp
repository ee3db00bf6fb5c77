#include "explain/matcher.hpp"

#include "explain/db_cache.hpp"
#include "util/hyperscan.hpp"
#include "util/strings.hpp"
#include "util/text.hpp"

#include <hs/hs.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <map>

namespace rmcp::explain {

// ---------------------------------------------------------------------------------------
// SignatureSet

struct SignatureSet::Database {
    hyperscan::Database db;
    hyperscan::Scratch scratch;  // prototype; each scanner clones it
};

SignatureSet::~SignatureSet() = default;

namespace {

// A context word as a Hyperscan literal: everything but [A-Za-z0-9] escaped.
std::string literal_pattern(std::string_view word) {
    std::string out;
    for (const char ch : word) {
        const auto c = static_cast<unsigned char>(ch);
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) out += static_cast<char>(c);
        else out += fmt::format("\\x{:02x}", c);
    }
    return out;
}

std::string where(const kb::Entry& entry, const kb::Signature& sig) {
    std::string file = entry.file.empty() ? entry.id : entry.file;
    return sig.line ? fmt::format("{}:{}", file, sig.line) : file;
}

}  // namespace

Result<std::shared_ptr<const SignatureSet>> SignatureSet::compile(std::span<const kb::Entry> entries,
                                                                  Reporting reporting, ContextWords context,
                                                                  std::span<const LineProbe> probes) {
    std::shared_ptr<SignatureSet> set(new SignatureSet());
    set->m_reporting = reporting;
    set->m_entry_count = entries.size();
    std::map<std::string, unsigned> word_ids;  // lower-cased word → id
    for (std::size_t e = 0; e < entries.size(); ++e) {
        const auto& entry = entries[e];
        for (std::size_t s = 0; s < entry.signatures.size(); ++s) {
            CompiledSignature cs{e, s, entry.id, entry.signatures[s], {}};
            for (const auto& word : cs.source.context) {
                if (word.empty() || context == ContextWords::skip) continue;
                std::string key;
                for (const char c : word) key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                auto [it, inserted] = word_ids.try_emplace(key, static_cast<unsigned>(set->m_context_words.size()));
                if (inserted) set->m_context_words.push_back(word);
                if (std::find(cs.context_words.begin(), cs.context_words.end(), it->second) == cs.context_words.end())
                    cs.context_words.push_back(it->second);
            }
            set->m_signatures.push_back(std::move(cs));
        }
    }
    set->m_probes.assign(probes.begin(), probes.end());
    const std::size_t total = set->m_signatures.size() + set->m_context_words.size() + set->m_probes.size();
    if (total == 0) return std::shared_ptr<const SignatureSet>(std::move(set));

    std::vector<std::string> patterns;
    std::vector<unsigned> flags;
    std::vector<unsigned> ids;
    patterns.reserve(total);
    for (const auto& cs : set->m_signatures) {
        patterns.push_back(anchor_wrapped(cs.source.pattern));
        flags.push_back(HS_FLAG_MULTILINE | (reporting == Reporting::first_only ? HS_FLAG_SINGLEMATCH : 0U));
    }
    for (const auto& word : set->m_context_words) {
        patterns.push_back(literal_pattern(word));
        flags.push_back(HS_FLAG_CASELESS);
    }
    for (const auto& probe : set->m_probes) {
        patterns.push_back(anchor_wrapped(probe.pattern));
        flags.push_back(HS_FLAG_MULTILINE);
    }
    std::vector<const char*> expressions;
    for (unsigned i = 0; i < patterns.size(); ++i) {
        expressions.push_back(patterns[i].c_str());
        ids.push_back(i);
    }

    auto db = std::make_unique<Database>();
    // A large set is compiled once per knowledge base and then read back (db_cache.hpp).
    const std::string cache_inputs = db_cache::inputs_blob(expressions, flags, ids, HS_MODE_STREAM);
    db->db = db_cache::load(cache_inputs);
    const auto compile_started = std::chrono::steady_clock::now();
    hs_compile_error_t* compile_error = nullptr;
    hs_database_t* compiled = nullptr;
    if (!db->db &&
        hs_compile_multi(expressions.data(), flags.data(), ids.data(), static_cast<unsigned>(expressions.size()),
                         HS_MODE_STREAM, nullptr, &compiled, &compile_error) != HS_SUCCESS) {
        Error error{"compiling log signatures", "", compile_error ? compile_error->message : "unknown Hyperscan error",
                    ExitCode::usage};
        if (compile_error && compile_error->expression >= 0) {
            const auto index = static_cast<std::size_t>(compile_error->expression);
            if (index < set->m_signatures.size()) {
                const auto& cs = set->m_signatures[index];
                error.doing = "compiling log signature of";
                error.path = where(entries[cs.entry], cs.source);
                error.cause = fmt::format("pattern '{}': {}", cs.source.pattern, compile_error->message);
            } else if (index < set->m_signatures.size() + set->m_context_words.size()) {
                error.doing = "compiling context word";
                error.path = set->m_context_words[index - set->m_signatures.size()];
            } else {
                error.doing = "compiling line probe";
                error.path = set->m_probes[index - set->m_signatures.size() - set->m_context_words.size()].pattern;
                error.code = ExitCode::environment;
            }
        }
        if (compile_error) hs_free_compile_error(compile_error);
        return error;
    }
    if (compiled) db->db.reset(compiled);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - compile_started).count() >
        db_cache::k_store_after_s)
        db_cache::store(cache_inputs, db->db.get());
    if (hyperscan::alloc_scratch(db->db.get(), db->scratch) != HS_SUCCESS)
        return Error{"allocating Hyperscan scratch space", "", "out of memory", ExitCode::environment};
    set->m_db = std::move(db);
    return std::shared_ptr<const SignatureSet>(std::move(set));
}

// ---------------------------------------------------------------------------------------
// LogScanner

struct LogScanner::HsState {
    hs_stream_t* stream = nullptr;
    hyperscan::Scratch scratch;
    ~HsState() {
        if (stream) hs_close_stream(stream, scratch.get(), nullptr, nullptr);
    }
};

struct LogScanner::Pending {
    Match match;
    std::optional<std::size_t> probe;  // a probe hit rather than a signature match
    std::uint64_t ready_line = 0;      // reportable once this many lines are complete
    bool collecting = false;           // still gathering excerpt bytes after the match
    std::uint64_t collect_from = 0;    // next stream offset to gather
    unsigned lines_to_end = 0;         // line ends still to see for the excerpt
    std::size_t budget = 0;            // bytes still kept for the current excerpt line
};

// The bytes available while one chunk is processed: the kept history, then the chunk.
class LogScanner::View {
public:
    View(std::string_view history, std::string_view chunk, std::uint64_t chunk_start)
        : m_history(history), m_chunk(chunk), m_chunk_start(chunk_start), m_begin(chunk_start - history.size()) {}
    [[nodiscard]] std::uint64_t begin() const { return m_begin; }
    [[nodiscard]] std::uint64_t end() const { return m_chunk_start + m_chunk.size(); }
    [[nodiscard]] char at(std::uint64_t offset) const {
        return offset >= m_chunk_start ? m_chunk[offset - m_chunk_start] : m_history[offset - m_begin];
    }
    // The contiguous bytes starting at `offset` up to the end of its segment.
    [[nodiscard]] std::string_view segment_from(std::uint64_t offset) const {
        if (offset >= m_chunk_start) return m_chunk.substr(offset - m_chunk_start);
        return m_history.substr(offset - m_begin);
    }
    // Offset of the last '\n' in [low, high), or nullopt.
    [[nodiscard]] std::optional<std::uint64_t> last_newline(std::uint64_t low, std::uint64_t high) const {
        for (std::uint64_t i = high; i > low; --i)
            if (at(i - 1) == '\n') return i - 1;
        return std::nullopt;
    }
    [[nodiscard]] std::string copy(std::uint64_t from, std::uint64_t to) const {
        std::string out;
        out.reserve(to - from);
        while (from < to) {
            const auto seg = segment_from(from);
            const auto n = std::min<std::uint64_t>(seg.size(), to - from);
            out.append(seg.data(), n);
            from += n;
        }
        return out;
    }

private:
    std::string_view m_history;
    std::string_view m_chunk;
    std::uint64_t m_chunk_start;
    std::uint64_t m_begin;
};

namespace {

void strip_cr(std::string& s) {
    if (!s.empty() && s.back() == '\r') s.pop_back();
}

}  // namespace

LogScanner::LogScanner(std::shared_ptr<const SignatureSet> set, Callback on_match, ScanLimits limits)
    : m_set(std::move(set)), m_on_match(std::move(on_match)), m_limits(limits), m_hs(std::make_unique<HsState>()) {
    const auto n = m_set->m_signatures.size();
    m_match_counts.assign(n, 0);
    m_last_line.assign(n, 0);
    m_reports.assign(n, 0);
    m_context_seen.assign(m_set->m_context_words.size(), 0);
    m_probe_line.assign(m_set->m_probes.size(), 0);
    m_probe_own_hits.assign(m_set->m_probes.size(), 0);
    if (m_set->m_db) {
        // Cloning the prototype is cheap and keeps the shared set immutable.
        hs_scratch_t* cloned = nullptr;
        const bool cloned_ok = hs_clone_scratch(m_set->m_db->scratch.get(), &cloned) == HS_SUCCESS;
        m_hs->scratch.reset(cloned);
        if (!cloned_ok || hs_open_stream(m_set->m_db->db.get(), 0, &m_hs->stream) != HS_SUCCESS) throw std::bad_alloc();
    }
}

LogScanner::~LogScanner() = default;

int LogScanner::on_hs_event(unsigned id, unsigned long long /*from*/, unsigned long long to, unsigned /*flags*/,
                            void* self) {
    static_cast<LogScanner*>(self)->m_events.push_back(Event{id, to});
    return 0;
}

std::uint64_t LogScanner::lines() const {
    return m_newlines + ((m_finished && m_offset > 0 && !m_last_was_newline) ? 1 : 0);
}

Status LogScanner::feed(std::string_view bytes) {
    if (m_finished) return Error{"scanning log", "", "feed() after finish()", ExitCode::environment};
    m_raw_bytes += bytes.size();
    bytes = m_escapes.filter(bytes, m_unescaped);
    if (bytes.empty()) return ok_status();
    // Hyperscan takes unsigned lengths: split anything larger.
    constexpr std::size_t k_max_call = std::size_t{1} << 30;
    while (!bytes.empty()) {
        const auto piece = bytes.substr(0, k_max_call);
        bytes.remove_prefix(piece.size());
        m_events.clear();
        if (m_hs->stream) {
            const auto scan_piece = [&](const char* data, std::size_t size, std::uint64_t, std::uint64_t) {
                return hs_scan_stream(m_hs->stream, data, static_cast<unsigned>(size), 0, m_hs->scratch.get(),
                                      &LogScanner::on_hs_event, this);
            };
            const auto rc = hyperscan::scan_without_overread(piece, 0, hs_error_t{HS_SUCCESS}, scan_piece);
            if (rc != HS_SUCCESS)
                return Error{"scanning log", "", fmt::format("Hyperscan error {}", rc), ExitCode::environment};
        }
        if (auto s = process(piece, m_offset); !s) return s;
    }
    return ok_status();
}

Status LogScanner::process(std::string_view chunk, std::uint64_t chunk_start) {
    const View view(m_history, chunk, chunk_start);
    if (!std::is_sorted(m_events.begin(), m_events.end(), [](const Event& a, const Event& b) { return a.end < b.end; }))
        std::stable_sort(m_events.begin(), m_events.end(),
                         [](const Event& a, const Event& b) { return a.end < b.end; });

    const auto n_sig = m_set->m_signatures.size();
    const auto n_words = m_set->m_context_words.size();
    std::uint64_t count_pos = chunk_start;  // '\n' counted in [0, count_pos)
    std::uint64_t count_lines = m_newlines;

    for (const auto& ev : m_events) {
        if (ev.end == 0) continue;
        const std::uint64_t last = ev.end - 1;  // the match's last byte
        std::uint64_t line;
        if (last >= chunk_start) {
            if (last > count_pos) {
                count_lines += count_byte(chunk.substr(count_pos - chunk_start, last - count_pos), '\n');
                count_pos = last;
            }
            line = count_lines + 1;
        } else {
            // Reported late (an anchor needed the next byte): count back through history.
            std::uint64_t back = 0;
            for (std::uint64_t i = std::max(last, view.begin()); i < chunk_start; ++i) back += view.at(i) == '\n';
            line = m_newlines - back + 1;
        }

        if (ev.id >= n_sig + n_words) on_probe(ev, ev.id - n_sig - n_words, line, view);
        else if (ev.id >= n_sig) on_context_word(ev.id - static_cast<unsigned>(n_sig), line);
        else on_signature(ev, line, view);
    }
    collect_excerpts(view);

    if (count_pos < chunk_start + chunk.size()) count_lines += count_byte(chunk.substr(count_pos - chunk_start), '\n');
    m_newlines = count_lines;
    if (!chunk.empty()) m_last_was_newline = chunk.back() == '\n';
    m_offset = chunk_start + chunk.size();
    report_ready(m_newlines);
    remember(chunk);
    return ok_status();
}

// A line probe: one hit per line, at most max_probe_hits in all (or its own max_hits).
void LogScanner::on_probe(const Event& ev, std::size_t probe, std::uint64_t line, const View& view) {
    if (!m_on_probe || m_probe_line[probe] == line) return;
    if (const unsigned own = m_set->m_probes[probe].max_hits; own != 0) {
        if (m_probe_own_hits[probe] >= own) return;
        ++m_probe_own_hits[probe];
    } else {
        if (m_probe_hits >= m_limits.max_probe_hits) return;
        ++m_probe_hits;
    }
    m_probe_line[probe] = line;
    auto pending = std::make_unique<Pending>();
    pending->probe = probe;
    pending->match.line = line;
    pending->match.end_offset = ev.end;
    const unsigned after = m_set->m_probes[probe].lines_after;
    pending->ready_line = line + after;
    if (ev.end - 1 >= view.begin()) start_excerpt(*pending, view, ev, line, 0, after);
    m_pending.push_back(std::move(pending));
}

// A context word: remembered for later matches, and credited to the pending matches whose
// window it falls in.
void LogScanner::on_context_word(unsigned word, std::uint64_t line) {
    if (m_context_seen[word] == line) return;
    m_context_seen[word] = line;
    for (std::size_t p = m_pending_head; p < m_pending.size(); ++p) {
        auto& pending = *m_pending[p];
        if (pending.probe) continue;
        const auto& cs = m_set->m_signatures[pending.match.signature];
        if (line > pending.match.line + cs.source.window) continue;
        for (unsigned k = 0; k < cs.context_words.size(); ++k)
            if (cs.context_words[k] == word &&
                std::find(pending.match.context_found.begin(), pending.match.context_found.end(), k) ==
                    pending.match.context_found.end())
                pending.match.context_found.push_back(k);
    }
}

// A signature match: counted once per line, reported up to the limits.
void LogScanner::on_signature(const Event& ev, std::uint64_t line, const View& view) {
    const unsigned sig = ev.id;
    if (m_last_line[sig] == line) return;
    m_last_line[sig] = line;
    ++m_match_counts[sig];
    if (m_on_seen) m_on_seen(sig, line);
    if (m_reports[sig] >= m_limits.max_reports_per_signature) return;
    ++m_reports[sig];

    const auto& cs = m_set->m_signatures[sig];
    auto pending = std::make_unique<Pending>();
    Match& m = pending->match;
    m.signature = sig;
    m.line = line;
    m.end_offset = ev.end;
    for (unsigned k = 0; k < cs.context_words.size(); ++k) {
        const auto seen = m_context_seen[cs.context_words[k]];
        if (seen != 0 && seen + cs.source.window >= line) m.context_found.push_back(k);
    }
    // Wait for the context window only where there are words to look for.
    const unsigned window = cs.context_words.empty() ? 0U : cs.source.window;
    pending->ready_line = line + std::max(window, m_limits.lines_after);

    // A match reported late ends at most a byte or two before this chunk; the history
    // holds far more, but never read outside what is kept.
    if (m_reports[sig] <= m_limits.max_excerpts_per_signature && ev.end - 1 >= view.begin())
        start_excerpt(*pending, view, ev, line, m_limits.lines_before, m_limits.lines_after);
    m_pending.push_back(std::move(pending));
}

// Gathers the excerpt bytes after each pending match from what this chunk adds.
void LogScanner::collect_excerpts(const View& view) {
    for (std::size_t p = m_pending_head; p < m_pending.size(); ++p) {
        auto& pending = *m_pending[p];
        while (pending.collecting && pending.collect_from < view.end()) {
            const auto seg = view.segment_from(std::max(pending.collect_from, view.begin()));
            const auto* nl = static_cast<const char*>(std::memchr(seg.data(), '\n', seg.size()));
            const std::size_t take = nl ? static_cast<std::size_t>(nl - seg.data()) : seg.size();
            auto& text = pending.match.excerpt.back();
            const std::size_t keep = std::min(take, pending.budget);
            text.text.append(seg.data(), keep);
            pending.budget -= keep;
            if (keep < take) text.truncated = true;
            pending.collect_from += take;
            if (!nl) break;
            pending.collect_from += 1;
            if (!text.truncated) strip_cr(text.text);
            if (--pending.lines_to_end == 0) {
                pending.collecting = false;
            } else {
                pending.match.excerpt.push_back(ExcerptLine{text.number + 1, {}, false});
                pending.budget = m_limits.line_bytes;
            }
        }
    }
}

// The matched line up to the match end and `before` lines before it, from the view; the
// rest of the line and `after` lines are gathered as later bytes arrive.
void LogScanner::start_excerpt(Pending& pending, const View& view, const Event& ev, std::uint64_t line, unsigned before,
                               unsigned after) const {
    Match& m = pending.match;
    const std::uint64_t last = ev.end - 1;
    // The matched line up to the match end, and the lines before it.
    const bool ends_line = view.at(last) == '\n';
    const std::uint64_t text_end = ends_line ? last : ev.end;
    const std::uint64_t low =
        std::max(view.begin(), text_end > m_limits.line_bytes ? text_end - m_limits.line_bytes : 0);
    auto nl = view.last_newline(low, last);
    std::uint64_t line_start = nl ? *nl + 1 : low;
    bool truncated = !nl && low > 0;
    std::vector<ExcerptLine> earlier;
    ExcerptLine current{line, view.copy(line_start, text_end), truncated};
    current.match_end = current.text.size();
    if (ends_line) strip_cr(current.text);
    std::uint64_t pos = line_start;  // start of the line after the one to collect
    std::uint64_t number = line;
    while (!truncated && nl && earlier.size() < before && number > 1 && pos > view.begin()) {
        const std::uint64_t prev_end = pos - 1;  // its '\n'
        const std::uint64_t prev_low =
            std::max(view.begin(), prev_end > m_limits.line_bytes ? prev_end - m_limits.line_bytes : 0);
        nl = view.last_newline(prev_low, prev_end);
        const std::uint64_t prev_start = nl ? *nl + 1 : prev_low;
        truncated = !nl && prev_low > 0;
        ExcerptLine prev{--number, view.copy(prev_start, prev_end), truncated};
        strip_cr(prev.text);
        earlier.push_back(std::move(prev));
        pos = prev_start;
    }
    std::reverse(earlier.begin(), earlier.end());
    m.excerpt = std::move(earlier);
    m.excerpt.push_back(std::move(current));
    pending.collecting = true;
    pending.collect_from = ev.end;
    if (ends_line) {
        pending.lines_to_end = after;
        pending.collect_from = last + 1;
        if (pending.lines_to_end > 0) m.excerpt.push_back(ExcerptLine{line + 1, {}, false});
        else pending.collecting = false;
    } else {
        pending.lines_to_end = 1 + after;
    }
    pending.budget = m_limits.line_bytes;
}

void LogScanner::report_ready(std::uint64_t complete_lines) {
    while (m_pending_head < m_pending.size() && m_pending[m_pending_head]->ready_line <= complete_lines) {
        auto pending = std::move(m_pending[m_pending_head++]);
        pending->match.context_complete = true;
        deliver(*pending);
    }
    if (m_pending_head == m_pending.size()) {
        m_pending.clear();
        m_pending_head = 0;
    }
}

void LogScanner::deliver(Pending& pending) {
    auto& m = pending.match;
    // An excerpt line still open at the end of the stream, or an empty trailing one.
    if (!m.excerpt.empty() && pending.collecting && m.excerpt.back().text.empty() && m.excerpt.back().number != m.line)
        m.excerpt.pop_back();
    if (pending.probe) {
        ProbeHit hit{*pending.probe, m.line, {}};
        for (const auto& l : m.excerpt) hit.lines.emplace_back(unwrap(l.text));
        if (m_on_probe) m_on_probe(hit);
        return;
    }
    std::sort(m.context_found.begin(), m.context_found.end());
    if (m_on_match) m_on_match(m);
}

void LogScanner::flush() { flush_pending(m_finished); }

void LogScanner::flush_pending(bool stream_ended) {
    const auto complete = lines();
    for (std::size_t p = m_pending_head; p < m_pending.size(); ++p) {
        auto& pending = *m_pending[p];
        // Once the stream has ended no more context can arrive: the window is complete.
        pending.match.context_complete = stream_ended || pending.ready_line <= complete;
        deliver(pending);
    }
    m_pending.clear();
    m_pending_head = 0;
}

void LogScanner::remember(std::string_view chunk) {
    // Enough for the lines before a match, plus the bytes a late-reported match needs.
    const std::size_t keep = (m_limits.lines_before + 2) * (m_limits.line_bytes + 2);
    if (chunk.size() >= keep) {
        m_history.assign(chunk.data() + chunk.size() - keep, keep);
        return;
    }
    m_history.append(chunk.data(), chunk.size());
    if (m_history.size() > 2 * keep) m_history.erase(0, m_history.size() - keep);
}

Status LogScanner::finish() {
    if (m_finished) return ok_status();
    m_events.clear();
    if (m_hs->stream) {
        const auto rc = hs_close_stream(m_hs->stream, m_hs->scratch.get(), &LogScanner::on_hs_event, this);
        m_hs->stream = nullptr;
        if (rc != HS_SUCCESS)
            return Error{"scanning log", "", fmt::format("Hyperscan error {}", rc), ExitCode::environment};
    }
    auto s = process({}, m_offset);
    m_finished = true;
    flush();
    return s;
}

// ---------------------------------------------------------------------------------------
// ExcerptLine

namespace {

// `text` without its escape sequences (EscapeFilter, the same one LogScanner::feed runs), and
// where `pos` lands in it. One filter reads the bytes before `pos`, then the rest, as it reads a
// log in chunks, so a sequence that spans `pos` is still dropped whole.
std::string without_escapes(std::string_view text, std::size_t& pos) {
    const std::size_t split = std::min(pos, text.size());
    std::string scratch;
    EscapeFilter filter;
    std::string out(filter.filter(text.substr(0, split), scratch));
    pos = out.size();
    out += filter.filter(text.substr(split), scratch);
    return out;
}

}  // namespace

std::string printable_line(const ExcerptLine& line) {
    std::size_t match_pos = line.match_end == std::string::npos ? line.text.size() : line.match_end;
    // Excerpts from LogScanner hold no escape sequences any more; a line from elsewhere may.
    std::string text = without_escapes(line.text, match_pos);
    // Progress bars redraw with '\r': keep the redraw a terminal would have shown with the match.
    if (text.find('\r') != std::string::npos) {
        std::size_t begin = 0;
        std::size_t end = text.size();
        if (line.match_end != std::string::npos) {
            const auto before = text.rfind('\r', match_pos > 0 ? match_pos - 1 : 0);
            begin = (before == std::string::npos || before >= match_pos) ? 0 : before + 1;
            const auto after = text.find('\r', match_pos);
            end = after == std::string::npos ? text.size() : after;
        } else {
            // The last non-empty redraw.
            while (end > 0) {
                const auto cr = text.rfind('\r', end - 1);
                begin = cr == std::string::npos ? 0 : cr + 1;
                if (begin < end) break;
                if (cr == std::string::npos) break;
                end = cr;
            }
        }
        text = text.substr(begin, end - begin);
    }
    // Controls (C0, DEL, C1 in either encoding, bidi overrides) as '?', invalid UTF-8 as U+FFFD:
    // the one terminal-safe path (util/text.hpp).
    std::string out = terminal_safe(text, Shown::line);
    if (line.truncated) out += " …";
    return out;
}

}  // namespace rmcp::explain
