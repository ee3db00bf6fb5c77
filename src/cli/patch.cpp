// `rmcp patch list|show ID|plan ID...|apply ID...|rollback [TXN]|status`: the patch
// manager (docs/patches.md). Parses, calls the library
// (src/core/patch/), renders.
#include "context.hpp"
#include "process/spawn.hpp"
#include "json_output.hpp"

#include "detect/detect.hpp"
#include "facts/facts.hpp"
#include "patch/applier.hpp"
#include "patch/doctor_fix.hpp"
#include "patch/patch.hpp"
#include "patch/profile.hpp"
#include "render/patch_render.hpp"
#include "render/plan_render.hpp"
#include "util/strings.hpp"

#include <fmt/core.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <unistd.h>

namespace rmcp::cli {

namespace {

struct PatchOptions {
    std::string patch_dir;
    std::string site_packages;
    std::vector<std::string> ids;
    std::string txn;
    bool yes = false;
};

std::optional<unsigned> env_unsigned(const char* name) {
    const char* v = std::getenv(name);
    if (!v || !*v) return std::nullopt;
    char* end = nullptr;
    const unsigned long n = std::strtoul(v, &end, 10);
    if (*end != '\0') return std::nullopt;
    return static_cast<unsigned>(n);
}

// The test-only hooks (docs/patches.md) are honoured only under a --root other than "/":
// they can never fire on a live system.
patch::ApplyOptions apply_options(const Root& root) {
    patch::ApplyOptions o;
    o.env = process::current_environment_map();
    o.euid = ::geteuid();
    if (!root.is_live()) {
        if (auto uid = env_unsigned("RMCP_ASSUME_UID")) o.euid = *uid;
        o.kill_after_step = env_unsigned("RMCP_TEST_KILL_AFTER_STEP");
        o.fail_step = env_unsigned("RMCP_TEST_FAIL_STEP");
        o.fail_restore = env_unsigned("RMCP_TEST_FAIL_RESTORE").value_or(0) != 0;
        o.fail_final_journal = env_unsigned("RMCP_TEST_FAIL_FINAL_JOURNAL").value_or(0) != 0;
        // RMCP_TEST_DELAY_AT: set when the root was opened (Context::open_root_at).
    }
    return o;
}

Result<patch::PatchSet> load(Context& ctx, const PatchOptions& po) {
    const std::filesystem::path dir =
        po.patch_dir.empty() ? ctx.data_dir() / "patches" : std::filesystem::path(po.patch_dir);
    return patch::load_patches(dir);
}

Result<patch::Plan> make_plan(Context& ctx, const Root& root, const patch::PatchSet& set,
                              const std::vector<std::string>& ids, const std::string& site_packages) {
    const Facts facts = detect(root);
    auto profiles = patch::load_profiles(ctx.data_dir() / "profiles");
    const auto pc = patch::machine_plan_context(root, facts, set, ids, profiles ? &*profiles : nullptr, site_packages,
                                                process::current_environment_map());
    return patch::make_plan(root, set, ids, pc);
}

int list_patches(Context& ctx, const PatchOptions& po) {
    const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
    if (!format) return fail(ctx, format.error());
    auto set = load(ctx, po);
    if (!set) return fail(ctx, set.error());
    if (*format == OutputFormat::json) {
        nlohmann::json out{{"schema_version", 1}, {"patches", nlohmann::json::array()}};
        for (const auto& p : set->patches) out["patches"].push_back(render::patch_json(p));
        ctx.out.print("{}", json_output(ctx, out));
        return 0;
    }
    std::size_t width = 2;
    for (const auto& p : set->patches) width = std::max(width, p.id.size());
    print_text(ctx, "{:<{}}  {:<16}  {:<10}  {}\n", "ID", width, "EVIDENCE", "REVERSIBLE", "TITLE");
    for (const auto& p : set->patches)
        print_text(ctx, "{:<{}}  {:<16}  {:<10}  {}\n", p.id, width, p.evidence,
                   p.fully_reversible() ? "yes" : "partly", p.title);
    return 0;
}

int show_patch(Context& ctx, const PatchOptions& po) {
    const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
    if (!format) return fail(ctx, format.error());
    auto set = load(ctx, po);
    if (!set) return fail(ctx, set.error());
    const patch::Patch* p = set->find(po.ids.front());
    if (!p)
        return fail(ctx, Error{"looking up patch", po.ids.front(), "no such patch (see `rmcp patch list`)",
                               ExitCode::usage});
    if (*format == OutputFormat::json) {
        auto j = render::patch_json(*p);
        j["schema_version"] = 1;
        ctx.out.print("{}", json_output(ctx, j));
        return 0;
    }
    print_text(ctx, "{}: {}\n\nwhy:        {}\ncost:       {}\nevidence:   {}\nreversible: {}\n", p->id, p->title,
               p->why, p->cost, p->evidence,
               p->fully_reversible() ? "yes: `rmcp patch rollback` restores every file"
                                     : "partly: rollback restores files; advisory steps are yours to undo");
    print_text(ctx, "\noperations:\n");
    unsigned n = 0;
    for (const auto& op : p->operations) {
        print_text(ctx, "  {}. {}\n", ++n, render::describe_operation(op));
        if (!op.note.empty()) print_text(ctx, "     note: {}\n", op.note);
    }
    if (!p->references.empty()) {
        print_text(ctx, "\nreferences:\n");
        for (const auto& r : p->references) print_text(ctx, "  {}\n", r);
    }
    return 0;
}

int do_plan(Context& ctx, const PatchOptions& po) {
    const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
    if (!format) return fail(ctx, format.error());
    auto root = ctx.open_root();
    if (!root) return fail(ctx, root.error());
    auto set = load(ctx, po);
    if (!set) return fail(ctx, set.error());
    auto plan = make_plan(ctx, *root, *set, po.ids, po.site_packages);
    if (!plan) return fail(ctx, plan.error());
    // A plan that apply would refuse says so now, not after a confirmation.
    const auto env = process::current_environment_map();
    for (const auto& s : plan->steps)
        if (!s.target.empty())
            if (auto t = patch::resolve_target(*root, s.target, env); !t) return fail(ctx, t.error());
    if (*format == OutputFormat::json) ctx.out.print("{}", json_output(ctx, render::plan_json(*plan)));
    else print_text(ctx, "{}", render::render_plan(*plan));
    return 0;
}

std::string advisories(const patch::Plan& plan) {
    std::string out;
    for (const auto& s : plan.steps)
        if (s.op->kind == patch::OpKind::advisory)
            for (const auto line : split_lines(s.advisory))
                if (!line.empty()) out += fmt::format("  $ {}\n", line);
    return out;
}

int do_apply(Context& ctx, const PatchOptions& po) {
    ApplyRequest request;
    request.ids = po.ids;
    request.yes = po.yes;
    request.site_packages = po.site_packages;
    request.patch_dir = po.patch_dir;
    return apply_patches(ctx, request);
}

// A corrupt journal is reported wherever transactions are listed, and skipped.
void warn_corrupt(Context& ctx, const Root& root, const std::vector<patch::Transaction>& all) {
    for (const auto& t : all)
        if (!t.corrupt.empty())
            ctx.diag.warning(fmt::format("reading journal {}: {}; that transaction is skipped",
                                         root.host_path(t.journal_dir + "/journal.json"), t.corrupt));
}

int do_rollback(Context& ctx, const PatchOptions& po) {
    const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
    if (!format) return fail(ctx, format.error());
    auto root = ctx.open_root();
    if (!root) return fail(ctx, root.error());
    const auto options = apply_options(*root);
    if (auto all = patch::list_transactions(*root, options.env)) warn_corrupt(ctx, *root, *all);
    auto done = patch::rollback(*root, po.txn.empty() ? std::nullopt : std::optional<std::string>(po.txn), options);
    if (!done) return fail(ctx, done.error());
    const char* nothing = po.txn.empty() ? "nothing to roll back" : "that transaction is already rolled back";
    if (*format == OutputFormat::json) {
        nlohmann::json targets = nlohmann::json::array();
        if (*done)
            for (const auto& t : (*done)->targets)
                targets.push_back(
                    {{"path", shown_path(*root, t.path)}, {"action", t.existed ? "restored" : "removed"}});
        ctx.out.print(
            "{}",
            json_output(ctx,
                        nlohmann::json{{"schema_version", 1},
                                       {"transaction", *done ? nlohmann::json((*done)->id) : nlohmann::json(nullptr)},
                                       {"patches", *done ? nlohmann::json((*done)->patches) : nlohmann::json::array()},
                                       {"targets", targets},
                                       {"note", *done ? nlohmann::json(nullptr) : nlohmann::json(nothing)}}));
        return 0;
    }
    if (!*done) {
        ctx.diag.note(nothing);
        return 0;
    }
    print_text(ctx, "rolled back transaction {} ({})\n", (*done)->id, fmt::join((*done)->patches, " "));
    for (const auto& t : (*done)->targets)
        print_text(ctx, "  {} {}\n", t.existed ? "restored" : "removed", shown_path(*root, t.path));
    return 0;
}

int do_status(Context& ctx) {
    const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
    if (!format) return fail(ctx, format.error());
    auto root = ctx.open_root();
    if (!root) return fail(ctx, root.error());
    const auto env = process::current_environment_map();
    auto all = patch::list_transactions(*root, env);
    if (!all) return fail(ctx, all.error());
    warn_corrupt(ctx, *root, *all);
    const auto state_word = [](const patch::Transaction& t) -> std::string {
        if (!t.corrupt.empty()) return "corrupt";
        if (t.interrupted()) return "interrupted";
        if (t.in_progress) return "in-progress";
        if (t.state == patch::TxnState::rolled_back && t.failed) return "failed-rolled-back";
        return std::string(patch::txn_state_name(t.state));
    };
    if (*format == OutputFormat::json) {
        nlohmann::json txns = nlohmann::json::array();
        for (const auto& t : *all) {
            nlohmann::json targets = nlohmann::json::array();
            for (const auto& jt : t.targets) targets.push_back({{"path", jt.path}, {"existed", jt.existed}});
            txns.push_back({{"id", t.id},
                            {"state", state_word(t)},
                            {"patches", t.patches},
                            {"created", t.created},
                            {"journal", root->host_path(t.journal_dir)},
                            {"error", t.corrupt.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.corrupt)},
                            {"targets", targets}});
        }
        ctx.out.print("{}", json_output(ctx, nlohmann::json{{"schema_version", 1}, {"transactions", txns}}));
        return 0;
    }
    if (all->empty()) {
        print_text(ctx, "no transactions\n");
        return 0;
    }
    for (const auto& t : *all) {
        print_text(ctx, "{}  {:<18}  {}\n", t.id, state_word(t), fmt::join(t.patches, " "));
        for (const auto& jt : t.targets)
            print_text(ctx, "    {}{}\n", shown_path(*root, jt.path), jt.existed ? "" : " (new)");
        if (t.interrupted())
            print_text(ctx, "    interrupted: run `{} patch rollback {}` to restore every file (journal {})\n",
                       command_prefix(ctx), sh_word(t.id), root->host_path(t.journal_dir));
        if (!t.corrupt.empty())
            print_text(ctx, "    corrupt journal {}: {}; it is not trusted and is skipped\n",
                       root->host_path(t.journal_dir + "/journal.json"), t.corrupt);
    }
    return 0;
}

}  // namespace

