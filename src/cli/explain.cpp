// `rmcp explain [FILE...|-] [--kernel-log]`: recognise known failures in logs.
#include "context.hpp"
#include "json_output.hpp"

#include "detect/detect.hpp"
#include "explain/diagnose.hpp"
#include "explain/log_source.hpp"
#include "explain/matcher.hpp"
#include "render/explain_render.hpp"
#include "explain/report_facts.hpp"
#include "facts/facts_json.hpp"
#include "install_paths.hpp"
#include "similar/index.hpp"
#include "similar/message_causes.hpp"
#include "similar/terms.hpp"
#include "kb/kb.hpp"
#include "patch/next_step.hpp"
#include "patch/patch.hpp"
#include "process/kernel_log.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace rmcp::cli {

namespace {

struct ExplainOptions {
    std::vector<std::string> inputs;
    bool kernel_log = false;
    bool no_facts = false;
    bool ignore_report = false;
    bool all_matches = false;
    std::size_t similar = 3;                   // similar public reports shown (0: no lookup)
    std::vector<std::string> exclude_threads;  // measurement: a thread never retrieves itself
    std::string facts_file;                    // --facts FILE: the machine's facts (detect's JSON)
    bool no_relay = false;
};

// Whether standard input is a stream being written now (a pipe, a socket, a terminal) rather
// than a file redirected into it, which has nothing to show "as it happens".
bool stdin_is_stream() {
    struct stat st {};
    if (::fstat(STDIN_FILENO, &st) != 0) return false;
    return !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode);
}

// `rmcp explain -` on a stream (docs/explain.md, "Streaming"): the input is relayed to stdout
// as it arrives, byte for byte, and each problem is announced on stderr once, the moment a
// line of it is read. Family entries are announced only for a read in which no specific entry
// was seen (the same ranking as the summary: specific before family); the summary at the end
// of input ranks everything and goes to stderr too, so stdout stays the program's output.
class LiveAnnouncer {
public:
    LiveAnnouncer(Context& ctx, const std::vector<kb::Entry>& entries, const explain::SignatureSet& set)
        : m_ctx(ctx), m_entries(entries), m_set(set) {}

    void seen(std::size_t signature, std::uint64_t line) {
        const std::size_t entry = m_set.signatures()[signature].entry;
        if (m_announced.contains(entry)) return;
        for (const auto& s : m_batch)
            if (s.first == entry) return;
        m_batch.emplace_back(entry, line);
    }

    // After a read: what it held; its family entries only when it held no specific one (a
    // family entry passed over is not announced later either: the specific one explains it).
    void announce(std::string_view source) {
        const bool specific = std::any_of(m_batch.begin(), m_batch.end(),
                                          [&](const auto& s) { return !kb::is_family(m_entries[s.first]); });
        for (const auto& [entry, line] : m_batch) {
            m_announced.insert(entry);
            if (specific && kb::is_family(m_entries[entry])) continue;
            if (m_ctx.quiet()) continue;
            // "recognised" or "likely", as the answer will say it (docs/explain.md, "Basis").
            m_ctx.diag.raw(shown_text(m_ctx, fmt::format("rmcp: {} {}\n",
                                                         explain::basis_word(explain::entry_basis(m_entries[entry])),
                                                         explain::seen_line(m_entries[entry], source, line))));
        }
        m_batch.clear();
    }

private:
    Context& m_ctx;
    const std::vector<kb::Entry>& m_entries;
    const explain::SignatureSet& m_set;
    std::vector<std::pair<std::size_t, std::uint64_t>> m_batch;  // entry, line: this read's
    std::set<std::size_t> m_announced;
};

// `--facts FILE`: a facts document as `rmcp detect --format json` writes it (a JSON object).
Result<nlohmann::json> read_facts_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error{"reading facts", path, std::strerror(errno), ExitCode::usage};
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
        return Error{"reading facts", path, "not a JSON object (expected `rmcp detect --format json`)",
                     ExitCode::usage};
    return doc;
}

// ---- Similar public reports (issue 31; docs/explain.md, "Similar public reports") ----

