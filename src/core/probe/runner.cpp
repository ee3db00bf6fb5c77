#include "probe/runner.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace rmcp::probe {

namespace {

struct Child {
    pid_t pid = -1;  // also its process-group id
    int out_fd = -1;
    int err_fd = -1;
};

// argv without a shell, its own process group (a hang is cut by killing the group),
// stdout and stderr on pipes. The probe's own spawn, kept small; `rmcp run` has the
// supervisor's (ptys, signal relay) which the probe does not need.
Result<Child> spawn_worker(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
        const int e = errno;
        for (int fd : {out[0], out[1], err[0], err[1]})
            if (fd >= 0) ::close(fd);
        return Error{"creating pipes for", "the probe worker", std::strerror(e), ExitCode::environment, e};
    }
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    std::vector<char*> args, envp;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, argv.front().c_str(), &actions, &attr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(out[1]);
    ::close(err[1]);
    if (rc != 0) {
        ::close(out[0]);
        ::close(err[0]);
        return Error{"starting the probe worker with", argv.front(), std::strerror(rc), ExitCode::environment, rc};
    }
    return Child{pid, out[0], err[0]};
}

// env ("NAME=value" entries) with `changes` set, replacing earlier values.
std::vector<std::string> with_changes(const std::vector<std::string>& env, const EnvMap& changes) {
    std::vector<std::string> out;
    for (const auto& entry : env) {
        const auto eq = entry.find('=');
        if (eq != std::string::npos && changes.contains(entry.substr(0, eq))) continue;
        out.push_back(entry);
    }
    for (const auto& [k, v] : changes) out.push_back(k + "=" + v);
    return out;
}

std::optional<std::string> env_value(const std::vector<std::string>& env, std::string_view name) {
    for (const auto& entry : env)
        if (entry.size() > name.size() && entry[name.size()] == '=' && entry.compare(0, name.size(), name) == 0)
            return entry.substr(name.size() + 1);
    return std::nullopt;
}

constexpr std::size_t k_keep_bytes = 64 * 1024;  // stderr tail kept per child
using Clock = std::chrono::steady_clock;

void append_bounded(std::string& to, const char* data, std::size_t n) {
    to.append(data, n);
    if (to.size() > 2 * k_keep_bytes) to.erase(0, to.size() - k_keep_bytes);
}

std::string signal_name(int sig) {
    switch (sig) {
    case SIGABRT: return "SIGABRT";
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    default: return fmt::format("signal {}", sig);
    }
}

// The last line of stdout that parses as a JSON object: the worker's report.
std::optional<nlohmann::json> last_report(std::string_view out) {
    while (!out.empty()) {
        const auto end = out.find_last_not_of("\r\n");
        if (end == std::string_view::npos) break;
        out = out.substr(0, end + 1);
        const auto start = out.find_last_of('\n');
        const std::string_view line = start == std::string_view::npos ? out : out.substr(start + 1);
        auto parsed = nlohmann::json::parse(line, nullptr, false);
        if (!parsed.is_discarded() && parsed.is_object()) return parsed;
        if (start == std::string_view::npos) break;
        out = out.substr(0, start);
    }
    return std::nullopt;
}

// The most telling stderr line: a known crash text, else the last non-empty line.
std::string telling_line(std::string_view err) {
    static constexpr std::string_view k_markers[] = {"Memory access fault", "HW Exception", "HIP error", "MIOpen Error",
                                                     "MIOpen(HIP): Error", "hipError", "rocBLAS error", "Error:"};
    std::string last;
    std::size_t pos = 0;
    while (pos < err.size()) {
        auto nl = err.find('\n', pos);
        if (nl == std::string_view::npos) nl = err.size();
        std::string_view line = err.substr(pos, nl - pos);
        pos = nl + 1;
        if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
        for (const auto marker : k_markers)
            if (line.find(marker) != std::string_view::npos) return std::string(line.substr(0, 400));
        last = std::string(line.substr(0, 400));
    }
    return last;
}

}  // namespace

std::string_view outcome_name(Outcome o) {
    switch (o) {
    case Outcome::ok: return "ok";
    case Outcome::unsupported: return "unsupported";
    case Outcome::wrong: return "wrong";
    case Outcome::crash: return "crash";
    case Outcome::hang: return "hang";
    }
    return "crash";
}

