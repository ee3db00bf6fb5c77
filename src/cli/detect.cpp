// `rmcp detect`: facts about the system, as text, JSON or NFD feature lines.
#include "context.hpp"
#include "json_output.hpp"

#include "detect/detect.hpp"
#include "facts/facts_json.hpp"
#include "render/facts_text.hpp"

#include <fmt/core.h>

namespace rmcp::cli {

void add_detect_command(CLI::App& app, Context& ctx, Action& action) {
    auto* cmd = app.add_subcommand("detect", "Facts about GPUs, driver, access, ROCm, PyTorch and environment");
    cmd->footer("Formats: text (default), json (schema_version'd, stable keys), nfd (Kubernetes NFD feature file).");
    cmd->callback([&] {
        action = [&] {
            const auto format = ctx.format({OutputFormat::text, OutputFormat::json, OutputFormat::nfd});
            if (!format) return fail(ctx, format.error());
            auto root = ctx.open_root();
            if (!root) return fail(ctx, root.error());
            const Facts facts = detect(*root);
            switch (*format) {
            case OutputFormat::json: ctx.out.print("{}", json_output(ctx, facts_to_json(facts))); break;
            case OutputFormat::nfd: print_text(ctx, "{}", render_facts_nfd(facts)); break;
            default: print_text(ctx, "{}", render_facts_text(facts, ctx.style())); break;
            }
            return 0;
        };
    });
}

}  // namespace rmcp::cli