// The nearest public threads to the log's error lines, shown when they are similar enough and
// either rmcp recognised something or they agree on a category (the `similar` basis). A lookup
// that fails (no module, unreadable records) is a note: the answer stands without it.
void add_similar_reports(Context& ctx, const ExplainOptions& opts, const similar::TermCollector& terms,
                         explain::ExplainReport& report) {
    if (opts.similar == 0 || terms.terms().empty()) return;
    auto index = similar::ThreadIndex::open(ctx.data_dir() / "threads",
                                            similar::module_paths(executable_dir(), installed_library_dir()),
                                            similar::build_tree_index(executable_dir()));
    if (!index) {
        ctx.diag.note(fmt::format("no similar public reports: {}", index.error().message()));
        return;
    }
    auto nearest = index->nearest(terms.terms(), std::max(opts.similar, similar::k_vote_threads), opts.exclude_threads);
    if (!nearest) {
        ctx.diag.note(fmt::format("no similar public reports: {}", nearest.error().message()));
        return;
    }
    if (report.diagnoses.empty()) report.vote = similar::vote(*nearest);
    if (report.diagnoses.empty() && !report.vote) return;  // never a problem on a log rmcp finds clean
    report.similar = similar::shown(std::move(*nearest), opts.similar);
}

// Under a first answer that names a message, not a cause (basis `family`): what the public
// threads that rmcp answers with the same entry established (similar/message_causes.hpp). Off
// with the similar reports (`--similar 0`); a file that cannot be read is a note.
void add_message_causes(Context& ctx, const ExplainOptions& opts, explain::ExplainReport& report) {
    if (opts.similar == 0 || report.diagnoses.empty()) return;
    const auto& first = report.diagnoses.front();
    if (first.facts_only || explain::basis_of(first) != explain::Basis::family) return;
    auto causes = similar::message_causes(ctx.data_dir() / "threads", first.entry->id, opts.exclude_threads);
    if (!causes) {
        ctx.diag.note(fmt::format("no public threads with this message: {}", causes.error().message()));
        return;
    }
    if (causes->threads > 0) report.message_causes = std::move(*causes);
}