Result<RunResult> classify_child(int wait_status, bool timed_out, std::string_view stdout_text,
                                 std::string_view stderr_text, const CrashClassifier& classify) {
    RunResult r;
    const auto report = last_report(stdout_text);
    if (report) r.report = *report;
    const std::string status = report ? report->value("status", "") : "";
    if (WIFEXITED(wait_status)) r.exit_code = WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status)) r.signal = WTERMSIG(wait_status);

    if (timed_out) {
        r.outcome = Outcome::hang;
        r.detail = "timed out";
        r.message = telling_line(stderr_text);
        return r;
    }
    if (r.signal != 0) {
        r.outcome = Outcome::crash;
        r.detail = signal_name(r.signal);
        r.message = telling_line(stderr_text);
    } else if (r.exit_code == 3 || status == "no_torch" || status == "no_device") {
        const std::string why = report ? report->value("message", status) : telling_line(stderr_text);
        return Error{"running the probe worker", "", why.empty() ? "exit status 3" : why, ExitCode::environment};
    } else if (r.exit_code == 2) {
        return Error{"running the probe worker", "",
                     fmt::format("it rejected its arguments: {}", telling_line(stderr_text)), ExitCode::environment};
    } else if (status == "ok" && r.exit_code == 0) {
        r.outcome = Outcome::ok;
        r.median_ms = report->value("median_ms", 0.0);
        r.detail = fmt::format("{:.3g} ms", r.median_ms);
        return r;
    } else if (status == "unsupported" && r.exit_code == 0) {
        r.outcome = Outcome::unsupported;
        r.message = report->value("message", "");
        r.detail = "unsupported on this device";
        return r;
    } else if (status == "wrong") {
        r.outcome = Outcome::wrong;
        r.message = report->value("message", "");
        r.detail = report->contains("error") && (*report)["error"].is_number()
                       ? fmt::format("error {:.3g} > {:g}", (*report)["error"].get<double>(),
                                     report->value("tolerance", 0.0))
                       : "non-finite result";
    } else {
        // An exception the worker reported (HIP/MIOpen errors surface as RuntimeError), or
        // an exit without a report: the interpreter died in a way we did not foresee.
        r.outcome = Outcome::crash;
        r.detail = status == "error" ? "error" : fmt::format("exit {}", r.exit_code);
        r.message = status == "error" ? report->value("message", "") : telling_line(stderr_text);
        if (const auto nl = r.message.find('\n'); nl != std::string::npos) r.message.resize(nl);
    }
    if (classify && r.outcome == Outcome::crash) {
        std::string text(stderr_text);
        if (status == "error") text += "\n" + report->value("message", "");
        r.kb_entry = classify(text);
    }
    return r;
}

Result<std::string> resolve_interpreter(const std::string& python, const std::string& path_env) {
    const auto executable = [](const std::string& p) { return ::access(p.c_str(), X_OK) == 0; };
    if (python.find('/') != std::string::npos) {
        if (executable(python)) return python;
        return Error{"starting the probe worker with", python, std::strerror(errno), ExitCode::environment};
    }
    std::size_t pos = 0;
    while (pos <= path_env.size()) {
        auto colon = path_env.find(':', pos);
        if (colon == std::string::npos) colon = path_env.size();
        std::string dir = path_env.substr(pos, colon - pos);
        if (dir.empty()) dir = ".";
        const std::string candidate = dir + "/" + python;
        if (executable(candidate)) return candidate;
        pos = colon + 1;
    }
    return Error{"starting the probe worker with", python, "not found in PATH", ExitCode::environment};
}

Result<RunResult> WorkerRunner::run(const Scenario& scenario, const EnvMap& env) {
    EnvMap changes = env;
    const auto old_path = env_value(m_options.base_env, "PYTHONPATH");
    if (!m_options.python_path.empty())
        changes["PYTHONPATH"] = old_path && !old_path->empty() ? m_options.python_path + ":" + *old_path
                                                               : m_options.python_path;
    const std::vector<std::string> argv = {m_options.python, "-m", "rmcp.worker", scenario_to_json(scenario).dump(),
                                           "--device", m_options.device, "--repeat", std::to_string(m_options.repeat),
                                           "--warmup", std::to_string(m_options.warmup)};

    rlimit saved{};
    const bool have_limit = ::getrlimit(RLIMIT_CORE, &saved) == 0;
    if (have_limit) {
        rlimit none = saved;
        none.rlim_cur = 0;
        ::setrlimit(RLIMIT_CORE, &none);
    }
    const auto started = Clock::now();
    auto child = spawn_worker(argv, with_changes(m_options.base_env, changes));
    if (have_limit) ::setrlimit(RLIMIT_CORE, &saved);
    if (!child) return child.error();

    std::string out, err;
    bool timed_out = false;
    const auto deadline = started + m_options.timeout;
    pollfd fds[2] = {{child->out_fd, POLLIN, 0}, {child->err_fd, POLLIN, 0}};
    int open_fds = 2;
    char buf[16384];
    while (open_fds > 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        const int n = ::poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000)));
        if (n < 0 && errno != EINTR) break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
            const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
            if (got > 0) {
                append_bounded(i == 0 ? out : err, buf, static_cast<std::size_t>(got));
            } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            }
        }
    }
    int status = 0;
    if (timed_out) {
        // A hung GPU kernel may ignore SIGTERM; the whole group goes, the worker first.
        ::kill(-child->pid, SIGTERM);
        for (int i = 0; i < 20 && ::waitpid(child->pid, &status, WNOHANG) == 0; ++i) ::usleep(50'000);
        ::kill(-child->pid, SIGKILL);
    }
    while (::waitpid(child->pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!timed_out) ::kill(-child->pid, SIGKILL);  // leftovers the worker started, if any
    for (auto& f : fds)
        if (f.fd >= 0) ::close(f.fd);

    auto result = classify_child(status, timed_out, out, err, m_options.classify);
    if (!result) return result;
    result->wall_s = std::chrono::duration<double>(Clock::now() - started).count();
    if (timed_out)
        result->detail = fmt::format("timed out after {:g} s",
                                     std::chrono::duration<double>(m_options.timeout).count());
    return result;
}

}  // namespace rmcp::probe
