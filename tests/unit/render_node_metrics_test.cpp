// The node agent's inputs (render/node_metrics.cpp): a saved probe result compared with the
// facts of now, and `rmcp run`'s incident directory counted, both read through a Root on a
// scratch tree; and how doctor's Prometheus and NFD renderers show them.
#include "render/node_metrics.hpp"

#include "render/doctor_render.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace rmcp {
namespace {

namespace fs = std::filesystem;
using testing_support::ScratchDir;

Facts facts_now() {
    Facts f;
    f.driver.kernel_release = Fact<std::string>::known("6.8.0-45-generic");
    RocmInstall rocm;
    rocm.path = "/opt/rocm-6.2.0";
    rocm.version = Fact<std::string>::known("6.2.0");
    f.rocm.push_back(rocm);
    TorchInstall torch;
    torch.version = Fact<std::string>::known("2.4.1+rocm6.1");
    torch.origin = "venv";
    f.torch.push_back(torch);
    Gpu g;
    g.node = 1;
    g.rocm_index = 0;
    g.gfx_target = Fact<std::string>::known("gfx1100");
    g.effective_gfx_target = Fact<std::string>::known("gfx1100");
    g.marketing_name = Fact<std::string>::known("AMD Radeon \"RX\" 7900 XTX");
    f.gpus.push_back(g);
    return f;
}

// What `rmcp probe --format json` prints (docs/probe.md), cut to the keys read here.
nlohmann::json probe_doc(bool passed, const std::string& kernel, const std::string& rocm, const std::string& torch) {
    return {{"schema_version", 1},
            {"device", "AMD Radeon RX 7900 XTX"},
            {"gfx_target", "gfx1100"},
            {"torch_version", torch},
            {"passed", passed},
            {"scenarios", {{{"id", "a"}}, {{"id", "b"}}, {{"id", "c"}}}},
            {"configurations",
             {{{"name", "default"},
               {"switches", nlohmann::json::array()},
               {"env", nlohmann::json::object()},
               {"results",
                {{{"scenario", "a"}, {"outcome", "ok"}, {"median_ms", 1.5}},
                 {{"scenario", "b"}, {"outcome", "crash"}},
                 {{"scenario", "c"}, {"outcome", "ok"}, {"median_ms", 2.5}}}}}}},
            {"profile", {{"configuration", passed ? nlohmann::json("default") : nlohmann::json(nullptr)}}},
            {"machine", {{"kernel", kernel}, {"rocm", {rocm + " at /opt/rocm-" + rocm}}}}};
}

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

TEST(NodeMetrics, ProbeResultOnTheSameMachineIsCurrent) {
    std::string error;
    const auto s =
        summarize_probe_result(probe_doc(true, "6.8.0-45-generic", "6.2.0", "2.4.1+rocm6.1"), facts_now(), error);
    ASSERT_TRUE(s) << error;
    EXPECT_TRUE(s->passed);
    EXPECT_EQ(s->by_outcome, (std::map<std::string, std::size_t>{{"crash", 1}, {"ok", 2}}));
    EXPECT_EQ(s->profile, "default");
    EXPECT_EQ(s->rocm_version, "6.2.0");
    EXPECT_TRUE(s->outdated_by.empty());
}

TEST(NodeMetrics, ProbeResultOutdatedByKernelRocmAndTorch) {
    std::string error;
    const auto s =
        summarize_probe_result(probe_doc(false, "6.5.0-1-generic", "6.1.3", "2.3.0+rocm6.0"), facts_now(), error);
    ASSERT_TRUE(s) << error;
    EXPECT_FALSE(s->passed);
    EXPECT_EQ(s->profile, "");
    EXPECT_EQ(s->outdated_by, (std::vector<std::string>{"kernel", "rocm", "torch"}));
}

TEST(NodeMetrics, NotAProbeResultIsRefusedWithTheField) {
    std::string error;
    EXPECT_FALSE(summarize_probe_result(nlohmann::json{{"configurations", 3}}, facts_now(), error));
    EXPECT_FALSE(error.empty());
}

TEST(NodeMetrics, CollectsThroughTheRoot) {
    ScratchDir dir("node-metrics");
    const fs::path inc = dir / "var/lib/rmcp/incidents";
    const auto report = [](const std::string& cls, const std::string& category) {
        nlohmann::json matches = nlohmann::json::array();
        if (!category.empty()) matches.push_back({{"id", "x"}, {"category", category}});
        return nlohmann::json{{"kind", "rmcp-run-incident"},
                              {"classification", cls},
                              {"attempts", {{{"matches", matches}}, {{"matches", matches}}}}}
            .dump();
    };
    write(inc / "20260101T000000Z-1.json", report("gpu-failure", "gpu-memory-fault"));
    write(inc / "20260101T000001Z-2.json", report("gpu-failure", "gpu-memory-fault"));
    write(inc / "20260101T000002Z-3.json", report("stall", ""));
    write(inc / "20260101T000003Z-4.json", "{not json");
    write(inc / ".20260101T000004Z-5.json.tmp", "partial");  // a writer's temporary file
    write(inc / "notes.txt", "not a report");
    write(dir / "var/lib/rmcp/probe-result.json", probe_doc(true, "6.8.0-45-generic", "6.2.0", "2.4.1+rocm6.1").dump());

    auto root = Root::open(dir.path());
    ASSERT_TRUE(root.ok());
    const auto m =
        collect_node_metrics(*root, facts_now(), {"/var/lib/rmcp/probe-result.json", "/var/lib/rmcp/incidents"});
    EXPECT_EQ(m.incidents.by_classification, (std::map<std::string, std::size_t>{{"gpu-failure", 2}, {"stall", 1}}));
    EXPECT_EQ(m.incidents.by_category, (std::map<std::string, std::size_t>{{"gpu-memory-fault", 2}}));
    EXPECT_EQ(m.incidents.unreadable, 1u);
    ASSERT_EQ(m.warnings.size(), 1u);
    EXPECT_NE(m.warnings[0].find("20260101T000003Z-4.json"), std::string::npos) << m.warnings[0];
    ASSERT_TRUE(m.probe);
    EXPECT_GT(m.probe->saved_unix_s, 1.6e9);

    // Missing inputs are no data and no warning: a node that never probed or never failed.
    const auto none = collect_node_metrics(*root, facts_now(), {"/nowhere/probe.json", "/nowhere/incidents"});
    EXPECT_FALSE(none.probe);
    EXPECT_TRUE(none.incidents.by_classification.empty());
    EXPECT_TRUE(none.warnings.empty());

    // A malformed probe result is a warning naming the file, never a stop.
    write(dir / "bad.json", "[1, 2]");
    const auto bad = collect_node_metrics(*root, facts_now(), {"/bad.json", ""});
    EXPECT_FALSE(bad.probe);
    ASSERT_EQ(bad.warnings.size(), 1u);
    EXPECT_NE(bad.warnings[0].find("bad.json"), std::string::npos) << bad.warnings[0];

    // The renderers: counters by classification (every known one, zeros included), probe
    // metrics, escaped labels; NFD's two node labels.
    kb::DoctorReport r;
    const auto text = render_doctor_prometheus(r, 1700000000, m);
    for (const std::string line : {
             "# TYPE rmcp_run_incidents_total counter",
             "rmcp_run_incidents_total{classification=\"gpu-failure\"} 2",
             "rmcp_run_incidents_total{classification=\"stall\"} 1",
             "rmcp_run_incidents_total{classification=\"recovered\"} 0",
             "rmcp_run_incident_categories_total{category=\"gpu-memory-fault\"} 2",
             "rmcp_run_incident_reports_unreadable 1",
             "rmcp_probe_result_present{path=\"/var/lib/rmcp/probe-result.json\"} 1",
             "rmcp_probe_passed 1",
             "rmcp_probe_scenarios{outcome=\"crash\"} 1",
             "rmcp_probe_outdated{reason=\"kernel\"} 0",
             "rmcp_gpu_info{gpu=\"1\",rocm_index=\"0\",target=\"gfx1100\",effective_target=\"gfx1100\","
             "marketing_name=\"AMD Radeon \\\"RX\\\" 7900 XTX\",family=\"\",integrated=\"\",pci_address=\"\"} 1",
             "rmcp_rocm_info{version=\"6.2.0\",path=\"/opt/rocm-6.2.0\",selected_by=\"\"} 1",
         })
        EXPECT_NE(("\n" + text).find("\n" + line + "\n"), std::string::npos) << "missing: " << line << "\n" << text;
    EXPECT_NE(render_doctor_nfd(r, m).find("rmcp.healthy=true\nrmcp.probe_passed=true\n"), std::string::npos);
    EXPECT_NE(render_doctor_nfd(r, bad).find("rmcp.probe_passed=false\n"), std::string::npos);
}

}  // namespace
}  // namespace rmcp