// How what was applied reaches the programs it is for (newcomer review, finding 13: the shell
// is unchanged after `apply`, and nothing said so): one line per kind of step in the plan.
std::vector<std::string> takes_effect(const patch::Plan& plan, const std::string& prefix) {
    bool env = false, modprobe = false, hook = false, relogin = false;
    for (const auto& s : plan.steps) {
        env = env || s.op->kind == patch::OpKind::env;
        modprobe = modprobe || s.op->kind == patch::OpKind::modprobe;
        hook = hook || s.op->kind == patch::OpKind::python_hook;
        relogin = relogin || s.patch->takes_effect == patch::TakesEffect::relogin;
    }
    std::vector<std::string> lines;
    if (env)
        lines.push_back(fmt::format("for commands started with `{0} run -- CMD`; in a shell once you run "
                                    "`eval \"$({0} env)\"` (this shell is unchanged until then)",
                                    prefix));
    if (hook) lines.emplace_back("in every Python process started from now on (the start-up hook runs then)");
    if (modprobe) lines.emplace_back("after a reboot: amdgpu reads its module options when it loads (`sudo reboot`)");
    if (relogin)
        lines.emplace_back("after you log out and back in: a running session keeps the groups it started with");
    return lines;
}

int apply_patches(Context& ctx, const ApplyRequest& request) {
    const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
    if (!format) return fail(ctx, format.error());
    auto root = ctx.open_root();
    if (!root) return fail(ctx, root.error());
    PatchOptions po;
    po.patch_dir = request.patch_dir;
    auto set = load(ctx, po);
    if (!set) return fail(ctx, set.error());
    auto plan = make_plan(ctx, *root, *set, request.ids, request.site_packages);
    if (!plan) return fail(ctx, plan.error());
    const auto options = apply_options(*root);
    const std::string prefix = command_prefix(ctx);
    if (!request.yes && plan->writes() > 0) {
        if (::isatty(STDIN_FILENO) == 0)
            return fail(ctx, Error{"applying", fmt::format("{}", fmt::join(request.ids, " ")),
                                   "refusing without confirmation: stdin is not a terminal; review it with "
                                   "`rmcp patch plan`, then pass --yes",
                                   ExitCode::usage});
        ctx.diag.raw(fmt::format("{}\nApply {} change(s)? [y/N] ",
                                 terminal_safe(render::render_plan(*plan), Shown::lines), plan->writes()));
        std::string answer;
        std::getline(std::cin, answer);
        if (answer != "y" && answer != "Y" && answer != "yes") {
            ctx.diag.note("nothing applied");
            return static_cast<int>(ExitCode::usage);
        }
    }
    auto outcome = patch::apply_plan(*root, *plan, options);
    if (!outcome) return fail(ctx, outcome.error());
    const std::string rollback =
        outcome->txn_id.empty() ? std::string() : fmt::format("{} patch rollback {}", prefix, sh_word(outcome->txn_id));
    if (*format == OutputFormat::json) {
        nlohmann::json out{{"schema_version", 1},
                           {"patches", request.ids},
                           {"transaction",
                            outcome->txn_id.empty() ? nlohmann::json() : nlohmann::json(outcome->txn_id)},
                           {"written", outcome->written},
                           {"skipped", outcome->skipped},
                           {"advisory", advisories(*plan)},
                           {"rollback", rollback.empty() ? nlohmann::json() : nlohmann::json(rollback)},
                           {"undo", rollback.empty() ? nlohmann::json() : nlohmann::json(rollback)},
                           {"takes_effect", takes_effect(*plan, prefix)},
                           {"verify", prefix + " doctor"}};
        for (const auto& [k, v] : request.extra.items()) out[k] = v;
        ctx.out.print("{}", json_output(ctx, out));
        return 0;
    }
    if (outcome->txn_id.empty()) print_text(ctx, "nothing to write: every file operation is already in effect\n");
    else print_text(ctx, "applied transaction {}\n", outcome->txn_id);
    for (const auto& w : outcome->written) print_text(ctx, "  wrote {}\n", shown_path(*root, w));
    for (const auto& s : outcome->skipped) print_text(ctx, "  already in effect: {}\n", shown_path(*root, s));
    if (const auto adv = advisories(*plan); !adv.empty())
        print_text(ctx, "run these yourself (rmcp never runs them):\n{}", adv);
    for (const auto& line : takes_effect(*plan, prefix)) print_text(ctx, "takes effect: {}\n", line);
    if (!rollback.empty()) print_text(ctx, "undo: {}\n", rollback);
    // How to check it worked, on stderr: stdout stays what a script reads.
    ctx.diag.note(fmt::format("verify with: {} doctor", prefix));
    return 0;
}

