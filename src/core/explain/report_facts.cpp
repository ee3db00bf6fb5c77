#include "explain/report_facts.hpp"

#include "explain/matcher.hpp"

#include "detect/detect.hpp"
#include "detect/gfx.hpp"
#include "facts/facts_json.hpp"
#include "util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <regex>

namespace rmcp::explain {

namespace {

// The probes, in the order of report_probes(); each names the tool output it reads.
enum class Probe : std::size_t {
    agent,       // rocminfo: "Agent 2"
    agent_name,  // rocminfo: "  Name:                    gfx1031" (and the CPU's, NPU's names); clinfo: "  Name:  gfx1201"
    agent_marketing,  // rocminfo: "  Marketing Name:          AMD Radeon RX 6700 XT"
    board_name,       // clinfo: "  Board name:  AMD Radeon AI PRO R9700" (before its Name line)
    collect_env_gpu,  // collect_env: "GPU models and configuration: AMD Radeon RX 6800 XT (gfx1030)"
    torch_version,    // collect_env "PyTorch version: 2.3.0+rocm6.0", ComfyUI "pytorch version: ..."
    torch_hip,        // collect_env: "ROCM used to build PyTorch: 6.0.32830-d62f6a171"
    pip_torch,        // pip freeze / collect_env "[pip3] torch==2.3.0+rocm6.0"
    pip_torch_list,   // pip list / conda list: "torch     2.3.0+rocm6.0" (columns padded with spaces)
    rocm_field,       // issue template "### ROCm Version" + value; amd-smi "ROCm version: 6.3.1"
    rocm_package,     // dpkg/apt: "rocm-core 6.1.0.60100-82~22.04"
    rocm_path,        // "/opt/rocm-6.1.0/lib/..." in tracebacks and loader messages
    uname,            // "Linux host 6.5.0-28-generic #29~22.04.1-Ubuntu SMP ..."
    python_platform,  // collect_env: "Python platform: Linux-6.5.0-28-generic-x86_64-with-glibc2.35"
    linux_version,    // dmesg: "Linux version 6.8.0-45-generic (buildd@...)"
    env,              // "export HSA_OVERRIDE_GFX_VERSION=10.3.0", ollama "map[HSA_OVERRIDE_GFX_VERSION:10.3.0 ...]"
    amdsmi_name,      // amd-smi static: "MARKET_NAME: Navi 31 [Radeon RX 7900 XT/7900 XTX]"
    amdsmi_target,    // amd-smi static: "TARGET_GRAPHICS_VERSION: gfx1100"
    rocmsmi_series,   // rocm-smi: "GPU[0]		: Card Series: 		Navi 22 [Radeon RX 6700/6700 XT/6750 XT / 6800M/6850M XT]"
    rocmsmi_gfx,      // rocm-smi: "GPU[0]		: GFX Version: 		gfx1031"
    torch_props,      // "_CudaDeviceProperties(name='AMD Radeon RX 6700 XT', ..., gcnArchName='gfx1030', ...)"
    ollama_gpu,       // ollama: "... compute=gfx1030 ... name=..." / "gpu_type=gfx1031"
    gpu_field,        // issue template "### GPU" + value, "GPU: AMD Radeon RX 7600 XT", "Device: AMD Radeon 8060S"
    radv,             // Vulkan (RADV): "GPU id = 0 (AMD Radeon AI PRO R9700 (RADV GFX1201))": the chip itself
    kernel_field,     // "Kernel: 6.5.0-28-generic", "Arch Linux (Linux 6.19.12-arch1-1)"
    comfy_arch,       // ComfyUI: "AMD arch: gfx1151" (gcnArchName of its device)
    comfy_device,     // ComfyUI: "Device: cuda:0 AMD Radeon RX 7900 XTX : native"
    torch_print,      // print(torch.__version__): "2.3.0+rocm6.0" (then torch.version.hip, if printed too)
    version_command,  // a command whose next lines are a version: cat /opt/rocm/.info/version, uname -r,
                      // hipconfig --version, print(torch.version.hip)
    agent_list,       // rocm_agent_enumerator / amdgpu-arch / offload-arch, then one target per line
    lspci,            // "03:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 48"
    video_controllers,  // Windows: (Get-WmiObject win32_VideoController).Name, wmic ... get name, then names
    count
};

const std::vector<LineProbe>& probes() {
    static const std::vector<LineProbe> k_probes{
        {R"(^[\s>*]*Agent \d+\s*$)", 0},
        {R"(^[\s>]*Name:[ \t]+\S)", 0},
        {R"(^[\s>]*Marketing Name:[ \t]*\S)", 0},
        {R"(^[\s>]*Board name:[ \t]*\S)", 0},
        {R"(GPU models and configuration:)", 4},
        {R"((?i)\b(PyTorch|torch) version\s*:\s*v?\d+\.\d+)", 0},
        {R"(ROCM used to build PyTorch:\s*\d)", 0},
        // Two probes, not one with "(==|\s+)": Hyperscan then looks for the bare word "torch",
        // which every traceback line holds, and the whole scan got 6% slower (issue 13,
        // docs/PERFORMANCE.md); "torch==" and "torch" + two spaces are rare outside package lists.
        {R"(^[\s>]*(\[(pip3?|conda)\]\s+)?torch==\d+\.\d+)", 0},
        {R"(^[\s>]*(\[(pip3?|conda)\]\s+)?torch  +\d+\.\d+)", 0},
        {R"((?i)\bROCm version\b)", 3},
        {R"(\brocm-(core|dev|libs)\b[^\n]{0,40}?\d+\.\d+\.\d+)", 0},
        {R"([/-]rocm-\d+\.\d+\.\d+/)", 0},
        {R"(\bLinux \S+ \d+\.\d+\.\d+\S* #\d)", 0},
        {R"(Python platform: Linux-\d+\.\d+)", 0},
        {R"(\bLinux version \d+\.\d+\.\d+\S* \()", 0},
        {R"(\b(HSA|HIP|ROCR|ROCM|MIOPEN|ROCBLAS|PYTORCH|AMD|GPU|CUDA)_[A-Z0-9_]+)", 0},
        {R"(MARKET_NAME:\s*\S)", 0},
        {R"(TARGET_GRAPHICS_VERSION:\s*gfx[0-9a-f]+)", 0},
        {R"(GPU\[\d+\]\s*:\s*Card (Series|SKU|Model):)", 0},
        {R"(GPU\[\d+\]\s*:\s*GFX Version:\s*gfx[0-9a-f]+)", 0},
        {R"(gcnArchName='gfx[0-9a-f]+)", 0},
        {R"(\b(gpu_type|compute)=gfx[0-9a-f]+)", 0},
        {R"((?i)^[\s>#*-]*(GPU|GPU model|Graphics card)\s*(:|$)|(?i)\b(device|device name|device detected|using device)\s*:\s*(AMD )?Radeon)",
         3},
        {R"(\(RADV GFX[0-9A-F]{3,4}(_R\d+)?\))", 0},
        {R"((?i)(\bkernel( version| release)?\s*[:=]\s*v?\d+\.\d+\.\d+|\(Linux \d+\.\d+\.\d+))", 0},
        {R"(^AMD arch: gfx[0-9a-f]+)", 0},
        {R"(^Device: cuda:\d+ [^\n]+ : (native|cudaMallocAsync))", 0},
        {R"(^[\s>]*\d+\.\d+\.\d+[a-z0-9.]*\+rocm\d+\.\d+)", 0},
        {R"(\.info/version\b|\buname -r\b|\bhipconfig( +(--version|-v|--full))?\s*$|torch\.version\.hip\b|torch\.__version__)",
         4},
        {R"(\b(rocm_agent_enumerator|amdgpu-arch|offload-arch)\b[^\n]*$)", 8},
        {R"((VGA compatible|Display|3D) controller( \[[0-9a-f]{4}\])?: Advanced Micro Devices, Inc\. \[AMD/ATI\] \S)",
         0},
        {R"((?i)win32_VideoController\b[^\n]*$)", 6},
    };
    return k_probes;
}

// Source ranks for GPUs: the most complete per-agent list wins.
enum GpuRank {
    k_rocminfo = 0,
    k_amdsmi,
    k_rocmsmi,
    k_radv,
    k_agent_list,
    k_collect_env,
    k_torch,
    k_ollama,
    k_hardware,  // the hardware as the bus or the OS shows it (lspci, Windows' video controllers)
    k_template
};

// A value as the Python REPL echoes it: '2.0.0a0' → 2.0.0a0.
std::string_view unquoted(std::string_view text) {
    text = trim(text);
    if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') && text.back() == text.front())
        text = text.substr(1, text.size() - 2);
    return text;
}

// The HIP runtime's own version format ("6.0.32830-d62f6a171"): torch.version.hip, hipconfig.
bool is_hip_version(std::string_view text) {
    static const std::regex re(R"(^\d+\.\d+\.\d{5}(-[0-9a-f]+)?$)");
    return std::regex_match(text.begin(), text.end(), re);
}

std::optional<std::string> first_match(const std::string& text, const std::regex& re, std::size_t group = 1) {
    std::smatch m;
    if (std::regex_search(text, m, re)) return m[group].str();
    return std::nullopt;
}

std::string value_after(const std::string& line, std::string_view key) {
    const auto pos = line.find(key);
    if (pos == std::string::npos) return {};
    return std::string(trim(std::string_view(line).substr(pos + key.size())));
}

// "v6.1.0" / "ROCm 6.1.0" / "6.1" → "6.1.0" / "6.1"; nullopt when no version starts the text.
std::optional<std::string> leading_version(std::string_view text) {
    text = trim(text);
    if (starts_with_ci(text, "rocm")) text = trim(text.substr(4));
    if (!text.empty() && (text.front() == 'v' || text.front() == 'V')) text.remove_prefix(1);
    static const std::regex re(R"(^(\d+\.\d+(?:\.\d+)?))");
    std::cmatch m;
    if (std::regex_search(text.data(), text.data() + text.size(), m, re)) return m[1].str();
    return std::nullopt;
}

// A product name as a terminal shows it: colour codes dropped, control bytes and invalid
// UTF-8 replaced, so it can go into JSON and text output as it is.
std::string printable(std::string_view text) {
    ExcerptLine line{0, std::string(text), false};
    return std::string(trim(printable_line(line)));
}

// Values a report shows for a variable: a plain token or a quoted string; placeholders
// ("<version>", "$VAR", "`...`") are not values.
bool plausible_value(std::string_view v) {
    return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == ',' ||
               c == ':' || c == '/' || c == '_' || c == '-' || c == '+' || c == '=';
    });
}

