// What every command shares: the global options, diagnostics, and how to open the Root.
// Each command lives in its own file and registers itself with add_<name>_command().
#pragma once

#include "util/style.hpp"
#include "root/root.hpp"
#include "util/diag.hpp"
#include "util/standard_output.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rmcp::cli {

enum class OutputFormat { text, json, nfd, prometheus, sh, fish, dotenv, markdown };

struct GlobalOptions {
    std::string root;             // --root / RMCP_ROOT
    std::string format = "text";  // --format
    ColorMode color = ColorMode::automatic;
    bool quiet = false;
    bool verbose = false;
    std::string kb_dir;  // --kb
};

class Context {
public:
    GlobalOptions options;
    // mutable: a const query (open_root) may warn.
    mutable Diagnostics diag;
    // Everything a command prints on stdout goes through here (util/standard_output.hpp):
    // a failed write becomes exit 3 when the command ends (run_cli.cpp).
    StandardOutput& out = standard_output();

    // Opens --root (default "/"). A root that has none of sys/, proc/ and etc/os-release is
    // most likely not a system tree (a snapshot unpacked one level too deep, a typo): a
    // warning says so, once per run, whichever command opened it.
    Result<Root> open_root() const;
    // A Root at `dir` ("/": this machine, for paths the user names), with the same resolver.
    Result<Root> open_root_at(const std::string& dir) const;
    // What the terminal on stdout can show (util/terminal.hpp): colour, glyphs, width.
    [[nodiscard]] Style style() const;

    // -q and -v, the same for every command (docs/ux.md, "Quiet and verbose"):
    //   quiet:   a text report is held back by the frame (run_cli.cpp holds stdout), and
    //            only the line given to summary() is printed, or nothing; errors still go
    //            to stderr, and the exit code tells. JSON and other machine formats, and a
    //            command whose stdout is the data asked for (document_output()), are not held.
    //   verbose: renderers add evidence, ranking reasons and references.
    [[nodiscard]] Verbosity verbosity() const { return diag.verbosity(); }
    [[nodiscard]] bool quiet() const { return verbosity() == Verbosity::quiet; }
    [[nodiscard]] bool verbose() const { return verbosity() == Verbosity::verbose; }
    // The command's one-line summary: printed under -q (text format) only; without -q the
    // report the command prints carries it already.
    void summary(std::string_view line) const;
    // This run's stdout is the requested data itself (a shell script, an archive, a
    // completion script, help text): -q silences notes on stderr but never holds it.
    void document_output() const;
    // Text for a terminal, through the pager when it is longer than the screen
    // (process/pager.hpp): stdout a terminal, not -q. Held like any text under -q.
    void page(std::string_view text) const;
    // Directory holding kb/ and other shipped data: ../share/rmcp beside the installed binary,
    // else $RMCP_DATA_DIR, else the source tree (install_paths.hpp).
    [[nodiscard]] std::filesystem::path data_dir() const;
    [[nodiscard]] std::filesystem::path kb_dir() const;

    // Validates --format against what the command supports; usage error otherwise.
    Result<OutputFormat> format(std::initializer_list<OutputFormat> allowed) const;

private:
    mutable bool m_root_checked = false;
    mutable std::optional<Style> m_style;
};

using Action = std::function<int()>;

// Text output (every text, NFD and Prometheus page a command prints on stdout): formatted, then
// shown through util/text.hpp's terminal_safe(), which shows the controls that input may hold
// (paths, values detect read, log lines, journal fields) as '?' and keeps only the colour
// sequences Style writes when --color is in effect (docs/security.md, "Text from input").
std::string shown_text(const Context& ctx, std::string_view text);
template <class... Args>
void print_text(const Context& ctx, fmt::format_string<Args...> format, Args&&... args) {
    ctx.out.write(shown_text(ctx, fmt::format(format, std::forward<Args>(args)...)));
}

// How the user runs rmcp here, for commands printed to be pasted: "rmcp", or with the
// --root given ("rmcp --root DIR", sh-quoted when needed).
std::string command_prefix(const Context& ctx);
// A path in a message: under --root the file really is at ROOT/path, and that is what the
// message names (one rule for every command: docs/patches.md, "Paths under --root").
std::string shown_path(const Root& root, std::string_view logical);

