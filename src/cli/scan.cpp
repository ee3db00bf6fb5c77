// `rmcp scan [PATH...]`: the GPU targets libraries really contain, and whether each GPU's
// effective target is among them (docs/scan.md).
#include "context.hpp"
#include "json_output.hpp"

#include "detect/detect.hpp"
#include "render/scan_text.hpp"
#include "scan/coverage.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>

namespace rmcp::cli {

void add_scan_command(CLI::App& app, Context& ctx, Action& action) {
    auto* cmd =
        app.add_subcommand("scan", "GPU targets inside libraries, binaries, Tensile files and kernel databases");
    static std::vector<std::string> paths;
    static bool deep = false;
    cmd->add_option("paths", paths,
                    "Files or directories to scan (default: the ROCm and PyTorch installations "
                    "detect finds, checked against each GPU)")
        ->type_name("PATH");
    cmd->add_flag("--deep", deep,
                  "Search every data section (also beside .hip_fatbin, and .data.rel.ro) and unknown files for "
                  "embedded code, without a size limit");
    cmd->footer("Formats: text (default), json. Exit 0 when the scan completed (damaged files are warnings); "
                "2 when a named path cannot be read.");
    cmd->callback([&] {
        action = [&] {
            const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
            if (!format) return fail(ctx, format.error());
            scan::ScanLimits limits;
            if (deep) {
                limits.embedded_search_limit = 0;
                limits.sweep_with_fatbin = true;
                limits.sweep_relocated_data = true;
            }
            scan::ScanReport report;
            const bool installations = paths.empty();
            if (installations) {
                auto root = ctx.open_root();
                if (!root) return fail(ctx, root.error());
                report = scan::scan_installations(*root, detect(*root), limits);
            } else {
                // Named paths are paths on this machine (not under --root), resolved by the same
                // Root as everything else.
                auto live = ctx.open_root_at("/");
                if (!live) return fail(ctx, live.error());
                std::vector<std::string> absolute;
                for (const auto& p : paths)
                    absolute.push_back(std::filesystem::absolute(p).lexically_normal().string());
                report = scan::scan_paths(*live, absolute, limits);
            }
            for (const auto& f : report.files)
                for (const auto& w : f.warnings)
                    ctx.diag.warning(fmt::format("scanning {} at offset {}: {}", f.path, w.offset, w.message));
            const bool failed = !report.problems.empty() && !installations;
            if (*format == OutputFormat::json) {
                auto out = scan::scan_report_json(report);
                // A named path that cannot be read fails the command: the error is part of the
                // one JSON document (docs/exit-codes.md, "Errors as data").
                if (failed) {
                    const auto& first = report.problems.front();
                    const auto colon = first.rfind(": ");
                    out["error"] =
                        error_json(Error{"scanning", colon == std::string::npos ? first : first.substr(0, colon),
                                         colon == std::string::npos ? "" : first.substr(colon + 2), ExitCode::usage});
                }
                ctx.out.print("{}", json_output(ctx, std::move(out)));
            } else {
                print_text(ctx, "{}", render::scan_text(report, installations, ctx.verbose(), ctx.style()));
                ctx.summary(render::scan_totals(report));
            }
            for (const auto& p : report.problems) ctx.diag.error(Error{"scanning", p, "", ExitCode::usage});
            return failed ? static_cast<int>(ExitCode::usage) : 0;
        };
    });
}

}  // namespace rmcp::cli
