#include "probe/runner.hpp"

#include "probe/worker_protocol.hpp"
#include "process/spawn.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rmcp::probe {

namespace {

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
    static constexpr std::string_view k_markers[] = {"Memory access fault", "HW Exception",
                                                     "HIP error",           "MIOpen Error",
                                                     "MIOpen(HIP): Error",  "hipError",
                                                     "rocBLAS error",       "Error:"};
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

Result<ScenarioResult> classify_child(int wait_status, bool timed_out, std::string_view stdout_text,
                                      std::string_view stderr_text, const CrashClassifier& classify) {
    ScenarioResult r;
    const auto report = last_report(stdout_text);
    // Typed before use: a field of the wrong type was an uncaught exception (D12).
    if (report)
        if (const auto why = protocol::child_report_problem(*report); !why.empty())
            return Error{"reading the probe worker's report", "", why, ExitCode::environment};
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
        r.detail =
            report->contains("error") && (*report)["error"].is_number()
                ? fmt::format("error {:.3g} > {:g}", (*report)["error"].get<double>(), report->value("tolerance", 0.0))
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
    // access(X_OK) alone is true for a directory (its search permission): a directory named
    // python3 earlier in PATH would be chosen and fail later as "Permission denied". The
    // shell's PATH search (POSIX 2.9.1.1, "Command Search and Execution") skips what it
    // cannot execute, so only regular files count.
    const auto executable = [](const std::string& p) {
        struct stat st {};
        if (::stat(p.c_str(), &st) != 0) return false;
        if (!S_ISREG(st.st_mode)) {
            errno = S_ISDIR(st.st_mode) ? EISDIR : EACCES;
            return false;
        }
        return ::access(p.c_str(), X_OK) == 0;
    };
    if (python.find('/') != std::string::npos) {
        if (executable(python)) return python;
        return os_error("starting the probe worker with", python, errno);
    }
    std::size_t pos = 0;
    while (pos <= path_env.size()) {
        auto colon = path_env.find(':', pos);
        if (colon == std::string::npos) colon = path_env.size();
        // An empty PATH entry is the current directory. (Built in one expression: assigning "."
        // afterwards trips GCC 12's -Wstringop-overflow false positive at -O2.)
        const std::string dir = colon > pos ? path_env.substr(pos, colon - pos) : std::string(".");
        const std::string candidate = dir + "/" + python;
        if (executable(candidate)) return candidate;
        pos = colon + 1;
    }
    return Error{"starting the probe worker with", python, "not found in PATH", ExitCode::environment};
}

struct ZygoteRunner::Server {
    EnvMap import_env;
    std::unique_ptr<ForkServer> server;
};

ZygoteRunner::ZygoteRunner(WorkerOptions options) : m_options(std::move(options)) {
    EnvMap changes;
    const auto old_path = process::env_value(m_options.base_env, "PYTHONPATH");
    if (!m_options.python_path.empty())
        changes["PYTHONPATH"] =
            old_path && !old_path->empty() ? m_options.python_path + ":" + *old_path : m_options.python_path;
    m_env = with_changes(m_options.base_env, changes);
}

ZygoteRunner::~ZygoteRunner() = default;

Result<ForkServer*> ZygoteRunner::server_for(const EnvMap& import_env) {
    for (auto it = m_servers.begin(); it != m_servers.end(); ++it) {
        if ((*it)->import_env != import_env) continue;
        if (!(*it)->server->alive()) {
            m_servers.erase(it);
            break;
        }
        std::rotate(it, it + 1, m_servers.end());  // most recently used last
        return m_servers.back()->server.get();
    }
    // Each fork server holds an imported torch (hundreds of MB): keep a few.
    constexpr std::size_t k_max_servers = 3;
    if (m_servers.size() >= k_max_servers) m_servers.erase(m_servers.begin());
    ForkServerOptions fo;
    fo.python = m_options.python;
    fo.env = with_changes(m_env, import_env);
    fo.handshake_timeout = m_options.handshake_timeout;
    // Importing torch (and, on a GPU, initialising ROCm) is no scenario: a --timeout short enough
    // to call a scenario hung must not fail the import on a slow or loaded machine.
    constexpr std::chrono::milliseconds k_min_import_timeout = std::chrono::seconds(60);
    fo.import_timeout = std::max(m_options.timeout, k_min_import_timeout);
    auto started = ForkServer::start(fo);
    if (!started) return started.error();
    ++m_started;
    m_servers.push_back(std::make_unique<Server>(Server{import_env, std::move(*started)}));
    return m_servers.back()->server.get();
}

Result<Handshake> ZygoteRunner::start() {
    auto server = server_for({});
    if (!server) return server.error();
    return (*server)->handshake();
}

Result<ChildRun> ZygoteRunner::run_child(const EnvMap& import_env, const nlohmann::json& request,
                                         const std::string& what) {
    for (;;) {
        auto server = server_for(import_env);
        if (!server) return server.error();
        auto child = (*server)->run_child(request, m_options.timeout);
        if (!child) return child.error();
        if (!child->server_died) return child;
        const std::string death = (*server)->death();
        m_servers.erase(std::find_if(m_servers.begin(), m_servers.end(),
                                     [&](const auto& s) { return s->server.get() == *server; }));
        if (m_restarts_left == 0)
            return Error{"running the probe's fork server with", m_options.python,
                         fmt::format("it died a second time ({}), during {}", death.empty() ? "no status" : death,
                                     what),
                         ExitCode::environment};
        --m_restarts_left;
        ++m_restarts;
        if (m_options.notice)
            m_options.notice(fmt::format("the probe's fork server died ({}) during {}; restarted once, {} runs again",
                                         death.empty() ? "no status" : death, what, what));
    }
}

Result<DeviceQuery> ZygoteRunner::query_device() {
    auto child = run_child({}, {{"op", "device"}}, "the device check");
    if (!child) return child.error();
    const auto report = last_report(child->out);
    if (report)
        if (const auto why = protocol::child_report_problem(*report); !why.empty())
            return Error{"asking torch for a GPU with", m_options.python, "its report: " + why, ExitCode::environment};
    if (child->timed_out || !report || report->value("status", "") != "device") {
        const std::string why = child->timed_out                  ? "it hung"
                                : WIFSIGNALED(child->wait_status) ? signal_name(WTERMSIG(child->wait_status))
                                                                  : "no answer";
        const std::string line = telling_line(child->err);
        return Error{"asking torch for a GPU with", m_options.python, why + (line.empty() ? "" : ": " + line),
                     ExitCode::environment};
    }
    DeviceQuery q;
    q.available = report->value("available", false);
    q.count = report->value("count", 0);
    q.name = report->value("name", "");
    q.gfx_target = report->value("gfx_target", "");
    q.message = report->value("message", "");
    return q;
}

Result<ScenarioResult> ZygoteRunner::run(const Scenario& scenario, const EnvMap& env) {
    EnvMap import_env;
    for (const auto& name : m_options.import_time)
        if (const auto it = env.find(name); it != env.end()) import_env.insert(*it);
    const nlohmann::json request = {{"op", "run"},
                                    {"scenario", scenario_to_json(scenario)},
                                    {"env", env},
                                    {"device", m_options.device},
                                    {"repeat", m_options.repeat},
                                    {"warmup", m_options.warmup},
                                    {"report_env", m_options.report_env}};
    auto child = run_child(import_env, request, scenario.id);
    if (!child) return child.error();
    auto result = classify_child(child->wait_status, child->timed_out, child->out, child->err, m_options.classify);
    if (!result) return result;
    result->wall_s = child->wall_s;
    if (child->timed_out)
        result->detail =
            fmt::format("timed out after {:g} s", std::chrono::duration<double>(m_options.timeout).count());
    return result;
}

}  // namespace rmcp::probe