// `rmcp patch apply` and `rmcp doctor --fix`: plan the patches, ask unless `yes` (refuse
// without a terminal), apply them as one transaction, print what was written, how to undo it
// and how to verify it. `extra` is merged into the JSON result.
struct ApplyRequest {
    std::vector<std::string> ids;
    bool yes = false;
    std::string site_packages;
    std::string patch_dir;
    nlohmann::json extra = nlohmann::json::object();
};
int apply_patches(Context& ctx, const ApplyRequest& request);

void add_detect_command(CLI::App& app, Context& ctx, Action& action);
void add_doctor_command(CLI::App& app, Context& ctx, Action& action);
void add_explain_command(CLI::App& app, Context& ctx, Action& action);
void add_scan_command(CLI::App& app, Context& ctx, Action& action);
void add_patch_command(CLI::App& app, Context& ctx, Action& action);
void add_env_command(CLI::App& app, Context& ctx, Action& action);
void add_run_command(CLI::App& app, Context& ctx, Action& action);
void add_probe_command(CLI::App& app, Context& ctx, Action& action);
void add_snapshot_command(CLI::App& app, Context& ctx, Action& action);
void add_completions_command(CLI::App& app, Context& ctx, Action& action);
void add_kb_command(CLI::App& app, Context& ctx, Action& action);

// Registers `cmd` as a command whose stdout is the data asked for (document_output() for
// every run of it); the frame lists the kinds with `rmcp __complete commands`.
void mark_document(CLI::App* cmd);
[[nodiscard]] bool is_document(const CLI::App* cmd);

// The frame (frame.cpp): help layout, option type names, mistyped command lines.
// CLI11's help and rmcp's own formatting for every command of `app`.
void use_rmcp_help_format(CLI::App& app);
// The values a CLI::IsMember check allows ({} without one).
std::vector<std::string> option_values(const CLI::Option& opt);
// The option's value name for help and the man page: the allowed values as a|b|c, else the
// type name the definition gave (without CLI11's validator descriptions).
std::string option_type_name(const CLI::Option& opt);
// A command's one-line summary in a command list (its description up to the first ';').
std::string command_summary(const CLI::App& cmd);
// Commands kept out of help, the man page and completion (`rmcp __complete`).
bool is_hidden_command(const CLI::App& cmd);
// The candidate a mistyped word most likely meant, if one is close (edit distance).
std::optional<std::string> suggestion(std::string_view word, const std::vector<std::string>& candidates);
// What is wrong with a command line CLI11 refused, found by walking it through the command
// tree: the innermost command named ("rmcp patch"), the first unknown option or command
// (with a suggestion), or that the command needs a subcommand.
struct ArgumentDiagnosis {
    std::string command;
    std::string problem;
    std::string missing_subcommand;
};
ArgumentDiagnosis diagnose_arguments(const CLI::App& app, const std::vector<std::string>& args);
// `rmcp` alone: the short usage, for stderr.
std::string short_usage(const CLI::App& app);

// The manual page, rendered from the same CLI11 definitions as --help.
std::string render_manpage(const CLI::App& app);
// A completion script for "bash", "zsh" or "fish", from the same definitions.
std::string render_completions(CLI::App& app, std::string_view shell);

// Prints an error in the one message shape and returns its exit code. With --format json
// it is also one {"error": {...}} object on stdout (docs/exit-codes.md, "Errors as data").
int fail(Context& ctx, const Error& error);
// Only the JSON half of fail(), with --format json (for an error already reported on stderr).
void print_error_json(Context& ctx, const Error& error);
// A command's output document: to stdout when `path` is empty or "-", else to the file
// through write_file_atomic (util/atomic_file.hpp: regular files only, replaced atomically).
Status write_output(Context& ctx, const std::string& path, std::string_view content);

// {"doing", "path", "cause", "exit_code"}: the error object of --format json.
nlohmann::json error_json(const Error& error);

}  // namespace rmcp::cli