// Runtimes suggest settings in their messages ("If reserved but unallocated memory is large
// try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:True", "For debugging consider
// passing AMD_SERIALIZE_KERNEL=3"): a suggestion is not a setting of the reporter's.
bool is_advice(std::string_view before) {
    const auto lower = to_lower(before.substr(before.size() > 24 ? before.size() - 24 : 0));
    for (const std::string_view verb : {"setting ", "passing ", "try ", "consider "})
        if (lower.ends_with(verb)) return true;
    return false;
}

bool name_char(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

// Every NAME=value / NAME:value (ollama's server config map) on a line, for the variables
// detect reports. "HSA_STATUS_ERROR_X: text" is a message, not a setting: the colon form
// needs the value right after the colon, as ollama prints it.
void parse_env_line(std::string_view line, std::map<std::string, std::string>& env) {
    for (std::size_t i = 0; i < line.size();) {
        if (!name_char(line[i]) || (i > 0 && name_char(line[i - 1]))) {
            ++i;
            continue;
        }
        std::size_t end = i;
        while (end < line.size() && name_char(line[end])) ++end;
        const std::string name(line.substr(i, end - i));
        i = end;
        if (!is_relevant_env(name) || is_advice(line.substr(0, end - name.size()))) continue;
        std::size_t p = end;
        // os.environ["NAME"] = "value"
        while (p < line.size() && (line[p] == '"' || line[p] == '\'' || line[p] == ']')) ++p;
        std::size_t q = p;
        while (q < line.size() && line[q] == ' ') ++q;
        if (q >= line.size()) continue;
        const char sep = line[q];
        if (sep == ':' && (q != end || q + 1 >= line.size() || line[q + 1] == ' ')) continue;
        if (sep != '=' && sep != ':') continue;
        ++q;
        if (sep == '=')
            while (q < line.size() && line[q] == ' ') ++q;
        std::string value;
        if (q < line.size() && (line[q] == '"' || line[q] == '\'')) {
            const char quote = line[q];
            const auto close = line.find(quote, q + 1);
            if (close == std::string_view::npos) continue;
            value = std::string(line.substr(q + 1, close - q - 1));
            i = close + 1;
        } else {
            std::size_t v = q;
            while (v < line.size() && line[v] != ' ' && line[v] != '\t' && line[v] != ']' && line[v] != ';' &&
                   line[v] != '"' && line[v] != '\'' && line[v] != ',' && line[v] != ')')
                ++v;
            value = std::string(line.substr(q, v - q));
            i = v;
        }
        if (plausible_value(value)) env[name] = value;
    }
}

}  // namespace

