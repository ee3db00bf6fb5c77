// The JSON projection of Facts (facts/facts_json.cpp): a known value is the value, an absent
// or unreadable one is null, and every unreadable read is listed under "unreadable" with its
// path, errno name and message (facts_json.hpp; ARCHITECTURE.md, principle 3).
#include "facts/facts_json.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

namespace rmcp {
namespace {

using nlohmann::json;

TEST(FactsJson, KnownAbsentAndUnreadableValues) {
    Gpu g;
    g.node = 1;
    g.gfx_target = Fact<std::string>::known("gfx1031");
    g.vram_bytes = Fact<std::uint64_t>::known(12884901888ULL);
    g.integrated = Fact<bool>::known(false);
    g.pcie_atomics = Fact<bool>::absent("/sys/class/kfd/kfd/topology/nodes/1/io_links");
    g.marketing_name = Fact<std::string>::unreadable("/sys/bus/pci/devices/x/product_name", EACCES);
    Facts f;
    f.gpus = {g};
    f.unreadable = {{"/sys/bus/pci/devices/x/product_name", EACCES}};

    const auto j = facts_to_json(f);
    EXPECT_EQ(j["schema_version"], k_facts_schema_version);
    ASSERT_EQ(j["gpus"].size(), 1U);
    const auto& gpu = j["gpus"][0];
    EXPECT_EQ(gpu["node"], 1);
    EXPECT_EQ(gpu["visible"], true);
    EXPECT_EQ(gpu["gfx_target"], "gfx1031");
    EXPECT_EQ(gpu["vram_bytes"], 12884901888ULL);
    EXPECT_EQ(gpu["integrated"], false);  // a known false stays false, not null
    EXPECT_TRUE(gpu["pcie_atomics"].is_null());
    EXPECT_TRUE(gpu["marketing_name"].is_null());
    EXPECT_TRUE(gpu["override"].is_null());
    // Never-set facts are absent: null, not 0 or "".
    EXPECT_TRUE(gpu["compute_units"].is_null());
    EXPECT_TRUE(gpu["pci_id"].is_null());
    // The unreadable read says where and why.
    ASSERT_EQ(j["unreadable"].size(), 1U);
    EXPECT_EQ(j["unreadable"][0], (json{{"path", "/sys/bus/pci/devices/x/product_name"},
                                        {"errno", "EACCES"},
                                        {"error", std::strerror(EACCES)}}));
}

TEST(FactsJson, OverrideProjection) {
    Gpu valid;
    valid.gfx_override = GfxOverride{"HSA_OVERRIDE_GFX_VERSION", "10.3.0", "gfx1030", OverrideRelation::same_family};
    Gpu malformed;
    malformed.node.reset();
    malformed.gfx_override =
        GfxOverride{"HSA_OVERRIDE_GFX_VERSION_2", "banana", std::nullopt, OverrideRelation::unknown};
    Facts f;
    f.gpus = {valid, malformed};
    const auto j = facts_to_json(f);
    EXPECT_EQ(j["gpus"][0]["override"], (json{{"variable", "HSA_OVERRIDE_GFX_VERSION"},
                                              {"value", "10.3.0"},
                                              {"valid", true},
                                              {"target", "gfx1030"},
                                              {"relation", "same_family"}}));
    EXPECT_EQ(j["gpus"][1]["override"]["valid"], false);
    EXPECT_TRUE(j["gpus"][1]["override"]["target"].is_null());
    EXPECT_EQ(j["gpus"][1]["override"]["relation"], "unknown");
    EXPECT_TRUE(j["gpus"][1]["node"].is_null());  // a DRM device without a KFD node
}

TEST(FactsJson, OverrideRelationNames) {
    EXPECT_EQ(override_relation_name(OverrideRelation::identical), "identical");
    EXPECT_EQ(override_relation_name(OverrideRelation::same_family), "same_family");
    EXPECT_EQ(override_relation_name(OverrideRelation::cross_family), "cross_family");
    EXPECT_EQ(override_relation_name(OverrideRelation::unknown), "unknown");
}

TEST(FactsJson, DriverUserAccessAndInstallations) {
    Facts f;
    f.driver.loaded = true;
    f.driver.params["noretry"] = Fact<std::string>::known("0");
    f.driver.params["cwsr_enable"] = Fact<std::string>::unreadable("/sys/module/amdgpu/parameters/cwsr_enable", EPERM);
    f.driver.kernel_release = Fact<std::string>::known("6.8.0");
    f.user.uid = Fact<std::uint64_t>::known(1000);
    f.user.groups = {4, 44};
    f.kfd.path = "/dev/kfd";
    f.kfd.present = true;
    f.kfd.mode = Fact<std::uint32_t>::known(0666);
    f.kfd.accessible = Fact<bool>::known(true);
    DeviceAccess render;
    render.path = "/dev/dri/renderD128";  // present, nothing else known
    render.present = true;
    f.render_nodes = {render};
    f.rocm = {{"/opt/rocm", Fact<std::string>::known("6.2.0"), ".info/version", "opt", ""}};
    TorchInstall t;
    t.path = "/venv/torch";
    t.origin = "venv";
    t.version = Fact<std::string>::known("2.4.0+rocm6.1");
    t.has_libtorch_hip = true;
    f.torch = {t};
    f.env = {{"HSA_OVERRIDE_GFX_VERSION", "10.3.0"}};

    const auto j = facts_to_json(f);
    EXPECT_EQ(j["driver"]["loaded"], true);
    EXPECT_EQ(j["driver"]["builtin"], false);
    EXPECT_EQ(j["driver"]["params"], (json{{"cwsr_enable", nullptr}, {"noretry", "0"}}));
    EXPECT_EQ(j["driver"]["kernel_release"], "6.8.0");
    EXPECT_TRUE(j["driver"]["dkms_version"].is_null());
    EXPECT_TRUE(j["driver"]["os"]["id"].is_null());
    EXPECT_EQ(j["user"], (json{{"uid", 1000}, {"gid", nullptr}, {"groups", {4, 44}}, {"name", nullptr}}));
    // The mode is an octal string of four digits, as ls and chmod show it.
    EXPECT_EQ(j["kfd"], (json{{"path", "/dev/kfd"},
                              {"present", true},
                              {"mode", "0666"},
                              {"group", nullptr},
                              {"accessible", true},
                              {"user_in_group", nullptr},
                              {"user_listed_in_group", nullptr}}));
    EXPECT_TRUE(j["render_nodes"][0]["mode"].is_null());
    EXPECT_EQ(j["rocm"][0], (json{{"path", "/opt/rocm"},
                                  {"version", "6.2.0"},
                                  {"version_source", ".info/version"},
                                  {"kind", "opt"},
                                  {"selected_by", nullptr}}));  // empty: null
    // "/venv/torch" is no site-packages layout: no interpreter (facts/torch_python.hpp).
    EXPECT_EQ(j["torch"][0], (json{{"path", "/venv/torch"},
                                   {"origin", "venv"},
                                   {"python", nullptr},
                                   {"version", "2.4.0+rocm6.1"},
                                   {"hip_version", nullptr},
                                   {"cuda_version", nullptr},
                                   {"has_libtorch_hip", true}}));
    EXPECT_EQ(j["env"], (json{{"HSA_OVERRIDE_GFX_VERSION", "10.3.0"}}));
    EXPECT_EQ(j["unreadable"], json::array());
}

TEST(FactsJson, EmptyFactsHaveEveryKey) {
    const auto j = facts_to_json(Facts{});
    for (const char* key :
         {"schema_version", "gpus", "driver", "user", "kfd", "render_nodes", "rocm", "torch", "env", "unreadable"})
        EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_EQ(j["gpus"], json::array());
    EXPECT_EQ(j["env"], json::object());
}

}  // namespace
}  // namespace rmcp
