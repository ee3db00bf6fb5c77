// run/command.cpp (`rmcp run` as one call): the time options' checks, the attempt plan a
// --dry-run returns (no profile, the ladder climbed from --profile, `auto`, the user's
// profile.env and profiles read through the root), its errors, --trace-alloc's library
// lookup, and real short children: their exit status, and the report written with --report.
// The relay, signals and stalls are in run_supervisor_test.cpp and tests/cli/test_run.py.
#include "run/command.hpp"

#include "captured_output.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <unistd.h>

namespace rmcp::run {
namespace {

namespace fs = std::filesystem;

const fs::path k_source(RMCP_SOURCE_DIR);

// A small ladder of our own: base (rank 0, no changes), one, two, and a GPU-hiding cpu rung.
constexpr const char* k_profiles[][2] = {
    {"00-base.toml", "name = \"base\"\nrank = 0\ndescription = \"d\"\ncost = \"none\"\n"},
    {"10-one.toml", "name = \"one\"\nrank = 10\ndescription = \"d\"\ncost = \"c\"\n[set]\nONE = \"1\"\n"},
    {"20-two.toml", "name = \"two\"\nrank = 20\nextends = \"one\"\ndescription = \"d\"\ncost = \"c\"\nunset = "
                    "[\"GONE\"]\n[set]\nTWO = "
                    "\"2\"\n"},
    {"60-cpu.toml",
     "name = \"cpu\"\nrank = 60\ndescription = \"d\"\ncost = \"c\"\nhide_gpu = true\n[set]\nHIP_VISIBLE_DEVICES = "
     "\"\"\n"},
};

class RunCommand : public ::testing::Test {
protected:
    void SetUp() override {
        fs::create_directories(m_dir / "root");
        fs::create_directories(m_dir / "data" / "profiles");
        fs::create_directories(m_dir / "state");
        for (const auto& [name, text] : k_profiles) write(m_dir / "data" / "profiles" / name, text);
        // profile.env and the user's profiles are read inside the root: /cfg is m_dir/root/cfg.
        ::setenv("XDG_CONFIG_HOME", "/cfg", 1);
        // Where an incident report would go by default: never the real state directory.
        ::setenv("XDG_STATE_HOME", (m_dir / "state").c_str(), 1);
        ::unsetenv("RMCP_PRELOAD_LIB");
        ASSERT_NE(m_diag.file(), nullptr);
    }

    static void write(const fs::path& path, const std::string& text) {
        fs::create_directories(path.parent_path());
        std::ofstream(path) << text;
    }

    CommandRequest request(std::vector<std::string> command = {"/bin/true"}) {
        CommandRequest r;
        r.command = std::move(command);
        r.data_dir = m_dir / "data";
        r.kb_dir = k_source / "kb";
        r.open_root = [this] {
            ++m_roots_opened;
            return Root::open(m_root_dir.empty() ? m_dir / "root" : m_root_dir);
        };
        r.json_text = [](const nlohmann::json& j) { return j.dump(2); };
        return r;
    }

    Result<CommandOutcome> run(const CommandRequest& r) {
        Diagnostics diag(m_diag.file(), Verbosity::verbose);
        return run_command(r, diag);
    }

    std::string diagnostics() { return m_diag.text(); }

    // The plan a dry run returns; fails the test on an error.
    std::vector<Rung> plan(CommandRequest r) {
        r.dry_run = true;
        auto out = run(r);
        EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message());
        if (!out.ok()) return {};
        EXPECT_EQ(out->exit_code, 0);
        EXPECT_TRUE(out->planned.has_value());
        return out->planned.value_or(std::vector<Rung>{});
    }