std::span<const LineProbe> report_probes() { return probes(); }

bool ReportFacts::describes_machine() const {
    return std::any_of(gpus.begin(), gpus.end(),
                       [](const ReportGpu& g) { return !g.shown_target.empty() || !g.gfx_target.empty(); }) ||
           rocm_version || torch_version || torch_hip_version;
}

void ReportReader::version(const std::string& key, int rank, std::string value) {
    value = printable(value);
    auto it = m_versions.find(key);
    if (it == m_versions.end() || rank <= it->second.first) m_versions[key] = {rank, std::move(value)};
}

void ReportReader::gpu_line(const std::string& input, int rank, std::string source, std::string target,
                            std::string name, bool real, int listing) {
    m_gpus.push_back(Candidate{rank, std::move(source), input, std::move(target), printable(name), real, listing});
}

int ReportReader::listing_of(const std::string& key) {
    auto [it, inserted] = m_keyed_listings.try_emplace(key, 0);
    if (inserted) it->second = new_listing();
    return it->second;
}

void ReportReader::add(const std::string& input, const ProbeHit& hit) {
    if (hit.lines.empty() || hit.probe >= probes().size()) return;
    const std::string& line = hit.lines.front();
    const auto after = [&](std::size_t k) -> std::string_view {
        return k < hit.lines.size() ? trim(hit.lines[k]) : std::string_view{};
    };
    static const std::regex gfx_re(R"((gfx[0-9a-f]{3,4})\b)");

    switch (static_cast<Probe>(hit.probe)) {
    case Probe::agent: {
        m_last_name.reset();
        static const std::regex number_re(R"(Agent (\d{1,9}))");
        const auto number = std::stoul(first_match(line, number_re).value_or("0"));
        if (!m_last_agent || m_last_agent->input != input || number <= m_last_agent->number)
            m_rocminfo_listing = new_listing();
        m_last_agent = AgentLine{input, hit.line, number};
        break;
    }
    case Probe::agent_name: {
        const auto value = value_after(line, "Name:");
        NameLine here{input, hit.line, std::nullopt};
        if (auto gfx = first_match(value, gfx_re); gfx && value.starts_with("gfx")) {
            std::string board;
            // clinfo: the board name a line or two before belongs to this device.
            if (m_pending_board && m_pending_board->first.input == input && hit.line - m_pending_board->first.line <= 3)
                board = m_pending_board->second;
            const bool after_agent = m_last_agent && m_last_agent->input == input && hit.line > m_last_agent->line &&
                                     hit.line - m_last_agent->line <= 3;
            gpu_line(input, k_rocminfo, board.empty() ? "rocminfo" : "clinfo", *gfx, board, false,
                     after_agent ? m_rocminfo_listing : new_listing());
            here.gpu = m_gpus.size() - 1;
        }
        m_pending_board.reset();
        m_last_name = here;
        break;
    }
    case Probe::agent_marketing:
        // rocminfo: belongs to the agent whose Name line just came (a CPU's or NPU's name is
        // paired too, and so dropped).
        if (m_last_name && m_last_name->input == input && hit.line - m_last_name->line <= 4 && m_last_name->gpu) {
            auto& gpu = m_gpus[*m_last_name->gpu];
            if (gpu.marketing_name.empty()) gpu.marketing_name = printable(value_after(line, "Marketing Name:"));
        }
        break;
    case Probe::board_name:
        m_pending_board = {NameLine{input, hit.line, std::nullopt}, printable(value_after(line, "Board name:"))};
        break;
    case Probe::collect_env_gpu: {
        static const std::regex re(R"((.*?)\s*\((gfx[0-9a-f]{3,4})[^)]*\)\s*$)");
        const int listing = new_listing();
        std::vector<std::string> rows{value_after(line, "GPU models and configuration:")};
        for (std::size_t k = 1; k < hit.lines.size(); ++k) rows.emplace_back(after(k));
        for (const auto& row : rows) {
            std::smatch m;
            if (!std::regex_search(row, m, re)) break;  // the list ends at the first other line
            gpu_line(input, k_collect_env, "collect_env", m[2].str(), std::string(trim(m[1].str())), false, listing);
        }
        break;
    }
    case Probe::torch_version:
        if (auto v = leading_version(line.substr(line.find(':') + 1))) {
            const auto full = std::string(trim(std::string_view(line).substr(line.find(':') + 1)));
            version("torch", 1, full.substr(0, full.find_first_of(" \t")));
        }
        break;
    case Probe::torch_hip: {
        const auto v = value_after(line, "ROCM used to build PyTorch:");
        if (leading_version(v)) version("torch_hip", 1, v.substr(0, v.find_first_of(" \t")));
        break;
    }
    case Probe::pip_torch:
    case Probe::pip_torch_list: {
        static const std::regex re(R"(torch(?:==|\s+)(\d+\.\d+\S*))");
        if (auto v = first_match(line, re)) version("torch", 2, *v);
        break;
    }
    case Probe::rocm_field: {
        // ComfyUI: "ROCm version: (6, 4)" is torch.version.hip's major and minor ((6, -1) when
        // unknown): the HIP the wheel was built with, not the installed ROCm.
        static const std::regex comfy_re(R"(^ROCm version: \((\d+), (\d+)\)\s*$)");
        if (std::smatch m; std::regex_match(line, m, comfy_re)) {
            version("torch_hip", 3, m[1].str() + "." + m[2].str());
            break;
        }
        static const std::regex re(R"([Rr][Oo][Cc][Mm] [Vv]ersion\W*(.*))");
        auto rest = first_match(line, re).value_or("");
        std::optional<std::string> v = leading_version(rest);
        for (std::size_t k = 1; !v && rest.empty() && k < hit.lines.size(); ++k) {
            if (after(k).empty()) continue;
            v = leading_version(after(k));
            break;
        }
        if (v) version("rocm", 1, *v);
        break;
    }
    case Probe::rocm_package: {
        static const std::regex re(R"(\brocm-(?:core|dev|libs)\b.*?(\d+\.\d+\.\d+))");
        if (auto v = first_match(line, re)) version("rocm", 2, *v);
        break;
    }
    case Probe::rocm_path: {
        static const std::regex re(R"([/-]rocm-(\d+\.\d+\.\d+)/)");
        if (auto v = first_match(line, re)) version("rocm", 3, *v);
        break;
    }
    case Probe::uname: {
        static const std::regex re(R"(\bLinux \S+ (\d+\.\d+\.\d+\S*) #\d)");
        if (auto v = first_match(line, re)) version("kernel", 1, *v);
        break;
    }
    case Probe::python_platform: {
        static const std::regex re(R"(Python platform: Linux-(\d+\.\d+\.\d+.*?)-(x86_64|aarch64)\b)");
        if (auto v = first_match(line, re)) version("kernel", 2, *v);
        break;
    }
    case Probe::linux_version: {
        static const std::regex re(R"(\bLinux version (\d+\.\d+\.\d+\S*) \()");
        if (auto v = first_match(line, re)) version("kernel", 3, *v);
        break;
    }
    case Probe::env: parse_env_line(line, m_env); break;
    case Probe::amdsmi_name: {
        // MARKET_NAME comes before TARGET_GRAPHICS_VERSION in `amd-smi static`: keep it for the target.
        gpu_line(input, k_amdsmi, "amd-smi", "", value_after(line, "MARKET_NAME:"), true, new_listing());
        break;
    }
    case Probe::amdsmi_target:
        if (auto gfx = first_match(line, gfx_re)) {
            if (!m_gpus.empty() && m_gpus.back().rank == k_amdsmi && m_gpus.back().input == input &&
                m_gpus.back().shown_target.empty())
                m_gpus.back().shown_target = *gfx;
            else gpu_line(input, k_amdsmi, "amd-smi", *gfx, "", true, new_listing());
        }
        break;
    case Probe::rocmsmi_series:
    case Probe::rocmsmi_gfx: {
        static const std::regex index_re(R"(GPU\[(\d+)\])");
        const auto index = first_match(line, index_re).value_or("?");
        const std::string source = "rocm-smi GPU[" + index + "]";
        auto it = std::find_if(m_gpus.begin(), m_gpus.end(),
                               [&](const Candidate& c) { return c.source == source && c.input == input; });
        if (it == m_gpus.end()) {
            gpu_line(input, k_rocmsmi, source, "", "", true, listing_of("rocm-smi\n" + input));
            it = std::prev(m_gpus.end());
        }
        if (static_cast<Probe>(hit.probe) == Probe::rocmsmi_gfx) {
            if (auto gfx = first_match(line.substr(line.find("GFX Version")), gfx_re)) it->shown_target = *gfx;
        } else {
            const auto colon = line.find(':', line.find("Card "));
            it->marketing_name = printable(std::string_view(line).substr(colon + 1));
        }
        break;
    }
    case Probe::torch_props: {
        static const std::regex re(R"((?:name='([^']*)'.*?)?gcnArchName='(gfx[0-9a-f]{3,4}))");
        std::smatch m;
        if (std::regex_search(line, m, re))
            gpu_line(input, k_torch, "torch", m[2].str(), m[1].str(), false, new_listing());
        break;
    }
    case Probe::ollama_gpu: {
        static const std::regex re(R"(\b(?:gpu_type|compute)=(gfx[0-9a-f]{3,4}))");
        static const std::regex name_re(R"(\bname="([^"]+)\")");
        if (auto gfx = first_match(line, re)) {
            const auto name = first_match(line, name_re).value_or("");
            // ollama repeats its GPU list on every start: one row per target and name.
            const bool seen = std::any_of(m_gpus.begin(), m_gpus.end(), [&](const Candidate& c) {
                return c.rank == k_ollama && c.shown_target == *gfx && c.marketing_name == name;
            });
            if (!seen) gpu_line(input, k_ollama, "ollama", *gfx, name, true, listing_of("ollama\n" + input));
        }
        break;
    }
    case Probe::radv: {
        // Vulkan does not see HSA_OVERRIDE_GFX_VERSION: RADV names the chip itself.
        // "GPU id = 0 (AMD Radeon AI PRO R9700 (RADV GFX1201))", "0 = AMD Radeon 780M (RADV GFX1103_R1)"
        static const std::regex re(R"(([^()=]*?)\s*\(RADV GFX([0-9A-F]{3,4})(?:_R\d+)?\))");
        std::smatch m;
        if (std::regex_search(line, m, re))
            gpu_line(input, k_radv, "vulkan (RADV)", "gfx" + to_lower(m[2].str()), std::string(trim(m[1].str())), true,
                     new_listing());
        break;
    }
    case Probe::kernel_field: {
        static const std::regex re(
            R"((?:[Kk]ernel(?: version| release)?\s*[:=]\s*v?|\(Linux )(\d+\.\d+\.\d+[A-Za-z0-9_.+~-]*))");
        if (auto v = first_match(line, re)) version("kernel", 4, *v);
        break;
    }
    case Probe::gpu_field: {
        std::string name(trim(
            std::string_view(line).substr(line.find(':') == std::string::npos ? line.size() : line.find(':') + 1)));
        for (std::size_t k = 1; name.empty() && k < hit.lines.size(); ++k) name = std::string(after(k));
        // Only a name the product table knows says which chip it is.
        if (gfx_for_marketing_name(name)) gpu_line(input, k_template, "issue template", "", name, false, new_listing());
        break;
    }
    case Probe::comfy_arch:
        // ComfyUI prints gcnArchName: the target the runtime shows (an override changes it).
        if (auto gfx = first_match(line, gfx_re)) gpu_line(input, k_torch, "ComfyUI", *gfx, "", false, new_listing());
        break;
    case Probe::comfy_device: {
        // "Device: cuda:0 <torch.cuda.get_device_name()> : <allocator>": the name of the device
        // whose "AMD arch" line came just before.
        static const std::regex re(R"(Device: cuda:\d+ (.+) : (?:native|cudaMallocAsync))");
        const auto name = first_match(line, re).value_or("");
        if (name.empty()) break;
        if (!m_gpus.empty() && m_gpus.back().source == "ComfyUI" && m_gpus.back().input == input &&
            m_gpus.back().marketing_name.empty())
            m_gpus.back().marketing_name = printable(name);
        else if (gfx_for_marketing_name(name)) gpu_line(input, k_torch, "ComfyUI", "", name, false, new_listing());
        break;
    }
    case Probe::torch_print: {
        // "2.3.0+rocm6.0", alone or with torch.version.hip after it on the line.
        static const std::regex re(R"(^[\s>]*(\S+)(?:[ \t]+(\S+))?\s*$)");
        std::smatch m;
        if (!std::regex_match(line, m, re)) break;  // more words: a sentence that starts with a version
        version("torch", 3, m[1].str());
        if (m[2].matched && is_hip_version(m[2].str())) version("torch_hip", 2, m[2].str());
        break;
    }
    case Probe::version_command: {
        // What the command prints on the lines after it, when it is a version in the form that
        // command prints; anything else (prose, an error, source code) says nothing. The Python
        // REPL echoes strings quoted ('2.0.0a0').
        std::vector<std::string_view> out;
        for (std::size_t k = 1; k < hit.lines.size(); ++k)
            if (!after(k).empty()) out.push_back(unquoted(after(k)));
        const std::string_view next = out.empty() ? std::string_view{} : out.front();
        const bool torch_hip = line.find("torch.version.hip") != std::string::npos;
        const bool torch_ver = line.find("torch.__version__") != std::string::npos;
        if (torch_hip || torch_ver) {
            // One value per line, or both on one line (print(torch.__version__, torch.version.hip)).
            static const std::regex torch_re(R"(^\d+\.\d+(\.\d+)?[a-z0-9.+]*$)");
            bool have_torch = !torch_ver;
            for (const auto row : out) {
                bool used = false;
                for (const auto word : split(row, ' ')) {
                    const auto w = unquoted(word);
                    if (torch_hip && is_hip_version(w)) {
                        version("torch_hip", 2, std::string(w));
                        used = true;
                    } else if (!have_torch && std::regex_match(w.begin(), w.end(), torch_re)) {
                        version("torch", 3, std::string(w));
                        have_torch = used = true;
                    }
                }
                if (!used) break;  // the output ends at the first line that is not a version
            }
        } else if (line.find(".info/version") != std::string::npos) {
            static const std::regex re(R"(^\d+\.\d+\.\d+(-\d+)?$)");
            if (std::regex_match(next.begin(), next.end(), re)) version("rocm", 2, *leading_version(next));
        } else if (line.find("uname -r") != std::string::npos) {
            static const std::regex re(R"(^\d+\.\d+\.\d+[A-Za-z0-9_.+~-]*$)");
            if (std::regex_match(next.begin(), next.end(), re)) version("kernel", 1, std::string(next));
        } else {
            // hipconfig --version prints the version alone, hipconfig --full and plain hipconfig
            // "HIP version  : ..." first. HIP's version is the ROCm release's: 6.0.32830 is ROCm 6.0.
            std::string_view v = next;
            if (v.starts_with("HIP version"))
                v = trim(v.substr(v.find(':') == std::string_view::npos ? v.size() : v.find(':') + 1));
            if (is_hip_version(v)) version("rocm", 4, std::string(v.substr(0, v.find('.', v.find('.') + 1))));
        }
        break;
    }
    case Probe::agent_list: {
        // One target per line (rocm_agent_enumerator adds gfx000 for the CPU); the list ends
        // at the first other line.
        static const std::regex re(R"(^(gfx[0-9a-f]{3,4})(:[a-z+:-]*)?$)");
        const std::string source = line.find("rocm_agent_enumerator") != std::string::npos ? "rocm_agent_enumerator"
                                   : line.find("offload-arch") != std::string::npos        ? "offload-arch"
                                                                                           : "amdgpu-arch";
        const int listing = new_listing();
        for (std::size_t k = 1; k < hit.lines.size(); ++k) {
            const std::string row(after(k));
            std::smatch m;
            if (!std::regex_match(row, m, re)) break;
            if (m[1].str() != "gfx000") gpu_line(input, k_agent_list, source, m[1].str(), "", false, listing);
        }
        break;
    }
    case Probe::lspci: {
        // "03:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 21
        // [Radeon RX 6800/6800 XT / 6900 XT] (rev c1)"; lspci -nn adds " [0300]" and " [1002:73bf]".
        // One row per PCI address; an address seen again (lspci pasted twice) is the same GPU.
        static const std::regex re(
            R"(^(?:([0-9a-f]{2,4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]|[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]) )?[^:]*: Advanced Micro Devices, Inc\. \[AMD/ATI\] (.*?)(?: \[1002:[0-9a-f]{4}\])?(?: \(rev [0-9a-f]+\))?\s*$)");
        std::smatch m;
        if (!std::regex_match(line, m, re) || !gfx_for_marketing_name(m[2].str())) break;
        const std::string source = m[1].matched ? "lspci " + m[1].str() : "lspci";
        const bool seen = m[1].matched && std::any_of(m_gpus.begin(), m_gpus.end(), [&](const Candidate& c) {
                              return c.source == source && c.input == input;
                          });
        if (!seen) gpu_line(input, k_hardware, source, "", m[2].str(), true, listing_of("lspci\n" + input));
        break;
    }
    case Probe::video_controllers: {
        // The names on the lines after the command, up to the next prompt or blank line
        // (wmic and Select-Object print a "Name" header, Select-Object a dashed rule too).
        // Generic names ("AMD Radeon(TM) Graphics") and other vendors' cards say no chip.
        const int listing = new_listing();
        for (std::size_t k = 1; k < hit.lines.size(); ++k) {
            const std::string row(after(k));
            if (row.empty() || row.starts_with("PS ") || row.find(":\\") != std::string::npos || row.starts_with("$"))
                break;
            if (row == "Name" || row.find_first_not_of('-') == std::string::npos) continue;
            if (gfx_for_marketing_name(row))
                gpu_line(input, k_hardware, "win32_VideoController", "", row, true, listing);
        }
        break;
    }
    case Probe::count: break;
    }
}

ReportFacts ReportReader::facts() const {
    ReportFacts f;
    f.env = m_env;
    const auto v = [&](const char* key) -> std::optional<std::string> {
        const auto it = m_versions.find(key);
        return it == m_versions.end() ? std::nullopt : std::optional<std::string>(it->second.second);
    };
    f.rocm_version = v("rocm");
    f.torch_version = v("torch");
    f.torch_hip_version = v("torch_hip");
    // "2.3.0+rocm6.0": the wheel was built for HIP 6.0 when nothing more exact is shown.
    if (!f.torch_hip_version && f.torch_version) {
        const auto plus = f.torch_version->find("+rocm");
        if (plus != std::string::npos)
            if (auto hv = leading_version(std::string_view(*f.torch_version).substr(plus + 5)))
                f.torch_hip_version = hv;
    }
    f.kernel_release = v("kernel");

    // The best-ranked source that lists GPUs describes them all (rocminfo lists every agent;
    // a second tool would list the same GPUs again).
    int best = k_template + 1;
    for (const auto& c : m_gpus)
        if (!c.shown_target.empty() || gfx_for_marketing_name(c.marketing_name)) best = std::min(best, c.rank);
    const auto global_override = m_env.find("HSA_OVERRIDE_GFX_VERSION");
    std::optional<std::string> override_target;
    if (global_override != m_env.end()) override_target = parse_gfx_override(trim(global_override->second));
    std::vector<int> listings;  // per row of f.gpus, before the duplicates go
    for (const auto& c : m_gpus) {
        if (c.rank != best) continue;
        ReportGpu g{"", c.shown_target, c.marketing_name, c.source};
        const auto by_name = gfx_for_marketing_name(c.marketing_name);
        if (c.shows_real_target && !c.shown_target.empty()) {
            g.gfx_target = c.shown_target;
        } else if (by_name && !c.shown_target.empty() && *by_name != c.shown_target) {
            // The runtime shows another target than the product is: an override is at work,
            // whether or not the excerpt shows it being set.
            g.gfx_target = *by_name;
        } else if (override_target && !c.shown_target.empty() && c.shown_target == *override_target) {
            // The runtime shows the overridden target: only the product name tells the chip.
            g.gfx_target = by_name.value_or("");
        } else {
            g.gfx_target = !c.shown_target.empty() ? c.shown_target : by_name.value_or("");
        }
        f.gpus.push_back(std::move(g));
        listings.push_back(c.listing);
    }
    // A runtime tool that lists only integrated GPUs while the hardware (lspci, Windows' video
    // controllers) shows a discrete one too: the runtime did not take the card, so the iGPU is
    // what the work runs on. The card joins the list, so that the pair is seen.
    const auto integrated = [](const ReportGpu& g) {
        return !g.gfx_target.empty() && gfx_integrated(g.gfx_target) == true;
    };
    if (best < k_hardware && !f.gpus.empty() && std::all_of(f.gpus.begin(), f.gpus.end(), integrated)) {
        for (const auto& c : m_gpus) {
            if (c.rank != k_hardware) continue;
            const auto chip = gfx_for_marketing_name(c.marketing_name);
            if (!chip || gfx_integrated(*chip) != false) continue;
            f.gpus.push_back(ReportGpu{*chip, "", c.marketing_name, c.source});
            listings.push_back(c.listing);
        }
    }
    // Two tools of the same rank (rocminfo and clinfo, ollama on every start) list the same
    // GPUs: a row that adds nothing to another one with the same chip goes.
    const auto same_chip = [](const ReportGpu& a, const ReportGpu& b) {
        return (!a.gfx_target.empty() && a.gfx_target == b.gfx_target) ||
               (a.gfx_target.empty() && b.gfx_target.empty() && a.shown_target == b.shown_target);
    };
    std::vector<ReportGpu> kept;
    for (std::size_t i = 0; i < f.gpus.size(); ++i) {
        const auto& g = f.gpus[i];
        bool redundant = false;
        for (std::size_t j = 0; j < f.gpus.size() && !redundant; ++j) {
            if (i == j || !same_chip(g, f.gpus[j])) continue;
            const auto& o = f.gpus[j];
            // Drop a nameless row next to a named one; of two alike, the later one.
            redundant = (g.marketing_name.empty() && !o.marketing_name.empty()) ||
                        (g.marketing_name == o.marketing_name && j < i);
        }
        if (!redundant) kept.push_back(g);
    }
    // ...but one listing's rows are distinct GPUs: a chip that one listing shows n times is n
    // GPUs (an eight-GPU MI300X node), however many times the listing was pasted.
    const auto shown_times = [&](const ReportGpu& g) {
        std::map<int, std::size_t> per_listing;
        std::size_t most = 0;
        for (std::size_t i = 0; i < f.gpus.size(); ++i)
            if (same_chip(g, f.gpus[i])) most = std::max(most, ++per_listing[listings[i]]);
        return most;
    };
    std::vector<ReportGpu> gpus;
    for (std::size_t i = 0; i < kept.size(); ++i) {
        gpus.push_back(kept[i]);
        const auto alike = [&](const ReportGpu& o) { return same_chip(kept[i], o); };
        if (std::find_if(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(i), alike) !=
            kept.begin() + static_cast<std::ptrdiff_t>(i))
            continue;  // not the first row of its chip
        const auto have = static_cast<std::size_t>(std::count_if(kept.begin(), kept.end(), alike));
        for (auto n = shown_times(kept[i]); n > have; --n) gpus.push_back(kept[i]);
    }
    f.gpus = std::move(gpus);
    return f;
}

nlohmann::json report_facts_document(const ReportFacts& report) {
    Facts facts;
    facts.root = "report";
    for (const auto& [k, v] : report.env) facts.env[k] = v;
    unsigned node = 1;  // KFD numbers the CPU node 0; GPUs follow in the order rocminfo lists them
    for (const auto& rg : report.gpus) {
        Gpu g;
        g.node = node++;
        const std::string source = "report (" + rg.source + ")";
        if (!rg.marketing_name.empty()) g.marketing_name = Fact<std::string>::known(rg.marketing_name, source);
        if (!rg.gfx_target.empty()) {
            if (const auto version = encode_gfx_target(rg.gfx_target))
                g.gfx_target_version = Fact<std::uint64_t>::known(*version, source);
            g.gfx_target = Fact<std::string>::known(rg.gfx_target, source);
            if (const auto fam = gfx_family(rg.gfx_target)) g.family = Fact<std::string>::known(*fam, source);
            if (const auto gen = gfx_generic_target(rg.gfx_target))
                g.generic_target = Fact<std::string>::known(*gen, source);
            g.officially_supported = Fact<bool>::known(gfx_officially_supported(rg.gfx_target), source);
            // A report rarely shows VRAM sizes, which detect reads; the target alone decides
            // where it can (LLVM's processor table), so that an iGPU next to a dGPU is seen.
            if (const auto igpu = gfx_integrated(rg.gfx_target)) g.integrated = Fact<bool>::known(*igpu, source);
            apply_gfx_override(g, facts.env);
            if (!g.gfx_override && !rg.shown_target.empty() && rg.shown_target != rg.gfx_target) {
                // The runtime ran the chip as another target, so something overrode it; the
                // report does not show the variable.
                GfxOverride o;
                o.variable = "(implied: the report shows " + rg.shown_target + " for this GPU)";
                o.target = rg.shown_target;
                o.relation = same_isa_family(rg.shown_target, rg.gfx_target) ? OverrideRelation::same_family
                                                                             : OverrideRelation::cross_family;
                g.gfx_override = std::move(o);
                g.effective_gfx_target = Fact<std::string>::known(rg.shown_target, source);
            }
        } else if (!rg.shown_target.empty()) {
            // The real chip is unknown (overridden and unnamed); what ran is known.
            g.effective_gfx_target = Fact<std::string>::known(rg.shown_target, source);
        }
        facts.gpus.push_back(std::move(g));
    }
    if (report.rocm_version) {
        RocmInstall r;
        r.path = "report";
        r.version = Fact<std::string>::known(*report.rocm_version, "report");
        r.version_source = "report";
        facts.rocm.push_back(std::move(r));
    }
    if (report.torch_version || report.torch_hip_version) {
        TorchInstall t;
        if (report.torch_version) t.version = Fact<std::string>::known(*report.torch_version, "report");
        if (report.torch_hip_version) t.hip_version = Fact<std::string>::known(*report.torch_hip_version, "report");
        facts.torch.push_back(std::move(t));
    }
    if (report.kernel_release) facts.driver.kernel_release = Fact<std::string>::known(*report.kernel_release, "report");

    auto doc = facts_to_json(facts);
    // What a report does not mention is absent, not false: a report that shows no driver
    // state does not say the driver is unloaded, nor that the user lacks a group.
    doc["driver"]["loaded"] = nullptr;
    doc["kfd"] = nullptr;
    doc["user"] = nullptr;
    doc["render_nodes"] = nullptr;
    for (auto& t : doc["torch"]) {
        t["path"] = nullptr;
        t["origin"] = nullptr;
        t["has_libtorch_hip"] = nullptr;
    }
    for (auto& r : doc["rocm"]) {
        r["path"] = nullptr;
        r["kind"] = nullptr;
    }
    return doc;
}

nlohmann::json report_facts_json(const ReportFacts& f) {
    using nlohmann::json;
    json out = json::object();
    if (!f.gpus.empty()) {
        json gpus = json::array();
        for (const auto& g : f.gpus) {
            json row = json::object();
            if (!g.gfx_target.empty()) row["gfx_target"] = g.gfx_target;
            if (!g.shown_target.empty() && g.shown_target != g.gfx_target) row["shown_target"] = g.shown_target;
            if (!g.marketing_name.empty()) row["marketing_name"] = g.marketing_name;
            row["source"] = g.source;
            gpus.push_back(std::move(row));
        }
        out["gpus"] = std::move(gpus);
    }
    if (f.rocm_version) out["rocm_version"] = *f.rocm_version;
    if (f.torch_version) out["torch_version"] = *f.torch_version;
    if (f.torch_hip_version) out["torch_hip_version"] = *f.torch_hip_version;
    if (!f.env.empty()) out["env"] = f.env;
    if (f.kernel_release) out["kernel_release"] = *f.kernel_release;
    return out;
}

std::string report_facts_line(const ReportFacts& f) {
    std::vector<std::string> parts;
    for (const auto& g : f.gpus) {
        std::string target = !g.gfx_target.empty() ? g.gfx_target : "unknown chip";
        if (!g.shown_target.empty() && g.shown_target != g.gfx_target) target += " shown as " + g.shown_target;
        parts.push_back(g.marketing_name.empty() ? target : fmt::format("{} ({})", target, g.marketing_name));
    }
    if (f.rocm_version) parts.push_back("ROCm " + *f.rocm_version);
    if (f.torch_version) parts.push_back("PyTorch " + *f.torch_version);
    if (f.torch_hip_version && !(f.torch_version && f.torch_version->find("+rocm") != std::string::npos))
        parts.push_back("PyTorch HIP " + *f.torch_hip_version);
    for (const auto& [k, v] : f.env) parts.push_back(k + "=" + v);
    if (f.kernel_release) parts.push_back("kernel " + *f.kernel_release);
    return join(parts, ", ");
}

}  // namespace rmcp::explain