void add_patch_command(CLI::App& app, Context& ctx, Action& action) {
    static PatchOptions po;
    auto* cmd =
        app.add_subcommand("patch", "Plan, apply and roll back fixes (env profiles, module options, start-up hook)");
    cmd->require_subcommand(1);
    cmd->add_option("--patch-dir", po.patch_dir, "Patch definitions (default: the shipped patches/)")->type_name("DIR");
    cmd->footer("Patches are data (patches/*.toml, docs/patches.md). Journals: $XDG_STATE_HOME/rmcp, /var/lib/rmcp.");

    auto* list = cmd->add_subcommand("list", "Every patch: id, evidence, reversibility, title");
    list->callback([&] { action = [&] { return list_patches(ctx, po); }; });

    auto* show = cmd->add_subcommand("show", "What a patch does, why, its cost, evidence and reversibility");
    show->add_option("id", po.ids, "Patch id")->required()->expected(1);
    show->callback([&] { action = [&] { return show_patch(ctx, po); }; });

    auto* plan = cmd->add_subcommand("plan", "The exact operations and diffs of applying patches; touches nothing");
    plan->add_option("ids", po.ids, "Patch ids")->required();
    plan->add_option("--site-packages", po.site_packages, "Where the Python start-up hook goes")->type_name("DIR");
    plan->callback([&] { action = [&] { return do_plan(ctx, po); }; });

    auto* apply = cmd->add_subcommand("apply", "Apply patches transactionally (asks first unless --yes)");
    apply->add_option("ids", po.ids, "Patch ids")->required();
    apply->add_flag("-y,--yes", po.yes, "Do not ask for confirmation");
    apply->add_option("--site-packages", po.site_packages, "Where the Python start-up hook goes")->type_name("DIR");
    apply->callback([&] { action = [&] { return do_apply(ctx, po); }; });

    auto* rollback = cmd->add_subcommand("rollback", "Restore every file of a transaction (default: the newest)");
    rollback->add_option("txn", po.txn, "Transaction id (see `rmcp patch status`)");
    rollback->callback([&] { action = [&] { return do_rollback(ctx, po); }; });

    auto* status = cmd->add_subcommand("status", "Applied, rolled-back and interrupted transactions");
    status->callback([&] { action = [&] { return do_status(ctx); }; });
}

}  // namespace rmcp::cli
