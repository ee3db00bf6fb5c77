// Global options, the command table and the error → exit-code mapping for parsing.
#include "context.hpp"
#include "json_output.hpp"
#include "version.hpp"

#include <fmt/format.h>

#include <optional>
#include <sstream>
#include <unistd.h>

namespace rmcp::cli {

namespace {
constexpr const char* k_footer = R"(Exit codes:
  0  success (doctor: nothing at or above --fail-on;
     explain: something recognised)
  1  doctor found problems at or above --fail-on; explain recognised nothing;
     kb lint found problems in the knowledge base
  2  usage error or invalid input
  3  environment or runtime error
  4  patch apply failed and was rolled back
  5  patch apply failed and rollback is incomplete
  run returns its child's exit code (128+N for signal N)

Environment: RMCP_ROOT (like --root), NO_COLOR, RMCP_DATA_DIR (shipped data).
See `rmcp help COMMAND [SUBCOMMAND]`, `man rmcp` and /usr/share/doc/rmcp/.)";

// The help of `rmcp help WORD...`: the command (or nested subcommand) the words name; null
// when they name none. CLI11's App::help() would describe the `help` command itself, the
// one that was parsed, so the formatter is called directly.
const CLI::App* help_target(const CLI::App& app, const std::vector<std::string>& words, std::string& usage_name) {
    const CLI::App* target = &app;
    usage_name = app.get_name();
    for (const auto& word : words) {
        const CLI::App* next = nullptr;
        for (const CLI::App* sub : target->get_subcommands({}))
            if (sub->get_name() == word && sub->get_name() != "help" && !is_hidden_command(*sub)) next = sub;
        if (!next) return nullptr;
        target = next;
        usage_name += " " + word;
    }
    return target;
}

// CLI11 prints --help and --version to a std::ostream; they reach stdout through ctx.out
// like every other output (util/standard_output.hpp).
int exit_through(Context& ctx, const CLI::App& app, const CLI::Error& e) {
    std::ostringstream out;
    std::ostringstream err;
    const int code = app.exit(e, out, err);
    ctx.out.write(out.str());
    ctx.diag.raw(err.str());
    return code;
}

int parse_and_run(Context& ctx, int argc, char** argv) {
    CLI::App app{"rmcp — make PyTorch on consumer AMD GPUs stop crashing", "rmcp"};
    app.footer(k_footer);
    app.require_subcommand(0, 1);
    // Global options may follow the command (`rmcp detect --root DIR`), as the README writes them.
    app.fallthrough();
    app.set_version_flag("--version", "rmcp " + std::string(rmcp_version()));
    use_rmcp_help_format(app);

    app.add_option("--root", ctx.options.root, "Read the system from DIR instead of / (also RMCP_ROOT)")
        ->type_name("DIR");
    app.add_option("--format", ctx.options.format, "Output format: text, json, or a command-specific one")
        ->type_name("FORMAT");
    std::string color = "auto";
    app.add_option("--color", color, "Colour: auto|always|never (NO_COLOR is honoured)")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->type_name("WHEN");
    app.add_option("--kb", ctx.options.kb_dir, "Knowledge-base directory (default: the shipped kb/)")->type_name("DIR");
    app.add_flag("-q,--quiet", ctx.options.quiet, "Print only the summary line (or nothing); the exit code tells");
    app.add_flag("-v,--verbose", ctx.options.verbose, "Also print evidence, reasons and references");

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
    add_completions_command(app, ctx, action);

    std::vector<std::string> help_topic;
    bool man = false;
    // Commands whose stdout is the data asked for: -q never holds it (context.hpp, "-q and -v").
    for (const char* name : {"env"}) mark_document(app.get_subcommand(name));
    auto* help = app.add_subcommand("help", "List the commands, or show the help of one (rmcp help patch apply)");
    mark_document(help);
    help->footer("");  // not the exit-code table rmcp --help ends with (CLI11 copies a parent's footer)
    help->add_option("command", help_topic, "Command, and subcommand, to describe")->type_name("COMMAND");
    help->add_flag("--man", man, "Print the manual page (roff), generated from these definitions");
    help->callback([&] {
        action = [&] {
            // Every command checks --format, so a misspelt one is never ignored (exit 2).
            const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
            if (!format) return fail(ctx, format.error());
            // --format json: the same text as one document (docs/exit-codes.md).
            const auto print = [&](const char* key, const std::string& text) {
                if (*format == OutputFormat::json)
                    ctx.out.print("{}", json_output(ctx, nlohmann::json{{"schema_version", 1}, {key, text}}));
                else ctx.out.print("{}", text);
            };
            if (man) {
                print("manpage", render_manpage(app));
                return 0;
            }
            std::string usage_name;
            const CLI::App* target = help_target(app, help_topic, usage_name);
            if (!target)
                return fail(ctx, Error{"looking up help for", fmt::format("{}", fmt::join(help_topic, " ")),
                                       "no such command (rmcp help lists them)", ExitCode::usage});
            // "Usage: rmcp patch apply ...", as `rmcp patch apply --help` shows.
            print("help", target->get_formatter()->make_help(target, usage_name, CLI::AppFormatMode::Normal));
            return 0;
        };
    });

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return exit_through(ctx, app, e);
    } catch (const CLI::CallForVersion& e) {
        return exit_through(ctx, app, e);
    } catch (const CLI::ParseError& e) {
        // Parsing stopped part-way: --format and --color may not have been read yet, so look.
        std::vector<std::string> args(argv + 1, argv + argc);
        for (std::size_t i = 0; i < args.size(); ++i) {
            const std::string_view a = args[i];
            if (a == "--") break;
            const auto value = [&](std::string_view name) -> std::optional<std::string> {
                if (a.starts_with(std::string(name) + "=")) return std::string(a.substr(name.size() + 1));
                if (a == name && i + 1 < args.size()) return args[i + 1];
                return std::nullopt;
            };
            if (value("--format") == "json") ctx.options.format = "json";
            if (const auto c = value("--color")) color = *c;
        }
        ctx.diag.set_color(use_color(color == "always"  ? ColorMode::always
                                     : color == "never" ? ColorMode::never
                                                        : ColorMode::automatic,
                                     STDERR_FILENO));
        // CLI11 says what it could not match; the walk through the command tree says which
        // command it was for, what was probably meant, and which help to read.
        const auto diagnosis = diagnose_arguments(app, args);
        std::string cause = !diagnosis.problem.empty()              ? diagnosis.problem
                            : !diagnosis.missing_subcommand.empty() ? diagnosis.missing_subcommand
                                                                    : std::string(e.what());
        const int code = fail(ctx, Error{"parsing arguments", "", cause, ExitCode::usage});
        ctx.diag.raw(fmt::format("Run '{} --help' for usage.\n", diagnosis.command));
        return code;
    }

