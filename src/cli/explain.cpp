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
#include "process/kernel_log.hpp"

#include <fmt/core.h>

#include <cstdlib>
#include <unistd.h>

namespace rmcp::cli {

namespace {

struct ExplainOptions {
    std::vector<std::string> inputs;
    bool kernel_log = false;
    bool no_facts = false;
    bool ignore_report = false;
    bool all_matches = false;
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

    auto kb = kb::load(ctx.kb_dir());
    if (!kb) return fail(ctx, kb.error());
    auto set = explain::SignatureSet::compile(kb->entries, explain::Reporting::every_line, explain::ContextWords::match,
                                              explain::report_probes());
    if (!set) return fail(ctx, set.error());
    explain::ReportReader reporter;

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
    cmd->add_flag("--ignore-report", opts->ignore_report,
                  "Do not read rocminfo, collect_env, version and environment lines in the input as the "
                  "reporter's facts");
    cmd->footer("Exit codes: 0 something recognised, 1 nothing recognised, 2 unreadable log or bad "
                "knowledge base, 3 kernel log unreadable. Formats: text (default), json. See docs/explain.md.");
    cmd->callback([&ctx, &action, opts] { action = [&ctx, opts] { return explain(ctx, *opts); }; });
}

}  // namespace rmcp::cli
