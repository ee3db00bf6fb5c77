// Running one scenario under one configuration in its own child process (forked from the
// worker's fork server), and classifying what happened. ScenarioRunner is the seam: the orchestrator and --bisect
// only see ScenarioResults, so their logic is tested with a scripted runner (unit tests) and
// end to end with the real worker and its test-only fault injector (CLI tests).
#pragma once

#include "probe/catalogue.hpp"
#include "probe/fork_server.hpp"

#include <chrono>
#include <functional>
#include <memory>
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

struct ScenarioResult {
    Outcome outcome = Outcome::crash;
    double median_ms = 0;  // ok only
    std::string detail;    // "SIGABRT", "error 1.08 > 0.002", "timeout after 5 s", ...
    std::string message;   // the line that says why (ROCr's fault line, the exception)
    int exit_code = -1;    // -1 when killed by a signal
    int signal = 0;
    std::string kb_entry;   // knowledge-base entry the crash matched (explain), if any
    nlohmann::json report;  // the worker's JSON line, when it printed one
    double wall_s = 0;
};

class ScenarioRunner {
public:
    virtual ~ScenarioRunner() = default;
    // `env` are the configuration's changes on top of the inherited environment.
    virtual Result<ScenarioResult> run(const Scenario& scenario, const EnvMap& env) = 0;
};

// Recognises a crash's stderr against the knowledge base (the explain matcher); returns
// the entry id or "". The CLI wires it; the default recognises nothing.
using CrashClassifier = std::function<std::string(std::string_view stderr_text)>;

struct WorkerOptions {
    std::string python;       // resolved interpreter path
    std::string python_path;  // prepended to PYTHONPATH (the shipped python/ dir)
    std::string device = "cpu";
    int repeat = 5;
    int warmup = 2;
    std::chrono::milliseconds timeout{std::chrono::seconds(300)};
    std::chrono::milliseconds handshake_timeout{std::chrono::seconds(5)};
    std::vector<std::string> base_env;  // "NAME=value", usually the current environment
    CrashClassifier classify;
    // Variables read while `import torch` runs (the catalogue's import_time list): a
    // configuration that sets one gets a fork server started with it (docs/probe.md).
    std::vector<std::string> import_time;
    // Variables each child reports back as it saw them (env_seen): the switches' variables.
    std::vector<std::string> report_env;
    // Told about fork-server restarts and the like (the CLI prints them as warnings).
    std::function<void(const std::string&)> notice;
};

// What torch in the interpreter sees, asked in a child of the fork server.
struct DeviceQuery {
    bool available = false;
    int count = 0;
    std::string name;        // of device 0
    std::string gfx_target;  // ROCm builds
    std::string message;     // why not, when not
};

// Runs each (scenario, configuration) in a child forked from the worker's fork server
// (python/rmcp/zygote.py, src/core/probe/fork_server.hpp): torch is imported once per fork
// server, not once per child. Fork servers are kept per set of import-time variables
// (at most three alive); one that dies is restarted once per probe, and the scenario it was
// running runs again. Run errors (the probe cannot go on; ExitCode::environment): the
// interpreter does not answer the handshake, cannot import torch, the fork server died
// twice, a child says torch or the GPU is missing (exit 3) or rejects its arguments (exit 2).
class ZygoteRunner final : public ScenarioRunner {
public:
    explicit ZygoteRunner(WorkerOptions options);
    ~ZygoteRunner() override;
    ZygoteRunner(const ZygoteRunner&) = delete;
    ZygoteRunner& operator=(const ZygoteRunner&) = delete;

    // Starts the fork server for the default configuration: the interpreter handshake.
    Result<Handshake> start();
    Result<DeviceQuery> query_device();
    void set_device(std::string device) { m_options.device = std::move(device); }
    Result<ScenarioResult> run(const Scenario& scenario, const EnvMap& env) override;

    [[nodiscard]] int servers_started() const { return m_started; }
    [[nodiscard]] int restarts() const { return m_restarts; }

private:
    struct Server;
    Result<ForkServer*> server_for(const EnvMap& import_env);
    // Runs `request` in a child, restarting a fork server that dies (once per probe).
    Result<ChildRun> run_child(const EnvMap& import_env, const nlohmann::json& request, const std::string& what);

    WorkerOptions m_options;
    std::vector<std::string> m_env;                  // base environment with PYTHONPATH
    std::vector<std::unique_ptr<Server>> m_servers;  // least recently used first
    int m_started = 0;
    int m_restarts = 0;
    int m_restarts_left = 1;
};

// Classifies a finished child from its wait status, output and whether the timeout cut it.
// Exposed for unit tests. Returns an error for worker environment failures (exit 3) and
// usage errors (exit 2): the probe cannot go on.
Result<ScenarioResult> classify_child(int wait_status, bool timed_out, std::string_view stdout_text,
                                      std::string_view stderr_text, const CrashClassifier& classify);

// Finds `python` (a path, or a name looked up in PATH); error: ExitCode::environment.
Result<std::string> resolve_interpreter(const std::string& python, const std::string& path_env);

}  // namespace rmcp::probe
