// What the probe hands back (probe/report.cpp), on a hand-built ProbeRun: the one-line result
// description, device info from the worker's report, result and run JSON, the winning
// configuration and its cost, the chosen profile, the profile file's text and the machine
// summary. probe_probe_test.cpp already checks a bisected run's fault map and that
// profile_toml's output parses as a profile.
#include "probe/report.hpp"

#include <gtest/gtest.h>

namespace rmcp::probe {
namespace {

Scenario scenario(const std::string& id) {
    Scenario s;
    s.id = id;
    s.family = "f";
    s.op = "conv2d";
    s.direction = "forward";
    s.dtype = "float32";
    s.input = {1, 4, 8, 8};
    s.weight = {4, 4, 3, 3};
    s.stride = {1, 1};
    s.padding = {0, 0};
    s.dilation = {1, 1};
    return s;
}

ScenarioResult ok(double ms) {
    ScenarioResult r;
    r.outcome = Outcome::ok;
    r.median_ms = ms;
    r.exit_code = 0;
    r.wall_s = 0.5;
    return r;
}

ScenarioResult crash() {
    ScenarioResult r;
    r.outcome = Outcome::crash;
    r.detail = "SIGABRT";
    r.signal = 6;
    r.message = "Memory access fault by GPU node-1";
    r.kb_entry = "memory-access-fault";
    return r;
}

// Two scenarios: "good" passes by default, "bad" crashes; the switch "gemm-off" fixes it.
ProbeRun run_without_bisect() {
    ProbeRun run;
    run.scenarios = {scenario("good"), scenario("bad")};
    run.baseline.results["good"] = ok(1.25);
    run.baseline.results["good"].report = {{"torch_version", "2.4.0+rocm6.1"},
                                           {"device_name", "AMD Radeon RX 6700 XT"},
                                           {"gfx_target", "gfx1030"},
                                           {"min_ms", 1.0},
                                           {"env_inherited", nlohmann::json::object()}};
    run.baseline.results["bad"] = crash();
    run.configurations = {run.baseline};
    run.child_runs = 2;
    return run;
}

const std::vector<Switch> k_switches = {
    Switch{"gemm-off", {{"MIOPEN_DEBUG_CONV_GEMM", "0"}}, {}, "", "GEMM convolutions off", ""},
    Switch{"find-fast", {{"MIOPEN_FIND_MODE", "FAST"}}, {}, "", "slower first call", ""},
};

Configuration gemm_off() { return Configuration{{Change{"gemm-off", {{"MIOPEN_DEBUG_CONV_GEMM", "0"}}}}}; }

ProbeRun run_with_bisect() {
    ProbeRun run = run_without_bisect();
    BisectReport b;
    b.found = true;
    b.minimal = {"gemm-off"};
    b.fastest = gemm_off();
    b.fastest_total_ms = 3.5;
    b.search_runs = 2;
    b.verify_runs = 1;
    b.fastest_runs = 0;
    b.steps = {{"gemm-off", "bad", Outcome::ok, "search"}};
    run.bisect = b;
    ConfigurationResult fixed{gemm_off(), {{"good", ok(1.5)}, {"bad", ok(2.0)}}};
    run.configurations.push_back(fixed);
    return run;
}

TEST(ProbeReport, DescribeOneResult) {
    EXPECT_EQ(describe(ok(1.8)), "ok 1.8 ms");
    EXPECT_EQ(describe(ok(12.3456)), "ok 12.3 ms");  // three significant digits
    EXPECT_EQ(describe(crash()), "crash (SIGABRT) [memory-access-fault]: Memory access fault by GPU node-1");
    ScenarioResult wrong;
    wrong.outcome = Outcome::wrong;
    wrong.detail = "error 1.08 > 0.002";
    wrong.message = "error 1.08 > 0.002 again";
    EXPECT_EQ(describe(wrong), "wrong (error 1.08 > 0.002)");  // the message would repeat the detail
    ScenarioResult hang;
    hang.outcome = Outcome::hang;
    hang.message = std::string(200, 'x');
    EXPECT_EQ(describe(hang), "hang: " + std::string(160, 'x'));  // long messages are cut
}

TEST(ProbeReport, DeviceInfoFromTheFirstWorkerReport) {
    const auto d = device_info(run_without_bisect(), "cuda", "/usr/bin/python3");
    EXPECT_EQ(d.torch_device, "cuda");
    EXPECT_EQ(d.python, "/usr/bin/python3");
    EXPECT_EQ(d.name, "AMD Radeon RX 6700 XT");
    EXPECT_EQ(d.gfx_target, "gfx1030");
    EXPECT_EQ(d.torch_version, "2.4.0+rocm6.1");
    // No report carries them: the device is named by torch's device kind.
    const auto bare = device_info(ProbeRun{}, "cpu", "py");
    EXPECT_EQ(bare.name, "cpu");
    EXPECT_TRUE(bare.torch_version.empty());
}

TEST(ProbeReport, ResultJson) {
    const auto run = run_without_bisect();
    const auto good = result_to_json(run.baseline.results.at("good"));
    EXPECT_EQ(good["outcome"], "ok");
    EXPECT_EQ(good["median_ms"], 1.25);
    EXPECT_EQ(good["exit_code"], 0);
    EXPECT_EQ(good["min_ms"], 1.0);                // copied from the worker's report
    EXPECT_FALSE(good.contains("env_inherited"));  // empty: left out
    EXPECT_FALSE(good.contains("signal"));
    EXPECT_FALSE(good.contains("message"));
    const auto bad = result_to_json(run.baseline.results.at("bad"));
    EXPECT_EQ(bad["outcome"], "crash");
    EXPECT_EQ(bad["signal"], 6);
    EXPECT_EQ(bad["kb_entry"], "memory-access-fault");
    EXPECT_FALSE(bad.contains("median_ms"));
    EXPECT_FALSE(bad.contains("exit_code"));  // -1: killed by a signal
}

TEST(ProbeReport, WithoutBisectTheDefaultWinsAndFails) {
    const auto run = run_without_bisect();
    EXPECT_FALSE(passed(run));
    EXPECT_EQ(winning_configuration(run).key(), "default");
    EXPECT_EQ(chosen_profile_json(run, k_switches), (nlohmann::json{{"configuration", nullptr}}));
    const auto device = device_info(run, "cuda", "py");
    const auto j = probe_to_json(run, device);
    EXPECT_EQ(j["schema_version"], k_schema_version);
    EXPECT_EQ(j["passed"], false);
    EXPECT_FALSE(j.contains("bisect"));
    EXPECT_EQ(j["child_runs"], 2);
    EXPECT_EQ(j["scenarios"].size(), 2U);
    ASSERT_EQ(j["configurations"].size(), 1U);
    EXPECT_EQ(j["configurations"][0]["name"], "default");
    EXPECT_EQ(j["configurations"][0]["env"], nlohmann::json::object());
    // The fault map lists the crash only.
    ASSERT_EQ(j["fault_map"]["faults"].size(), 1U);
    EXPECT_EQ(j["fault_map"]["faults"][0]["scenario"], "bad");
    EXPECT_EQ(j["fault_map"]["gfx_target"], "gfx1030");
}

TEST(ProbeReport, WithBisectTheFastestPassingConfigurationWins) {
    const auto run = run_with_bisect();
    EXPECT_TRUE(passed(run));
    EXPECT_EQ(winning_configuration(run).key(), "gemm-off");
    EXPECT_EQ(chosen_profile_json(run, k_switches), (nlohmann::json{{"configuration", "gemm-off"},
                                                                    {"switches", {"gemm-off"}},
                                                                    {"env", {{"MIOPEN_DEBUG_CONV_GEMM", "0"}}},
                                                                    {"cost", "GEMM convolutions off"}}));
    const auto j = probe_to_json(run, device_info(run, "cuda", "py"));
    EXPECT_EQ(j["passed"], true);
    const auto& b = j["bisect"];
    EXPECT_EQ(b["minimal"], nlohmann::json::array({"gemm-off"}));
    EXPECT_EQ(b["fastest"], nlohmann::json::array({"gemm-off"}));
    EXPECT_EQ(b["fastest_total_ms"], 3.5);
    EXPECT_TRUE(b["default_total_ms"].is_null());  // the default did not pass
    EXPECT_EQ(b["child_runs"], 3);                 // 2 search + 1 verify + 0 fastest
    EXPECT_EQ(
        b["steps"][0],
        (nlohmann::json{{"phase", "search"}, {"configuration", "gemm-off"}, {"scenario", "bad"}, {"outcome", "ok"}}));
    EXPECT_EQ(j["configurations"][1]["results"].size(), 2U);
}

TEST(ProbeReport, ConfigurationCostJoinsSwitchCosts) {
    EXPECT_EQ(configuration_cost(Configuration{}, k_switches), "none: the default configuration passed");
    // An alternative ("find-fast=1") is costed as its switch.
    const Configuration both{{Change{"gemm-off", {}}, Change{"find-fast=1", {}}}};
    EXPECT_EQ(configuration_cost(both, k_switches), "GEMM convolutions off; slower first call");
}

TEST(ProbeReport, ProfileTomlText) {
    const auto run = run_with_bisect();
    DeviceInfo device{"cuda", "RX \"6700\"", "gfx1031", "2.4.0", "py"};
    const auto text = profile_toml(run, gemm_off(), k_switches, device, "probed", "/home/u/fault map.json");
    EXPECT_EQ(text,
              "# Written by `rmcp probe --save`; the fault map next to it lists what fails without it.\n"
              "# Switches: gemm-off\n"
              "name = \"probed\"\n"
              "rank = 5\n"
              "description = \"Measured by rmcp probe --bisect on RX \\\"6700\\\" (gfx1031) with torch 2.4.0: the "
              "fastest configuration under which all of 2 scenarios pass.\"\n"
              "cost = \"GEMM convolutions off\"\n"
              "\n[set]\n"
              "MIOPEN_DEBUG_CONV_GEMM = \"0\"\n"
              "RMCP_FAULT_MAP = \"/home/u/fault map.json\"\n");
    // Without bisect, and without a fault map path.
    const auto plain = profile_toml(run_without_bisect(), Configuration{}, k_switches,
                                    DeviceInfo{"cpu", "cpu", "", "2.4.0", "py"}, "p", "");
    EXPECT_NE(plain.find("# Switches: none\n"), std::string::npos) << plain;
    EXPECT_NE(plain.find("description = \"Measured by rmcp probe on cpu with torch 2.4.0: the default "
                         "configuration; of 2 scenarios probed.\"\n"),
              std::string::npos)
        << plain;
    EXPECT_TRUE(plain.ends_with("\n[set]\n")) << plain;
}

TEST(ProbeReport, MachineSummaryPicksWhatMatters) {
    const nlohmann::json facts = {
        {"driver", {{"os", {{"pretty_name", "Ubuntu 24.04.1 LTS"}}}, {"kernel_release", "6.8.0"}, {"loaded", true}}},
        {"gpus",
         {{{"marketing_name", "AMD Radeon RX 6700 XT"},
           {"gfx_target", "gfx1031"},
           {"effective_gfx_target", "gfx1030"},
           {"vram_bytes", 12884901888ULL}},
          {{"asic_name", "navi10"}, {"gfx_target", "gfx1010"}, {"effective_gfx_target", "gfx1010"}}}},
        {"rocm", {{{"version", "6.2.0"}, {"path", "/opt/rocm"}}, {{"version", nullptr}, {"path", "/usr"}}}},
        {"env", {{"HSA_OVERRIDE_GFX_VERSION", "10.3.0"}}}};
    EXPECT_EQ(machine_summary(facts),
              (nlohmann::json{{"os", "Ubuntu 24.04.1 LTS"},
                              {"kernel", "6.8.0"},
                              {"amdgpu driver", "loaded"},
                              {"gpus", {"AMD Radeon RX 6700 XT gfx1031 (runs as gfx1030), 12 GiB", "navi10 gfx1010"}},
                              {"rocm", {"6.2.0 at /opt/rocm"}},  // an unknown version is left out
                              {"environment", {{"HSA_OVERRIDE_GFX_VERSION", "10.3.0"}}}}));
    // Whatever is missing is left out; gpus is always there.
    EXPECT_EQ(machine_summary(nlohmann::json::object()), (nlohmann::json{{"gpus", nlohmann::json::array()}}));
}

}  // namespace
}  // namespace rmcp::probe
