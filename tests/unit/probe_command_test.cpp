// probe/command.cpp's steps that need no Python with torch: the request checks run_probe
// makes before it starts a fork server (device, timeout, output paths, --save's default
// place, catalogue, scenarios, interpreter), a fork server whose interpreter ends without
// answering, check_output_path, and load_saved_result (`rmcp probe report`). Errors are
// checked as the CLI prints them (Error::message) with their exit codes (docs/exit-codes.md).
// The probe's runs with the real worker are in tests/cli/test_probe.py.
#include "probe/command.hpp"

#include <fmt/format.h>
#include "captured_output.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <unistd.h>

namespace rmcp::probe {
namespace {

namespace fs = std::filesystem;

const fs::path k_source(RMCP_SOURCE_DIR);

class ProbeCommand : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_NE(m_diag.file(), nullptr); }
    void TearDown() override { fs::permissions(m_dir, fs::perms::owner_all, fs::perm_options::add); }

    // A request that would pass every check up to the interpreter, which does not exist.
    ProbeRequest request() const {
        ProbeRequest r;
        r.python = (m_dir / "no-such-python").string();
        r.data_dir = k_source;
        r.kb_dir = k_source / "kb";
        r.timeout_s = 5;
        r.json_text = [](const nlohmann::json& j) { return j.dump(); };
        return r;
    }

    Result<ProbeOutcome> run(const ProbeRequest& r) {
        Diagnostics diag(m_diag.file(), Verbosity::verbose);
        return run_probe(r, diag);
    }

    std::string diagnostics() { return m_diag.text(); }

    // An executable sh script standing in for the interpreter.
    std::string fake_python(const std::string& body) const {
        const fs::path path = m_dir / "python3";
        std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
        fs::permissions(path, fs::perms::owner_all);
        return path.string();
    }

    testing_support::ScratchDir m_scratch{"probe-command"};
    fs::path m_dir = m_scratch.path();
    testing_support::CapturedStream m_diag;
    testing_support::SavedEnvironment m_saved_env{"RMCP_PYTHON", "XDG_CONFIG_HOME"};
};

// ---- check_output_path ----------------------------------------------------------------

TEST_F(ProbeCommand, AFileInAWritableDirectoryIsAccepted) {
    EXPECT_TRUE(check_output_path("--save", (m_dir / "probed.toml").string()).ok());
    // It need not exist yet, and an existing one is replaced later.
    std::ofstream(m_dir / "old.json") << "{}";
    EXPECT_TRUE(check_output_path("--html", (m_dir / "old.json").string()).ok());
    // `..` is resolved lexically.
    fs::create_directories(m_dir / "sub");
    EXPECT_TRUE(check_output_path("--save", (m_dir / "sub" / ".." / "p.toml").string()).ok());
}

TEST_F(ProbeCommand, ADirectoryIsNotAnOutputFile) {
    const std::string dir = m_dir.string();
    const auto s = check_output_path("--html", dir);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, ExitCode::usage);
    EXPECT_EQ(s.error().message(), "checking --html " + dir + ": is a directory; name a file");
    EXPECT_FALSE(check_output_path("--html", dir + "/").ok());
}

TEST_F(ProbeCommand, AMissingDirectoryIsAUsageErrorNamingIt) {
    const std::string file = (m_dir / "missing" / "probed.toml").string();
    const auto s = check_output_path("--save", file);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, ExitCode::usage);
    EXPECT_EQ(s.error().message(),
              "checking --save " + file + ": directory " + (m_dir / "missing").string() + " does not exist");
    // A file where the directory should be is no directory either.
    std::ofstream(m_dir / "plain") << "x";
    EXPECT_EQ(check_output_path("--save", (m_dir / "plain" / "p.toml").string()).error().code, ExitCode::usage);
}

TEST_F(ProbeCommand, AnUnwritableDirectoryIsAnEnvironmentError) {
    if (::geteuid() == 0) GTEST_SKIP() << "root writes into any directory";
    fs::create_directories(m_dir / "ro");
    fs::permissions(m_dir / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    const std::string file = (m_dir / "ro" / "probed.toml").string();
    const auto s = check_output_path("--save", file);
    fs::permissions(m_dir / "ro", fs::perms::owner_all);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, ExitCode::environment);
    EXPECT_EQ(s.error().message(),
              "checking --save " + file + ": directory " + (m_dir / "ro").string() + ": " + std::strerror(EACCES));
}

// ---- run_probe: what it refuses before a fork server starts ----------------------------

