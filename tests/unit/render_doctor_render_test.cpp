// A doctor report as JSON and Prometheus textfile lines (render/doctor_render.cpp), on
// the findings of the shipped kb for a fixture root (rx6700xt-gfx1031: gfx1031 with a PyTorch
// wheel that has code for gfx1030 only, no DKMS driver) and on hand-built entries.
#include "render/doctor_render.hpp"

#include "detect/detect.hpp"
#include "facts/facts_json.hpp"
#include "kb/libraries.hpp"
#include "scan/coverage.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace rmcp {
namespace {

namespace fs = std::filesystem;

const kb::KnowledgeBase& shipped_kb() {
    static const kb::KnowledgeBase kb = [] {
        auto loaded = kb::load(fs::path(RMCP_SOURCE_DIR) / "kb");
        EXPECT_TRUE(loaded.ok());
        return loaded.ok() ? std::move(*loaded) : kb::KnowledgeBase{};
    }();
    return kb;
}

// What `rmcp doctor` evaluates: detected facts plus the coverage of the scanned libraries.
kb::DoctorReport doctor_on(const std::string& fixture) {
    auto root = Root::open(fs::path(RMCP_SOURCE_DIR) / "tests" / "fixtures" / fixture);
    EXPECT_TRUE(root.ok());
    if (!root.ok()) return {};
    const auto facts = detect(*root);
    auto json = facts_to_json(facts);
    kb::merge_libraries(json, scan::libraries_facts(*root, facts));
    return kb::run_doctor(shipped_kb(), json);
}

std::size_t entries_with_rules() {
    return static_cast<std::size_t>(std::count_if(shipped_kb().entries.begin(), shipped_kb().entries.end(),
                                                  [](const kb::Entry& e) { return e.applies != nullptr; }));
}

TEST(DoctorRender, FixtureReportAsJson) {
    const auto j = doctor_to_json(doctor_on("rx6700xt-gfx1031"));
    EXPECT_EQ(j["schema_version"], k_doctor_schema_version);
    EXPECT_EQ(j["entries_checked"], entries_with_rules());
    EXPECT_EQ(j["gpus"], 1);
    EXPECT_EQ(j["notes"], nlohmann::json::array());
    EXPECT_EQ(j["summary"], (nlohmann::json{{"critical", 1}, {"warning", 0}, {"info", 1}, {"open", 2}}));
    ASSERT_EQ(j["findings"].size(), 2U);
    const auto& f = j["findings"][0];
    EXPECT_EQ(f["id"], "rdna2-no-override");
    EXPECT_EQ(f["severity"], "critical");
    EXPECT_EQ(f["confidence"], "user-confirmed");
    EXPECT_EQ(f["scope"], "gpu");
    EXPECT_EQ(f["gpu"], (nlohmann::json{{"index", 0}, {"rocm_index", 0}, {"node", 1}}));
    EXPECT_EQ(f["status"], "open");
    EXPECT_TRUE(f["status_detail"].is_null());
    EXPECT_TRUE(f["fixed_by"].is_null());
    EXPECT_TRUE(f["next"].is_null());
    EXPECT_TRUE(f["undo"].is_null());
    EXPECT_EQ(f["fixes"][0]["patch"], "env-override-same-family");
    const auto& g = j["findings"][1];
    EXPECT_EQ(g["id"], "dkms-version-missing");
    EXPECT_EQ(g["severity"], "info");
    EXPECT_EQ(g["scope"], "system");
    EXPECT_TRUE(g["gpu"].is_null());
    // Evidence values keep their JSON type; an absent fact is null.
    EXPECT_EQ(g["evidence"][0], (nlohmann::json{{"fact", "driver.loaded"}, {"value", true}, {"test", "equals true"}}));
    EXPECT_TRUE(g["evidence"][1]["value"].is_null());
}

TEST(DoctorRender, FixtureReportAsPrometheus) {
    const auto text = render_doctor_prometheus(doctor_on("rx6700xt-gfx1031"), 1700000000.5);
    for (const std::string line : {
             "# TYPE rmcp_finding gauge",
             "rmcp_finding{id=\"rdna2-no-override\",severity=\"critical\",category=\"rocblas-missing-arch\","
             "confidence=\"user-confirmed\",gpu=\"1\",status=\"open\"} 1",
             "rmcp_finding{id=\"dkms-version-missing\",severity=\"info\",category=\"config-risk\","
             "confidence=\"reported\",gpu=\"\",status=\"open\"} 1",
             "# TYPE rmcp_findings gauge",
             "rmcp_findings{severity=\"critical\"} 1",
             "rmcp_findings{severity=\"warning\"} 0",
             "rmcp_findings{severity=\"info\"} 1",
             "# TYPE rmcp_amd_gpus gauge",
             "rmcp_amd_gpus 1",
             "# TYPE rmcp_last_run_timestamp_seconds gauge",
             "rmcp_last_run_timestamp_seconds 1700000000.500",
         })
        EXPECT_NE(("\n" + text).find("\n" + line + "\n"), std::string::npos) << "missing: " << line << "\n" << text;
    // Only counters may end in _total; without node inputs every metric here is a gauge.
    EXPECT_EQ(text.find("_total"), std::string::npos);
    EXPECT_EQ(text.find("counter"), std::string::npos);
}

TEST(DoctorRender, EmptyReport) {
    kb::DoctorReport r;
    r.entries_checked = 3;
    r.notes = {"no AMD GPU found"};
    const auto p = render_doctor_prometheus(r, 0);
    EXPECT_NE(p.find("rmcp_findings{severity=\"critical\"} 0\n"), std::string::npos);
    EXPECT_NE(p.find("rmcp_amd_gpus 0\n"), std::string::npos);
    EXPECT_EQ(p.find("rmcp_finding{"), std::string::npos);
}

TEST(DoctorRender, HandBuiltFindingWrapsEscapesAndShowsStatus) {
    kb::Entry e;
    e.id = "x-entry";
    e.title = "A title";
    e.category = "odd\"cat\\egory";
    e.severity = kb::Severity::warning;
    e.confidence = kb::Confidence::hypothesis;
    std::string summary;
    for (int i = 0; i < 30; ++i) summary += (i ? " " : "") + std::string("abcde");
    e.summary = summary;
    e.references = {"https://example.org"};
    kb::Finding f;
    f.entry = &e;
    f.gpu_index = 2;  // no KFD node: labelled by index
    f.status = kb::FindingStatus::fixed_by_profile;
    f.status_detail = "by profile.env";
    f.next_command = "rmcp run -- python train.py\nrmcp doctor";
    kb::DoctorReport r;
    r.findings = {f};
    r.entries_checked = 1;
    r.gpus = 3;
    const auto p = render_doctor_prometheus(r, 1);
    EXPECT_NE(p.find("rmcp_finding{id=\"x-entry\",severity=\"warning\",category=\"odd\\\"cat\\\\egory\","
                     "confidence=\"hypothesis\",gpu=\"index2\",status=\"fixed-by-profile\"} 1\n"),
              std::string::npos)
        << p;
    const auto j = doctor_to_json(r);
    EXPECT_EQ(j["findings"][0]["gpu"], (nlohmann::json{{"index", 2}, {"rocm_index", nullptr}, {"node", nullptr}}));
    // A fixed-by-profile finding's next command is a next step, answered by this finding.
    EXPECT_EQ(j["findings"][0]["next"], "rmcp run -- python train.py\nrmcp doctor");
    EXPECT_EQ(j["next_steps"], (nlohmann::json::array({{{"next", "rmcp run -- python train.py\nrmcp doctor"},
                                                        {"undo", nullptr},
                                                        {"findings", {"x-entry"}}}})));
    EXPECT_EQ(j["findings"][0]["status"], "fixed-by-profile");
    EXPECT_EQ(j["findings"][0]["status_detail"], "by profile.env");
    EXPECT_EQ(j["summary"]["open"], 0);
}

}  // namespace
}  // namespace rmcp