    static std::vector<std::string> names(const std::vector<Rung>& plan) {
        std::vector<std::string> out;
        for (const auto& r : plan) out.push_back(r.profile + (r.hide_gpu ? "+cpu" : ""));
        return out;
    }
    // A rung's edits as "NAME=value" or "-NAME" (unset), in order.
    static std::vector<std::string> edits(const Rung& rung) {
        std::vector<std::string> out;
        for (const auto& e : rung.env) out.push_back(e.value ? e.name + "=" + *e.value : "-" + e.name);
        return out;
    }

    testing_support::ScratchDir m_scratch{"run-command"};
    fs::path m_dir = m_scratch.path();
    fs::path m_root_dir;  // "" : m_dir/root
    int m_roots_opened = 0;
    testing_support::CapturedStream m_diag;
    testing_support::SavedEnvironment m_saved_env{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "RMCP_PRELOAD_LIB"};
};

// ---- time options --------------------------------------------------------------------

TEST_F(RunCommand, BadTimeOptionsAreUsageErrorsBeforeAnythingIsOpened) {
    auto r = request();
    r.dry_run = true;
    r.stall_timeout = "abc";
    auto out = run(r);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().code, ExitCode::usage);
    EXPECT_EQ(out.error().doing, "parsing --stall-timeout");
    EXPECT_EQ(out.error().path, "abc");
    EXPECT_FALSE(out.error().cause.empty());
    r.stall_timeout = "10";
    for (const char* bad : {"-1", "1e10", "inf", "nan", "5s"}) {
        r.kill_grace = bad;
        out = run(r);
        ASSERT_FALSE(out.ok()) << bad;
        EXPECT_EQ(out.error().code, ExitCode::usage) << bad;
        EXPECT_EQ(out.error().doing, "parsing --kill-grace") << bad;
        EXPECT_EQ(out.error().path, bad);
    }
    EXPECT_EQ(m_roots_opened, 0);
    r.kill_grace = "0.5";
    EXPECT_TRUE(run(r).ok());
    EXPECT_EQ(m_roots_opened, 1);
}

TEST_F(RunCommand, ARootThatCannotBeOpenedIsTheError) {
    m_root_dir = m_dir / "no-such-root";
    auto r = request();
    r.dry_run = true;
    const auto out = run(r);
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.error().message().find("no-such-root"), std::string::npos) << out.error().message();
}

// ---- the plan ------------------------------------------------------------------------

TEST_F(RunCommand, WithoutProfileOrRetriesOneAttemptInTheEnvironmentAsItIs) {
    const auto p = plan(request());
    ASSERT_EQ(p.size(), 1U);
    EXPECT_EQ(p[0].profile, "");
    EXPECT_FALSE(p[0].hide_gpu);
    EXPECT_TRUE(p[0].env.empty());
}

TEST_F(RunCommand, ProfileEnvIsReadInsideTheRootAndAppliedUnsetFirst) {
    write(m_dir / "root" / "cfg" / "rmcp" / "profile.env",
          "# written by rmcp patch apply\nexport HSA_OVERRIDE_GFX_VERSION=10.3.0\nunset MIOPEN_FIND_MODE\n");
    auto p = plan(request());
    ASSERT_EQ(p.size(), 1U);
    EXPECT_EQ(edits(p[0]), (std::vector<std::string>{"-MIOPEN_FIND_MODE", "HSA_OVERRIDE_GFX_VERSION=10.3.0"}));
    // Under a profile the user's file comes first, then the profile's own changes.
    auto r = request();
    r.profile = "two";
    p = plan(r);
    ASSERT_EQ(p.size(), 1U);
    EXPECT_EQ(p[0].profile, "two");
    EXPECT_EQ(edits(p[0]), (std::vector<std::string>{"-MIOPEN_FIND_MODE", "HSA_OVERRIDE_GFX_VERSION=10.3.0", "-GONE",
                                                     "ONE=1", "TWO=2"}));
}

TEST_F(RunCommand, AMalformedProfileEnvIsAnErrorNamingTheFileAndLine) {
    write(m_dir / "root" / "cfg" / "rmcp" / "profile.env", "export OK=1\nexport 'unterminated\n");
    auto r = request();
    r.dry_run = true;
    const auto out = run(r);
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.error().path.find((m_dir / "root" / "cfg" / "rmcp" / "profile.env").string() + ":2"),
              std::string::npos)
        << out.error().message();
}

