// `rmcp doctor [--profile NAME|auto] [--fix [-y]]`: the knowledge base evaluated on
// detect's facts plus the `libraries` coverage facts of a headers-only scan
// (scan/coverage.hpp, docs/scan.md), in the environment a training run would get, with each
// finding's status and next command (patch/doctor_fix.hpp, docs/patches.md).
#include "context.hpp"
#include "process/spawn.hpp"
#include "json_output.hpp"

#include "kb/doctor.hpp"
#include "patch/doctor_fix.hpp"
#include "kb/content_hash.hpp"
#include "patch/patch.hpp"
#include "render/doctor_render.hpp"
#include "render/doctor_text.hpp"
#include "util/terminal.hpp"
#include "render/node_metrics.hpp"
#include "version.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <chrono>

#include <unistd.h>
#include <memory>

namespace rmcp::cli {

namespace {

struct DoctorArgs {
    std::string fail_on = "critical";
    bool no_scan = false;
    std::string profile;
    bool fix = false;
    bool yes = false;
    std::string output;  // -o: the report (any format) to this file, atomically
    // With --format prometheus|nfd (docs/fleet.md): logical paths, read through the root.
    std::string probe_result;
    std::string incident_dir;
    CLI::Option* fail_on_opt = nullptr;
};

// The node agent's inputs besides the findings: the saved probe result and the incident
// directory, by default where `rmcp run` and docs/fleet.md put them for this user.
NodeMetrics node_metrics(Context& ctx, const Root& root, const patch::DoctorOutcome& outcome, const DoctorArgs& args,
                         std::chrono::steady_clock::time_point started, bool incidents) {
    const auto env = process::current_environment_map();
    const auto state = patch::user_state_dir(env);
    NodeSources sources;
    sources.probe_result = args.probe_result.empty() ? state + "/probe-result.json" : args.probe_result;
    // NFD's labels carry no incident counts: the directory is read only for the metrics.
    if (incidents) sources.incident_dir = args.incident_dir.empty() ? state + "/incidents" : args.incident_dir;
    auto node = collect_node_metrics(root, outcome.facts, sources);
    for (const auto& w : node.warnings) ctx.diag.warning(w);
    node.rmcp_version = std::string(rmcp_version());
    if (auto hash = kb::content_hash(ctx.kb_dir())) node.kb_version = *hash;
    node.check_duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return node;
}

int do_doctor(Context& ctx, const DoctorArgs& args) {
    const auto started = std::chrono::steady_clock::now();
    const auto format =
        ctx.format({OutputFormat::text, OutputFormat::json, OutputFormat::prometheus, OutputFormat::nfd});
    if (!format) return fail(ctx, format.error());
    const auto kb = kb::load(ctx.kb_dir());
    if (!kb) return fail(ctx, kb.error());
    auto root = ctx.open_root();
    if (!root) return fail(ctx, root.error());
    patch::DoctorRequest request;
    request.env = process::current_environment_map();
    request.profile = args.profile;
    // --fix reports which profile `auto` is here, the same choice `rmcp env` and `rmcp run` make.
    request.decide_auto = args.fix;
    request.scan = !args.no_scan;
    request.profile_dir = ctx.data_dir() / "profiles";
    request.patch_dir = ctx.data_dir() / "patches";
    request.kb_dir = ctx.kb_dir();
    request.command = command_prefix(ctx);
    auto outcome = patch::doctor_with_state(*root, *kb, request);
    if (!outcome) return fail(ctx, outcome.error());
    auto& report = outcome->report;
    for (const auto& n : outcome->notes) ctx.diag.note(n);
    if (args.no_scan)
        report.notes.emplace_back("library coverage not checked (--no-scan): code-object rules used version checks");

    if (args.fix) {
        if (!args.output.empty())
            return fail(ctx, Error{"parsing arguments", "--fix",
                                   "-o writes the report; --fix applies patches and "
                                   "prints what it wrote: use one or the other",
                                   ExitCode::usage});
        if (*format == OutputFormat::prometheus || *format == OutputFormat::nfd)
            return fail(ctx, Error{"parsing arguments", "--fix", "--fix writes no metrics: use --format text or json",
                                   ExitCode::usage});
        nlohmann::json extra = nlohmann::json::object();
        if (outcome->auto_decision) {
            for (const auto& n : outcome->auto_decision->notes) ctx.diag.note(n);
            extra["auto_profile"] = outcome->auto_decision->choice.profile;
        }
        const auto ids = patch::fix_patch_ids(report);
        if (ids.empty()) {
            ctx.diag.note("nothing to fix: no open finding has a fix that applies on this machine");
            if (*format == OutputFormat::json) {
                extra["schema_version"] = 1;
                extra["patches"] = nlohmann::json::array();
                extra["transaction"] = nullptr;
                ctx.out.print("{}", json_output(ctx, extra));
            }
            return 0;
        }
        ctx.diag.note(fmt::format("fixing with: {}", fmt::join(ids, " ")));
        ApplyRequest apply;
        apply.ids = ids;
        apply.yes = args.yes;
        apply.extra = extra;
        return apply_patches(ctx, apply);
    }

    if (outcome->auto_decision)
        for (const auto& n : outcome->auto_decision->notes) ctx.diag.note(n);
    std::string text;
    switch (*format) {
    case OutputFormat::json: text = json_output(ctx, doctor_to_json(report, command_prefix(ctx))); break;
    case OutputFormat::prometheus: {
        const auto node = node_metrics(ctx, *root, *outcome, args, started, true);
        const auto now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch());
        text = shown_text(ctx, render_doctor_prometheus(report, now.count(), node));
        break;
    }
    case OutputFormat::nfd:
        text = shown_text(ctx, render_doctor_nfd(report, node_metrics(ctx, *root, *outcome, args, started, false)));
        break;
    default: {
        // Colour, width and glyphs for a terminal (the frame's Style); a file named with -o gets
        // plain text at 80 columns, its glyphs as the locale allows.
        const bool to_stdout = args.output.empty() || args.output == "-";
        DoctorTextOptions options;
        options.verbose = ctx.verbose();
        options.quiet = ctx.quiet();
        text = shown_text(ctx, render_doctor_text(report, outcome->facts_json, command_prefix(ctx), options,
                                                  to_stdout ? ctx.style() : Style(false, ctx.style().unicode(), 80)));
        break;
    }
    }
    // -o FILE: written whole or not at all, the previous file intact on a full disk
    // (util/atomic_file.hpp); stdout otherwise, checked like every output. Text for a
    // terminal goes through the pager when it is longer than the screen (process/pager.hpp).
    const bool text_to_stdout = *format == OutputFormat::text && (args.output.empty() || args.output == "-");
    if (text_to_stdout) ctx.page(text);
    else if (auto s = write_output(ctx, args.output, text); !s) return fail(ctx, s.error());
    // -q: the frame holds the text; the summary line (the quiet rendering's one line) passes.
    if (text_to_stdout) ctx.summary(text.substr(0, text.find('\n')));
    // The metrics carry the findings, so with prometheus only an explicit --fail-on turns
    // them into an exit code.
    if ((*format == OutputFormat::prometheus || *format == OutputFormat::nfd) && args.fail_on_opt->count() == 0)
        return 0;
    const auto threshold = kb::parse_severity(args.fail_on).value_or(kb::Severity::critical);
    return kb::has_findings_at_or_above(report, threshold) ? static_cast<int>(ExitCode::findings) : 0;
}

}  // namespace

