// `rmcp snapshot -o FILE.tar.gz`: the support bundle that doubles as a test fixture.
#include "context.hpp"
#include "json_output.hpp"

#include "snapshot/snapshot.hpp"

#include <fmt/core.h>

namespace rmcp::cli {

void add_snapshot_command(CLI::App& app, Context& ctx, Action& action) {
    auto* cmd = app.add_subcommand("snapshot", "Write a support bundle of everything detect reads");
    cmd->footer("Unpacked (tar xzf FILE), a snapshot works as --root and gives the same `detect` output.\n"
                "Only the environment variables detect reports are kept from the process environment.");
    static std::string output;
    cmd->add_option("-o,--output", output, "Archive to write (FILE.tar.gz)")->required()->type_name("FILE");
    cmd->callback([&] {
        action = [&] {
            auto root = ctx.open_root();
            if (!root) return fail(ctx, root.error());
            nlohmann::json stamp = nlohmann::json::object();
            stamp_versions(ctx, stamp);
            auto summary = write_snapshot(*root, output, stamp);
            if (!summary) return fail(ctx, summary.error());
            ctx.diag.verbose(fmt::format("wrote {}: {} files, {} links, {} directories, {} metadata records", output,
                                         summary->files, summary->links, summary->directories,
                                         summary->meta_records));
            return 0;
        };
    });
}

}  // namespace rmcp::cli
