// The probe's search and classification, driven by scripted runners (no child processes).
#include "patch/profile.hpp"
#include "probe/catalogue.hpp"
#include "probe/probe.hpp"
#include "probe/report.hpp"
#include "probe/runner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <set>

namespace rmcp::probe {
namespace {

// Every k-subset of culprits among n: the search returns exactly them, within
// k * (ceil(log2 n) + 1) + 1 oracle calls (and so within the issue's 2k log2 n + 4).
TEST(ProbeMinimalSubset, FindsExactlyThePlantedCulpritsWithinBudget) {
    for (std::size_t n = 1; n <= 12; ++n) {
        for (unsigned mask = 1; mask < (1u << n); ++mask) {
            std::set<std::size_t> culprits;
            for (std::size_t i = 0; i < n; ++i)
                if (mask & (1u << i)) culprits.insert(i);
            if (culprits.size() > 3) continue;
            int calls = 0;
            std::set<std::vector<std::size_t>> seen;
            auto found = minimal_passing_subset(n, [&](const std::vector<std::size_t>& subset) -> Result<bool> {
                if (seen.insert(subset).second) ++calls;  // the probe caches configurations
                for (const auto c : culprits)
                    if (std::find(subset.begin(), subset.end(), c) == subset.end()) return false;
                return true;
            });
            ASSERT_TRUE(found.ok());
            EXPECT_EQ(std::set<std::size_t>(found->begin(), found->end()), culprits) << "n=" << n << " mask=" << mask;
            const double k = static_cast<double>(culprits.size());
            const double log2n = std::ceil(std::log2(static_cast<double>(n)));
            EXPECT_LE(calls, k * (log2n + 1) + 1) << "n=" << n << " mask=" << mask;
            EXPECT_LE(calls, 2 * k * std::log2(static_cast<double>(std::max<std::size_t>(n, 2))) + 4);
        }
    }
}

// A scripted runner: scenario "bad" crashes unless SWITCH_3=1 and SWITCH_7=1.
class ScriptedRunner : public ScenarioRunner {
public:
    Result<ScenarioResult> run(const Scenario& s, const EnvMap& env) override {
        ++runs;
        ScenarioResult r;
        const bool fixed = env.contains("SWITCH_3") && env.contains("SWITCH_7");
        const bool slow = env.contains("SWITCH_7") && env.at("SWITCH_7") == "1";
        if (s.id == "bad" && !fixed) {
            r.outcome = Outcome::crash;
            r.detail = "SIGABRT";
        } else {
            r.outcome = Outcome::ok;
            r.median_ms = slow ? 10 : 4;
        }
        return r;
    }
    int runs = 0;
};

Scenario scenario(const std::string& id) {
    Scenario s;
    s.id = id;
    s.op = "conv2d";
    s.direction = "backward_data";
    s.dtype = "float32";
    s.input = {2, 4, 8, 8};
    s.weight = {4, 4, 3, 3};
    s.stride = {1, 1};
    s.padding = {1, 1};
    s.dilation = {1, 1};
    return s;
}

TEST(ProbeBisect, MinimalSetThenFastestAlternative) {
    std::vector<Switch> switches;
    for (int i = 0; i < 10; ++i)
        switches.push_back(Switch{"s" + std::to_string(i), {{"SWITCH_" + std::to_string(i), "1"}}, {}, "", "c", ""});
    switches[7].alternatives = {{{"SWITCH_7", "2"}}};
    ScriptedRunner runner;
    Probe probe(runner, {scenario("good"), scenario("bad")});
    ASSERT_TRUE(probe.run_baseline().ok());
    ASSERT_TRUE(probe.bisect(switches).ok());
    const ProbeRun run = probe.result();
    ASSERT_TRUE(run.bisect);
    EXPECT_TRUE(run.bisect->found);
    EXPECT_EQ(run.bisect->minimal, (std::vector<std::string>{"s3", "s7"}));
    ASSERT_TRUE(run.bisect->fastest);
    // SWITCH_7=2 passes too and is faster than the listed value.
    EXPECT_EQ(run.bisect->fastest->key(), "s3+s7=1");
    EXPECT_EQ(run.bisect->fastest->env(), (EnvMap{{"SWITCH_3", "1"}, {"SWITCH_7", "2"}}));
    EXPECT_EQ(runner.runs, run.child_runs);
    EXPECT_LE(run.bisect->search_runs, 2 * 2 * std::log2(10.0) + 4);

    DeviceInfo device{"cpu", "cpu", "", "1.13.0a0", "/usr/bin/python3"};
    const auto map = fault_map_json(run, run.baseline, device);
    ASSERT_EQ(map["faults"].size(), 1u);
    EXPECT_EQ(map["faults"][0]["scenario"], "bad");
    EXPECT_EQ(map["faults"][0]["failure"], "crash");
    EXPECT_EQ(map["faults"][0]["input"], (std::vector<std::int64_t>{2, 4, 8, 8}));

    // The saved profile loads with the patch manager's own parser.
    const auto text = profile_toml(run, winning_configuration(run), switches, device, "probed", "/tmp/x.faultmap.json");
    auto profile = patch::parse_profile(text, "probed.toml");
    ASSERT_TRUE(profile.ok()) << profile.error().message();
    EXPECT_EQ(profile->name, "probed");
    EXPECT_EQ(profile->set, (std::map<std::string, std::string>{{"SWITCH_3", "1"},
                                                                {"SWITCH_7", "2"},
                                                                {"RMCP_FAULT_MAP", "/tmp/x.faultmap.json"}}));
}

TEST(ProbeBisect, ReportsWhenNothingPasses) {
    std::vector<Switch> switches{Switch{"only", {{"SWITCH_1", "1"}}, {}, "", "c", ""}};
    ScriptedRunner runner;
    Probe probe(runner, {scenario("bad")});
    ASSERT_TRUE(probe.run_baseline().ok());
    ASSERT_TRUE(probe.bisect(switches).ok());
    const auto run = probe.result();
    EXPECT_FALSE(run.bisect->found);
    EXPECT_EQ(run.bisect->search_runs, 1);
    EXPECT_NE(run.bisect->note.find("no combination of the 1 switches"), std::string::npos);
}

int signalled(int sig) { return sig & 0x7f; }        // wait status of a child killed by sig
int exited(int code) { return (code & 0xff) << 8; }  // wait status of exit(code)

TEST(ProbeClassify, OutcomesFromWaitStatusAndReport) {
    auto crash = classify_child(signalled(SIGABRT), false, "",
                                "noise\nMemory access fault by GPU node-1 (Agent handle: 0x1) on address 0x2. Reason: "
                                "Page not present or supervisor privilege.\nmore\n",
                                {});
    ASSERT_TRUE(crash.ok());
    EXPECT_EQ(crash->outcome, Outcome::crash);
    EXPECT_EQ(crash->detail, "SIGABRT");
    EXPECT_EQ(crash->message.rfind("Memory access fault by GPU node-1", 0), 0u);

    auto hang = classify_child(signalled(SIGKILL), true, "", "", {});
    EXPECT_EQ(hang->outcome, Outcome::hang);

    auto ok = classify_child(exited(0), false,
                             R"({"status": "ok", "median_ms": 1.5})"
                             "\n",
                             "", {});
    EXPECT_EQ(ok->outcome, Outcome::ok);
    EXPECT_DOUBLE_EQ(ok->median_ms, 1.5);

    auto wrong = classify_child(exited(1), false, R"({"status": "wrong", "error": 1.0, "tolerance": 0.002})", "", {});
    EXPECT_EQ(wrong->outcome, Outcome::wrong);

    auto error =
        classify_child(exited(1), false, R"({"status": "error", "message": "HIP error: invalid device function\nx"})",
                       "", [](std::string_view text) {
                           return text.find("invalid device function") != std::string_view::npos ? "kb-entry" : "";
                       });
    EXPECT_EQ(error->outcome, Outcome::crash);
    EXPECT_EQ(error->message, "HIP error: invalid device function");
    EXPECT_EQ(error->kb_entry, "kb-entry");

    auto no_torch =
        classify_child(exited(3), false, R"({"status": "no_torch", "message": "import torch failed"})", "", {});
    ASSERT_FALSE(no_torch.ok());
    EXPECT_EQ(no_torch.error().code, ExitCode::environment);
}

TEST(ProbeCatalogue, ShippedCatalogueLoadsAndExpands) {
    auto cat = load_catalogue(std::string(RMCP_SOURCE_DIR) + "/probe/catalogue.toml");
    ASSERT_TRUE(cat.ok()) << cat.error().message();
    EXPECT_EQ(cat->scenarios.size(), 138u);
    auto quick = select_scenarios(*cat, {}, true);
    ASSERT_TRUE(quick.ok());
    EXPECT_EQ(quick->size(), 10u);
    auto family = select_scenarios(*cat, {"conv2d-5x5-miopen3540"}, false);
    ASSERT_TRUE(family.ok());
    EXPECT_EQ(family->size(), 6u);
    EXPECT_EQ(family->front().input, (std::vector<std::int64_t>{1, 256, 32, 32}));
    EXPECT_FALSE(select_scenarios(*cat, {"nope"}, false).ok());
}

TEST(ProbeCatalogue, ErrorsNameFileAndLine) {
    auto bad = parse_catalogue("[[family]]\nname = \"x\"\nop = \"conv3d\"\n", "cat.toml");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().path, "cat.toml:1");
    auto dup = parse_catalogue(
        "[[family]]\nname=\"x\"\nop=\"conv1d\"\ninput=[2,9]\nweight=[2,2,3]\nbatch=[1]\ndirections=[\"forward\"]\n"
        "dtypes=[\"float32\"]\n[[switch]]\nid=\"a\"\nenv={A=\"1\"}\ncost=\"c\"\n[[switch]]\nid=\"b\"\nenv={A=\"2\"}\n"
        "cost=\"c\"\n",
        "cat.toml");
    ASSERT_FALSE(dup.ok());
    EXPECT_EQ(dup.error().path, "cat.toml:13");
    EXPECT_NE(dup.error().cause.find("already set by switch 'a'"), std::string::npos);
}

TEST(ProbeCatalogue, ImportTimeVariablesAreRead) {
    auto cat = load_catalogue(std::string(RMCP_SOURCE_DIR) + "/probe/catalogue.toml");
    ASSERT_TRUE(cat.ok()) << cat.error().message();
    EXPECT_EQ(cat->import_time, (std::vector<std::string>{"PYTORCH_HIP_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"}));
    auto bad = parse_catalogue("import_time = \"X\"\n[[family]]\nname=\"x\"\n", "cat.toml");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().path, "cat.toml:1");
}

