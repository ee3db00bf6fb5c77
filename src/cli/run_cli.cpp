// Global options, the command table and the error → exit-code mapping for parsing.
#include "context.hpp"

#include <fmt/core.h>

#ifndef RMCP_VERSION
#define RMCP_VERSION "0.0.0"
#endif

namespace rmcp::cli {

namespace {
constexpr const char* k_footer = R"(Exit codes:
  0  success (doctor: nothing at or above --fail-on; explain: something recognised)
  1  doctor found problems at or above --fail-on; explain recognised nothing;
     kb lint found problems in the knowledge base
  2  usage error or invalid input
  3  environment or runtime error
  4  patch apply failed and was rolled back
  5  patch apply failed and rollback is incomplete
  run returns its child's exit code (128+N for signal N)

Environment: RMCP_ROOT (like --root), NO_COLOR, RMCP_DATA_DIR (shipped data).
See `rmcp help COMMAND` and docs/ for details.)";
}  // namespace

int run(int argc, char** argv) {
    Context ctx;
    CLI::App app{"rmcp — make PyTorch on consumer AMD GPUs stop crashing", "rmcp"};
    app.footer(k_footer);
    app.require_subcommand(0, 1);
    // Global options may follow the command (`rmcp detect --root DIR`), as SPEC.md writes them.
    app.fallthrough();
    app.set_version_flag("--version", std::string("rmcp ") + RMCP_VERSION);

    app.add_option("--root", ctx.options.root, "Read the system from DIR instead of / (also RMCP_ROOT)")
        ->type_name("DIR");
    app.add_option("--format", ctx.options.format, "Output format: text, json, or a command-specific one")
        ->type_name("FORMAT");
    std::string color = "auto";
    app.add_option("--color", color, "Colour: auto|always|never (NO_COLOR is honoured)")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->type_name("WHEN");
    app.add_option("--kb", ctx.options.kb_dir, "Knowledge-base directory (default: the shipped kb/)")
        ->type_name("DIR");
    auto* quiet = app.add_flag("-q,--quiet", ctx.options.quiet, "Print errors only");
    app.add_flag("-v,--verbose", ctx.options.verbose, "Print more detail")->excludes(quiet);

    // The command table: one line per command, each defined in its own file.
    Action action;
    add_detect_command(app, ctx, action);
    add_doctor_command(app, ctx, action);
    add_explain_command(app, ctx, action);
    add_scan_command(app, ctx, action);
    add_patch_command(app, ctx, action);
    add_env_command(app, ctx, action);
    add_run_command(app, ctx, action);
    add_probe_command(app, ctx, action);
    add_snapshot_command(app, ctx, action);
    add_kb_command(app, ctx, action);

    std::vector<std::string> help_topic;
    bool man = false;
    auto* help = app.add_subcommand("help", "Show help for rmcp or one command");
    help->add_option("command", help_topic, "Command to describe");
    help->add_flag("--man", man, "Print the manual page (roff), generated from these definitions");
    help->callback([&] {
        action = [&] {
            if (man) {
                fmt::print("{}", render_manpage(app));
                return 0;
            }
            if (help_topic.empty()) {
                fmt::print("{}", app.help());
                return 0;
            }
            CLI::App* sub = nullptr;
            for (auto* candidate : app.get_subcommands({}))
                if (candidate->get_name() == help_topic.front()) sub = candidate;
            if (!sub || sub == help) {
                ctx.diag.error(Error{"looking up help for", help_topic.front(), "no such command", ExitCode::usage});
                return static_cast<int>(ExitCode::usage);
            }
            fmt::print("{}", sub->help(app.get_name()));  // "Usage: rmcp detect", as --help shows
            return 0;
        };
    });

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        ctx.diag.error(Error{"parsing arguments", "", e.what(), ExitCode::usage});
        fmt::print(stderr, "Run 'rmcp --help' for usage.\n");
        return static_cast<int>(ExitCode::usage);
    }
    ctx.options.color = color == "always" ? ColorMode::always : color == "never" ? ColorMode::never : ColorMode::automatic;
    ctx.diag.set_verbosity(ctx.options.quiet ? Verbosity::quiet
                                             : ctx.options.verbose ? Verbosity::verbose : Verbosity::normal);
    if (!action) {
        fmt::print("{}", app.help());
        return static_cast<int>(ExitCode::usage);
    }
    return action();
}

}  // namespace rmcp::cli
