// Facts as text and as Node Feature Discovery lines (render/facts_text.cpp), on facts detected
// from a fixture root (tests/fixtures/rx6700xt-gfx1031: one RX 6700 XT, gfx1031, node 1).
#include "render/facts_text.hpp"

#include "detect/detect.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>

namespace rmcp {
namespace {

Facts rx6700xt() {
    auto root = Root::open(std::filesystem::path(RMCP_SOURCE_DIR) / "tests" / "fixtures" / "rx6700xt-gfx1031");
    EXPECT_TRUE(root.ok());
    return root.ok() ? detect(*root) : Facts{};
}

bool has_line(const std::string& text, const std::string& line) {
    return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

TEST(FactsText, HumanSummaryOfAFixture) {
    const auto text = render_facts_text(rx6700xt(), Style(false));
    EXPECT_TRUE(text.starts_with("GPUs (1)\n")) << text;
    for (const std::string line : {
             // One user-facing number (ROCm's device index), with the other numberings mapped.
             "  GPU 0  AMD Radeon RX 6700 XT — gfx1031 (RDNA2)",
             "      KFD node 1 = ROCm device 0 = torch cuda:0 in this environment",
             "      effective target: gfx1031   official ROCm support: no",
             "      PCI 1002:73df rev 0xc1 at 0000:03:00.0   discrete",
             // 12 GiB of VRAM, 16642998272 bytes of GTT = 15.5 GiB; 40 CUs, MEC firmware 118.
             "      VRAM 12.0 GiB   GTT 15.5 GiB   CUs 40   MEC fw 118   PCIe atomics yes",
             "Driver",
             // No DKMS package on this machine: the fact is unknown, not 0 or empty.
             "  amdgpu: loaded   DKMS version: unknown   kernel 6.8.0-45-generic",
             "  OS: Ubuntu 24.04.1 LTS",
             "Access (user sam uid 1000)",
             "  /dev/kfd: read-write (group render, mode 0666, user in group: yes)",
             "  /dev/dri/renderD128: read-write (group render, mode 0660, user in group: yes)",
             "ROCm (0)",
             "PyTorch (1)",
             // The interpreter it belongs to (newcomer review, findings 6 and 29).
             "  /home/sam/.local/lib/python3.12/site-packages/torch 2.3.1+rocm6.0 [user] HIP "
             "6.0.32830-d62f6a171 for /usr/bin/python3.12",
         })
        EXPECT_TRUE(has_line(text, line)) << "missing: " << line << "\nin:\n" << text;
    // amdgpu module parameters, sorted by name on one line.
    EXPECT_NE(text.find("  parameters: audio=-1 cwsr_enable=1 "), std::string::npos);
    // No override set: no override line; nothing unreadable, no environment.
    EXPECT_EQ(text.find("override:"), std::string::npos);
    EXPECT_EQ(text.find("Unreadable"), std::string::npos);
    EXPECT_EQ(text.find("Environment"), std::string::npos);
}

TEST(FactsText, NfdLinesOfAFixture) {
    EXPECT_EQ(render_facts_nfd(rx6700xt()), "rmcp.gpu1.gfx_target=gfx1031\n"
                                            "rmcp.gpu1.effective_gfx_target=gfx1031\n"
                                            "rmcp.gpu1.family=RDNA2\n"
                                            "rmcp.gpu1.integrated=false\n"
                                            "rmcp.gpu1.vram_gib=12\n"
                                            "rmcp.gpu_count=1\n"
                                            "rmcp.gfx_target=gfx1031\n"
                                            "rmcp.amdgpu_loaded=true\n"
                                            "rmcp.kfd_accessible=true\n");
}

TEST(FactsText, NoGpuAndUnreadableValues) {
    Facts f;
    f.user.name = Fact<std::string>::unreadable("/etc/passwd", EACCES);
    f.user.uid = Fact<std::uint64_t>::known(1000);
    f.kfd.path = "/dev/kfd";
    f.kfd.present = false;
    const auto text = render_facts_text(f, Style(false));
    EXPECT_TRUE(text.starts_with("GPUs (0)\n  no AMD GPU found in the KFD topology or DRM\n")) << text;
    EXPECT_TRUE(has_line(text, "Access (user unreadable (EACCES) uid 1000)")) << text;
    EXPECT_TRUE(has_line(text, "  /dev/kfd: missing")) << text;
    EXPECT_TRUE(has_line(text, "  amdgpu: NOT loaded   DKMS version: unknown   kernel unknown")) << text;
    // Without a usable GPU there is no node-wide target label; the count is 0.
    EXPECT_EQ(render_facts_nfd(f), "rmcp.gpu_count=0\nrmcp.amdgpu_loaded=false\nrmcp.kfd_accessible=false\n");
}

TEST(FactsText, HumanBytes) {
    EXPECT_EQ(human_bytes(0), "0 B");
    EXPECT_EQ(human_bytes(1023), "1023 B");
    EXPECT_EQ(human_bytes(1024), "1.0 KiB");
    EXPECT_EQ(human_bytes(1536), "1.5 KiB");
    EXPECT_EQ(human_bytes(std::uint64_t{3} << 30), "3.0 GiB");
    EXPECT_EQ(human_bytes(std::uint64_t{1} << 40), "1.0 TiB");
    EXPECT_EQ(human_bytes(std::uint64_t{1} << 50), "1024.0 TiB");  // TiB is the largest unit
}

}  // namespace
}  // namespace rmcp
