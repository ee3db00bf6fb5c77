// Coverage facts in the knowledge base: merge_libraries gives each GPU its own coverage
// rows (kb/libraries.hpp), predicates bind them per GPU, and doctor's headers-only scan
// limits never sweep data sections.
#include "kb/libraries.hpp"
#include "kb/predicate.hpp"
#include "scan/coverage.hpp"
#include "scan/scan.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <elf.h>

using nlohmann::json;
using namespace rmcp;

namespace {

json row(unsigned node, const std::string& library, bool covered, json nearest = nullptr) {
    return {{"node", node},
            {"gpu_target", "gfx1031"},
            {"effective_target", "gfx1031"},
            {"installation", "/opt/torch"},
            {"library", library},
            {"covered", covered},
            {"covered_by", covered ? json("gfx1031") : json(nullptr)},
            {"nearest", nearest},
            {"override", nullptr},
            {"remove_override", false},
            {"reason", "r"}};
}

json two_gpus() {
    return {{"gpus", json::array({{{"node", 1}, {"gfx_target", "gfx1031"}},
                                  {{"node", 2}, {"gfx_target", "gfx1100"}},
                                  {{"node", nullptr}, {"gfx_target", "gfx1010"}}})}};
}

}  // namespace

TEST(KbLibraries, RowsGoToTheirGpuByNode) {
    json facts = two_gpus();
    json libraries = {{"scanned", true},
                      {"coverage", json::array({row(1, "torch_hip", false, "gfx1030"), row(1, "rocblas", true),
                                                row(2, "torch_hip", true), row(1, "torch_hip", true)})}};
    kb::merge_libraries(facts, libraries);
    EXPECT_EQ(facts["libraries"], libraries);
    const auto& g1 = facts["gpus"][0];
    ASSERT_TRUE(g1.contains("coverage"));
    EXPECT_EQ(g1["coverage"]["torch_hip"].size(), 2u);  // two installations
    EXPECT_EQ(g1["coverage"]["torch_hip"][0]["nearest"], "gfx1030");
    EXPECT_EQ(g1["coverage"]["rocblas"].size(), 1u);
    EXPECT_EQ(g1["coverage_missing"], json::array({"torch_hip"}));
    const auto& g2 = facts["gpus"][1];
    EXPECT_EQ(g2["coverage"]["torch_hip"].size(), 1u);
    EXPECT_EQ(g2["coverage_missing"], json::array());
    // No KFD node: scan assessed nothing for it, so no coverage keys at all (absent).
    EXPECT_FALSE(facts["gpus"][2].contains("coverage"));
    EXPECT_FALSE(facts["gpus"][2].contains("coverage_missing"));
}

TEST(KbLibraries, NoRowsMeansAbsent) {
    json facts = two_gpus();
    kb::merge_libraries(facts, {{"scanned", true}, {"coverage", json::array()}});
    for (const auto& g : facts["gpus"]) EXPECT_FALSE(g.contains("coverage"));
    EXPECT_TRUE(facts["libraries"]["scanned"]);
    json no_gpus = json::object();
    kb::merge_libraries(no_gpus, json::object());  // nothing to attach to: only the object is stored
    EXPECT_EQ(no_gpus, (json{{"libraries", json::object()}}));
}

TEST(KbLibraries, PredicatesBindRowsToTheGpuUnderEvaluation) {
    json facts = two_gpus();
    kb::merge_libraries(facts, {{"coverage",
                                 json::array({row(1, "torch_hip", false, "gfx1030"), row(2, "torch_hip", true)})}});
    kb::Predicate p;
    p.kind = kb::Predicate::Kind::leaf;
    p.leaf.path = "gpu.coverage.torch_hip.covered";
    p.leaf.op = kb::LeafOp::equals;
    p.leaf.value = false;
    auto r = kb::evaluate_predicate(p, facts, 0);
    EXPECT_TRUE(r.holds);
    ASSERT_EQ(r.evidence.size(), 1u);
    EXPECT_EQ(r.evidence[0].fact, "gpus[0].coverage.torch_hip[0].covered");
    EXPECT_FALSE(kb::evaluate_predicate(p, facts, 1).holds);  // the other GPU is covered
    EXPECT_FALSE(kb::evaluate_predicate(p, facts, 2).holds);  // no rows: absent

    p.leaf.path = "gpu.coverage_missing";
    p.leaf.op = kb::LeafOp::in;
    p.leaf.value = json::array({"torch_hip", "rocblas"});
    r = kb::evaluate_predicate(p, facts, 0);
    EXPECT_TRUE(r.holds);
    EXPECT_EQ(r.evidence.at(0).fact, "gpus[0].coverage_missing[0]");
    EXPECT_EQ(r.evidence.at(0).value, "torch_hip");
    EXPECT_FALSE(kb::evaluate_predicate(p, facts, 1).holds);
}

// A code object inside a blob with no offload bundle at its start: found by the data
// sweep by default, never by doctor's headers-only limits.
TEST(KbLibraries, HeadersOnlyLimitsNeverSweep) {
    std::vector<unsigned char> blob(4096, 'a');
    Elf64_Ehdr h{};
    std::memcpy(h.e_ident, ELFMAG, SELFMAG);
    h.e_ident[EI_CLASS] = ELFCLASS64;
    h.e_ident[EI_DATA] = ELFDATA2LSB;
    h.e_ident[EI_VERSION] = EV_CURRENT;
    h.e_ident[EI_OSABI] = 64;      // AMDGPU HSA
    h.e_ident[EI_ABIVERSION] = 2;  // code object v4
    h.e_type = ET_DYN;
    h.e_machine = 224;
    h.e_version = EV_CURRENT;
    h.e_flags = 0x37;  // gfx1031
    h.e_ehsize = sizeof h;
    std::memcpy(blob.data() + 1000, &h, sizeof h);
    const scan::Bytes bytes{blob.data(), blob.size()};
    EXPECT_EQ(scan::scan_image(bytes, "blob.so").targets(), std::vector<std::string>{"gfx1031"});
    EXPECT_TRUE(scan::scan_image(bytes, "blob.so", scan::headers_only_limits()).code.empty());
}
