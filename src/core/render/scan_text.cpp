#include "render/scan_text.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rmcp::render {

namespace {

std::string join_targets(const std::vector<std::string>& targets) {
    std::string out;
    for (const auto& t : targets) {
        if (!out.empty()) out += ' ';
        out += t;
    }
    return out;
}

void file_text(std::string& out, const scan::FileScan& f, bool verbose, const Style& style) {
    const auto targets = f.targets();
    out += fmt::format("{}  {}  {}\n", style.bold(f.path), style.dim(std::string(scan::file_kind_name(f.kind))),
                       targets.empty() ? style.dim("(no GPU code)") : join_targets(targets));
    if (!verbose) return;
    for (const auto& c : f.code) {
        const std::string where = c.compression == scan::Compression::none
                                      ? fmt::format("offset {} size {}", c.offset, c.size)
                                      : fmt::format("inflated offset {} size {} in {} bundle at {}", c.offset, c.size,
                                                    scan::compression_name(c.compression), c.bundle_offset.value_or(0));
        out += fmt::format("    {:<44} {}  ({}{})\n", c.id.empty() ? c.target : c.id, where, c.container,
                           c.code_object_version ? fmt::format(", code object v{}", c.code_object_version) : "");
    }
}

}  // namespace

std::string scan_totals(const scan::ScanReport& report) {
    const auto with_code = std::count_if(report.files.begin(), report.files.end(),
                                         [](const scan::FileScan& f) { return !f.targets().empty(); });
    return fmt::format("scanned {} file{}, {} with GPU code", report.files.size(), report.files.size() == 1 ? "" : "s",
                       with_code);
}

std::string scan_text(const scan::ScanReport& report, bool installations, bool verbose, const Style& style) {
    std::string out;
    if (!installations) {
        // Like ripgrep: the hits; every file with --verbose. The totals say what was skipped.
        for (const auto& f : report.files)
            if (verbose || !f.targets().empty()) file_text(out, f, verbose, style);
        out += scan_totals(report) + "\n";
        return out;
    }
    if (report.installations.empty()) out += fmt::format("No ROCm or PyTorch installation found.\n");
    for (const auto& inst : report.installations) {
        out += fmt::format("{} {}\n", style.bold(inst.kind == "torch" ? "PyTorch" : "ROCm"), inst.path);
        std::size_t width = 0;
        for (const auto& lib : inst.libraries) width = std::max(width, lib.name.size());
        bool any = false;
        for (const auto& lib : inst.libraries) {
            if (lib.targets.empty() && !verbose) continue;
            any = true;
            out += fmt::format("  {:<{}}  {}\n", lib.name, width,
                               lib.targets.empty() ? style.dim("(no GPU code)") : join_targets(lib.targets));
            if (verbose)
                for (const auto& file : lib.files) out += fmt::format("  {:<{}}    {}\n", "", width, style.dim(file));
        }
        if (!any) out += fmt::format("  {}\n", style.dim("(no library with GPU code)"));
    }
    out += fmt::format("\n{}\n", style.bold("GPU coverage"));
    if (report.coverage.empty()) {
        out += fmt::format("  {}\n", style.dim("nothing to assess (no GPU detected, or no library with GPU code)"));
        return out;
    }
    std::string last_gpu;
    for (const auto& c : report.coverage) {
        const auto gpu = fmt::format("node {} {}{}", c.node ? std::to_string(*c.node) : "?", c.gpu_target,
                                     c.effective_target != c.gpu_target ? " (runs as " + c.effective_target + ")" : "");
        if (gpu != last_gpu) {
            out += fmt::format("  GPU {}\n", gpu);
            last_gpu = gpu;
        }
        std::string verdict;
        if (c.covered) verdict = style.green("covered") + " by " + c.covered_by;
        else if (c.override_value)
            verdict = style.yellow("not covered") +
                      fmt::format("; nearest {}: HSA_OVERRIDE_GFX_VERSION={}", *c.nearest, *c.override_value);
        else if (c.remove_override) verdict = style.yellow("not covered") + "; " + c.reason;
        else verdict = style.red("not covered") + "; " + c.reason;
        out += fmt::format("    {} {}: {}\n", c.installation, c.library, verdict);
    }
    return out;
}

}  // namespace rmcp::render
