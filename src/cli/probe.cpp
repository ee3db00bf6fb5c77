// `rmcp probe`: the convolution suite, one child process per (scenario, configuration)
// forked from the worker's fork server, --bisect over the workaround switches, and
// `rmcp probe report` for a saved result (docs/probe.md).
#include "context.hpp"
#include "json_output.hpp"
#include "version.hpp"

#include "probe/command.hpp"
#include "probe/report.hpp"
#include "render/probe_view.hpp"
#include "util/atomic_file.hpp"

#include <fmt/core.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <unistd.h>

namespace rmcp::cli {

namespace {

struct ReportOptions {
    std::string result;
    std::string html;
};

// The request's fields are the options' targets; the rest is filled in from the context.
struct ProbeOptions {
    probe::ProbeRequest request;
    CLI::Option* save_opt = nullptr;  // --save without FILE: the user's profiles directory
};

std::string clock_time(double seconds) {
    const auto s = static_cast<long long>(std::llround(seconds));
    if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
    return fmt::format("{}:{:02}", s / 60, s % 60);
}

void print_progress(Context& ctx, const probe::ProgressEvent& e) {
    if (ctx.options.quiet) return;
    std::string counter = e.total > 0 ? fmt::format("[{}/{}", e.index, e.total) : fmt::format("[{}", e.index);
    if (e.eta_s && e.index < e.total) counter += ", ETA " + clock_time(*e.eta_s);
    // Bisect: the search's length is not known in advance; the configuration under test's is.
    if (e.configuration_total > 0) {
        counter += fmt::format(", {}/{} of this configuration", e.in_configuration, e.configuration_total);
        if (e.eta_s && e.in_configuration < e.configuration_total) counter += ", ETA " + clock_time(*e.eta_s);
    }
    counter += "]";
    const std::string config = e.phase == "baseline" ? "" : fmt::format("{} {{{}}} ", e.phase, e.configuration->key());
    // The scenario and its outcome come from the catalogue and the worker: one terminal-safe line.
    ctx.diag.raw(
        terminal_safe(fmt::format("{} {}{} {} {} {} … {}", counter, config, e.scenario->id,
                                  probe::direction_tag(e.scenario->direction), probe::dtype_tag(e.scenario->dtype),
                                  e.scenario->op, probe::describe(*e.result)),
                      Shown::line) +
        "\n");
}

Status write_html(Context& ctx, const nlohmann::json& result, const std::string& file, const std::string& source) {
    auto page = probe::render_html(result, source);
    if (!page) return page.error();
    const std::string path = std::filesystem::absolute(file).lexically_normal().string();
    if (auto s = write_file_atomic(path, *page); !s) return s;
    ctx.diag.note(fmt::format("wrote {}", path));
    return ok_status();
}

// JSON as is; text as the grid on a terminal, as a list elsewhere (pipes, files, tests).
Status print_result(Context& ctx, OutputFormat format, const nlohmann::json& result) {
    if (format == OutputFormat::json) {
        ctx.out.print("{}", json_output(ctx, result));
        return ok_status();
    }
    const auto layout = ::isatty(STDOUT_FILENO) == 1 ? probe::TextLayout::grid : probe::TextLayout::list;
    auto text = probe::render_summary_text(result, ctx.style(), layout);
    if (!text) return text.error();
    print_text(ctx, "{}", *text);
    return ok_status();
}

int run_probe(Context& ctx, const ProbeOptions& o) {
    const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
    if (!format) return fail(ctx, format.error());
    const auto root = ctx.open_root();
    probe::ProbeRequest request = o.request;
    request.save_to_default = o.save_opt->count() > 0;
    request.data_dir = ctx.data_dir();
    request.kb_dir = ctx.kb_dir();
    request.root = root ? &*root : nullptr;
    request.json_text = [&ctx](const nlohmann::json& doc) { return json_output(ctx, doc); };
    request.progress = [&ctx](const probe::ProgressEvent& e) { print_progress(ctx, e); };
    auto outcome = probe::run_probe(std::move(request), ctx.diag);
    if (!outcome) return fail(ctx, outcome.error());
    // Which rmcp measured it, and when: the page and a saved result carry both (finding 5).
    outcome->result["rmcp_version"] = std::string(rmcp_version());
    {
        const std::time_t now = std::time(nullptr);
        std::tm utc{};
        gmtime_r(&now, &utc);
        char stamp[32];
        std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
        outcome->result["generated_at"] = stamp;
    }

    // Files first (the JSON names what was saved), the result printed in any case; a write
    // that fails is reported after it, so a long run's result is never lost.
    std::optional<Error> write_error = outcome->write_error;
    if (!o.request.html.empty() && !write_error)
        if (auto s = write_html(ctx, outcome->result, o.request.html, "this run"); !s) write_error = s.error();
    if (auto s = print_result(ctx, *format, outcome->result); !s) return fail(ctx, s.error());
    if (write_error) return fail(ctx, *write_error);
    return outcome->exit_code;
}

// `rmcp probe report RESULT.json [--html FILE]`: a saved result as text (the grid on a
// terminal) and, with --html, as one page.
int run_report(Context& ctx, const ReportOptions& o) {
    const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
    if (!format) return fail(ctx, format.error());
    auto result = probe::load_saved_result(o.result, o.html);
    if (!result) return fail(ctx, result.error());
    if (!o.html.empty())
        if (auto s = write_html(ctx, *result, o.html, o.result); !s) return fail(ctx, s.error());
    if (auto s = print_result(ctx, *format, *result); !s) return fail(ctx, s.error());
    return 0;
}

}  // namespace

void add_probe_command(CLI::App& app, Context& ctx, Action& action) {
    auto opts = std::make_shared<ProbeOptions>();
    auto* cmd = app.add_subcommand("probe", "Run the GPU convolution suite, one child per scenario; --bisect finds "
                                            "the fastest configuration that does not fail");
    cmd->add_option("--python", opts->request.python,
                    "Interpreter whose PyTorch is probed (default: $RMCP_PYTHON, else $VIRTUAL_ENV/bin/python, "
                    "else the one detect found PyTorch for, else python3 on PATH)")
        ->type_name("PY");
    cmd->add_option("--scenario", opts->request.scenarios, "Scenario id or family name (repeatable; default: all)")
        ->type_name("NAME");
    cmd->add_flag("--quick", opts->request.quick, "Only the quick subset (seconds)");
    cmd->add_flag("--bisect", opts->request.bisect,
                  "Search the workaround switches for the fastest passing configuration");
    cmd->add_option("--timeout", opts->request.timeout_s,
                    "Seconds before a child counts as hung (default 300; importing torch gets at least 60)")
        ->type_name("S");
    opts->save_opt = cmd->add_option("--save", opts->request.save,
                                     "Write the winning profile to FILE (TOML) and the fault map to FILE's stem + "
                                     ".faultmap.json; without FILE: $XDG_CONFIG_HOME/rmcp/profiles/probed.toml, "
                                     "found by `rmcp env/run --profile probed`")
                         ->expected(0, 1)
                         ->type_name("[FILE]");
    cmd->add_flag("--allow-cpu", opts->request.allow_cpu,
                  "With --save: save even when the probe runs on the CPU (it says nothing about the GPU)");
    cmd->add_option("--device", opts->request.device,
                    "auto, cpu or cuda (default auto: cuda when the interpreter's torch sees a GPU, else cpu)")
        ->type_name("DEV");
    cmd->add_option("--repeat", opts->request.repeat, "Timed calls per scenario; the median counts (default 5)")
        ->check(CLI::Range(1, 1000))
        ->type_name("N");
    cmd->add_option("--warmup", opts->request.warmup, "Untimed calls before timing (default 2)")
        ->check(CLI::Range(0, 1000))
        ->type_name("N");
    cmd->add_option("--catalogue", opts->request.catalogue,
                    "Scenario catalogue (default: the shipped probe/catalogue.toml)")
        ->type_name("FILE");
    cmd->add_option("--html", opts->request.html,
                    "Also write the result as one self-contained HTML page: the scenario x configuration grid, the "
                    "bisect path, the chosen profile and the machine's facts")
        ->type_name("FILE");

    auto ropts = std::make_shared<ReportOptions>();
    auto* report = cmd->add_subcommand("report", "Show a saved result (rmcp probe --format json > FILE) as text, "
                                                 "or as one HTML page with --html");
    report->add_option("result", ropts->result, "The saved result (JSON)")->required()->type_name("RESULT.json");
    report->add_option("--html", ropts->html, "Write the page to FILE")->type_name("FILE");
    report->callback([&ctx, &action, ropts] { action = [&ctx, ropts] { return run_report(ctx, *ropts); }; });
    cmd->footer("Exit: 0 every scenario passes (with --bisect: a passing configuration was found), 1 failures "
                "remain (no profile is saved then), 2 usage (also: --save into a missing directory, --save on the "
                "CPU without --allow-cpu), 3 the "
                "interpreter is missing, does not answer the handshake as Python, cannot import torch, or "
                "--device cuda finds no GPU. See docs/probe.md.");
    // CLI11 runs the parent's callback after a subcommand's: `probe report` keeps its action.
    cmd->callback([&ctx, &action, opts, report] {
        if (report->parsed()) return;
        action = [&ctx, opts] { return run_probe(ctx, *opts); };
    });
}

}  // namespace rmcp::cli