void add_doctor_command(CLI::App& app, Context& ctx, Action& action) {
    auto* cmd = app.add_subcommand("doctor", "Check this machine against the knowledge base of known ROCm failures");
    // Owned by the callbacks, which outlive this function.
    auto args = std::make_shared<DoctorArgs>();
    args->fail_on_opt =
        cmd->add_option("--fail-on", args->fail_on,
                        "Exit 1 when an open finding is at or above this severity (default: critical; with --format "
                        "prometheus only when given)")
            ->check(CLI::IsMember({"info", "warning", "critical"}))
            ->type_name("SEVERITY");
    cmd->add_flag("--no-scan", args->no_scan,
                  "Do not read library headers for GPU-target coverage (libraries.* facts absent; "
                  "rules fall back to version checks)");
    cmd->add_option("--profile", args->profile,
                    "Also evaluate under this profile, as `rmcp run --profile` would run (a name, or auto)")
        ->type_name("NAME|auto");
    cmd->add_flag("--fix", args->fix,
                  "Apply the fix doctor shows as next for every open finding (the first of its fixes that applies on "
                  "this machine), in one transaction (asks first unless --yes)");
    cmd->add_flag("-y,--yes", args->yes, "With --fix: do not ask for confirmation");
    cmd->add_option("-o,--output", args->output,
                    "Write the report to FILE (replaced atomically: whole or not at all; - for stdout)")
        ->type_name("FILE");
    cmd->add_option("--probe-result", args->probe_result,
                    "With --format prometheus|nfd: the saved `rmcp probe --format json` result to report (default: "
                    "$XDG_STATE_HOME/rmcp/probe-result.json; read inside --root)")
        ->type_name("FILE");
    cmd->add_option("--incidents", args->incident_dir,
                    "With --format prometheus: count the `rmcp run` incident reports in DIR (default: "
                    "$XDG_STATE_HOME/rmcp/incidents; read inside --root)")
        ->type_name("DIR");
    cmd->footer(
        "Each finding says its status (open, fixed by profile.env, fixed, pending a reboot) and the next\n"
        "command to run. Formats: text (default), json (schema_version'd), prometheus (node_exporter textfile),\n"
        "nfd (Node Feature Discovery labels, rmcp.healthy and rmcp.probe_passed included; docs/fleet.md).\n"
        "Exit: 0 nothing open at or above --fail-on, 1 open findings at or above it, 2 malformed knowledge base.\n"
        "With --format prometheus or nfd the findings are the metrics, so doctor exits 0 unless --fail-on is\n"
        "given. For node_exporter's textfile collector: rmcp doctor --format prometheus -o DIR/rmcp.prom\n"
        "(replaced atomically; on a full disk the previous file stays and doctor exits 3).");
    cmd->callback([&ctx, &action, args] { action = [&ctx, args] { return do_doctor(ctx, *args); }; });
}

}  // namespace rmcp::cli
