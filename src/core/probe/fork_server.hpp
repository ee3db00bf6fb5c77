// The orchestrator's end of the worker's fork server (python/rmcp/zygote.py): one Python
// process that imports torch once and forks a child per request (docs/probe.md, "The fork
// server"). The protocol is JSON packets on a SOCK_SEQPACKET socket; each child's stdout and
// stderr are pipes made here and handed over with SCM_RIGHTS, so that reading a child, its
// timeout and the kill of its process group work exactly as for a child spawned directly.
#pragma once

#include "probe/worker_protocol.hpp"
#include "util/error.hpp"
#include "util/unique_fd.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace rmcp::probe {

// What the interpreter said before and after `import torch`.
struct Handshake {
    std::string python_version;  // "3.11.2"
    std::string executable;      // sys.executable
    std::string torch_version;
    std::string torch_origin;               // torch/__init__.py
    std::string gpu_build;                  // "hip", "cuda", or "" for a CPU-only build
    bool cuda_initialized = false;          // in the fork server: must stay false
    int threads = 0;                        // in the fork server: must stay 1
    std::vector<std::string> device_calls;  // device entry points the fork server called: must stay empty
    double hello_s = 0;                     // until the interpreter answered
    double ready_s = 0;                     // until torch was imported
};

struct ForkServerOptions {
    std::string python;
    std::vector<std::string> env;  // its complete environment, "NAME=value"
    // A Python interpreter answers in tens of milliseconds; something that has not answered
    // in this time is not one (or is hung), and must not be taken for a crashing GPU.
    std::chrono::milliseconds handshake_timeout{std::chrono::seconds(5)};
    std::chrono::milliseconds import_timeout{std::chrono::seconds(300)};
};

struct ChildRun {
    bool started = false;      // the server said it forked the child (its pid is never used: D9)
    int wait_status = 0;       // as waitpid() reports it (the fork server reaped the child)
    bool timed_out = false;    // the timeout cut it (its group was killed, by the server on request)
    bool server_died = false;  // the fork server went away before reporting the child's end
    std::string out, err;      // stdout, and the tail of stderr
    double wall_s = 0;
};

class ForkServer {
public:
    // Starts the interpreter, waits for its hello (handshake_timeout) and for `import torch`
    // (import_timeout). Errors are ExitCode::environment and say what the interpreter did.
    static Result<std::unique_ptr<ForkServer>> start(const ForkServerOptions& options);
    ~ForkServer();
    ForkServer(const ForkServer&) = delete;
    ForkServer& operator=(const ForkServer&) = delete;

    [[nodiscard]] const Handshake& handshake() const { return m_handshake; }
    [[nodiscard]] bool alive() const { return m_alive; }
    [[nodiscard]] pid_t pid() const { return m_pid; }

    // One child for `request` (a JSON object with "op"; the id is added here). After the
    // timeout the server is asked to send the child's process group SIGTERM, then SIGKILL a
    // second later; a server that does not answer is ended with its whole session. A reply
    // that breaks the protocol (worker_protocol.hpp) is an error (ExitCode::environment)
    // and ends the server and its session.
    Result<ChildRun> run_child(nlohmann::json request, std::chrono::milliseconds timeout);
    // How the fork server ended ("killed by SIGKILL", "exit 1: <its last line>"), once it has.
    [[nodiscard]] std::string death() const { return m_death; }

private:
    ForkServer() = default;
    enum class Wait { message, closed, timeout, bad, again };
    // The next control message, reading the server's own output meanwhile; Wait::bad: it
    // broke the protocol, m_protocol_error says how.
    Wait next_message(protocol::Message& message, std::chrono::steady_clock::time_point deadline);
    // One packet from the control socket, parsed: Wait::message, Wait::closed, or Wait::bad.
    Wait receive(protocol::Message& message);
    // Asks the server to signal the process group of child `id` (it created that group).
    void signal_child(long id, int sig);
    // SIGKILL for the server's whole session: the server and everything it forked.
    void kill_all();
    void drain_log();
    void mark_dead();
    void stop(std::chrono::milliseconds grace);

    pid_t m_pid = -1;
    UniqueFd m_ctl;
    UniqueFd m_log;  // the server's own stdout and stderr
    std::string m_log_tail;
    std::string m_python;
    Handshake m_handshake;
    bool m_alive = true;
    std::string m_death;
    std::string m_protocol_error;  // the last message that broke the protocol
    std::vector<char> m_buffer;    // one control packet
    long m_next_id = 0;
};

// "SIGABRT", "SIGKILL", "signal 40".
std::string signal_name(int sig);

}  // namespace rmcp::probe
