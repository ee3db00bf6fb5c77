// Bug-report sections read as the reporter's facts. The inputs here are WRITTEN in the
// formats the tools print (rocminfo, collect_env, rocm-smi, amd-smi, pip, uname, ollama):
// they test the parsers. Real reports copied from public threads are tested by
// tests/cli/test_explain_real.py over tests/reports/real/.
#include "detect/detect.hpp"
#include "explain/report_facts.hpp"

#include <gtest/gtest.h>

namespace rmcp::explain {
namespace {

ReportFacts read(std::string_view text, std::size_t piece = 0) {
    auto set = SignatureSet::compile({}, Reporting::every_line, ContextWords::match, report_probes());
    EXPECT_TRUE(set.ok());
    ReportReader reader;
    LogScanner scanner(*set, nullptr);
    scanner.on_probe([&](const ProbeHit& h) { reader.add("report.txt", h); });
    if (piece == 0) piece = text.size() + 1;
    for (std::size_t i = 0; i < text.size(); i += piece) EXPECT_TRUE(scanner.feed(text.substr(i, piece)).ok());
    EXPECT_TRUE(scanner.finish().ok());
    return reader.facts();
}

constexpr std::string_view k_rocminfo_two_gpus = R"(ROCk module version 6.7.0 is loaded
=====================
HSA System Attributes
=====================
Runtime Version:         1.14
==========
HSA Agents
==========
*******
Agent 1
*******
  Name:                    AMD Ryzen 9 7950X 16-Core Processor
  Marketing Name:          AMD Ryzen 9 7950X 16-Core Processor
  Device Type:             CPU
*******
Agent 2
*******
  Name:                    gfx1100
  Uuid:                    GPU-5c2bd6d3a1c0f1e7
  Marketing Name:          Radeon RX 7900 XTX
  Vendor Name:             AMD
  Device Type:             GPU
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--gfx1100
*******
Agent 3
*******
  Name:                    gfx1036
  Marketing Name:          AMD Radeon Graphics
  Device Type:             GPU
*** Done ***
)";

TEST(ReportFacts, RocminfoListsEveryGpuAgentWithItsName) {
    for (const std::size_t piece : {0UL, 5UL}) {
        const auto f = read(k_rocminfo_two_gpus, piece);
        ASSERT_EQ(f.gpus.size(), 2U);
        EXPECT_EQ(f.gpus[0].gfx_target, "gfx1100");
        EXPECT_EQ(f.gpus[0].marketing_name, "Radeon RX 7900 XTX");
        EXPECT_EQ(f.gpus[0].source, "rocminfo");
        EXPECT_EQ(f.gpus[1].gfx_target, "gfx1036");
        EXPECT_EQ(f.gpus[1].marketing_name, "AMD Radeon Graphics");
        EXPECT_TRUE(f.describes_machine());
    }
}

TEST(ReportFacts, UnderAnOverrideTheRealChipComesFromTheProductName) {
    const auto f = read("export HSA_OVERRIDE_GFX_VERSION=10.3.0\n"
                        "Agent 2\n  Name:                    gfx1030\n"
                        "  Marketing Name:          AMD Radeon RX 6700 XT\n");
    ASSERT_EQ(f.gpus.size(), 1U);
    EXPECT_EQ(f.gpus[0].gfx_target, "gfx1031");
    EXPECT_EQ(f.gpus[0].shown_target, "gfx1030");
    const auto doc = report_facts_document(f);
    EXPECT_EQ(doc["gpus"][0]["override"]["relation"], "same_family");
    EXPECT_EQ(doc["gpus"][0]["effective_gfx_target"], "gfx1030");
    EXPECT_EQ(doc["gpus"][0]["family"], "RDNA2");
}

TEST(ReportFacts, UnderAnOverrideAnUnnamedChipStaysUnknown) {
    const auto f = read("HSA_OVERRIDE_GFX_VERSION=11.0.0 python train.py\n"
                        "Agent 2\n  Name:                    gfx1100\n"
                        "  Marketing Name:          AMD Radeon Graphics\n");
    ASSERT_EQ(f.gpus.size(), 1U);
    EXPECT_EQ(f.gpus[0].gfx_target, "");
    const auto doc = report_facts_document(f);
    EXPECT_TRUE(doc["gpus"][0]["gfx_target"].is_null());
    EXPECT_EQ(doc["gpus"][0]["effective_gfx_target"], "gfx1100");
    EXPECT_TRUE(doc["gpus"][0]["override"].is_null());  // no relation can be claimed
}

TEST(ReportFacts, CollectEnvGivesVersionsGpusAndKernel) {
    const auto f = read(R"(PyTorch version: 2.3.0+rocm6.0
Is debug build: False
CUDA used to build PyTorch: N/A
ROCM used to build PyTorch: 6.0.32830-d62f6a171

OS: Ubuntu 22.04.4 LTS (x86_64)
Python platform: Linux-6.5.0-28-generic-x86_64-with-glibc2.35
Is CUDA available: True
GPU models and configuration: AMD Radeon RX 6800 XT (gfx1030)
Nvidia driver version: Could not collect
HIP runtime version: 6.0.32830
Versions of relevant libraries:
[pip3] torch==2.3.0+rocm6.0
)");
    EXPECT_EQ(f.torch_version, "2.3.0+rocm6.0");
    EXPECT_EQ(f.torch_hip_version, "6.0.32830-d62f6a171");
    EXPECT_EQ(f.kernel_release, "6.5.0-28-generic");
    ASSERT_EQ(f.gpus.size(), 1U);
    EXPECT_EQ(f.gpus[0].gfx_target, "gfx1030");
    EXPECT_EQ(f.gpus[0].marketing_name, "AMD Radeon RX 6800 XT");
    EXPECT_FALSE(f.rocm_version);  // collect_env names PyTorch's ROCm, not the system's
}

TEST(ReportFacts, CollectEnvListsSeveralGpus) {
    const auto f = read("GPU models and configuration: AMD Radeon RX 7900 XTX (gfx1100)\n"
                        "AMD Radeon Graphics (gfx1036)\n"
                        "Nvidia driver version: Could not collect\n");
    ASSERT_EQ(f.gpus.size(), 2U);
    EXPECT_EQ(f.gpus[1].gfx_target, "gfx1036");
}

TEST(ReportFacts, VersionFieldsFromTemplatesPackagesAndTools) {
    EXPECT_EQ(read("### ROCm Version\n\nROCm 6.1.0\n\n### ROCm Component\n").rocm_version, "6.1.0");
    EXPECT_EQ(
        read("AMDSMI Tool: 24.7.1+0012a68 | AMDSMI Library version: 24.7.1.0 | ROCm version: 6.3.1\n").rocm_version,
        "6.3.1");
    EXPECT_EQ(read("ii  rocm-core   5.7.1.50701-98~22.04   amd64   Radeon Open Compute (ROCm) Runtime\n").rocm_version,
              "5.7.1");
    EXPECT_EQ(read("  File \"/opt/rocm-6.2.0/lib/python3/x.py\", line 3\n").rocm_version, "6.2.0");
    // The template field outranks a path in a traceback, wherever each appears.
    EXPECT_EQ(read("/opt/rocm-5.7.0/lib/libamdhip64.so\n### ROCm Version\n\n6.1.2\n").rocm_version, "6.1.2");
    EXPECT_EQ(read("torch                    2.4.1+rocm6.1\n").torch_version, "2.4.1+rocm6.1");
    EXPECT_EQ(read("torch                    2.4.1+rocm6.1\n").torch_hip_version, "6.1");
    EXPECT_EQ(read("pytorch version: 2.5.0.dev20240801+rocm6.1\n").torch_version, "2.5.0.dev20240801+rocm6.1");
    EXPECT_EQ(read("torch==2.3.1+rocm6.0\n").torch_version, "2.3.1+rocm6.0");
    EXPECT_EQ(read("[conda] torch                     2.0.1+rocm5.4.2          pypi_0    pypi\n").torch_version,
              "2.0.1+rocm5.4.2");
    // A traceback's paths and a prose mention are no package list.
    EXPECT_FALSE(read("  File \"/usr/lib/python3/dist-packages/torch/nn/modules/module.py\", line 1501\n")
                     .torch_version.has_value());
    EXPECT_FALSE(read("I installed torch 2.1 yesterday\n").torch_version.has_value());
}

TEST(ReportFacts, KernelReleaseFromUnameThenDmesg) {
    EXPECT_EQ(read("Linux box 6.8.0-45-generic #45-Ubuntu SMP PREEMPT_DYNAMIC Fri Aug 30 12:02:04 UTC 2024 x86_64\n")
                  .kernel_release,
              "6.8.0-45-generic");
    EXPECT_EQ(read("[    0.000000] Linux version 6.18.2-arch1-1 (linux@archlinux) (gcc 15.2.1)\n").kernel_release,
              "6.18.2-arch1-1");
}

TEST(ReportFacts, EnvironmentSettingsInTheirUsualShapes) {
    const auto f = read("export HSA_OVERRIDE_GFX_VERSION=\"10.3.0\"\n"
                        "time=2024-05-01T10:00:00 level=INFO msg=\"server config\" env=\"map[CUDA_VISIBLE_DEVICES: "
                        "HIP_VISIBLE_DEVICES:0 OLLAMA_HOST:http://127.0.0.1:11434]\"\n"
                        "os.environ['PYTORCH_HIP_ALLOC_CONF'] = 'expandable_segments:True'\n"
                        "docker run -e MIOPEN_FIND_MODE=FAST rocm/pytorch\n"
                        ":1:hip_code_object.cpp :624 : HSA_STATUS_ERROR_INVALID_ISA: The ISA is invalid\n"
                        "export AMD_SERIALIZE_KERNEL=<level>\n"
                        "If reserved but unallocated memory is large try setting "
                        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n"
                        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n");
    EXPECT_EQ(f.env.at("HSA_OVERRIDE_GFX_VERSION"), "10.3.0");
    EXPECT_EQ(f.env.at("HIP_VISIBLE_DEVICES"), "0");
    EXPECT_EQ(f.env.at("PYTORCH_HIP_ALLOC_CONF"), "expandable_segments:True");
    EXPECT_EQ(f.env.at("MIOPEN_FIND_MODE"), "FAST");
    EXPECT_FALSE(f.env.contains("CUDA_VISIBLE_DEVICES"));  // empty in ollama's map: not set
    EXPECT_FALSE(f.env.contains("HSA_STATUS_ERROR_INVALID_ISA"));
    EXPECT_FALSE(f.env.contains("AMD_SERIALIZE_KERNEL"));     // a placeholder, not a value
    EXPECT_FALSE(f.env.contains("PYTORCH_CUDA_ALLOC_CONF"));  // PyTorch's advice, not a setting
    EXPECT_FALSE(f.env.contains("CUDA_LAUNCH_BLOCKING"));
    EXPECT_FALSE(f.describes_machine());  // settings alone describe no machine
}

TEST(ReportFacts, SmiToolsShowTheChipItself) {
    const auto amd = read("ASIC:\n    MARKET_NAME: Navi 22 [Radeon RX 6700/6700 XT/6750 XT / 6800M/6850M XT]\n"
                          "    VENDOR_ID: 0x1002\n    TARGET_GRAPHICS_VERSION: gfx1031\n"
                          "export HSA_OVERRIDE_GFX_VERSION=10.3.0\n");
    ASSERT_EQ(amd.gpus.size(), 1U);
    EXPECT_EQ(amd.gpus[0].gfx_target, "gfx1031");  // KFD's own target, not the overridden one
    EXPECT_EQ(amd.gpus[0].source, "amd-smi");
    const auto rocm_smi = read("GPU[0]\t\t: Card Series: \t\tNavi 31 [Radeon RX 7900 XT/7900 XTX]\n"
                               "GPU[0]\t\t: GFX Version: \t\tgfx1100\n"
                               "GPU[1]\t\t: GFX Version: \t\tgfx1036\n");
    ASSERT_EQ(rocm_smi.gpus.size(), 2U);
    EXPECT_EQ(rocm_smi.gpus[0].gfx_target, "gfx1100");
    EXPECT_EQ(rocm_smi.gpus[0].marketing_name, "Navi 31 [Radeon RX 7900 XT/7900 XTX]");
    EXPECT_EQ(rocm_smi.gpus[1].gfx_target, "gfx1036");
}

TEST(ReportFacts, RocminfoOutranksOtherGpuListings) {
    std::string text(k_rocminfo_two_gpus);
    text += "GPU models and configuration: Radeon RX 7900 XTX (gfx1100)\n";
    const auto f = read(text);
    ASSERT_EQ(f.gpus.size(), 2U);
    EXPECT_EQ(f.gpus[0].source, "rocminfo");
}

TEST(ReportFacts, TorchPropertiesAndOllamaLines) {
    const auto t = read("_CudaDeviceProperties(name='AMD Radeon RX 6600', major=10, minor=3, gcnArchName='gfx1030', "
                        "total_memory=8176MB, multi_processor_count=14)\nHSA_OVERRIDE_GFX_VERSION=10.3.0\n");
    ASSERT_EQ(t.gpus.size(), 1U);
    EXPECT_EQ(t.gpus[0].gfx_target, "gfx1032");
    const auto o = read("time=2025-01-01 level=INFO source=types.go:131 msg=\"inference compute\" id=0 library=rocm "
                        "variant=\"\" compute=gfx1031 driver=6.3 name=1002:73df total=\"12.0 GiB\"\n"
                        "time=2025-01-01 level=INFO source=types.go:131 msg=\"inference compute\" id=0 library=rocm "
                        "variant=\"\" compute=gfx1031 driver=6.3 name=1002:73df total=\"12.0 GiB\"\n");
    ASSERT_EQ(o.gpus.size(), 1U);
    EXPECT_EQ(o.gpus[0].gfx_target, "gfx1031");
}

TEST(ReportFacts, TemplateGpuFieldCountsOnlyWhenTheProductIsKnown) {
    EXPECT_EQ(read("### GPU\n\nAMD Radeon RX 7600 XT\n").gpus.at(0).gfx_target, "gfx1102");
    EXPECT_TRUE(read("### GPU\n\nsomething odd\n").gpus.empty());
}

TEST(ReportFacts, TheDocumentLeavesUnmentionedThingsAbsent) {
    const auto doc = report_facts_document(read("GPU models and configuration: AMD Radeon RX 5700 XT (gfx1010)\n"
                                                "PyTorch version: 2.1.0+rocm5.6\n"));
    EXPECT_TRUE(doc["driver"]["loaded"].is_null());
    EXPECT_TRUE(doc["kfd"].is_null());
    EXPECT_TRUE(doc["user"].is_null());
    EXPECT_TRUE(doc["torch"][0]["has_libtorch_hip"].is_null());
    EXPECT_EQ(doc["torch"][0]["hip_version"], "5.6");
    EXPECT_EQ(doc["gpus"][0]["family"], "RDNA1");
    EXPECT_EQ(doc["gpus"][0]["officially_supported"], false);
    EXPECT_EQ(doc["gpus"][0]["integrated"], false);  // gfx1010 exists only as a discrete GPU
    // rocminfo of a desktop with its Ryzen iGPU: the target says which one is integrated.
    const auto two = report_facts_document(read(k_rocminfo_two_gpus));
    EXPECT_EQ(two["gpus"][0]["integrated"], false);
    EXPECT_EQ(two["gpus"][1]["integrated"], true);
    const auto json = report_facts_json(read("GPU models and configuration: AMD Radeon RX 5700 XT (gfx1010)\n"));
    EXPECT_EQ(json["gpus"][0]["gfx_target"], "gfx1010");
    EXPECT_FALSE(json.contains("rocm_version"));
}

TEST(ReportFacts, PerNodeOverrideBindsToItsGpu) {
    std::string text(k_rocminfo_two_gpus);
    text.append("HSA_OVERRIDE_GFX_VERSION_2=10.3.0\n");
    const auto doc = report_facts_document(read(text));
    EXPECT_TRUE(doc["gpus"][0]["override"].is_null());
    EXPECT_EQ(doc["gpus"][1]["override"]["variable"], "HSA_OVERRIDE_GFX_VERSION_2");
    EXPECT_EQ(doc["gpus"][1]["override"]["relation"], "same_family");
}

TEST(ReportFacts, GreppedRocminfoPairsEachMarketingNameWithItsOwnAgent) {
    // `rocminfo | grep Name`: the CPU's and NPU's names must not be given to a GPU.
    const auto f = read("  Name:                    AMD RYZEN AI MAX+ 395 w/ Radeon 8060S\n"
                        "  Marketing Name:          AMD RYZEN AI MAX+ 395 w/ Radeon 8060S\n"
                        "  Name:                    gfx1151\n"
                        "  Marketing Name:          Radeon 8060S Graphics\n"
                        "      Name:                    amdgcn-amd-amdhsa--gfx1151\n"
                        "  Name:                    aie2p\n"
                        "  Marketing Name:          RyzenAI-npu5\n");
    ASSERT_EQ(f.gpus.size(), 1U);
    EXPECT_EQ(f.gpus[0].gfx_target, "gfx1151");
    EXPECT_EQ(f.gpus[0].marketing_name, "Radeon 8060S Graphics");
}

TEST(ReportFacts, ClinfoBoardNameComesBeforeItsTarget) {
    const auto f = read("  Board name:\t\t\t\t\t AMD Radeon RX 7900 XTX\n  Name:\t\t\t\t\t\t gfx1100\n"
                        "  Board name:\t\t\t\t\t AMD Radeon Graphics\n  Name:\t\t\t\t\t\t gfx1036\n");
    ASSERT_EQ(f.gpus.size(), 2U);
    EXPECT_EQ(f.gpus[0].marketing_name, "AMD Radeon RX 7900 XTX");
    EXPECT_EQ(f.gpus[0].source, "clinfo");
    EXPECT_EQ(f.gpus[1].gfx_target, "gfx1036");
}

TEST(ReportFacts, VulkanRadvNamesTheChipWhateverTheOverride) {
    const auto f = read("export HSA_OVERRIDE_GFX_VERSION=11.0.0\n"
                        "ggml_vulkan: 0 = AMD Radeon 780M (RADV GFX1103_R1) (radv) | uma: 1\n"
                        "\t\tGPU id = 0 (AMD Radeon RX 7600 (RADV GFX1102))\n");
    ASSERT_EQ(f.gpus.size(), 2U);
    EXPECT_EQ(f.gpus[0].gfx_target, "gfx1103");
    EXPECT_EQ(f.gpus[0].marketing_name, "AMD Radeon 780M");
    EXPECT_EQ(f.gpus[1].gfx_target, "gfx1102");
    EXPECT_EQ(f.gpus[1].marketing_name, "AMD Radeon RX 7600");
}

TEST(ReportFacts, KernelFromFreeFormFields) {
    EXPECT_EQ(read("### Operating System\n\nArch Linux (Linux 6.19.12-arch1-1)\n").kernel_release, "6.19.12-arch1-1");
    EXPECT_EQ(read("Kernel: 6.8.0-45-generic\n").kernel_release, "6.8.0-45-generic");
    // uname's exact form wins over a free-form field wherever each is.
    EXPECT_EQ(read("Kernel: 6.1.0\nLinux box 6.8.0-45-generic #45-Ubuntu SMP\n").kernel_release, "6.8.0-45-generic");
}

TEST(ReportFacts, DeviceNamePrintedByAScript) {
    const auto f = read("CUDA available: True\nDevice: AMD Radeon 8060S\n");
    ASSERT_EQ(f.gpus.size(), 1U);
    EXPECT_EQ(f.gpus[0].gfx_target, "gfx1151");
}

TEST(ReportFacts, AShownTargetThatIsNotTheProductsImpliesAnOverride) {
    // clinfo under HSA_OVERRIDE_GFX_VERSION=12.0.1 shows gfx1201 for a Strix Halo iGPU; the
    // excerpt does not show the variable.
    const auto f = read("  Board name:\t\t\t\t\t AMD Radeon AI PRO R9700\n  Name:\t\t\t\t\t\t gfx1201\n"
                        "  Board name:\t\t\t\t\t Radeon 8060S Graphics\n  Name:\t\t\t\t\t\t gfx1201\n");
    ASSERT_EQ(f.gpus.size(), 2U);
    EXPECT_EQ(f.gpus[1].gfx_target, "gfx1151");
    EXPECT_EQ(f.gpus[1].shown_target, "gfx1201");
    const auto doc = report_facts_document(f);
    EXPECT_TRUE(doc["gpus"][0]["override"].is_null());
    EXPECT_EQ(doc["gpus"][1]["override"]["relation"], "cross_family");
    EXPECT_EQ(doc["gpus"][1]["effective_gfx_target"], "gfx1201");
    EXPECT_NE(doc["gpus"][1]["override"]["variable"].get<std::string>().find("implied"), std::string::npos);
}

TEST(ReportFacts, ComfyUiStartupLines) {
    // ComfyUI prints gcnArchName, torch.version.hip's major and minor, and the device's name.
    const auto f = read("pytorch version: 2.6.0+rocm6.2.4\nAMD arch: gfx1100\nROCm version: (6, 2)\n"
                        "Set vram state to: NORMAL_VRAM\nDevice: cuda:0 AMD Radeon RX 7900 XTX : native\n");
    ASSERT_EQ(f.gpus.size(), 1U);
    EXPECT_EQ(f.gpus[0].gfx_target, "gfx1100");
    EXPECT_EQ(f.gpus[0].marketing_name, "AMD Radeon RX 7900 XTX");
    EXPECT_EQ(f.gpus[0].source, "ComfyUI");
    EXPECT_EQ(f.torch_version, "2.6.0+rocm6.2.4");
    EXPECT_EQ(f.torch_hip_version, "6.2");
    EXPECT_FALSE(f.rocm_version);  // ComfyUI's "ROCm version" is the wheel's HIP, not the install
    // (6, -1): ComfyUI could not read torch.version.hip.
    EXPECT_FALSE(read("ROCm version: (6, -1)\n").torch_hip_version);
}

TEST(ReportFacts, PythonPrintsOfTorchVersions) {
    const auto one_line = read("$ python3 -c 'import torch; print(torch.__version__, torch.version.hip)'\n"
                               "2.5.1+rocm6.2 6.2.41133-dd7f95766\n");
    EXPECT_EQ(one_line.torch_version, "2.5.1+rocm6.2");
    EXPECT_EQ(one_line.torch_hip_version, "6.2.41133-dd7f95766");
    // The REPL echoes strings quoted.
    const auto repl = read(">>> import torch\n>>> torch.__version__\n'2.1.0a0'\n>>> torch.version.hip\n"
                           "'5.6.31061-8c743ae5d'\n");
    EXPECT_EQ(repl.torch_version, "2.1.0a0");
    EXPECT_EQ(repl.torch_hip_version, "5.6.31061-8c743ae5d");
    // Source code that mentions the attribute is not its output.
    const auto code = read("if torch.__version__ >= \"2.0\":\n    model = torch.compile(model)\n");
    EXPECT_FALSE(code.torch_version);
    // A sentence that starts with a version is not the print either.
    EXPECT_FALSE(read("2.3.0+rocm6.0 works but 2.4.0+rocm6.1 does not\n").torch_version);
}

TEST(ReportFacts, CommandsWhoseNextLineIsAVersion) {
    const auto f = read("$ cat /opt/rocm/.info/version\n6.3.1-48\n$ uname -r\n6.11.0-19-generic\n");
    EXPECT_EQ(f.rocm_version, "6.3.1");
    EXPECT_EQ(f.kernel_release, "6.11.0-19-generic");
    EXPECT_EQ(read("$ hipconfig --version\n6.3.42131-fa1d09cbd\n").rocm_version, "6.3");
    EXPECT_EQ(read("$ hipconfig\nHIP version  : 5.7.31921-d1770ee1b\n").rocm_version, "5.7");
    // An error instead of the version says nothing.
    EXPECT_FALSE(
        read("$ cat /opt/rocm/.info/version\ncat: /opt/rocm/.info/version: No such file or directory\n").rocm_version);
}

TEST(ReportFacts, AgentEnumeratorsListOneTargetPerLine) {
    const auto f = read("$ rocm_agent_enumerator\ngfx000\ngfx1036\ngfx1101\n$ echo done\n");
    ASSERT_EQ(f.gpus.size(), 2U);  // gfx000 is the CPU agent
    EXPECT_EQ(f.gpus[0].gfx_target, "gfx1036");
    EXPECT_EQ(f.gpus[1].gfx_target, "gfx1101");
    EXPECT_EQ(f.gpus[1].source, "rocm_agent_enumerator");
    const auto g = read("$ amdgpu-arch\ngfx1201:sramecc-\nerror: something else\ngfx1100\n");
    ASSERT_EQ(g.gpus.size(), 1U);  // the list ends at the first other line
    EXPECT_EQ(g.gpus[0].gfx_target, "gfx1201");
    // rocminfo lists the same agents with their names: it wins.
    const std::string both = "$ rocm_agent_enumerator\ngfx000\ngfx1100\n" + std::string(k_rocminfo_two_gpus);
    const auto h = read(both);
    ASSERT_EQ(h.gpus.size(), 2U);
    EXPECT_EQ(h.gpus[0].source, "rocminfo");
}

// Identical GPUs: a listing's rows are distinct agents; the same listing pasted twice, or two
// tools listing the same GPUs, are not more GPUs.
TEST(ReportFacts, OneListingsAlikeRowsAreThatManyGpus) {
    const auto f = read("$ rocm_agent_enumerator\ngfx942\ngfx942\ngfx942\ngfx942\n\n");
    ASSERT_EQ(f.gpus.size(), 4U);
    for (const auto& g : f.gpus) EXPECT_EQ(g.gfx_target, "gfx942");

    const std::string agent = "*******\nAgent {}\n*******\n  Name:                    gfx1100\n"
                              "  Marketing Name:          Radeon RX 7900 XTX\n  Device Type:             GPU\n";
    const std::string rocminfo = "*******\nAgent 1\n*******\n  Name:                    AMD Ryzen 9 7950X\n" +
                                 fmt::format(fmt::runtime(agent), 2) + fmt::format(fmt::runtime(agent), 3);
    const auto two = read(rocminfo);
    ASSERT_EQ(two.gpus.size(), 2U);
    EXPECT_EQ(two.gpus[1].marketing_name, "Radeon RX 7900 XTX");
    EXPECT_EQ(read(rocminfo + "\n" + rocminfo).gpus.size(), 2U);  // pasted twice: Agent 1 starts another run
    EXPECT_EQ(read("$ rocm_agent_enumerator\ngfx1100\ngfx1100\n\n" + rocminfo).gpus.size(), 2U);

    // rocminfo | grep gfx: Name lines without their Agent lines say nothing of how many GPUs.
    EXPECT_EQ(read("  Name:                    gfx1100\n  Name:                    gfx1100\n").gpus.size(), 1U);
}

TEST(ReportFacts, LspciNamesTheChips) {
    const std::string lspci =
        "$ lspci | grep -E 'VGA|Display|Audio'\n"
        "03:00.0 VGA compatible controller [0300]: Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 [Radeon RX 7900 "
        "XT/7900 XTX/7900 GRE/7900M] [1002:744c] (rev c8)\n"
        "03:00.1 Audio device: Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 HDMI/DP Audio\n"
        "0e:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Raphael (rev c1)\n"
        "0f:00.0 Display controller: Advanced Micro Devices, Inc. [AMD/ATI] Device 13c0 (rev c1)\n";
    const auto f = read(lspci);
    ASSERT_EQ(f.gpus.size(), 2U);  // the audio function and the unknown device are no GPUs here
    EXPECT_EQ(f.gpus[0].gfx_target, "gfx1100");
    EXPECT_EQ(f.gpus[0].source, "lspci 03:00.0");
    EXPECT_EQ(f.gpus[1].gfx_target, "gfx1036");      // the desktop Ryzen's iGPU next to the card
    EXPECT_EQ(read(lspci + lspci).gpus.size(), 2U);  // pasted twice: the same addresses
    // Two cards of one kind are two GPUs.
    const auto two =
        read("0a:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 48 (rev c0)\n"
             "0b:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 48 (rev c0)\n");
    ASSERT_EQ(two.gpus.size(), 2U);
    EXPECT_EQ(two.gpus[1].gfx_target, "gfx1201");
    // rocminfo, when shown, describes the GPUs the runtime uses.
    const auto both = read(lspci + std::string(k_rocminfo_two_gpus));
    ASSERT_EQ(both.gpus.size(), 2U);
    EXPECT_EQ(both.gpus[0].source, "rocminfo");
}

TEST(ReportFacts, WindowsVideoControllersNameTheCards) {
    // PowerShell, then wmic: names up to the next prompt; the generic iGPU name says no chip.
    const auto f = read("PS C:\\Users\\u> (Get-WmiObject win32_VideoController).Name\n"
                        "AMD Radeon(TM) Graphics\nAMD Radeon RX 7900 XTX\nPS C:\\Users\\u> hipInfo\n");
    ASSERT_EQ(f.gpus.size(), 1U);
    EXPECT_EQ(f.gpus[0].gfx_target, "gfx1100");
    EXPECT_EQ(f.gpus[0].source, "win32_VideoController");
    const auto g = read("C:\\> wmic path win32_VideoController get name\nName\nAMD Radeon RX 6600\n\nC:\\> x\n");
    ASSERT_EQ(g.gpus.size(), 1U);
    EXPECT_EQ(g.gpus[0].gfx_target, "gfx1032");
}

TEST(ReportFacts, ACardTheRuntimeDidNotListJoinsAnIgpuOnlyList) {
    // amdgpu-arch lists only the desktop Ryzen's iGPU, Windows shows an RX 6800 XT as well.
    const std::string windows = "PS C:\\> (Get-WmiObject win32_VideoController).Name\n"
                                "AMD Radeon(TM) Graphics\nAMD Radeon RX 6800 XT\nPS C:\\>\n";
    const auto f = read("PS C:\\> amdgpu-arch\ngfx1036\nPS C:\\>\n" + windows);
    ASSERT_EQ(f.gpus.size(), 2U);
    EXPECT_EQ(f.gpus[0].gfx_target, "gfx1036");
    EXPECT_EQ(f.gpus[1].gfx_target, "gfx1030");
    // A runtime list with a discrete GPU stands as it is: the hardware adds nothing to it (an
    // iGPU the runtime does not list is not one it uses).
    const auto g = read("$ rocm_agent_enumerator\ngfx1100\n\n"
                        "0e:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Raphael (rev c1)\n");
    ASSERT_EQ(g.gpus.size(), 1U);
    EXPECT_EQ(g.gpus[0].gfx_target, "gfx1100");
}

TEST(ReportFacts, SectionsAreReadThroughPasteWrappers) {
    // rocminfo's agent section as a docker compose service prints it (line_wrappers.hpp).
    const auto f = read("rocm-1  | *******\n"
                        "rocm-1  | Agent 2\n"
                        "rocm-1  | *******\n"
                        "rocm-1  |   Name:                    gfx1031\n"
                        "rocm-1  |   Marketing Name:          AMD Radeon RX 6700 XT\n"
                        "rocm-1  |   Device Type:             GPU\n");
    ASSERT_EQ(f.gpus.size(), 1U);
    EXPECT_EQ(f.gpus[0].gfx_target, "gfx1031");
    EXPECT_EQ(f.gpus[0].marketing_name, "AMD Radeon RX 6700 XT");
}

TEST(ReportFacts, AVersionWithoutItsBuildStatesNoTorchInstall) {
    // "2.0.0" is a distribution's ROCm build as much as PyPI's CUDA build: no torch install is
    // stated, so no entry judges its build (torch-cpu-build read an absent HIP version as CPU).
    const auto bare = report_facts_document(read("PyTorch version: 2.0.0\n"));
    EXPECT_TRUE(bare["torch"].empty());
    const auto rocm = report_facts_document(read("PyTorch version: 2.3.0+rocm6.0\n"));
    ASSERT_EQ(rocm["torch"].size(), 1U);
    EXPECT_EQ(rocm["torch"][0]["hip_version"], "6.0");
    const auto cpu = report_facts_document(read("PyTorch version: 2.3.0+cpu\n"));
    ASSERT_EQ(cpu["torch"].size(), 1U);
    EXPECT_TRUE(cpu["torch"][0]["hip_version"].is_null());
}

// Every variable detect reports is read from a report too (the probe is built from the same
// lists: detect/detect.hpp): TORCH_ROCM_* and LD_LIBRARY_PATH were once missed.
TEST(ReportFacts, EveryVariableDetectReportsIsReadFromAReport) {
    const auto names = relevant_env_names();
    std::vector<std::string> all;
    for (const auto p : names.prefixes) all.push_back(std::string(p) + "RMCP_TEST");
    for (const auto e : names.exact) all.emplace_back(e);
    for (const auto& name : all) {
        ASSERT_TRUE(is_relevant_env(name)) << name;
        const auto f = read("export " + name + "=1\n");
        EXPECT_EQ(f.env.count(name), 1U) << name;
    }
}

}  // namespace
}  // namespace rmcp::explain
