// Running one scenario under one configuration in its own child process (the worker), and
// classifying what happened. ScenarioRunner is the seam: the orchestrator and --bisect
// only see RunResults, so their logic is tested with a scripted runner (unit tests) and
// end to end with the real worker and its test-only fault injector (CLI tests).
#pragma once

#include "probe/catalogue.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rmcp::probe {

enum class Outcome {
    ok,           // matched the float64 reference; timed
    unsupported,  // this device/build cannot run it (fp16 convolutions on PyTorch's CPU build)
    wrong,        // finished with a result outside tolerance
    crash,        // died of a signal, or raised (HIP error, MIOpen error)
    hang,         // cut by the timeout
};

std::string_view outcome_name(Outcome o);
inline bool is_failure(Outcome o) { return o == Outcome::wrong || o == Outcome::crash || o == Outcome::hang; }

struct RunResult {
    Outcome outcome = Outcome::crash;
    double median_ms = 0;          // ok only
    std::string detail;            // "SIGABRT", "error 1.08 > 0.002", "timeout after 5 s", ...
    std::string message;           // the line that says why (ROCr's fault line, the exception)
    int exit_code = -1;            // -1 when killed by a signal
    int signal = 0;
    std::string kb_entry;          // knowledge-base entry the crash matched (explain), if any
    nlohmann::json report;         // the worker's JSON line, when it printed one
    double wall_s = 0;
};

class ScenarioRunner {
public:
    virtual ~ScenarioRunner() = default;
    // `env` are the configuration's changes on top of the inherited environment.
    virtual Result<RunResult> run(const Scenario& scenario, const EnvMap& env) = 0;
};

// Recognises a crash's stderr against the knowledge base (the explain matcher); returns
// the entry id or "". The CLI wires it; the default recognises nothing.
using CrashClassifier = std::function<std::string(std::string_view stderr_text)>;

struct WorkerOptions {
    std::string python;                 // resolved interpreter path
    std::string python_path;            // prepended to PYTHONPATH (the shipped python/ dir)
    std::string device = "cpu";
    int repeat = 5;
    int warmup = 2;
    std::chrono::milliseconds timeout{std::chrono::seconds(300)};
    std::vector<std::string> base_env;  // "NAME=value", usually the current environment
    CrashClassifier classify;
};

// Runs `PY -m rmcp.worker SPEC --device D ...` per scenario in its own process group,
// without core files (a faulting GPU process can dump gigabytes; dozens of children
// would fill the disk): RLIMIT_CORE is lowered around the spawn and inherited.
// Run errors (the probe cannot go on; ExitCode::environment): the interpreter cannot be
// started, the worker says torch or the GPU is missing (exit 3), or rejects its
// arguments (exit 2).
class WorkerRunner final : public ScenarioRunner {
public:
    explicit WorkerRunner(WorkerOptions options) : m_options(std::move(options)) {}
    Result<RunResult> run(const Scenario& scenario, const EnvMap& env) override;

private:
    WorkerOptions m_options;
};

// Classifies a finished child from its wait status, output and whether the timeout cut it.
// Exposed for unit tests. Returns an error for worker environment failures (exit 3) and
// usage errors (exit 2): the probe cannot go on.
Result<RunResult> classify_child(int wait_status, bool timed_out, std::string_view stdout_text,
                                 std::string_view stderr_text, const CrashClassifier& classify);

// Finds `python` (a path, or a name looked up in PATH); error: ExitCode::environment.
Result<std::string> resolve_interpreter(const std::string& python, const std::string& path_env);

}  // namespace rmcp::probe
