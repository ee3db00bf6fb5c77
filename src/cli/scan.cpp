// `rmcp scan [PATH...]`: the GPU targets libraries really contain, and whether each GPU's
// effective target is among them (docs/scan.md).
#include "context.hpp"
#include "json_output.hpp"

#include "detect/detect.hpp"
#include "scan/coverage.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>

namespace rmcp::cli {

namespace {

std::string join_targets(const std::vector<std::string>& targets) {
    std::string out;
    for (const auto& t : targets) {
        if (!out.empty()) out += ' ';
        out += t;
    }
    return out;
}

void print_file(const scan::FileScan& f, bool verbose, const Style& style) {
    const auto targets = f.targets();
    fmt::print("{}  {}  {}\n", style.bold(f.path), style.dim(std::string(scan::file_kind_name(f.kind))),
               targets.empty() ? style.dim("(no GPU code)") : join_targets(targets));
    if (!verbose) return;
    for (const auto& c : f.code) {
        const std::string where = c.compression == scan::Compression::none
                                      ? fmt::format("offset {} size {}", c.offset, c.size)
                                      : fmt::format("inflated offset {} size {} in {} bundle at {}", c.offset, c.size,
                                                    scan::compression_name(c.compression), c.bundle_offset.value_or(0));
        fmt::print("    {:<44} {}  ({}{})\n", c.id.empty() ? c.target : c.id, where, c.container,
                   c.code_object_version ? fmt::format(", code object v{}", c.code_object_version) : "");
    }
}

void print_report_text(const scan::ScanReport& report, bool installations, bool verbose, const Style& style) {
    if (!installations) {
        for (const auto& f : report.files) print_file(f, verbose, style);
        return;
    }
    if (report.installations.empty()) fmt::print("No ROCm or PyTorch installation found.\n");
    for (const auto& inst : report.installations) {
        fmt::print("{} {}\n", style.bold(inst.kind == "torch" ? "PyTorch" : "ROCm"), inst.path);
        std::size_t width = 0;
        for (const auto& lib : inst.libraries) width = std::max(width, lib.name.size());
        bool any = false;
        for (const auto& lib : inst.libraries) {
            if (lib.targets.empty() && !verbose) continue;
            any = true;
            fmt::print("  {:<{}}  {}\n", lib.name, width, lib.targets.empty() ? style.dim("(no GPU code)")
                                                                              : join_targets(lib.targets));
            if (verbose)
                for (const auto& file : lib.files) fmt::print("  {:<{}}    {}\n", "", width, style.dim(file));
        }
        if (!any) fmt::print("  {}\n", style.dim("(no library with GPU code)"));
    }
    fmt::print("\n{}\n", style.bold("GPU coverage"));
    if (report.coverage.empty()) {
        fmt::print("  {}\n", style.dim("nothing to assess (no GPU detected, or no library with GPU code)"));
        return;
    }
    std::string last_gpu;
    for (const auto& c : report.coverage) {
        const auto gpu = fmt::format("node {} {}{}", c.node ? std::to_string(*c.node) : "?", c.gpu_target,
                                     c.effective_target != c.gpu_target ? " (runs as " + c.effective_target + ")" : "");
        if (gpu != last_gpu) {
            fmt::print("  GPU {}\n", gpu);
            last_gpu = gpu;
        }
        std::string verdict;
        if (c.covered) verdict = style.green("covered") + " by " + c.covered_by;
        else if (c.override_value)
            verdict = style.yellow("not covered") + fmt::format("; nearest {}: HSA_OVERRIDE_GFX_VERSION={}", *c.nearest,
                                                                *c.override_value);
        else if (c.remove_override) verdict = style.yellow("not covered") + "; " + c.reason;
        else verdict = style.red("not covered") + "; " + c.reason;
        fmt::print("    {} {}: {}\n", c.installation, c.library, verdict);
    }
}

}  // namespace

void add_scan_command(CLI::App& app, Context& ctx, Action& action) {
    auto* cmd = app.add_subcommand("scan", "GPU targets inside libraries, binaries, Tensile files and kernel databases");
    static std::vector<std::string> paths;
    static bool deep = false;
    cmd->add_option("paths", paths, "Files or directories to scan (default: the ROCm and PyTorch installations "
                                    "detect finds, checked against each GPU)")
        ->type_name("PATH");
    cmd->add_flag("--deep", deep, "Search every data section (also beside .hip_fatbin, and .data.rel.ro) and unknown files for embedded code, without a size limit");
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
                for (const auto& p : paths) absolute.push_back(std::filesystem::absolute(p).lexically_normal().string());
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
                    out["error"] = error_json(Error{"scanning", colon == std::string::npos ? first : first.substr(0, colon),
                                                    colon == std::string::npos ? "" : first.substr(colon + 2),
                                                    ExitCode::usage});
                }
                fmt::print("{}", json_output(ctx, std::move(out)));
            } else {
                print_report_text(report, installations, ctx.options.verbose, ctx.style());
            }
            for (const auto& p : report.problems) ctx.diag.error(Error{"scanning", p, "", ExitCode::usage});
            return failed ? static_cast<int>(ExitCode::usage) : 0;
        };
    });
}

}  // namespace rmcp::cli
