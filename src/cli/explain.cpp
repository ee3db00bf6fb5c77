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
#include "kb/kb.hpp"
#include "patch/next_step.hpp"
#include "patch/patch.hpp"
#include "process/kernel_log.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
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
            m_ctx.diag.raw(shown_text(m_ctx, fmt::format("rmcp: recognised {}\n",
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
    auto set = explain::SignatureSet::compile(kb->entries, explain::Reporting::every_line, explain::ContextWords::match,
                                              explain::report_probes());
    if (!set) return fail(ctx, set.error());
    explain::ReportReader reporter;

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
        if (!opts.ignore_report)
            scanner.on_probe([&reporter, source](const explain::ProbeHit& hit) { reporter.add(source, hit); });
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
            Status status = scanner.feed(log->text);
            if (status) status = scanner.finish();
            if (!status) note_failure(status.error());
            builder.add_counts(source, scanner);
            report.inputs.push_back({source, scanner.bytes(), scanner.lines(), status.ok(),
                                     status.ok() ? std::string() : status.error().message()});
        }
    }

    // Facts rank the causes that hold on the machine first: the reporter's, when the input
    // is a bug report that describes it, else this machine (or --root).
    nlohmann::json facts;
    explain::AppliesFn applies;
    if (auto reported = reporter.facts(); reported.describes_machine()) {
        facts = explain::report_facts_document(reported);
        applies = explain::applies_on(facts);
        report.facts_source = "report";
        report.facts_from = "the report";
        report.reporter = std::move(reported);
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