TEST_F(ProbeCommand, AnUnknownDeviceIsAUsageError) {
    for (const char* device : {"gpu", "rocm", "CPU", "hip:0"}) {
        auto r = request();
        r.device = device;
        const auto out = run(r);
        ASSERT_FALSE(out.ok()) << device;
        EXPECT_EQ(out.error().code, ExitCode::usage) << device;
        EXPECT_EQ(out.error().message(),
                  fmt::format("choosing device {}: use auto, cpu or cuda (ROCm builds call the GPU cuda)", device));
    }
    // auto, cpu and cuda (with an index) pass this check: the missing interpreter stops them.
    for (const char* device : {"auto", "cpu", "cuda", "cuda:1"}) {
        auto r = request();
        r.device = device;
        const auto out = run(r);
        ASSERT_FALSE(out.ok()) << device;
        EXPECT_EQ(out.error().doing, "starting the probe worker with") << device;
    }
}

TEST_F(ProbeCommand, TheTimeoutMustBePositiveAndAtMostThirtyDays) {
    for (const double t : {0.0, -1.0, 30 * 24 * 3600.0 + 1, std::nan(""), HUGE_VAL}) {
        auto r = request();
        r.timeout_s = t;
        const auto out = run(r);
        ASSERT_FALSE(out.ok()) << t;
        EXPECT_EQ(out.error().code, ExitCode::usage) << t;
        EXPECT_EQ(out.error().message(), "setting --timeout: must be a positive number of seconds, at most 30 days");
    }
    auto r = request();
    r.timeout_s = 30 * 24 * 3600.0;
    EXPECT_EQ(run(r).error().doing, "starting the probe worker with");  // past the check
}

TEST_F(ProbeCommand, SaveAndHtmlPathsAreCheckedBeforeTheProbeStarts) {
    auto r = request();
    r.save = (m_dir / "missing" / "probed.toml").string();
    r.html = (m_dir / "missing" / "page.html").string();
    auto out = run(r);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().doing, "checking --save");  // --save first
    EXPECT_EQ(out.error().code, ExitCode::usage);
    r.save = (m_dir / "probed.toml").string();
    out = run(r);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().doing, "checking --html");
    EXPECT_EQ(out.error().path, r.html);
    // The request is checked before the catalogue is read.
    r.catalogue = (m_dir / "no-catalogue.toml").string();
    EXPECT_EQ(run(r).error().doing, "checking --html");
}

TEST_F(ProbeCommand, SaveWithoutAFileGoesToTheUserProfilesDirectory) {
    ::setenv("XDG_CONFIG_HOME", (m_dir / "config").c_str(), 1);
    auto r = request();
    r.save_to_default = true;
    const auto out = run(r);  // stopped later by the missing interpreter
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().doing, "starting the probe worker with");
    EXPECT_TRUE(fs::is_directory(m_dir / "config" / "rmcp" / "profiles"));
    // A FILE given with it wins: no directory is made.
    ::setenv("XDG_CONFIG_HOME", (m_dir / "config2").c_str(), 1);
    r.save = (m_dir / "mine.toml").string();
    EXPECT_EQ(run(r).error().doing, "starting the probe worker with");
    EXPECT_FALSE(fs::exists(m_dir / "config2"));
}

TEST_F(ProbeCommand, AProfilesDirectoryThatCannotBeMadeIsAnEnvironmentError) {
    std::ofstream(m_dir / "config") << "a file, not a directory";
    ::setenv("XDG_CONFIG_HOME", (m_dir / "config").c_str(), 1);
    auto r = request();
    r.save_to_default = true;
    const auto out = run(r);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().code, ExitCode::environment);
    EXPECT_EQ(out.error().doing, "creating the profiles directory");
    EXPECT_EQ(out.error().path, (m_dir / "config" / "rmcp" / "profiles").string());
}

TEST_F(ProbeCommand, AMissingCatalogueOrUnknownScenarioIsAUsageError) {
    auto r = request();
    r.catalogue = (m_dir / "no-catalogue.toml").string();
    auto out = run(r);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().code, ExitCode::usage);
    EXPECT_EQ(out.error().message(), "reading probe catalogue " + r.catalogue + ": cannot open file");
    // The default catalogue is data_dir/probe/catalogue.toml.
    r = request();
    r.data_dir = m_dir;
    out = run(r);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().path, (m_dir / "probe" / "catalogue.toml").string());
    r = request();
    r.scenarios = {"no-such-scenario"};
    out = run(r);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().code, ExitCode::usage);
    EXPECT_EQ(out.error().doing, "selecting scenario");
    EXPECT_EQ(out.error().path, "no-such-scenario");
}

TEST_F(ProbeCommand, AMissingInterpreterIsAnEnvironmentErrorNamingIt) {
    auto r = request();
    auto out = run(r);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().code, ExitCode::environment);
    EXPECT_EQ(out.error().message(), "starting the probe worker with " + r.python + ": " + std::strerror(ENOENT));
    // Without --python: $RMCP_PYTHON.
    const std::string from_env = (m_dir / "env-python").string();
    ::setenv("RMCP_PYTHON", from_env.c_str(), 1);
    r.python.clear();
    out = run(r);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().path, from_env);
}