TEST_F(RunCommand, RetriesClimbTheLadderFromTheFirstRungOrTheNamedProfile) {
    auto r = request();
    r.retries = 1;
    EXPECT_EQ(names(plan(r)), (std::vector<std::string>{"base", "one"}));
    r.retries = 10;  // never the GPU-hiding rung without --fallback cpu
    EXPECT_EQ(names(plan(r)), (std::vector<std::string>{"base", "one", "two"}));
    r.profile = "one";
    r.retries = 1;
    const auto p = plan(r);
    EXPECT_EQ(names(p), (std::vector<std::string>{"one", "two"}));
    ASSERT_EQ(p.size(), 2U);
    EXPECT_EQ(edits(p[0]), (std::vector<std::string>{"ONE=1"}));
    EXPECT_EQ(edits(p[1]), (std::vector<std::string>{"-GONE", "ONE=1", "TWO=2"}));
}

TEST_F(RunCommand, FallbackCpuMakesTheLastAttemptHideTheGpu) {
    auto r = request();
    r.profile = "one";
    r.retries = 5;
    r.fallback = "cpu";
    const auto p = plan(r);
    EXPECT_EQ(names(p), (std::vector<std::string>{"one", "two", "cpu+cpu"}));
    ASSERT_FALSE(p.empty());
    EXPECT_EQ(edits(p.back()), (std::vector<std::string>{"HIP_VISIBLE_DEVICES="}));
}

TEST_F(RunCommand, AnUnknownProfileIsAUsageErrorListingTheKnownOnes) {
    auto r = request();
    r.dry_run = true;
    r.profile = "nope";
    const auto out = run(r);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().code, ExitCode::usage);
    EXPECT_EQ(out.error().message(), "choosing profile nope: no such profile (known: base, one, two, cpu, auto)");
}

TEST_F(RunCommand, AnEmptyOrMissingProfilesDirectoryIsAnError) {
    fs::remove_all(m_dir / "data" / "profiles");
    fs::create_directories(m_dir / "data" / "profiles");
    auto r = request();
    r.dry_run = true;
    r.retries = 1;
    auto out = run(r);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().code, ExitCode::usage);
    EXPECT_EQ(out.error().message(),
              "choosing profile " + (m_dir / "data" / "profiles").string() + ": no profiles defined");
    fs::remove_all(m_dir / "data" / "profiles");
    out = run(r);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().doing, "reading profile directory");
    // Without a profile or a retry the profiles are never read.
    r.retries = 0;
    EXPECT_TRUE(run(r).ok());
}

TEST_F(RunCommand, AUserProfileInsideTheRootIsOnTheLadder) {
    write(m_dir / "root" / "cfg" / "rmcp" / "profiles" / "probed.toml",
          "name = \"probed\"\nrank = 15\ndescription = \"saved by rmcp probe\"\ncost = \"c\"\n[set]\nPROBED = \"1\"\n");
    auto r = request();
    r.profile = "probed";
    r.retries = 1;
    const auto p = plan(r);
    EXPECT_EQ(names(p), (std::vector<std::string>{"probed", "two"}));
    ASSERT_FALSE(p.empty());
    EXPECT_EQ(edits(p[0]), (std::vector<std::string>{"PROBED=1"}));
}

TEST_F(RunCommand, AutoOnAMachineWithoutAnAmdGpuChangesNothing) {
    // The shipped data (profiles, rules/auto.toml, patches) and a fixture root.
    m_root_dir = k_source / "tests" / "fixtures" / "no-amdgpu";
    auto r = request();
    r.data_dir = k_source;
    r.profile = "auto";
    const auto p = plan(r);
    ASSERT_EQ(p.size(), 1U);
    EXPECT_EQ(p[0].profile, "default");
    EXPECT_FALSE(p[0].hide_gpu);  // KB audit 2: never hide GPUs rmcp does not manage
    EXPECT_NE(diagnostics().find("detect found no AMD GPU with a known target"), std::string::npos) << diagnostics();
}