    ctx.options.color = color == "always"  ? ColorMode::always
                        : color == "never" ? ColorMode::never
                                           : ColorMode::automatic;
    ctx.diag.set_color(use_color(ctx.options.color, STDERR_FILENO));
    if (ctx.options.quiet && ctx.options.verbose)
        return fail(ctx, Error{"parsing arguments", "", "-q and -v contradict each other: give one", ExitCode::usage});
    ctx.diag.set_verbosity(ctx.options.quiet     ? Verbosity::quiet
                           : ctx.options.verbose ? Verbosity::verbose
                                                 : Verbosity::normal);
    if (!action) {
        // `rmcp` alone: a short usage on stderr and exit 2, as rg does; stdout stays empty.
        if (ctx.options.format == "json")
            return fail(ctx, Error{"parsing arguments", "", "a command is required (rmcp help lists them)",
                                   ExitCode::usage});
        ctx.diag.raw(short_usage(app));
        return static_cast<int>(ExitCode::usage);
    }
    // -q holds the text a command prints; only its summary line passes (context.hpp). The
    // innermost command chosen decides whether its stdout is a document instead.
    const CLI::App* chosen = &app;
    for (bool deeper = true; deeper;) {
        deeper = false;
        for (const CLI::App* sub : chosen->get_subcommands())
            if (sub->parsed()) {
                chosen = sub;
                deeper = true;
                break;
            }
    }
    if (ctx.quiet() && ctx.options.format == "text" && !is_document(chosen)) ctx.out.set_held(true);
    return action();
}
}  // namespace

// Every command ends here: what it printed is checked (a failed write to stdout, e.g. a
// full disk or a closed pipe, is an error and exit 3, never a silent exit 0;
// docs/exit-codes.md). An exit code that already reports a failure (2, 4, 5, a child's)
// is kept: that failure is the one to act on, and the stdout error is printed too.
int run(int argc, char** argv) {
    Context ctx;
    int code = parse_and_run(ctx, argc, argv);
    ctx.out.finish();
    if (const auto failure = ctx.out.failure()) {
        ctx.diag.error(*failure);
        if (code == 0 || code == static_cast<int>(ExitCode::findings)) code = static_cast<int>(failure->code);
    }
    return code;
}

}  // namespace rmcp::cli
