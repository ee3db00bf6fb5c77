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
#include "similar/terms.hpp"
#include "kb/kb.hpp"
#include "process/kernel_log.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
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
        const auto status = explain::scan_path(path, scanner);
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

    if (*format == OutputFormat::json) {
        auto out = explain::render_json(report);
        // The failure is part of the one JSON document (docs/exit-codes.md, "Errors as data").
        if (failure) out["error"] = error_json(*failure);
        ctx.out.print("{}", json_output(ctx, std::move(out)));
    } else if (!ctx.options.quiet || !report.diagnoses.empty())
        print_text(ctx, "{}", explain::render_text(report, ctx.style()));

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
    cmd->add_flag("--ignore-report", opts->ignore_report,
                  "Do not read rocminfo, collect_env, version and environment lines in the input as the "
                  "reporter's facts");
    cmd->footer("Exit codes: 0 something recognised, 1 nothing recognised, 2 unreadable log or bad "
                "knowledge base, 3 kernel log unreadable. Formats: text (default), json. See docs/explain.md.");
    cmd->callback([&ctx, &action, opts] { action = [&ctx, opts] { return explain(ctx, *opts); }; });
}

}  // namespace rmcp::cli
