// `rmcp detect`: facts about the system, as text, JSON or NFD feature lines.
#include "context.hpp"
#include "json_output.hpp"

#include "detect/detect.hpp"
#include "facts/facts_json.hpp"
#include "render/facts_text.hpp"

#include <fmt/core.h>

namespace rmcp::cli {

namespace {
// detect's line under -q: "2 AMD GPUs (GPU 0 gfx1100, GPU 1 gfx1036); ROCm 6.1.2; PyTorch 2.4.0".
std::string detect_summary(const Facts& facts) {
    std::vector<std::string> gpus;
    for (const auto& g : facts.gpus)
        gpus.push_back(fmt::format("{}{}", g.rocm_index ? fmt::format("GPU {} ", *g.rocm_index) : std::string{},
                                   g.gfx_target ? *g.gfx_target : std::string("gfx?")));
    std::string out = fmt::format("{} AMD GPU{}", facts.gpus.size(), facts.gpus.size() == 1 ? "" : "s");
    if (!gpus.empty()) out += fmt::format(" ({})", fmt::join(gpus, ", "));
    out += facts.rocm.empty() ? std::string("; no ROCm")
                              : fmt::format("; ROCm {}", facts.rocm.front().version ? *facts.rocm.front().version
                                                                                    : std::string("(version unknown)"));
    out += facts.torch.empty()
               ? std::string("; no PyTorch")
               : fmt::format("; PyTorch {}", facts.torch.front().version ? *facts.torch.front().version
                                                                         : std::string("(version unknown)"));
    return out;
}
}  // namespace

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
            default:
                print_text(ctx, "{}", render_facts_text(facts, ctx.style()));
                ctx.summary(detect_summary(facts));
                break;
            }
            return 0;
        };
    });
}

}  // namespace rmcp::cli