TEST_F(RunCommand, TraceAllocNeedsThePreloadLibrary) {
    auto r = request();
    r.dry_run = true;
    r.trace_alloc = true;
    r.executable_dir = m_dir / "bin";
    r.installed_library_dir = m_dir / "lib";
    auto out = run(r);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().code, ExitCode::environment);
    EXPECT_EQ(out.error().message(),
              "finding allocation tracer librmcp_preload.so: not next to the rmcp binary nor at " +
                  (m_dir / "lib" / "librmcp_preload.so").string() + " (set RMCP_PRELOAD_LIB)");
    // Found in the installed directory, or next to the binary.
    write(m_dir / "lib" / "librmcp_preload.so", "");
    EXPECT_TRUE(run(r).ok());
    // $RMCP_PRELOAD_LIB wins, and must be readable.
    const std::string missing = (m_dir / "elsewhere.so").string();
    ::setenv("RMCP_PRELOAD_LIB", missing.c_str(), 1);
    out = run(r);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().message(), "finding allocation tracer " + missing + ": " + std::strerror(ENOENT));
}

// ---- real children -------------------------------------------------------------------

TEST_F(RunCommand, TheChildsExitStatusIsTheOutcome) {
    auto out = run(request({"/bin/true"}));
    ASSERT_TRUE(out.ok()) << out.error().message();
    EXPECT_EQ(out->exit_code, 0);
    EXPECT_FALSE(out->planned.has_value());
    out = run(request({"/bin/sh", "-c", "exit 3"}));
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out->exit_code, 3);
    // A signal is 128 + its number, as a shell says.
    out = run(request({"/bin/sh", "-c", "kill -TERM $$"}));
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out->exit_code, 128 + SIGTERM);
    // A command that cannot start: 127.
    out = run(request({(m_dir / "no-such-command").string()}));
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out->exit_code, 127);
    // No incident, no --report: no report anywhere.
    EXPECT_TRUE(fs::is_empty(m_dir / "state"));
}

TEST_F(RunCommand, ADryRunStartsNothing) {
    const fs::path marker = m_dir / "ran";
    auto r = request({"/bin/sh", "-c", "touch " + marker.string()});
    const auto p = plan(r);
    EXPECT_EQ(p.size(), 1U);
    EXPECT_FALSE(fs::exists(marker));
    r.dry_run = false;
    ASSERT_TRUE(run(r).ok());
    EXPECT_TRUE(fs::exists(marker));
}

TEST_F(RunCommand, ReportWritesTheRunsJsonEvenWithoutAnIncident) {
    auto r = request({"/bin/sh", "-c", "exit 3"});
    r.report = (m_dir / "reports" / "run.json").string();  // its directory is made
    r.profile = "one";
    const auto out = run(r);
    ASSERT_TRUE(out.ok()) << out.error().message();
    EXPECT_EQ(out->exit_code, 3);
    std::ifstream in(r.report);
    ASSERT_TRUE(in.good()) << diagnostics();
    std::stringstream text;
    text << in.rdbuf();
    const auto report = nlohmann::json::parse(text.str(), nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << text.str();
    EXPECT_EQ(report["command"], (nlohmann::json{"/bin/sh", "-c", "exit 3"}));
    EXPECT_EQ(report["profile"], "one");
    EXPECT_EQ(report["exit_code"], 3);
    EXPECT_TRUE(fs::is_empty(m_dir / "state"));
    // Not an incident: no "incident report:" note.
    EXPECT_EQ(diagnostics().find("incident report:"), std::string::npos) << diagnostics();
}

}  // namespace
}  // namespace rmcp::run
