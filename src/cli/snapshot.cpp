// `rmcp snapshot -o FILE.tar.gz`: the support bundle that doubles as a test fixture.
#include "context.hpp"
#include "json_output.hpp"

#include "snapshot/snapshot.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

namespace rmcp::cli {

namespace {
struct SnapshotArgs {
    std::string output;
    bool list = false;
};

// How many files detect read whose content stays out of the bundle (docs/security.md,
// "Snapshot content by value").
void note_omitted(Context& ctx, const SnapshotSummary& s) {
    if (s.omitted.empty()) return;
    ctx.diag.note(fmt::format("{} file(s) detect read left out of the bundle (not a regular file, reached through a "
                              "link that leaves its directory, over the cap, or not the kind expected): listed in "
                              ".rmcp-meta as `omitted PATH REASON`",
                              s.omitted.size()));
}

// 10 KiB, 1.5 MiB: binary units, one decimal above 10 units of the smaller one.
std::string human_size(std::uint64_t bytes) {
    if (bytes < 1024) return fmt::format("{} bytes", bytes);
    const char* units[] = {"KiB", "MiB", "GiB"};
    double value = static_cast<double>(bytes) / 1024.0;
    std::size_t u = 0;
    while (value >= 1024.0 && u + 1 < std::size(units)) {
        value /= 1024.0;
        ++u;
    }
    return value < 10.0 ? fmt::format("{:.1f} {}", value, units[u]) : fmt::format("{:.0f} {}", value, units[u]);
}

int print_listing(Context& ctx, const SnapshotSummary& s, OutputFormat format) {
    std::uint64_t total = 0;
    for (const auto& e : s.entries) total += e.size;
    if (format == OutputFormat::json) {
        nlohmann::json entries = nlohmann::json::array();
        for (const auto& e : s.entries) entries.push_back({{"path", e.path}, {"kind", e.kind}, {"size", e.size}});
        nlohmann::json omitted = nlohmann::json::array();
        for (const auto& o : s.omitted) omitted.push_back({{"path", o.path}, {"reason", o.reason}});
        ctx.out.print("{}", json_output(ctx, nlohmann::json{{"schema_version", 1},
                                                            {"entries", entries},
                                                            {"omitted", omitted},
                                                            {"total_bytes", total}}));
        return 0;
    }
    for (const auto& e : s.entries) print_text(ctx, "{:>10}  {:<6}  {}\n", e.size, e.kind, e.path);
    for (const auto& o : s.omitted) print_text(ctx, "{:>10}  {:<6}  {} ({})\n", 0, "omit", o.path, o.reason);
    ctx.summary(
        fmt::format("{} files ({}) would go in, {} left out", s.entries.size(), human_size(total), s.omitted.size()));
    note_omitted(ctx, s);
    ctx.diag.verbose(fmt::format("{} bytes before compression", total));
    return 0;
}
}  // namespace

void add_snapshot_command(CLI::App& app, Context& ctx, Action& action) {
    auto* cmd = app.add_subcommand("snapshot", "Write a support bundle of everything detect reads");
    cmd->footer("Unpacked (tar xzf FILE), a snapshot works as --root and gives the same `detect` output.\n"
                "It holds only what detect needs: from /etc/passwd your own line, from /etc/group the groups\n"
                "that own the GPU device nodes, from the dpkg status the ROCm, HIP and PyTorch packages, from\n"
                "the environment the variables detect reports; binaries are left out (their size and version\n"
                "go into .rmcp-meta), files over 4 MiB are cut (and the cut recorded). A file's content goes in\n"
                "only by value: a regular file, not reached through a link that leaves its directory, of the\n"
                "kind detect expects there; anything else is listed as omitted. --list shows every path\n"
                "and size that would go in, without writing anything. See docs/security.md.");
    auto args = std::make_shared<SnapshotArgs>();
    auto* out = cmd->add_option("-o,--output", args->output, "Archive to write (FILE.tar.gz; - for standard output)")
                    ->type_name("FILE");
    auto* list = cmd->add_flag("--list", args->list, "Show what would go in (path, kind, size) and write nothing");
    out->excludes(list);
    cmd->callback([&ctx, &action, args] {
        action = [&ctx, args] {
            const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
            if (!format) return fail(ctx, format.error());
            if (!args->list && args->output.empty())
                return fail(ctx, Error{"parsing arguments", "", "snapshot needs -o/--output FILE.tar.gz (or --list)",
                                       ExitCode::usage});
            auto root = ctx.open_root();
            if (!root) return fail(ctx, root.error());
            if (args->list) {
                auto listing = list_snapshot(*root);
                if (!listing) return fail(ctx, listing.error());
                return print_listing(ctx, *listing, *format);
            }
            if (args->output == "-" && ::isatty(ctx.out.fd()) == 1)
                return fail(ctx, Error{"writing", "standard output",
                                       "it is a terminal; redirect it, or name a file with -o", ExitCode::usage});
            nlohmann::json stamp = nlohmann::json::object();
            stamp_versions(ctx, stamp);
            // `-o -`: the archive is stdout, asked for; -q does not hold it.
            if (args->output == "-") ctx.document_output();
            auto summary = write_snapshot(*root, args->output, stamp);
            if (!summary) return fail(ctx, summary.error());
            note_omitted(ctx, *summary);
            ctx.diag.verbose(fmt::format("wrote {} ({} bytes): {} files, {} links, {} directories, {} metadata records",
                                         args->output, summary->archive_bytes, summary->files, summary->links,
                                         summary->directories, summary->meta_records));
            if (*format == OutputFormat::text && args->output != "-") {
                // What to do with it, on stdout (the archive is elsewhere); -q: nothing.
                print_text(ctx, "wrote {} ({}); attach it to your bug report\n", args->output,
                           human_size(summary->archive_bytes));
            } else if (*format == OutputFormat::text) {
                ctx.diag.note(fmt::format("wrote the snapshot to standard output ({}); attach it to your bug report",
                                          human_size(summary->archive_bytes)));
            }
            if (*format == OutputFormat::json)
                ctx.out.print("{}", json_output(ctx, nlohmann::json{{"schema_version", 1},
                                                                    {"output", args->output},
                                                                    {"archive_bytes", summary->archive_bytes},
                                                                    {"files", summary->files},
                                                                    {"links", summary->links},
                                                                    {"directories", summary->directories},
                                                                    {"meta_records", summary->meta_records}}));
            return 0;
        };
    });
}

}  // namespace rmcp::cli
