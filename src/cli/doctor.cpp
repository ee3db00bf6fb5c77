// `rmcp doctor`: the knowledge base evaluated on detect's facts (kb/doctor.hpp).
#include "context.hpp"

#include "detect/detect.hpp"
#include "facts/facts_json.hpp"
#include "kb/doctor.hpp"
#include "render/doctor_render.hpp"

#include <fmt/core.h>

#include <memory>

namespace rmcp::cli {

void add_doctor_command(CLI::App& app, Context& ctx, Action& action) {
    auto* cmd = app.add_subcommand("doctor", "Check this machine against the knowledge base of known ROCm failures");
    // Owned by the callbacks, which outlive this function.
    auto fail_on = std::make_shared<std::string>("critical");
    cmd->add_option("--fail-on", *fail_on, "Exit 1 when a finding is at or above this severity (default: critical)")
        ->check(CLI::IsMember({"info", "warning", "critical"}))
        ->type_name("SEVERITY");
    cmd->footer("Formats: text (default), json (schema_version'd), prometheus (node_exporter textfile).\n"
                "Exit: 0 nothing at or above --fail-on, 1 findings at or above it, 2 malformed knowledge base.");
    cmd->callback([&ctx, &action, fail_on] {
        action = [&ctx, fail_on] {
            const auto format = ctx.format({OutputFormat::text, OutputFormat::json, OutputFormat::prometheus});
            if (!format) return fail(ctx, format.error());
            const auto kb = kb::load(ctx.kb_dir());
            if (!kb) return fail(ctx, kb.error());
            auto root = ctx.open_root();
            if (!root) return fail(ctx, root.error());
            const auto facts = facts_to_json(detect(*root));
            const auto report = kb::run_doctor(*kb, facts);
            switch (*format) {
            case OutputFormat::json: fmt::print("{}\n", doctor_to_json(report).dump(2)); break;
            case OutputFormat::prometheus: fmt::print("{}", render_doctor_prometheus(report)); break;
            default: fmt::print("{}", render_doctor_text(report, ctx.style())); break;
            }
            const auto threshold = kb::parse_severity(*fail_on).value_or(kb::Severity::critical);
            return kb::has_findings_at_or_above(report, threshold) ? static_cast<int>(ExitCode::findings) : 0;
        };
    });
}

}  // namespace rmcp::cli