TEST(ProbeEta, WorkCountsMultiplyAdds) {
    Scenario s = scenario("s");  // [2, 4, 8, 8] * [4, 4, 3, 3], pad 1: 2*4*8*8 outputs of 4*3*3
    EXPECT_DOUBLE_EQ(scenario_work(s), 2.0 * 4 * 8 * 8 * 4 * 3 * 3);
    s.stride = {2, 2};  // 4x4 outputs per plane
    EXPECT_DOUBLE_EQ(scenario_work(s), 2.0 * 4 * 4 * 4 * 4 * 3 * 3);
}

TEST(ProbeEta, FitsFixedCostPlusWork) {
    EtaModel m;
    EXPECT_FALSE(m.estimate(1).has_value());
    m.add(100, 0.05 + 100 * 0.01);
    EXPECT_NEAR(*m.estimate(100), 1.05, 1e-12);  // one sample: its own time
    m.add(300, 0.05 + 300 * 0.01);
    m.add(50, 0.05 + 50 * 0.01);
    EXPECT_NEAR(*m.estimate(1000), 0.05 + 1000 * 0.01, 1e-9);
    EtaModel noise;  // time falling with work is noise: the mean, never a negative time
    noise.add(1, 2.0);
    noise.add(2, 1.0);
    EXPECT_NEAR(*noise.estimate(100), 1.5, 1e-12);
}

