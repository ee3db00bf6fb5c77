// `rmcp detect`: facts about the system, as text, JSON or NFD feature lines.
#include "context.hpp"
#include "json_output.hpp"

#include "detect/detect.hpp"
#include "explain/log_source.hpp"
#include "explain/matcher.hpp"
#include "explain/report_facts.hpp"
#include "facts/facts_json.hpp"
#include "render/facts_text.hpp"

#include <fmt/core.h>

namespace rmcp::cli {

namespace {

// `--from-report FILE`: the machine a pasted bug report describes (rocminfo, collect_env,
// versions, environment lines), read as explain reads it (docs/explain.md, "Bug reports as
// facts"), as the facts document; for `rmcp explain --facts` on logs from that machine.
Result<nlohmann::json> facts_from_report(const std::string& path) {
    auto set = explain::SignatureSet::compile({}, explain::Reporting::every_line, explain::ContextWords::skip,
                                              explain::report_probes());
    if (!set) return set.error();
    explain::ReportReader reader;
    explain::LogScanner scanner(*set, [](const explain::Match&) {});
    scanner.on_probe([&reader, &path](const explain::ProbeHit& hit) { reader.add(path, hit); });
    if (auto status = explain::scan_path(path, scanner); !status) return status.error();
    return explain::report_facts_document(reader.facts());
}

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
    auto from_report = std::make_shared<std::string>();
    cmd->add_option("--from-report", *from_report,
                    "The facts a pasted bug report states (rocminfo, collect_env, versions), not this machine's")
        ->type_name("FILE");
    cmd->footer("Formats: text (default), json (schema_version'd, stable keys), nfd (Kubernetes NFD feature file).");
    cmd->callback([&ctx, &action, from_report] {
        action = [&ctx, from_report] {
            const auto format = ctx.format({OutputFormat::text, OutputFormat::json, OutputFormat::nfd});
            if (!format) return fail(ctx, format.error());
            if (!from_report->empty()) {
                if (*format != OutputFormat::json)
                    return fail(ctx, Error{"reading", *from_report, "--from-report writes JSON only (--format json)",
                                           ExitCode::usage});
                auto doc = facts_from_report(*from_report);
                if (!doc) return fail(ctx, doc.error());
                ctx.out.print("{}", json_output(ctx, std::move(*doc)));
                return 0;
            }
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
