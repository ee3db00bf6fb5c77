// `rmcp run` as one library call (ARCHITECTURE.md, principle 8): the request checked, the
// attempt plan made (the profile ladder, `auto`, the user's profile.env), the child
// supervised and the incident report written. The CLI parses into a CommandRequest, calls
// run_command and renders a --dry-run plan (docs/run.md).
#pragma once

#include "root/root.hpp"
#include "run/supervisor.hpp"
#include "util/diag.hpp"
#include "util/error.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rmcp::run {

struct CommandRequest {
    std::vector<std::string> command;  // the child's argv (everything after --)
    std::string profile;               // "" : none; a name, or "auto"
    unsigned retries = 0;
    std::string fallback = "none";  // "none" | "cpu"
    std::string log;                // "" : no log
    std::string report;             // "" : only on an incident, under default_report_path
    std::string stall_timeout = "0";
    std::string kill_grace = "5";
    bool pty = false;
    bool trace_alloc = false;
    bool dry_run = false;
    std::filesystem::path data_dir;  // profiles/, patches/
    std::filesystem::path kb_dir;
    // Where librmcp_preload.so is looked for after $RMCP_PRELOAD_LIB: beside the binary, then
    // the installed private library directory.
    std::filesystem::path executable_dir;
    std::filesystem::path installed_library_dir;
    std::function<Result<Root>()> open_root;
    // How the user runs rmcp here ("rmcp", "rmcp --root DIR"), for the commands a summary names.
    std::string rmcp_command = "rmcp";
    // A JSON document as the text written to a file (the CLI stamps rmcp_version and kb_version).
    std::function<std::string(const nlohmann::json&)> json_text;
};

struct CommandOutcome {
    int exit_code = 0;  // the child's (docs/run.md), or 0 for a dry run
    // --dry-run: the attempts that would run; nothing was started.
    std::optional<std::vector<Rung>> planned;
    // The command could not be started at all (exit_code 126 or 127): nothing of the child's
    // reached stdout, so --format json prints this as its error object. Already reported
    // on stderr.
    std::optional<Error> start_error;
};

// Errors are those before the child starts (usage, the root, profiles, the plan, the
// allocation tracer); the child's own failures are in the exit code.
Result<CommandOutcome> run_command(const CommandRequest& request, Diagnostics& diag);

}  // namespace rmcp::run