int explain(Context& ctx, const ExplainOptions& opts) {
    const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
    if (!format) return fail(ctx, format.error());

    std::vector<std::string> inputs = opts.inputs;
    if (inputs.empty() && !opts.kernel_log) {
        // Like grep: no FILE means standard input, but never wait on a terminal.
        if (::isatty(STDIN_FILENO))
            return fail(ctx,
                        Error{"reading", "standard input",
                              "it is a terminal; give FILE..., '-' with a pipe, or --kernel-log", ExitCode::usage});
        inputs.emplace_back("-");
    }

    std::optional<nlohmann::json> facts_file_doc;  // read first: a bad --facts fails before any scan
    if (!opts.facts_file.empty()) {
        auto doc = read_facts_file(opts.facts_file);
        if (!doc) return fail(ctx, doc.error());
        facts_file_doc = std::move(*doc);
    }

    // Relaying needs stdout to itself: text only, and only for a stream on stdin. It starts
    // before the knowledge base loads, so that the first line shows as soon as it arrives.
    const bool relay = *format == OutputFormat::text && !opts.no_relay && stdin_is_stream() &&
                       std::find(inputs.begin(), inputs.end(), "-") != inputs.end();
    std::optional<explain::InputRelay> relayed;
    if (relay) {
        // The relayed input is the data on stdout: -q never holds it (context.hpp, "-q and -v").
        ctx.document_output();
        relayed.emplace(STDIN_FILENO, ctx.out);
    }

    auto kb = kb::load(ctx.kb_dir());
    if (!kb) return fail(ctx, kb.error());
    // The bug report's sections, then the error lines the similar reports are looked up by
    // (its own budget of hits: LineProbe::max_hits).
    std::vector<explain::LineProbe> probes(explain::report_probes().begin(), explain::report_probes().end());
    const std::size_t error_probe = probes.size();
    probes.push_back({similar::error_line_pattern(), 0, 4096});
    auto set = explain::SignatureSet::compile(kb->entries, explain::Reporting::every_line, explain::ContextWords::match,
                                              probes);
    if (!set) return fail(ctx, set.error());
    explain::ReportReader reporter;
    similar::TermCollector error_terms;
    auto on_error_line = [&error_terms, error_probe](const explain::ProbeHit& hit) {
        if (hit.probe == error_probe && !hit.lines.empty()) (void)error_terms.add_line(hit.lines.front());
    };

    LiveAnnouncer announcer(ctx, kb->entries, **set);

    explain::DiagnosisBuilder builder(kb->entries, *set);
    explain::ExplainReport report;
    std::optional<Error> failure;
    auto note_failure = [&](const Error& e) {
        ctx.diag.error(e);
        if (!failure) failure = e;
    };

    for (const auto& path : inputs) {
        const std::string source = path == "-" ? "standard input" : path;
        explain::LogScanner scanner(*set, builder.collector(source));
        scanner.on_probe([&reporter, &on_error_line, source, error_probe, &opts](const explain::ProbeHit& hit) {
            if (hit.probe == error_probe) on_error_line(hit);
            else if (!opts.ignore_report) reporter.add(source, hit);
        });
        Status status = ok_status();
        if (relayed && path == "-") {
            explain::ScanHooks hooks;
            scanner.on_seen([&announcer](std::size_t sig, std::uint64_t line) { announcer.seen(sig, line); });
            hooks.after_read = [&announcer, &source] { announcer.announce(source); };
            status = explain::scan_fd(relayed->fd(), source, scanner, hooks);
            if (status) status = relayed->status(source);
            relayed.reset();  // stdin is read to its end once; a second "-" reads nothing
        } else {
            status = explain::scan_path(path, scanner);
        }
        if (!status) {
            note_failure(status.error());
            (void)scanner.finish();  // keep what was recognised before the failure
        }
        builder.add_counts(source, scanner);
        report.inputs.push_back({source, scanner.bytes(), scanner.lines(), status.ok(),
                                 status.ok() ? std::string() : status.error().message()});
    }

    if (opts.kernel_log) {
        auto log = process::read_kernel_log(process::system_runner(std::chrono::seconds(60)));
        if (!log) {
            note_failure(log.error());
        } else {
            if (!log->cut.empty()) ctx.diag.note(fmt::format("kernel log ({}): {}", log->source, log->cut));
            const std::string source = "kernel log (" + log->source + ")";
            explain::LogScanner scanner(*set, builder.collector(source));
            scanner.on_probe(on_error_line);
            Status status = scanner.feed(log->text);
            if (status) status = scanner.finish();
            if (!status) note_failure(status.error());
            builder.add_counts(source, scanner);
            report.inputs.push_back({source, scanner.bytes(), scanner.lines(), status.ok(),
                                     status.ok() ? std::string() : status.error().message()});
        }
    }

    // Facts rank the causes that hold on the machine first: the reporter's, when the input
    // is a bug report that describes it, else the machine of --facts FILE, else this machine
    // (or --root).
    nlohmann::json facts;
    explain::AppliesFn applies;
    if (auto reported = reporter.facts(); reported.describes_machine()) {
        facts = explain::report_facts_document(reported);
        applies = explain::applies_on(facts);
        report.facts_source = "report";
        report.facts_from = "the report";
        report.reporter = std::move(reported);
    } else if (facts_file_doc) {
        // The machine the log came from, as `rmcp detect --format json` described it there:
        // it stands where this machine would (a bug report in the log still comes first).
        facts = std::move(*facts_file_doc);
        applies = explain::applies_on(facts);
        report.facts_source = "file";
        report.facts_from = "--facts " + opts.facts_file;
    } else if (!opts.no_facts) {
        auto root = ctx.open_root();
        if (!root) return fail(ctx, root.error());
        facts = facts_to_json(detect(*root));
        applies = explain::applies_on(facts);
        report.facts_source = root->is_live() ? "this machine" : "root";
        report.facts_from = root->is_live() ? "this machine" : "--root " + root->base().string();
    }
    report.diagnoses =
        builder.rank(applies, report.reporter ? &facts : nullptr,
                     opts.all_matches ? explain::FamilyEntries::keep_all : explain::FamilyEntries::drop_covered);
    add_similar_reports(ctx, opts, error_terms, report);
    add_message_causes(ctx, opts, report);

    // Each problem's next command, in doctor's words (patch/next_step.hpp). Without the patch
    // definitions the problems are still explained, only without a command.
    if (!report.diagnoses.empty()) {
        auto patches = patch::load_patches(ctx.data_dir() / "patches");
        if (!patches) ctx.diag.warning(fmt::format("no next commands: {}", patches.error().message()));
        const bool live = ctx.options.root.empty() || ctx.options.root == "/";
        const std::string command = command_prefix(ctx);
        if (patches)
            for (const auto& d : report.diagnoses)
                if (auto step = patch::first_fix_step(*d.entry, *patches, command, live))
                    report.fix_steps.emplace(d.entry->id, std::move(*step));
    }

    const explain::TextOptions text_options{ctx.options.verbose};
    if (*format == OutputFormat::json) {
        auto out = explain::render_json(report);
        // The failure is part of the one JSON document (docs/exit-codes.md, "Errors as data").
        if (failure) out["error"] = error_json(*failure);
        ctx.out.print("{}", json_output(ctx, std::move(out)));
    } else if (failure && report.diagnoses.empty()) {
        // An input that could not be read was not found clean: the error (on stderr) is all
        // there is to say, never "No known problem recognised" (newcomer review, finding 2).
    } else if (relay) {
        // stdout holds the relayed input, byte for byte; the report joins the announcements on
        // stderr (under -q: nothing, the exit code tells).
        if (!ctx.quiet()) ctx.diag.raw(shown_text(ctx, explain::render_text(report, Style(false), text_options)));
    } else {
        print_text(ctx, "{}", explain::render_text(report, ctx.style(), text_options));
        // -q: one line (the frame holds the report).
        std::string ids;
        for (std::size_t i = 0; i < report.diagnoses.size() && i < 3; ++i)
            ids += (i ? ", " : "") + report.diagnoses[i].entry->id;
        if (report.diagnoses.size() > 3) ids += ", …";
        const auto n = report.diagnoses.size();
        const std::string text = explain::render_text(report, Style(false), text_options);
        ctx.summary(n == 0 ? text.substr(0, text.find('\n'))
                           : fmt::format("{} problem{} recognised: {}", n, n == 1 ? "" : "s", ids));
    }

    if (failure) return static_cast<int>(failure->code);
    return static_cast<int>(report.diagnoses.empty() ? ExitCode::findings : ExitCode::success);
}

}  // namespace

