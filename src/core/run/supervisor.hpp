// The supervisor (docs/run.md): runs the child, relays its output unchanged,
// watches it for knowledge-base signatures, forwards signals, and climbs the profile
// ladder when a recognised GPU failure kills it.
#pragma once

#include "process/spawn.hpp"
#include "run/watcher.hpp"
#include "util/diag.hpp"
#include "util/error.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rmcp::run {

// The supervisor's options speak the process module's terms; the CLI and the plan name
// them from here.
using process::apply_env;
using process::env_value;
using process::EnvEdit;
using process::Terminal;

// One rung of the escalation ladder as the supervisor sees it: a name for the report and
// the environment edits that make it (hiding the GPU included when hide_gpu is set).
struct Rung {
    std::string profile;  // "" : the user's environment unchanged
    std::vector<EnvEdit> env;
    bool hide_gpu = false;
};

struct RunOptions {
    std::vector<std::string> argv;
    std::vector<Rung> plan;  // attempt i runs under plan[i]; at least one rung
    Terminal terminal = Terminal::pipes;
    std::string log_path;  // "" : no log
    // Seconds; anything outside [0, k_max_seconds] (NaN included) is clamped into it here,
    // and the CLI refuses it outright (check_seconds).
    double stall_timeout_s = 0;     // 0 : never
    double kill_grace_s = 5;        // SIGTERM → SIGKILL (a stall, or SIGTERM/SIGHUP to rmcp)
    double interrupt_window_s = 3;  // a second SIGINT within this kills the group
    std::string preload_library;    // "" : no allocation trace (--trace-alloc seam)
    WatcherFactory watcher;         // may be empty: nothing is recognised
    int out_fd = 1;                 // where the child's stdout and stderr are relayed
    int err_fd = 2;
};

enum class AttemptEnd {
    exited,       // exit status
    signaled,     // killed by a signal
    not_started,  // spawn failed
};

struct MatchSummary {
    WatchMatch first;
    unsigned count = 0;
};

struct Attempt {
    unsigned number = 1;
    int pid = 0;  // also its process group id
    Rung rung;
    std::chrono::system_clock::time_point started;
    double duration_s = 0;
    AttemptEnd end = AttemptEnd::exited;
    int exit_status = 0;  // exit code, or the signal number
    bool core_dumped = false;
    bool stalled = false;                 // killed by rmcp after --stall-timeout of silence
    int forwarded_signal = 0;             // the first signal the user sent (0: none)
    bool killed_after_interrupt = false;  // a second SIGINT
    // SIGTERM or SIGHUP reached rmcp, was forwarded to the group, and the group still ran
    // after --kill-grace: rmcp killed it and ends with 128+signal (0: not so). The last of
    // SIGTERM/SIGHUP received, whatever came before it (an ignored SIGINT: D13).
    int ended_by_signal = 0;
    // Processes of the run still holding its output when rmcp stopped relaying (the drain
    // after the child's exit is bounded: k_drain_limit); they are left running.
    std::vector<int> background_processes;
    std::uint64_t bytes_out = 0, bytes_err = 0;
    // errno of the first failed relay to rmcp's stdout (a full disk, a reader gone): the
    // child's output was lost, which exit 0 must not hide (run/command.cpp).
    int stdout_relay_error = 0;
    std::vector<MatchSummary> matches;          // one per entry, in order of first appearance
    std::vector<std::string> excerpt;           // the last lines of output, both streams in arrival order
    std::optional<nlohmann::json> allocations;  // librmcp_preload.so summary (--trace-alloc)
    std::string error;                          // why it could not start
    std::optional<Error> start_error;           // the same, as a value (for --format json)
    bool gpu_failure = false;                   // recognised GPU failure or stall: a retry may help

    // The code a shell would see: the exit status, or 128+N for signal N.
    [[nodiscard]] int shell_code() const;
};

struct RunResult {
    std::vector<Attempt> attempts;
    std::chrono::system_clock::time_point started;
    double duration_s = 0;
    int exit_code = 0;
    // Something went wrong that calls for an incident report (a GPU failure or a stall in
    // any attempt).
    [[nodiscard]] bool incident() const;
};

// Runs the plan: attempt 1 under plan[0]; each recognised GPU failure moves to the next
// rung while one is left. Notes (retrying, stalls) go to diag.
RunResult supervise(const RunOptions& options, Diagnostics& diag);

// The matches in a GPU category (is_gpu_failure_category), ranked as explain ranks them:
// specific entries in order of appearance, family entries only when no specific one matched.
std::vector<const MatchSummary*> ranked_gpu_matches(const Attempt& attempt);
// The id of the first of them, for messages ("GPU failure" when there is none).
std::string first_gpu_match(const Attempt& attempt);
// How every message names the profile of an attempt: its profile, "default" when the run
// has none (the user's environment and profile.env as they are: what profiles/00-default.toml
// describes), "+ GPU hidden" when it hides the GPU. One name for --dry-run, the retry notes
// and the summary (newcomer review, finding 10).
std::string rung_name(const Rung& rung);

// The longest time option rmcp accepts: 30 days (docs/run.md, "Signals, stalls, exit status").
inline constexpr double k_max_seconds = 30.0 * 24 * 3600;
// After the child exits, output is relayed until its pipes close, they have been quiet for
// k_drain_quiet, or k_drain_limit has passed, whichever comes first (docs/run.md, "Relay").
inline constexpr std::chrono::milliseconds k_drain_quiet{1000};
inline constexpr std::chrono::milliseconds k_drain_limit{2000};

// A time option's value as seconds: finite, from 0 to k_max_seconds; the reason otherwise.
Result<double> check_seconds(std::string_view text);

// Exit code for a command that could not be started, as env(1) and the shells use it.
inline constexpr int k_exit_not_found = 127;
inline constexpr int k_exit_not_executable = 126;

}  // namespace rmcp::run
