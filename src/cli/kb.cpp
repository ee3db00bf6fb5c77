// `rmcp kb list|show ID|render|lint`: the knowledge base as documentation, in the spirit of
// `rustc --explain`, and its checks (docs/kb-format.md).
#include "context.hpp"
#include "json_output.hpp"

#include "detect/detect.hpp"
#include "facts/facts_json.hpp"
#include "kb/kb.hpp"
#include "kb/libraries.hpp"
#include "kb/lint.hpp"
#include "patch/patch.hpp"
#include "render/kb_render.hpp"
#include "scan/coverage.hpp"
#include "util/atomic_file.hpp"
#include "util/text.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <memory>

namespace rmcp::cli {

namespace {

// The healthy machines `kb lint` checks by default: fixture roots of machines known to work
// (tests/fixtures/README.md). They ship with the source tree only.
constexpr const char* k_default_healthy[] = {"debian-rocm-cpu-torch", "rx7900xtx-healthy", "laptop-780m-healthy"};

struct KbOptions {
    std::string id;
    std::string out_dir;
    std::vector<std::string> healthy;
    std::string patch_dir;
};

int list_entries(Context& ctx) {
    const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
    if (!format) return fail(ctx, format.error());
    const auto kb = kb::load(ctx.kb_dir());
    if (!kb) return fail(ctx, kb.error());
    if (*format == OutputFormat::json) print_json(ctx, kb_list_json(*kb));
    else {
        print_text(ctx, "{}", render_kb_list_text(*kb, ctx.style()));
        ctx.summary(fmt::format("{} knowledge-base entries (rmcp kb show ID)", kb->entries.size()));
    }
    return 0;
}

int show_entry(Context& ctx, const KbOptions& o) {
    const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
    if (!format) return fail(ctx, format.error());
    const auto kb = kb::load(ctx.kb_dir());
    if (!kb) return fail(ctx, kb.error());
    const auto* e = kb->find(o.id);
    if (!e)
        return fail(ctx, Error{"looking up knowledge-base entry", o.id, "no such entry (see `rmcp kb list`)",
                               ExitCode::usage});
    if (*format == OutputFormat::json) print_json(ctx, kb_show_json(*e));
    else {
        // Wrapped to the terminal, through the pager when longer than the screen.
        ctx.page(shown_text(ctx, ctx.style().wrapped(render_kb_show_text(*e, ctx.style(), ctx.verbose()))));
        ctx.summary(fmt::format("{} {} {}", e->id, ctx.style().dash(), e->title));
    }
    return 0;
}

int do_render(Context& ctx, const KbOptions& o) {
    if (ctx.options.format != "markdown")
        return fail(ctx,
                    Error{"choosing output format", ctx.options.format,
                          "kb render writes --format markdown (use kb list/show for text and json)", ExitCode::usage});
    const auto kb = kb::load(ctx.kb_dir());
    if (!kb) return fail(ctx, kb.error());
    std::error_code ec;
    std::filesystem::create_directories(o.out_dir, ec);
    if (ec) return fail(ctx, Error{"creating directory", o.out_dir, ec.message(), ExitCode::environment, ec.value()});
    for (const auto& [name, content] : render_kb_markdown(*kb)) {
        const auto path = std::filesystem::path(o.out_dir) / name;
        if (auto written = write_file_atomic(path.string(), content, 0644); !written) return fail(ctx, written.error());
    }
    return 0;
}

int do_lint(Context& ctx, const KbOptions& o) {
    const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
    if (!format) return fail(ctx, format.error());
    const auto kb = kb::load(ctx.kb_dir());
    if (!kb) return fail(ctx, kb.error());
    const auto patch_dir = o.patch_dir.empty() ? ctx.data_dir() / "patches" : std::filesystem::path(o.patch_dir);
    auto patches = patch::load_patches(patch_dir);
    if (!patches) return fail(ctx, patches.error());
    std::set<std::string> ids;
    for (const auto& p : patches->patches) ids.insert(p.id);

    std::vector<std::string> roots = o.healthy;
    if (roots.empty()) {
        for (const auto* name : k_default_healthy) {
            const auto dir = ctx.data_dir() / "tests" / "fixtures" / name;
            std::error_code ec;
            if (std::filesystem::is_directory(dir, ec)) roots.push_back(dir.string());
        }
        // The healthy-machine zoo (tests/fixtures/healthy/README.md): every tree in it.
        std::vector<std::string> zoo;
        std::error_code ec;
        for (const auto& d : std::filesystem::directory_iterator(ctx.data_dir() / "tests" / "fixtures" / "healthy", ec))
            if (d.is_directory(ec) && std::filesystem::exists(d.path() / ".rmcp-meta", ec))  // a fixture root
                zoo.push_back(d.path().string());
        std::sort(zoo.begin(), zoo.end());
        roots.insert(roots.end(), zoo.begin(), zoo.end());
        if (roots.empty())
            ctx.diag.note("no healthy fixture roots found (they ship with the source tree); give --healthy ROOT "
                          "to check that no warning or critical entry fires on a healthy machine");
    }
    std::vector<kb::HealthyMachine> healthy;
    std::vector<std::string> names;
    for (const auto& dir : roots) {
        auto root = Root::open(dir);
        if (!root) return fail(ctx, root.error());
        const auto detected = detect(*root);
        auto facts = facts_to_json(detected);
        kb::merge_libraries(facts, scan::libraries_facts(*root, detected));  // as doctor evaluates
        const auto name = std::filesystem::path(dir).filename().string();
        healthy.push_back({name.empty() ? dir : name, std::move(facts)});
        names.push_back(healthy.back().name);
    }
    auto problems = kb::lint(*kb, &ids, healthy);
    std::vector<kb::CitedBy> patch_references;
    for (const auto& p : patches->patches) patch_references.push_back({p.id, p.file, p.references});
    for (auto& p : kb::lint_reference_addresses(patch_references)) problems.push_back(std::move(p));
    if (*format == OutputFormat::json) print_json(ctx, kb_lint_json(problems, kb->entries.size(), names));
    else {
        const auto text = render_kb_lint_text(problems, kb->entries.size(), names, ctx.style());
        print_text(ctx, "{}", text);
        ctx.summary(text.substr(0, text.find('\n')));
    }
    return problems.empty() ? 0 : static_cast<int>(ExitCode::findings);
}

}  // namespace

void add_kb_command(CLI::App& app, Context& ctx, Action& action) {
    auto o = std::make_shared<KbOptions>();
    auto* cmd = app.add_subcommand("kb", "Read and check the knowledge base: list, show ID, render, lint");
    cmd->require_subcommand(1);
    cmd->footer("The knowledge base is kb/*.toml (docs/kb-format.md); --kb DIR reads another one.");

    auto* list = cmd->add_subcommand("list", "Every entry: id, severity, category, confidence, title");
    list->footer("Formats: text (default), json.");
    list->callback([&ctx, &action] { action = [&ctx] { return list_entries(ctx); }; });

    auto* show = cmd->add_subcommand("show", "One entry: summary, when it applies, signatures, fixes, references");
    show->add_option("id", o->id, "Entry id")->required();
    show->footer("Formats: text (default), json. Exit 2 for an unknown id.");
    show->callback([&ctx, &action, o] { action = [&ctx, o] { return show_entry(ctx, *o); }; });

    auto* render = cmd->add_subcommand("render", "Write one Markdown page per entry plus index.md");
    render->add_option("-o,--output", o->out_dir, "Directory to write the pages to")->required()->type_name("DIR");
    render->footer("Needs --format markdown. The checked-in pages are docs/kb/ (scripts/render-kb.sh).");
    render->callback([&ctx, &action, o] { action = [&ctx, o] { return do_render(ctx, *o); }; });

    auto* lint =
        cmd->add_subcommand("lint", "Check sources, costs, patches, and that nothing fires on healthy machines");
    lint->add_option("--healthy", o->healthy,
                     "Root of a machine known to be healthy (repeatable; default: the healthy fixtures of the source "
                     "tree)")
        ->type_name("ROOT");
    lint->add_option("--patch-dir", o->patch_dir, "Patch definitions (default: the shipped patches/)")
        ->type_name("DIR");
    lint->footer("Formats: text (default), json. Exit: 0 no problems, 1 problems found, 2 malformed knowledge base "
                 "or patch file.");
    lint->callback([&ctx, &action, o] { action = [&ctx, o] { return do_lint(ctx, *o); }; });
}

}  // namespace rmcp::cli
