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
    Diagnostics diag;
    // Everything a command prints on stdout goes through here (util/standard_output.hpp):
    // a failed write becomes exit 3 when the command ends (run_cli.cpp).
    StandardOutput& out = standard_output();

    // Opens --root (default "/"); prints the error and returns nullopt on failure.
    Result<Root> open_root() const;
    // A Root at `dir` ("/": this machine, for paths the user names), with the same resolver.
    Result<Root> open_root_at(const std::string& dir) const;
    [[nodiscard]] Style style() const;
    // Directory holding kb/ and other shipped data: ../share/rmcp beside the installed binary,
    // else $RMCP_DATA_DIR, else the source tree (install_paths.hpp).
    [[nodiscard]] std::filesystem::path data_dir() const;
    [[nodiscard]] std::filesystem::path kb_dir() const;

    // Validates --format against what the command supports; usage error otherwise.
    Result<OutputFormat> format(std::initializer_list<OutputFormat> allowed) const;
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
