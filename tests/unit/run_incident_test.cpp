// The incident report of `rmcp run` (run/incident.cpp; docs/run.md "Incident report"): how a
// run is classified, what each attempt records, and the summary lines on stderr.
#include "run/incident.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>

namespace rmcp::run {
namespace {

Attempt faulted(unsigned number) {
    Attempt a;
    a.number = number;
    a.end = AttemptEnd::signaled;
    a.exit_status = SIGABRT;
    a.gpu_failure = true;
    WatchMatch m;
    m.entry_id = "gpu-memory-access-fault";
    m.category = "gpu-memory-fault";
    m.title = "Memory access fault by GPU";
    m.severity = "critical";
    m.basis = "signature";  // a specific entry: the summary says "recognised"
    m.stream = StreamId::err;
    m.line = "Memory access fault by GPU node-1 (Agent handle: 0x1) on address 0x7f. Reason: Page not present.";
    a.matches.push_back({m, 2});
    return a;
}

Attempt clean(unsigned number, const std::string& profile) {
    Attempt a;
    a.number = number;
    a.rung.profile = profile;
    a.rung.env = {{"HSA_OVERRIDE_GFX_VERSION", "10.3.0"}, {"PYTORCH_NO_CUDA_MEMORY_CACHING", std::nullopt}};
    return a;
}

TEST(RunIncident, AFailureThenASuccessIsRecovered) {
    RunResult r;
    r.attempts = {faulted(1), clean(2, "conservative")};
    EXPECT_TRUE(r.incident());
    ReportInputs in;
    in.command = {"python", "train.py"};
    in.requested_profile = "auto";
    const auto report = incident_report(r, in);
    EXPECT_EQ(report["kind"], "rmcp-run-incident");
    EXPECT_EQ(report["classification"], "recovered");
    EXPECT_EQ(report["profile"], "auto");
    EXPECT_TRUE(report["log"].is_null());
    EXPECT_TRUE(report["facts"].is_null());
    EXPECT_TRUE(report["kernel_log"].is_null());
    ASSERT_EQ(report["attempts"].size(), 2U);
    const auto& first = report["attempts"][0];
    EXPECT_EQ(first["exit"]["signal_name"], "SIGABRT");
    EXPECT_EQ(first["exit_code"], 128 + SIGABRT);
    EXPECT_TRUE(first["profile"].is_null());
    ASSERT_EQ(first["matches"].size(), 1U);
    EXPECT_EQ(first["matches"][0]["id"], "gpu-memory-access-fault");
    EXPECT_EQ(first["matches"][0]["count"], 2);
    EXPECT_EQ(first["matches"][0]["gpu_failure"], true);
    const auto& second = report["attempts"][1];
    EXPECT_EQ(second["profile"], "conservative");
    EXPECT_EQ(second["exit"]["code"], 0);
    EXPECT_EQ(second["env"]["HSA_OVERRIDE_GFX_VERSION"], "10.3.0");
    EXPECT_TRUE(second["env"]["PYTORCH_NO_CUDA_MEMORY_CACHING"].is_null());  // unset by the rung
}

TEST(RunIncident, ClassificationOfTheLastAttempt) {
    RunResult r;
    r.attempts = {clean(1, "")};
    EXPECT_EQ(incident_report(r, {})["classification"], "success");
    r.attempts = {faulted(1)};
    EXPECT_EQ(incident_report(r, {})["classification"], "gpu-failure");
    r.attempts.back().stalled = true;
    EXPECT_EQ(incident_report(r, {})["classification"], "stall");
    r.attempts.back().forwarded_signal = SIGINT;
    EXPECT_EQ(incident_report(r, {})["classification"], "interrupted");
    r.attempts = {clean(1, "")};
    r.attempts.back().exit_status = 3;
    EXPECT_EQ(incident_report(r, {})["classification"], "failure");
    r.attempts.back().end = AttemptEnd::not_started;
    r.attempts.back().error = "no such file";
    const auto report = incident_report(r, {});
    EXPECT_EQ(report["classification"], "not-started");
    EXPECT_EQ(report["attempts"][0]["exit"]["not_started"], "no such file");
}

TEST(RunIncident, SummaryNamesWhatDiedAndWhatWasRecognised) {
    RunResult r;
    r.attempts = {faulted(1), clean(2, "conservative")};
    EXPECT_EQ(summary_lines(r),
              (std::vector<std::string>{
                  "attempt 1 (profile default): killed by SIGABRT (exit 134)",
                  "recognised gpu-memory-access-fault [gpu-memory-fault]: Memory access fault by GPU",
                  "  stderr: Memory access fault by GPU node-1 (Agent handle: 0x1) on address 0x7f. Reason: Page "
                  "not present."}));
    EXPECT_EQ(top_entry(r), "gpu-memory-access-fault");
}

// The class of finding 10: across attempts and entries, a problem is listed once, a family
// entry only when no specific entry matched, a line quoted once.
TEST(RunIncident, SummaryRanksSpecificFirstAndSaysEachThingOnce) {
    auto with_family = [](unsigned n) {
        Attempt a = faulted(n);
        WatchMatch family = a.matches.front().first;
        family.entry_id = "family-hsa-status-error";
        family.category = "hsa-runtime-error";
        family.title = "ROCm runtime (HSA) error";
        family.family = true;
        family.basis = "family";
        a.matches.insert(a.matches.begin(), {family, 1});  // seen first in the output
        return a;
    };
    RunResult r;
    r.attempts = {with_family(1), with_family(2)};
    r.attempts[1].rung.profile = "miopen-no-gemm";
    EXPECT_EQ(first_gpu_match(r.attempts[0]), "gpu-memory-access-fault");
    EXPECT_EQ(summary_lines(r),
              (std::vector<std::string>{
                  "attempt 1 (profile default): killed by SIGABRT (exit 134)",
                  "attempt 2 (profile miopen-no-gemm): killed by SIGABRT (exit 134)",
                  "recognised gpu-memory-access-fault [gpu-memory-fault] in every attempt: Memory access fault by GPU",
                  "  stderr: Memory access fault by GPU node-1 (Agent handle: 0x1) on address 0x7f. Reason: Page "
                  "not present."}));
    // Only a family entry: it is named (something is better than nothing).
    RunResult only_family;
    only_family.attempts = {with_family(1)};
    only_family.attempts[0].matches.pop_back();
    EXPECT_EQ(first_gpu_match(only_family.attempts[0]), "family-hsa-status-error");
    EXPECT_EQ(top_entry(only_family), "family-hsa-status-error");
    // ... in explain's words for its basis: "likely", never "recognised" (docs/explain.md, "Basis").
    EXPECT_EQ(summary_lines(only_family).at(1),
              "likely family-hsa-status-error [hsa-runtime-error]: ROCm runtime (HSA) error");
}

TEST(RunIncident, KernelLogAndFactsWhenGiven) {
    RunResult r;
    r.attempts = {faulted(1)};
    ReportInputs in;
    in.log_path = "/tmp/run.log";
    in.kernel_log = KernelLogLines{"dmesg", {"amdgpu: page fault"}, ""};
    const auto report = incident_report(r, in);
    EXPECT_EQ(report["log"], "/tmp/run.log");
    EXPECT_EQ(report["kernel_log"]["source"], "dmesg");
    EXPECT_EQ(report["kernel_log"]["lines"], nlohmann::json::array({"amdgpu: page fault"}));
    EXPECT_FALSE(report["kernel_log"].contains("error"));
}

TEST(RunIncident, DefaultReportPathIsUnderTheStateDirectory) {
    const char* old = std::getenv("XDG_STATE_HOME");
    const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
    ::setenv("XDG_STATE_HOME", "/state", 1);
    const auto path = default_report_path(std::chrono::system_clock::from_time_t(0));
    EXPECT_EQ(path.rfind("/state/rmcp/incidents/19700101T000000Z-", 0), 0U) << path;
    EXPECT_TRUE(path.ends_with(".json"));
    if (saved) ::setenv("XDG_STATE_HOME", saved->c_str(), 1);
    else ::unsetenv("XDG_STATE_HOME");
}

}  // namespace
}  // namespace rmcp::run
