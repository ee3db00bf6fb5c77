// `rmcp probe` as one library call (ARCHITECTURE.md, principle 8): the request checked, the
// catalogue and interpreter resolved, the fork server started, the suite (and --bisect) run,
// the result built and the profile and fault map saved. The CLI parses into a ProbeRequest,
// calls run_probe and renders what comes back (docs/probe.md).
#pragma once

#include "probe/probe.hpp"
#include "root/root.hpp"
#include "util/diag.hpp"
#include "util/error.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rmcp::probe {

struct ProbeRequest {
    // "" : $RMCP_PYTHON, else $VIRTUAL_ENV/bin/python, else the interpreter detect found
    // PyTorch for on this machine (facts/torch_python.hpp), else python3 on PATH.
    std::string python;
    std::vector<std::string> scenarios;
    bool quick = false;
    bool bisect = false;
    double timeout_s = 300;
    std::string save;              // the profile file; "" : none
    bool save_to_default = false;  // --save without FILE: the user's profiles directory
    // --allow-cpu: --save even when the probe ran on the CPU. Without it, a CPU probe saves
    // nothing: it says nothing about the GPU (newcomer review, finding 5).
    bool allow_cpu = false;
    std::string device = "auto";
    std::string html;  // written by the caller after the run; checked before it starts
    int repeat = 5;
    int warmup = 2;
    std::string catalogue;           // "" : data_dir/probe/catalogue.toml
    std::filesystem::path data_dir;  // profiles/, probe/ and python/
    std::filesystem::path kb_dir;    // names crashes
    const Root* root = nullptr;      // the machine's facts; null when --root could not be opened
    // A JSON document as the text written to a file (the CLI stamps rmcp_version and kb_version).
    std::function<std::string(const nlohmann::json&)> json_text;
    ProgressSink progress;
};

struct ProbeOutcome {
    nlohmann::json result;  // what `rmcp probe --format json` prints (docs/probe.md)
    int exit_code = 0;      // 0 passed, ExitCode::findings failures remain
    // A file that could not be written: reported after the result is shown, so a long run's
    // result is never lost.
    std::optional<Error> write_error;
};

// Errors stop the probe before a result exists (usage, a missing interpreter, a fork server
// that cannot start); warnings and notes go to `diag`.
Result<ProbeOutcome> run_probe(ProbeRequest request, Diagnostics& diag);

// An output file's directory must exist and be writable before the suite runs: an hour of
// probing must not end in "No such file or directory". `option` names the flag in errors.
Status check_output_path(const std::string& option, const std::string& file);

// `rmcp probe report RESULT.json`: a saved result, loaded and checked as a grid (errors name
// the file); `html` ("" : none) is checked as an output path first.
Result<nlohmann::json> load_saved_result(const std::string& path, const std::string& html);

}  // namespace rmcp::probe