// Children take 0.1 s + 1 us per multiply-add: after two of them the ETA is exact.
class TimedRunner : public ScenarioRunner {
public:
    Result<ScenarioResult> run(const Scenario& s, const EnvMap&) override {
        ScenarioResult r;
        r.outcome = Outcome::ok;
        r.wall_s = 0.1 + 1e-6 * scenario_work(s);
        return r;
    }
};

TEST(ProbeEta, BaselineProgressCarriesTheRemainingTime) {
    std::vector<Scenario> scenarios;
    for (int batch : {1, 4, 2, 8}) {
        Scenario s = scenario("b" + std::to_string(batch));
        s.input[0] = batch;
        scenarios.push_back(s);
    }
    std::vector<ProgressEvent> events;
    TimedRunner runner;
    Probe probe(runner, scenarios, [&](const ProgressEvent& e) { events.push_back(e); });
    ASSERT_TRUE(probe.run_baseline().ok());
    ASSERT_EQ(events.size(), 4u);
    double rest = 0;
    for (std::size_t i = 3; i < 4; ++i) rest += 0.1 + 1e-6 * scenario_work(scenarios[i]);
    EXPECT_EQ(events[2].total, 4);
    ASSERT_TRUE(events[2].eta_s.has_value());
    EXPECT_NEAR(*events[2].eta_s, rest, 1e-9);
    EXPECT_NEAR(*events[3].eta_s, 0.0, 1e-12);
}

}  // namespace
}  // namespace rmcp::probe
