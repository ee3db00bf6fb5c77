#include "run/incident.hpp"

#include "explain/diagnose.hpp"
#include "process/kernel_log.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>

namespace rmcp::run {

namespace {

using nlohmann::json;

std::string classify(const RunResult& result) {
    const Attempt& last = result.attempts.back();
    if (last.end == AttemptEnd::not_started) return "not-started";
    if (last.forwarded_signal != 0 || last.killed_after_interrupt) return "interrupted";
    if (last.stalled) return "stall";
    if (last.gpu_failure) return "gpu-failure";
    if (last.shell_code() != 0) return "failure";
    return result.incident() ? "recovered" : "success";
}

json attempt_json(const Attempt& a) {
    json env = json::object();
    for (const auto& change : a.rung.env) env[change.name] = change.value ? json(*change.value) : json(nullptr);
    json exit = json::object();
    if (a.end == AttemptEnd::signaled) {
        exit["signal"] = a.exit_status;
        exit["signal_name"] = signal_name(a.exit_status);
        exit["core_dumped"] = a.core_dumped;
    } else if (a.end == AttemptEnd::exited) {
        exit["code"] = a.exit_status;
    } else {
        exit["not_started"] = a.error;
    }
    json matches = json::array();
    for (const auto& m : a.matches)
        matches.push_back({{"id", m.first.entry_id},
                           {"category", m.first.category},
                           {"title", m.first.title},
                           {"severity", m.first.severity},
                           {"basis", m.first.basis},
                           {"gpu_failure", is_gpu_failure_category(m.first.category)},
                           {"stream", stream_name(m.first.stream)},
                           {"offset", m.first.end_offset},
                           {"line", m.first.line},
                           {"count", m.count}});
    json out = {{"number", a.number},
                {"profile", a.rung.profile.empty() ? json(nullptr) : json(a.rung.profile)},
                {"hide_gpu", a.rung.hide_gpu},
                {"env", env},
                {"started_at", iso_time(a.started)},
                {"duration_s", a.duration_s},
                {"pid", a.pid},
                {"exit", exit},
                {"exit_code", a.shell_code()},
                {"stalled", a.stalled},
                {"interrupted_by", a.forwarded_signal ? json(signal_name(a.forwarded_signal)) : json(nullptr)},
                {"killed_after_interrupt", a.killed_after_interrupt},
                {"ended_by_signal", a.ended_by_signal ? json(signal_name(a.ended_by_signal)) : json(nullptr)},
                {"background_processes", a.background_processes},
                {"bytes", {{"stdout", a.bytes_out}, {"stderr", a.bytes_err}}},
                {"gpu_failure", a.gpu_failure},
                {"matches", matches},
                {"excerpt", a.excerpt}};
    if (a.allocations) out["allocations"] = *a.allocations;
    return out;
}

}  // namespace

std::string signal_name(int sig) {
    if (const char* abbrev = ::sigabbrev_np(sig)) return std::string("SIG") + abbrev;
    return fmt::format("signal {}", sig);
}

std::string iso_time(std::chrono::system_clock::time_point t) {
    const auto secs = std::chrono::system_clock::to_time_t(t);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() % 1000;
    std::tm tm{};
    ::gmtime_r(&secs, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    return fmt::format("{}.{:03d}Z", buf, static_cast<int>(ms));
}

std::string default_report_path(std::chrono::system_clock::time_point when) {
    std::string base;
    if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state == '/') {
        base = state;
    } else {
        const char* home = std::getenv("HOME");
        base = std::string(home && *home ? home : "/tmp") + "/.local/state";
    }
    const auto secs = std::chrono::system_clock::to_time_t(when);
    std::tm tm{};
    ::gmtime_r(&secs, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    return fmt::format("{}/rmcp/incidents/{}-{}.json", base, stamp, ::getpid());
}

json relevant_facts(const json& facts) {
    json out = json::object();
    for (const char* key : {"gpus", "driver", "kfd", "rocm", "torch", "env", "schema_version"})
        if (facts.contains(key)) out[key] = facts[key];
    return out;
}

std::vector<std::string> incident_lines(const RunResult& result, const std::optional<KernelLogLines>& kernel_log) {
    std::vector<std::string> lines;
    for (const auto& a : result.attempts) {
        for (const auto& m : a.matches) lines.push_back(m.first.line);
        lines.insert(lines.end(), a.excerpt.begin(), a.excerpt.end());
    }
    if (kernel_log) lines.insert(lines.end(), kernel_log->lines.begin(), kernel_log->lines.end());
    return lines;
}

json incident_report(const RunResult& result, const ReportInputs& inputs) {
    json attempts = json::array();
    for (const auto& a : result.attempts) attempts.push_back(attempt_json(a));
    json report = {{"schema_version", k_report_schema_version},
                   {"kind", "rmcp-run-incident"},
                   {"command", inputs.command},
                   {"profile", inputs.requested_profile.empty() ? json(nullptr) : json(inputs.requested_profile)},
                   {"started_at", iso_time(result.started)},
                   {"duration_s", result.duration_s},
                   {"classification", classify(result)},
                   {"exit_code", result.exit_code},
                   {"log", inputs.log_path.empty() ? json(nullptr) : json(inputs.log_path)},
                   {"attempts", attempts}};
    report["facts"] = inputs.facts ? relevant_facts(*inputs.facts) : json(nullptr);
    report["similar"] = inputs.similar;
    if (inputs.kernel_log) {
        report["kernel_log"] = {{"source",
                                 inputs.kernel_log->source.empty() ? json(nullptr) : json(inputs.kernel_log->source)},
                                {"lines", inputs.kernel_log->lines}};
        if (!inputs.kernel_log->error.empty()) report["kernel_log"]["error"] = inputs.kernel_log->error;
        if (!inputs.kernel_log->cut.empty()) report["kernel_log"]["cut"] = inputs.kernel_log->cut;
    } else {
        report["kernel_log"] = nullptr;
    }
    return report;
}

namespace {

struct Recognised {
    const MatchSummary* match = nullptr;
    std::vector<unsigned> attempts;
};

// Every problem the failed attempts showed, once, specific entries first: an entry the first
// failed attempt shows comes before one a later attempt adds.
std::vector<Recognised> recognised_problems(const RunResult& result) {
    std::vector<Recognised> out;
    bool any_specific = false;
    for (const auto& a : result.attempts)
        if (a.gpu_failure)
            for (const auto* m : ranked_gpu_matches(a)) any_specific = any_specific || !m->first.family;
    for (const auto& a : result.attempts) {
        if (!a.gpu_failure) continue;
        for (const auto* m : ranked_gpu_matches(a)) {
            if (any_specific && m->first.family) continue;
            auto it = std::find_if(out.begin(), out.end(),
                                   [&](const Recognised& r) { return r.match->first.entry_id == m->first.entry_id; });
            if (it == out.end()) out.push_back({m, {a.number}});
            else it->attempts.push_back(a.number);
        }
    }
    return out;
}

std::string attempt_list(const std::vector<unsigned>& numbers, std::size_t failed) {
    if (numbers.size() == failed && failed > 1) return "every attempt";
    std::string out = numbers.size() == 1 ? "attempt " : "attempts ";
    for (std::size_t i = 0; i < numbers.size(); ++i) out += (i ? ", " : "") + std::to_string(numbers[i]);
    return out;
}

}  // namespace

std::string top_entry(const RunResult& result) {
    const auto problems = recognised_problems(result);
    return problems.empty() ? std::string() : problems.front().match->first.entry_id;
}

std::vector<std::string> summary_lines(const RunResult& result) {
    std::vector<std::string> lines;
    std::size_t failed = 0;
    for (const auto& a : result.attempts) {
        if (!a.gpu_failure) continue;
        ++failed;
        const std::string how = a.end == AttemptEnd::signaled
                                    ? fmt::format("killed by {} (exit {})", signal_name(a.exit_status), a.shell_code())
                                    : fmt::format("exit {}", a.exit_status);
        lines.push_back(fmt::format("attempt {} (profile {}): {}{}", a.number, rung_name(a.rung), how,
                                    a.stalled ? fmt::format(", stopped after no output (suspected GPU hang)") : ""));
    }
    std::vector<std::string> quoted;
    for (const auto& r : recognised_problems(result)) {
        const auto& m = r.match->first;
        // "recognised" (basis signature) or "likely" (family), in explain's words.
        const auto word = m.basis == explain::basis_name(explain::Basis::signature)
                              ? explain::basis_word(explain::Basis::signature)
                              : explain::basis_word(explain::Basis::family);
        lines.push_back(fmt::format("{} {} [{}]{}: {}", word, m.entry_id, m.category,
                                    failed > 1 ? " in " + attempt_list(r.attempts, failed) : std::string(), m.title));
        // The same line often answers several entries, and every attempt prints it again.
        if (!m.line.empty() && std::find(quoted.begin(), quoted.end(), m.line) == quoted.end()) {
            quoted.push_back(m.line);
            lines.push_back(fmt::format("  {}: {}", stream_name(m.stream), m.line));
        }
    }
    return lines;
}

KernelLogLines read_kernel_log_since(std::chrono::system_clock::time_point since,
                                     const process::CommandRunner& runner) {
    KernelLogLines log;
    auto read = process::read_kernel_log(runner, since);
    if (!read) {
        log.error = read.error().cause;
        return log;
    }
    log.source = read->tool;
    log.cut = read->cut;
    // The non-empty lines, as they are (a '\r' stays: the report quotes the kernel).
    const std::string& text = read->text;
    std::size_t start = 0;
    while (start < text.size()) {
        auto nl = text.find('\n', start);
        if (nl == std::string::npos) nl = text.size();
        if (nl > start) log.lines.push_back(text.substr(start, nl - start));
        start = nl + 1;
    }
    if (log.lines.size() > k_kernel_log_lines)
        log.lines.erase(log.lines.begin(), log.lines.end() - static_cast<std::ptrdiff_t>(k_kernel_log_lines));
    return log;
}

}  // namespace rmcp::run
