// `rmcp doctor`: the knowledge base evaluated on detect's facts (kb/doctor.hpp) plus the
// `libraries` coverage facts of a headers-only scan (scan/coverage.hpp, docs/scan.md).
#include "context.hpp"
#include "json_output.hpp"

#include "detect/detect.hpp"
#include "facts/facts_json.hpp"
#include "kb/doctor.hpp"
#include "kb/libraries.hpp"
#include "render/doctor_render.hpp"
#include "scan/coverage.hpp"

#include <fmt/core.h>

#include <chrono>
#include <memory>

namespace rmcp::cli {

void add_doctor_command(CLI::App& app, Context& ctx, Action& action) {
    auto* cmd = app.add_subcommand("doctor", "Check this machine against the knowledge base of known ROCm failures");
    // Owned by the callbacks, which outlive this function.
    auto fail_on = std::make_shared<std::string>("critical");
    auto* fail_on_opt =
        cmd->add_option("--fail-on", *fail_on,
                        "Exit 1 when a finding is at or above this severity (default: critical; with --format "
                        "prometheus only when given)")
            ->check(CLI::IsMember({"info", "warning", "critical"}))
            ->type_name("SEVERITY");
    auto no_scan = std::make_shared<bool>(false);
    cmd->add_flag("--no-scan", *no_scan,
                  "Do not read library headers for GPU-target coverage (libraries.* facts absent; "
                  "rules fall back to version checks)");
    cmd->footer("Formats: text (default), json (schema_version'd), prometheus (node_exporter textfile).\n"
                "Exit: 0 nothing at or above --fail-on, 1 findings at or above it, 2 malformed knowledge base.\n"
                "With --format prometheus the findings are the metrics, so doctor exits 0 unless --fail-on is\n"
                "given: `rmcp doctor --format prometheus > f.tmp && mv f.tmp f.prom` always leaves a file.");
    cmd->callback([&ctx, &action, fail_on, no_scan, fail_on_opt] {
        action = [&ctx, fail_on, no_scan, fail_on_opt] {
            const auto format = ctx.format({OutputFormat::text, OutputFormat::json, OutputFormat::prometheus});
            if (!format) return fail(ctx, format.error());
            const auto kb = kb::load(ctx.kb_dir());
            if (!kb) return fail(ctx, kb.error());
            auto root = ctx.open_root();
            if (!root) return fail(ctx, root.error());
            const auto detected = detect(*root);
            auto facts = facts_to_json(detected);
            // Headers and tables only (never a data-section sweep): see docs/scan.md and
            // docs/PERFORMANCE.md for what it costs.
            if (!*no_scan) kb::merge_libraries(facts, scan::libraries_facts(*root, detected));
            auto report = kb::run_doctor(*kb, facts);
            if (*no_scan)
                report.notes.emplace_back("library coverage not checked (--no-scan): code-object rules used "
                                          "version checks");
            switch (*format) {
            case OutputFormat::json: fmt::print("{}", json_output(ctx, doctor_to_json(report))); break;
            case OutputFormat::prometheus: {
                const auto now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch());
                fmt::print("{}", render_doctor_prometheus(report, now.count()));
                // The textfile-collector idiom moves the file only on exit 0: the metrics carry
                // the findings, so only an explicit --fail-on turns them into an exit code.
                if (fail_on_opt->count() == 0) return 0;
                break;
            }
            default: fmt::print("{}", render_doctor_text(report, ctx.style())); break;
            }
            const auto threshold = kb::parse_severity(*fail_on).value_or(kb::Severity::critical);
            return kb::has_findings_at_or_above(report, threshold) ? static_cast<int>(ExitCode::findings) : 0;
        };
    });
}

}  // namespace rmcp::cli