void add_explain_command(CLI::App& app, Context& ctx, Action& action) {
    auto opts = std::make_shared<ExplainOptions>();
    auto* cmd = app.add_subcommand("explain", "Recognise known GPU failures in logs (files, stdin, kernel log)");
    cmd->add_option("inputs", opts->inputs, "Log files (.gz is read transparently); '-' or none: standard input")
        ->type_name("FILE");
    cmd->add_flag("--kernel-log", opts->kernel_log, "Also read the kernel log (journalctl -k -b, else dmesg)");
    cmd->add_flag("--no-facts", opts->no_facts,
                  "Do not rank by this machine's facts (for logs from another machine without a snapshot)");
    cmd->add_flag("--all", opts->all_matches,
                  "Also list family entries whose lines a specific entry already explains (for kb work)");
    cmd->add_option("--similar", opts->similar,
                    "Show up to N similar public reports (threads with their cause and fix; 0: none)")
        ->type_name("N")
        ->check(CLI::Range(0, 20));
    cmd->add_option("--exclude-thread", opts->exclude_threads,
                    "Leave this thread (its URL) out of the similar reports (accuracy measurement); repeatable")
        ->type_name("URL")
        ->expected(1)  // one URL per use: the log files that follow are not URLs
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd->add_option("--facts", opts->facts_file,
                    "Rank by the facts of the machine the log came from (`rmcp detect --format json` there)")
        ->type_name("FILE");
    cmd->add_flag("--no-relay", opts->no_relay,
                  "With a pipe on standard input: do not copy it to standard output as it arrives (the report "
                  "then goes to standard output, at the end of input)");
    cmd->add_flag("--ignore-report", opts->ignore_report,
                  "Do not read rocminfo, collect_env, version and environment lines in the input as the "
                  "reporter's facts");
    cmd->footer("A pipe on standard input is relayed to standard output as it arrives, each problem is "
                "announced on standard error when its line is read, and the report follows on standard error at "
                "the end of input: `python train.py 2>&1 | rmcp explain -`. Exit codes: 0 something recognised, 1 "
                "nothing recognised, 2 unreadable log or bad knowledge base, 3 kernel log unreadable. Formats: text "
                "(default), json (no relaying). See docs/explain.md.");
    cmd->callback([&ctx, &action, opts] { action = [&ctx, opts] { return explain(ctx, *opts); }; });
}

}  // namespace rmcp::cli