TEST_F(ProbeCommand, AnInterpreterThatEndsWithoutAnsweringStopsTheProbe) {
    auto r = request();
    r.python = fake_python("echo 'python3: No module named rmcp' >&2\nexit 1");
    r.save = (m_dir / "probed.toml").string();
    const auto out = run(r);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().code, ExitCode::environment);
    EXPECT_EQ(out.error().doing, "checking the interpreter");
    EXPECT_NE(out.error().cause.find("ended without answering"), std::string::npos) << out.error().cause;
    EXPECT_NE(out.error().cause.find("No module named rmcp"), std::string::npos) << out.error().cause;
    // Nothing was saved.
    EXPECT_FALSE(fs::exists(m_dir / "probed.toml"));
    EXPECT_FALSE(fs::exists(m_dir / "probed.faultmap.json"));
    EXPECT_EQ(diagnostics().find("probing "), std::string::npos) << diagnostics();
}

// ---- load_saved_result ---------------------------------------------------------------

constexpr const char* k_good_result = R"json({
  "device": "AMD Radeon RX 6700 XT", "torch_device": "cuda", "passed": false, "child_runs": 2,
  "scenarios": [{"id": "a"}, {"id": "b"}],
  "configurations": [
    {"name": "default", "switches": [], "env": {},
     "results": [{"scenario": "a", "outcome": "ok", "median_ms": 1.5},
                 {"scenario": "b", "outcome": "crash", "detail": "SIGABRT"}]}]
})json";

TEST_F(ProbeCommand, ASavedResultIsLoaded) {
    const std::string path = (m_dir / "result.json").string();
    std::ofstream(path) << k_good_result;
    auto j = load_saved_result(path, "");
    ASSERT_TRUE(j.ok()) << j.error().message();
    EXPECT_EQ((*j)["device"], "AMD Radeon RX 6700 XT");
    EXPECT_EQ((*j)["configurations"][0]["results"].size(), 2U);
    // With a writable --html.
    EXPECT_TRUE(load_saved_result(path, (m_dir / "page.html").string()).ok());
}

TEST_F(ProbeCommand, AMissingSavedResultIsAUsageErrorNamingTheFile) {
    const std::string path = (m_dir / "none.json").string();
    auto j = load_saved_result(path, "");
    ASSERT_FALSE(j.ok());
    EXPECT_EQ(j.error().code, ExitCode::usage);
    EXPECT_EQ(j.error().message(), "reading probe result " + path + ": " + std::strerror(ENOENT));
}

TEST_F(ProbeCommand, MalformedJsonNamesTheFileAndLine) {
    const std::string path = (m_dir / "bad.json").string();
    std::ofstream(path) << "{\n  \"scenarios\": [\n  oops\n]}";
    auto j = load_saved_result(path, "");
    ASSERT_FALSE(j.ok());
    EXPECT_EQ(j.error().code, ExitCode::usage);
    EXPECT_EQ(j.error().path, path + ":3");
    EXPECT_EQ(j.error().cause, "not valid JSON (as written by `rmcp probe --format json`)");
    std::ofstream(path) << "[1, 2]";
    j = load_saved_result(path, "");
    ASSERT_FALSE(j.ok());
    EXPECT_EQ(j.error().message(), "reading probe result " + path + ": expected a JSON object");
}

TEST_F(ProbeCommand, AResultThatIsNoGridNamesTheFileAndTheField) {
    const std::string path = (m_dir / "result.json").string();
    auto doc = nlohmann::json::parse(k_good_result);
    doc["configurations"][0]["results"][1]["outcome"] = "exploded";
    std::ofstream(path) << doc.dump();
    auto j = load_saved_result(path, "");
    ASSERT_FALSE(j.ok());
    EXPECT_EQ(j.error().code, ExitCode::usage);
    EXPECT_EQ(j.error().path, path + ": configurations[0].results[1].outcome");
    EXPECT_EQ(j.error().cause, "unknown outcome 'exploded'");
    std::ofstream(path) << R"({"configurations": []})";
    j = load_saved_result(path, "");
    ASSERT_FALSE(j.ok());
    EXPECT_EQ(j.error().path, path + ": scenarios");
}

TEST_F(ProbeCommand, TheHtmlPathIsCheckedBeforeTheResultIsRead) {
    const std::string html = (m_dir / "missing" / "page.html").string();
    auto j = load_saved_result((m_dir / "none.json").string(), html);
    ASSERT_FALSE(j.ok());
    EXPECT_EQ(j.error().code, ExitCode::usage);
    EXPECT_EQ(j.error().doing, "checking --html");
    EXPECT_EQ(j.error().path, html);
}

}  // namespace
}  // namespace rmcp::probe
