// What every command shares: the global options, diagnostics, and how to open the Root.
// Each command lives in its own file and registers itself with add_<name>_command().
#pragma once

#include "render/style.hpp"
#include "root/root.hpp"
#include "util/diag.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace rmcp::cli {

enum class OutputFormat { text, json, nfd, prometheus, sh, fish, dotenv, markdown };

struct GlobalOptions {
    std::string root;            // --root / RMCP_ROOT
    std::string format = "text"; // --format
    ColorMode color = ColorMode::automatic;
    bool quiet = false;
    bool verbose = false;
    std::string kb_dir;          // --kb
};

class Context {
public:
    GlobalOptions options;
    Diagnostics diag;

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
// {"doing", "path", "cause", "exit_code"}: the error object of --format json.
nlohmann::json error_json(const Error& error);

}  // namespace rmcp::cli
