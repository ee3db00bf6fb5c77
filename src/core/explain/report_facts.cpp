#include "explain/report_facts.hpp"

#include "explain/matcher.hpp"

#include "detect/detect.hpp"
#include "detect/gfx.hpp"
#include "facts/facts_json.hpp"
#include "util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>
#include <vector>

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
        {relevant_env_pattern(), 0},  // every variable detect reports (detect/detect.hpp)
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

// ---- hand-written readers ----------------------------------------------------------
// The lines come from pasted reports: input. They are read by hand, without a backtracking
// engine (std::regex recursed once per repeated character: docs/security.md, "Backtracking
// regex"). Each reader's comment gives the ECMAScript pattern it stands for; `\d`, `\s`,
// `\S`, `\w` and `\b` mean what they mean there.

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_lower_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }
bool is_word_char(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_blank_char(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
// ECMAScript '.': anything but a line terminator.
bool is_line_end(char c) { return c == '\n' || c == '\r'; }
// \b before s[i] when s[i] is a word character.
bool word_starts(std::string_view s, std::size_t i) { return i == 0 || !is_word_char(s[i - 1]); }
// \b at i after a word character.
bool word_ends(std::string_view s, std::size_t i) { return i >= s.size() || !is_word_char(s[i]); }

std::size_t run_of(std::string_view s, std::size_t i, bool (*in)(char)) {
    std::size_t n = 0;
    while (i + n < s.size() && in(s[i + n])) ++n;
    return n;
}
bool not_blank(char c) { return !is_blank_char(c); }

// \d+(\.\d+){parts-1} at s[i]: its length, or 0.
std::size_t dotted_at(std::string_view s, std::size_t i, int parts) {
    std::size_t at = i;
    for (int k = 0; k < parts; ++k) {
        if (k > 0) {
            if (at >= s.size() || s[at] != '.') return 0;
            ++at;
        }
        const std::size_t n = run_of(s, at, is_digit);
        if (n == 0) return 0;
        at += n;
    }
    return at - i;
}

// gfx[0-9a-f]{3,4} at s[i] (greedy): its length, or 0.
std::size_t gfx_at(std::string_view s, std::size_t i) {
    if (s.substr(i, 3) != "gfx") return 0;
    const std::size_t n = std::min<std::size_t>(run_of(s, i + 3, is_lower_hex), 4);
    return n >= 3 ? 3 + n : 0;
}

// (gfx[0-9a-f]{3,4})\b: the first target that ends a word.
std::optional<std::string> find_gfx_word(std::string_view s) {
    for (auto i = s.find("gfx"); i != std::string_view::npos; i = s.find("gfx", i + 1)) {
        const std::size_t hex = run_of(s, i + 3, is_lower_hex);
        // 4 hex digits and a word end, or exactly 3 and a word end (a 4th would be a word character)
        if ((hex == 3 || hex == 4) && word_ends(s, i + 3 + hex)) return std::string(s.substr(i, 3 + hex));
    }
    return std::nullopt;
}

// `key` followed by digits: the first such digits (`key(\d+)`), at most `max` of them.
std::optional<std::string> number_after(std::string_view s, std::string_view key, std::size_t max = 20) {
    for (auto i = s.find(key); i != std::string_view::npos; i = s.find(key, i + 1)) {
        const std::size_t n = run_of(s, i + key.size(), is_digit);
        if (n > 0) return std::string(s.substr(i + key.size(), std::min(n, max)));
    }
    return std::nullopt;
}

// (.*?)\s*\((gfx[0-9a-f]{3,4})[^)]*\)\s*$ : the name and the target of a collect_env GPU row.
std::optional<std::pair<std::string, std::string>> collect_env_row(std::string_view s) {
    std::size_t q = s.size();
    while (q > 0 && is_blank_char(s[q - 1])) --q;
    if (q == 0 || s[q - 1] != ')') return std::nullopt;
    --q;  // the ')' that ends the row; the '(' is after any other ')'
    const auto close_before = s.substr(0, q).rfind(')');
    for (std::size_t p = close_before == std::string_view::npos ? 0 : close_before + 1; p < q; ++p) {
        if (s[p] != '(') continue;
        const std::size_t n = gfx_at(s, p + 1);
        if (n == 0) continue;
        std::size_t name_end = p;  // \s* takes the blanks before '(' (a line end among them too)
        while (name_end > 0 && is_blank_char(s[name_end - 1])) --name_end;
        std::size_t start = 0;  // '.' stops at a line end
        for (std::size_t k = 0; k < name_end; ++k)
            if (is_line_end(s[k])) start = k + 1;
        return std::pair{std::string(trim(s.substr(start, name_end - start))), std::string(s.substr(p + 1, n))};
    }
    return std::nullopt;
}

// torch(?:==|\s+)(\d+\.\d+\S*)
std::optional<std::string> pip_torch_version(std::string_view s) {
    for (auto i = s.find("torch"); i != std::string_view::npos; i = s.find("torch", i + 1)) {
        std::size_t k = i + 5;
        if (s.substr(k, 2) == "==") k += 2;
        else if (const std::size_t n = run_of(s, k, is_blank_char); n > 0) k += n;
        else continue;
        if (dotted_at(s, k, 2) > 0) return std::string(s.substr(k, run_of(s, k, not_blank)));
    }
    return std::nullopt;
}

// ^ROCm version: \((\d+), (\d+)\)\s*$ → "major.minor"
std::optional<std::string> comfy_rocm_version(std::string_view s) {
    constexpr std::string_view k_key = "ROCm version: (";
    if (!s.starts_with(k_key)) return std::nullopt;
    std::size_t k = k_key.size();
    const std::size_t a = run_of(s, k, is_digit);
    if (a == 0 || s.substr(k + a, 2) != ", ") return std::nullopt;
    const std::size_t b = run_of(s, k + a + 2, is_digit);
    const std::size_t close = k + a + 2 + b;
    if (b == 0 || close >= s.size() || s[close] != ')' || run_of(s, close + 1, is_blank_char) != s.size() - close - 1)
        return std::nullopt;
    return fmt::format("{}.{}", s.substr(k, a), s.substr(k + a + 2, b));
}

// [Rr][Oo][Cc][Mm] [Vv]ersion\W*(.*)
std::optional<std::string> rocm_version_rest(std::string_view s) {
    for (std::size_t i = 0; i + 12 <= s.size(); ++i) {
        if (!starts_with_ci(s.substr(i, 4), "rocm") || s[i + 4] != ' ' || (s[i + 5] != 'V' && s[i + 5] != 'v') ||
            s.substr(i + 6, 6) != "ersion")
            continue;
        std::size_t k = i + 12;
        while (k < s.size() && !is_word_char(s[k])) ++k;
        std::size_t e = k;
        while (e < s.size() && !is_line_end(s[e])) ++e;
        return std::string(s.substr(k, e - k));
    }
    return std::nullopt;
}

// \brocm-(?:core|dev|libs)\b.*?(\d+\.\d+\.\d+)
std::optional<std::string> rocm_package_version(std::string_view s) {
    for (auto i = s.find("rocm-"); i != std::string_view::npos; i = s.find("rocm-", i + 1)) {
        if (!word_starts(s, i)) continue;
        for (const std::string_view part : {"core", "dev", "libs"}) {
            const std::size_t j = i + 5 + part.size();
            if (s.substr(i + 5, part.size()) != part || !word_ends(s, j)) continue;
            for (std::size_t k = j; k < s.size() && !is_line_end(s[k]); ++k)
                if (const std::size_t n = dotted_at(s, k, 3); n > 0) return std::string(s.substr(k, n));
        }
    }
    return std::nullopt;
}

// [/-]rocm-(\d+\.\d+\.\d+)/
std::optional<std::string> rocm_path_version(std::string_view s) {
    for (auto i = s.find("rocm-"); i != std::string_view::npos; i = s.find("rocm-", i + 1)) {
        if (i == 0 || (s[i - 1] != '/' && s[i - 1] != '-')) continue;
        const std::size_t n = dotted_at(s, i + 5, 3);
        if (n > 0 && i + 5 + n < s.size() && s[i + 5 + n] == '/') return std::string(s.substr(i + 5, n));
    }
    return std::nullopt;
}

// \bLinux \S+ (\d+\.\d+\.\d+\S*) #\d
std::optional<std::string> uname_release(std::string_view s) {
    for (auto i = s.find("Linux "); i != std::string_view::npos; i = s.find("Linux ", i + 1)) {
        if (!word_starts(s, i)) continue;
        const std::size_t host = run_of(s, i + 6, not_blank);
        std::size_t k = i + 6 + host;
        if (host == 0 || k >= s.size() || s[k] != ' ') continue;
        ++k;
        const std::size_t m = run_of(s, k, not_blank);
        if (dotted_at(s, k, 3) > 0 && s.substr(k + m, 2) == " #" && k + m + 2 < s.size() && is_digit(s[k + m + 2]))
            return std::string(s.substr(k, m));
    }
    return std::nullopt;
}

// Python platform: Linux-(\d+\.\d+\.\d+.*?)-(x86_64|aarch64)\b
std::optional<std::string> python_platform_release(std::string_view s) {
    constexpr std::string_view k_key = "Python platform: Linux-";
    for (auto i = s.find(k_key); i != std::string_view::npos; i = s.find(k_key, i + 1)) {
        const std::size_t k = i + k_key.size();
        const std::size_t n = dotted_at(s, k, 3);
        if (n == 0) continue;
        for (std::size_t e = k + n; e < s.size() && !is_line_end(s[e]); ++e)
            for (const std::string_view arch : {"-x86_64", "-aarch64"})
                if (s.substr(e, arch.size()) == arch && word_ends(s, e + arch.size()))
                    return std::string(s.substr(k, e - k));
    }
    return std::nullopt;
}

// \bLinux version (\d+\.\d+\.\d+\S*) \(
std::optional<std::string> linux_version_release(std::string_view s) {
    constexpr std::string_view k_key = "Linux version ";
    for (auto i = s.find(k_key); i != std::string_view::npos; i = s.find(k_key, i + 1)) {
        if (!word_starts(s, i)) continue;
        const std::size_t k = i + k_key.size();
        const std::size_t m = run_of(s, k, not_blank);
        if (dotted_at(s, k, 3) > 0 && s.substr(k + m, 2) == " (") return std::string(s.substr(k, m));
    }
    return std::nullopt;
}

// GPU\[(\d+)\]
std::optional<std::string> rocm_smi_index(std::string_view s) {
    for (auto i = s.find("GPU["); i != std::string_view::npos; i = s.find("GPU[", i + 1)) {
        const std::size_t n = run_of(s, i + 4, is_digit);
        if (n > 0 && i + 4 + n < s.size() && s[i + 4 + n] == ']') return std::string(s.substr(i + 4, n));
    }
    return std::nullopt;
}

// (?:name='([^']*)'.*?)?gcnArchName='(gfx[0-9a-f]{3,4}) : the name (may be empty) and target.
std::optional<std::pair<std::string, std::string>> torch_properties(std::string_view s) {
    constexpr std::string_view k_arch = "gcnArchName='";
    const auto arch_from = [&](std::size_t from) -> std::size_t {  // the first gcnArchName='gfx... at or after
        for (auto g = s.find(k_arch, from); g != std::string_view::npos; g = s.find(k_arch, g + 1))
            if (gfx_at(s, g + k_arch.size()) > 0) return g;
        return std::string_view::npos;
    };
    const auto target = [&](std::size_t g) {
        return std::string(s.substr(g + k_arch.size(), gfx_at(s, g + k_arch.size())));
    };
    const std::size_t first = arch_from(0);
    if (first == std::string_view::npos) return std::nullopt;
    // A match that starts at an earlier "name='" wins (leftmost), when a target follows its
    // closing quote on the same line.
    for (auto p = s.find("name='"); p != std::string_view::npos && p < first; p = s.find("name='", p + 1)) {
        const auto close = s.find('\'', p + 6);
        if (close == std::string_view::npos) continue;
        const std::size_t g = arch_from(close + 1);
        if (g == std::string_view::npos) continue;
        if (std::any_of(s.begin() + static_cast<std::ptrdiff_t>(close + 1), s.begin() + static_cast<std::ptrdiff_t>(g),
                        is_line_end))
            continue;
        return std::pair{std::string(s.substr(p + 6, close - p - 6)), target(g)};
    }
    return std::pair{std::string(), target(first)};
}

// \b(?:gpu_type|compute)=(gfx[0-9a-f]{3,4})
std::optional<std::string> ollama_target(std::string_view s) {
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (!word_starts(s, i)) continue;
        for (const std::string_view key : {"gpu_type=", "compute="})
            if (s.substr(i, key.size()) == key)
                if (const std::size_t n = gfx_at(s, i + key.size()); n > 0)
                    return std::string(s.substr(i + key.size(), n));
    }
    return std::nullopt;
}

// \bname="([^"]+)"
std::optional<std::string> ollama_name(std::string_view s) {
    for (auto i = s.find("name=\""); i != std::string_view::npos; i = s.find("name=\"", i + 1)) {
        if (!word_starts(s, i)) continue;
        const auto close = s.find('"', i + 6);
        if (close != std::string_view::npos && close > i + 6) return std::string(s.substr(i + 6, close - i - 6));
    }
    return std::nullopt;
}

// ([^()=]*?)\s*\(RADV GFX([0-9A-F]{3,4})(?:_R\d+)?\) : the device name and the chip's hex digits.
std::optional<std::pair<std::string, std::string>> radv_device(std::string_view s) {
    constexpr std::string_view k_key = "(RADV GFX";
    const auto upper_hex = [](char c) { return is_digit(c) || (c >= 'A' && c <= 'F'); };
    for (auto q = s.find(k_key); q != std::string_view::npos; q = s.find(k_key, q + 1)) {
        const std::size_t h = q + k_key.size();
        const std::size_t n = run_of(s, h, upper_hex);
        if (n != 3 && n != 4) continue;
        std::size_t e = h + n;
        if (s.substr(e, 2) == "_R" && run_of(s, e + 2, is_digit) > 0) e += 2 + run_of(s, e + 2, is_digit);
        if (e >= s.size() || s[e] != ')') continue;
        const auto before = s.substr(0, q).find_last_of("()=");
        const std::size_t p = before == std::string_view::npos ? 0 : before + 1;
        return std::pair{std::string(trim(s.substr(p, q - p))), std::string(s.substr(h, n))};
    }
    return std::nullopt;
}

bool is_kernel_char(char c) { return is_word_char(c) || c == '.' || c == '+' || c == '~' || c == '-'; }

// (?:[Kk]ernel(?: version| release)?\s*[:=]\s*v?|\(Linux )(\d+\.\d+\.\d+[A-Za-z0-9_.+~-]*)
std::optional<std::string> kernel_field_release(std::string_view s) {
    const auto release_at = [&](std::size_t k) -> std::optional<std::string> {
        const std::size_t n = dotted_at(s, k, 3);
        if (n == 0) return std::nullopt;
        return std::string(s.substr(k, n + run_of(s, k + n, is_kernel_char)));
    };
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s.substr(i, 7) == "(Linux ")
            if (auto v = release_at(i + 7)) return v;
        if ((s[i] != 'K' && s[i] != 'k') || s.substr(i + 1, 5) != "ernel") continue;
        std::vector<std::size_t> after_word{i + 6};
        if (s.substr(i + 6, 8) == " version" || s.substr(i + 6, 8) == " release")
            after_word.insert(after_word.begin(), i + 14);
        for (std::size_t k : after_word) {
            k += run_of(s, k, is_blank_char);
            if (k >= s.size() || (s[k] != ':' && s[k] != '=')) continue;
            ++k;
            k += run_of(s, k, is_blank_char);
            if (k < s.size() && s[k] == 'v')
                if (auto v = release_at(k + 1)) return v;
            if (auto v = release_at(k)) return v;
        }
    }
    return std::nullopt;
}

// Device: cuda:\d+ (.+) : (?:native|cudaMallocAsync)
std::optional<std::string> comfy_device_name(std::string_view s) {
    constexpr std::string_view k_key = "Device: cuda:";
    for (auto i = s.find(k_key); i != std::string_view::npos; i = s.find(k_key, i + 1)) {
        std::size_t k = i + k_key.size();
        const std::size_t d = run_of(s, k, is_digit);
        k += d;
        if (d == 0 || k >= s.size() || s[k] != ' ') continue;
        ++k;
        std::size_t line_end = k;
        while (line_end < s.size() && !is_line_end(s[line_end])) ++line_end;
        // (.+) is greedy: the last " : native" / " : cudaMallocAsync" on the line.
        for (std::size_t e = line_end; e > k + 1;) {
            --e;
            for (const std::string_view tail : {" : native", " : cudaMallocAsync"})
                if (s.substr(e, tail.size()) == tail) return std::string(s.substr(k, e - k));
        }
    }
    return std::nullopt;
}

// ^[\s>]*(\S+)(?:[ \t]+(\S+))?\s*$ : one word, or two; the second empty when there is one.
std::optional<std::pair<std::string_view, std::string_view>> one_or_two_words(std::string_view s) {
    const auto blank_or_quote = [](char c) { return is_blank_char(c) || c == '>'; };
    const std::size_t i = run_of(s, 0, blank_or_quote);
    if (i == s.size()) {  // only blanks and '>': the last '>' is the word
        const auto r = s.rfind('>');
        if (r == std::string_view::npos) return std::nullopt;
        return std::pair{s.substr(r, 1), std::string_view{}};
    }
    const std::size_t j = i + run_of(s, i, not_blank);
    const auto only_blanks_from = [&](std::size_t k) { return run_of(s, k, is_blank_char) == s.size() - k; };
    if (only_blanks_from(j)) return std::pair{s.substr(i, j - i), std::string_view{}};
    const std::size_t k = j + run_of(s, j, [](char c) { return c == ' ' || c == '\t'; });
    const std::size_t m = run_of(s, k, not_blank);
    if (k == j || m == 0 || !only_blanks_from(k + m)) return std::nullopt;
    return std::pair{s.substr(i, j - i), s.substr(k, m)};
}

// ^\d+\.\d+(\.\d+)?[a-z0-9.+]*$
bool is_torch_version(std::string_view s) {
    const std::size_t n = dotted_at(s, 0, 2);
    return n > 0 && std::all_of(s.begin() + static_cast<std::ptrdiff_t>(n), s.end(),
                                [](char c) { return (c >= 'a' && c <= 'z') || is_digit(c) || c == '.' || c == '+'; });
}

// ^\d+\.\d+\.\d+(-\d+)?$
bool is_rocm_info_version(std::string_view s) {
    const std::size_t n = dotted_at(s, 0, 3);
    if (n == 0) return false;
    return n == s.size() || (s[n] == '-' && n + 1 < s.size() && run_of(s, n + 1, is_digit) == s.size() - n - 1);
}

// ^\d+\.\d+\.\d+[A-Za-z0-9_.+~-]*$
bool is_kernel_release(std::string_view s) {
    const std::size_t n = dotted_at(s, 0, 3);
    return n > 0 && run_of(s, n, is_kernel_char) == s.size() - n;
}

// ^(gfx[0-9a-f]{3,4})(:[a-z+:-]*)?$ : the target.
std::optional<std::string> agent_list_target(std::string_view s) {
    if (!s.starts_with("gfx")) return std::nullopt;
    const std::size_t n = run_of(s, 3, is_lower_hex);
    if (n != 3 && n != 4) return std::nullopt;
    const std::size_t e = 3 + n;
    const bool features =
        e < s.size() && s[e] == ':' && std::all_of(s.begin() + static_cast<std::ptrdiff_t>(e), s.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || c == '+' || c == ':' || c == '-';
        });
    if (e != s.size() && !features) return std::nullopt;
    return std::string(s.substr(0, e));
}

struct LspciRow {
    std::string address;  // "03:00.0", "0000:03:00.0"; empty when the row has none
    std::string name;
};

bool hex_exact(std::string_view s, std::size_t i, std::size_t n) {
    return i + n <= s.size() && run_of(s, i, is_lower_hex) >= n;
}

// The address at the start of an lspci row, with the blank after it: its length, or 0.
// ([0-9a-f]{2,4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]|[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f])
std::size_t lspci_address(std::string_view s) {
    const auto bus_device_function = [&](std::size_t i) -> std::size_t {  // [0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f] + ' '
        if (hex_exact(s, i, 2) && s.substr(i + 2, 1) == ":" && hex_exact(s, i + 3, 2) && s.substr(i + 5, 1) == "." &&
            hex_exact(s, i + 6, 1) && s.substr(i + 7, 1) == " ")
            return i + 8;
        return 0;
    };
    const std::size_t domain = run_of(s, 0, is_lower_hex);
    if (domain >= 2 && domain <= 4 && s.substr(domain, 1) == ":")
        if (const std::size_t end = bus_device_function(domain + 1); end > 0) return end;
    return bus_device_function(0);
}

// ^(?:(ADDRESS) )?[^:]*: Advanced Micro Devices, Inc\. \[AMD/ATI\] (.*?)(?: \[1002:[0-9a-f]{4}\])?(?: \(rev [0-9a-f]+\))?\s*$
std::optional<LspciRow> lspci_amd_row(std::string_view s) {
    constexpr std::string_view k_vendor = ": Advanced Micro Devices, Inc. [AMD/ATI] ";
    const std::size_t with_address = lspci_address(s);
    std::vector<std::size_t> starts;
    if (with_address > 0) starts.push_back(with_address);
    starts.push_back(0);
    for (const std::size_t from : starts) {
        const auto colon = s.find(':', from);  // [^:]* stops at the first ':'
        if (colon == std::string_view::npos || s.substr(colon, k_vendor.size()) != k_vendor) continue;
        const std::size_t k = colon + k_vendor.size();
        std::size_t e = s.size();
        while (e > k && is_blank_char(s[e - 1])) --e;
        // (?: \(rev [0-9a-f]+\))? at the end
        if (e > k && s[e - 1] == ')') {
            const auto open = s.substr(k, e - k).rfind(" (rev ");
            if (open != std::string_view::npos) {
                const std::size_t h = k + open + 6;
                if (h < e - 1 && run_of(s, h, is_lower_hex) == e - 1 - h) e = k + open;
            }
        }
        // (?: \[1002:[0-9a-f]{4}\])? before it
        if (e >= k + 12 && s.substr(e - 12, 7) == " [1002:" && hex_exact(s, e - 5, 4) && s[e - 1] == ']') e -= 12;
        const auto name = s.substr(k, e - k);
        if (std::any_of(name.begin(), name.end(), is_line_end)) return std::nullopt;
        return LspciRow{from == 0 ? std::string() : std::string(s.substr(0, from - 1)), std::string(name)};
    }
    return std::nullopt;
}

// A value as the Python REPL echoes it: '2.0.0a0' → 2.0.0a0.
std::string_view unquoted(std::string_view text) {
    text = trim(text);
    if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') && text.back() == text.front())
        text = text.substr(1, text.size() - 2);
    return text;
}

// The HIP runtime's own version format ("6.0.32830-d62f6a171"): torch.version.hip, hipconfig.
// ^\d+\.\d+\.\d{5}(-[0-9a-f]+)?$
bool is_hip_version(std::string_view text) {
    const std::size_t two = dotted_at(text, 0, 2);
    if (two == 0 || two >= text.size() || text[two] != '.' || run_of(text, two + 1, is_digit) != 5) return false;
    const std::size_t end = two + 6;
    if (end == text.size()) return true;
    return text[end] == '-' && end + 1 < text.size() && run_of(text, end + 1, is_lower_hex) == text.size() - end - 1;
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
    // ^(\d+\.\d+(?:\.\d+)?)
    std::size_t n = dotted_at(text, 0, 3);
    if (n == 0) n = dotted_at(text, 0, 2);
    if (n == 0) return std::nullopt;
    return std::string(text.substr(0, n));
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

    switch (static_cast<Probe>(hit.probe)) {
    case Probe::agent: {
        m_last_name.reset();
        const auto number = std::stoul(number_after(line, "Agent ", 9).value_or("0"));  // Agent (\d{1,9})
        if (!m_last_agent || m_last_agent->input != input || number <= m_last_agent->number)
            m_rocminfo_listing = new_listing();
        m_last_agent = AgentLine{input, hit.line, number};
        break;
    }
    case Probe::agent_name: {
        const auto value = value_after(line, "Name:");
        NameLine here{input, hit.line, std::nullopt};
        if (auto gfx = find_gfx_word(value); gfx && value.starts_with("gfx")) {
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
        const int listing = new_listing();
        std::vector<std::string> rows{value_after(line, "GPU models and configuration:")};
        for (std::size_t k = 1; k < hit.lines.size(); ++k) rows.emplace_back(after(k));
        for (const auto& row : rows) {
            auto gpu = collect_env_row(row);
            if (!gpu) break;  // the list ends at the first other line
            gpu_line(input, k_collect_env, "collect_env", gpu->second, gpu->first, false, listing);
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
        if (auto v = pip_torch_version(line)) version("torch", 2, *v);
        break;
    }
    case Probe::rocm_field: {
        // ComfyUI: "ROCm version: (6, 4)" is torch.version.hip's major and minor ((6, -1) when
        // unknown): the HIP the wheel was built with, not the installed ROCm.
        if (auto hip = comfy_rocm_version(line)) {
            version("torch_hip", 3, *hip);
            break;
        }
        auto rest = rocm_version_rest(line).value_or("");
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
        if (auto v = rocm_package_version(line)) version("rocm", 2, *v);
        break;
    }
    case Probe::rocm_path: {
        if (auto v = rocm_path_version(line)) version("rocm", 3, *v);
        break;
    }
    case Probe::uname: {
        if (auto v = uname_release(line)) version("kernel", 1, *v);
        break;
    }
    case Probe::python_platform: {
        if (auto v = python_platform_release(line)) version("kernel", 2, *v);
        break;
    }
    case Probe::linux_version: {
        if (auto v = linux_version_release(line)) version("kernel", 3, *v);
        break;
    }
    case Probe::env: parse_env_line(line, m_env); break;
    case Probe::amdsmi_name: {
        // MARKET_NAME comes before TARGET_GRAPHICS_VERSION in `amd-smi static`: keep it for the target.
        gpu_line(input, k_amdsmi, "amd-smi", "", value_after(line, "MARKET_NAME:"), true, new_listing());
        break;
    }
    case Probe::amdsmi_target:
        if (auto gfx = find_gfx_word(line)) {
            if (!m_gpus.empty() && m_gpus.back().rank == k_amdsmi && m_gpus.back().input == input &&
                m_gpus.back().shown_target.empty())
                m_gpus.back().shown_target = *gfx;
            else gpu_line(input, k_amdsmi, "amd-smi", *gfx, "", true, new_listing());
        }
        break;
    case Probe::rocmsmi_series:
    case Probe::rocmsmi_gfx: {
        const auto index = rocm_smi_index(line).value_or("?");
        const std::string source = "rocm-smi GPU[" + index + "]";
        auto it = std::find_if(m_gpus.begin(), m_gpus.end(),
                               [&](const Candidate& c) { return c.source == source && c.input == input; });
        if (it == m_gpus.end()) {
            gpu_line(input, k_rocmsmi, source, "", "", true, listing_of("rocm-smi\n" + input));
            it = std::prev(m_gpus.end());
        }
        if (static_cast<Probe>(hit.probe) == Probe::rocmsmi_gfx) {
            if (auto gfx = find_gfx_word(std::string_view(line).substr(line.find("GFX Version"))))
                it->shown_target = *gfx;
        } else {
            const auto colon = line.find(':', line.find("Card "));
            it->marketing_name = printable(std::string_view(line).substr(colon + 1));
        }
        break;
    }
    case Probe::torch_props: {
        if (auto gpu = torch_properties(line))
            gpu_line(input, k_torch, "torch", gpu->second, gpu->first, false, new_listing());
        break;
    }
    case Probe::ollama_gpu: {
        if (auto gfx = ollama_target(line)) {
            const auto name = ollama_name(line).value_or("");
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
        if (auto gpu = radv_device(line))
            gpu_line(input, k_radv, "vulkan (RADV)", "gfx" + to_lower(gpu->second), gpu->first, true, new_listing());
        break;
    }
    case Probe::kernel_field: {
        if (auto v = kernel_field_release(line)) version("kernel", 4, *v);
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
        if (auto gfx = find_gfx_word(line)) gpu_line(input, k_torch, "ComfyUI", *gfx, "", false, new_listing());
        break;
    case Probe::comfy_device: {
        // "Device: cuda:0 <torch.cuda.get_device_name()> : <allocator>": the name of the device
        // whose "AMD arch" line came just before.
        const auto name = comfy_device_name(line).value_or("");
        if (name.empty()) break;
        if (!m_gpus.empty() && m_gpus.back().source == "ComfyUI" && m_gpus.back().input == input &&
            m_gpus.back().marketing_name.empty())
            m_gpus.back().marketing_name = printable(name);
        else if (gfx_for_marketing_name(name)) gpu_line(input, k_torch, "ComfyUI", "", name, false, new_listing());
        break;
    }
    case Probe::torch_print: {
        // "2.3.0+rocm6.0", alone or with torch.version.hip after it on the line.
        const auto words = one_or_two_words(line);
        if (!words) break;  // more words: a sentence that starts with a version
        version("torch", 3, std::string(words->first));
        if (!words->second.empty() && is_hip_version(words->second))
            version("torch_hip", 2, std::string(words->second));
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
            bool have_torch = !torch_ver;
            for (const auto row : out) {
                bool used = false;
                for (const auto word : split(row, ' ')) {
                    const auto w = unquoted(word);
                    if (torch_hip && is_hip_version(w)) {
                        version("torch_hip", 2, std::string(w));
                        used = true;
                    } else if (!have_torch && is_torch_version(w)) {
                        version("torch", 3, std::string(w));
                        have_torch = used = true;
                    }
                }
                if (!used) break;  // the output ends at the first line that is not a version
            }
        } else if (line.find(".info/version") != std::string::npos) {
            if (is_rocm_info_version(next)) version("rocm", 2, *leading_version(next));
        } else if (line.find("uname -r") != std::string::npos) {
            if (is_kernel_release(next)) version("kernel", 1, std::string(next));
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
        const std::string source = line.find("rocm_agent_enumerator") != std::string::npos ? "rocm_agent_enumerator"
                                   : line.find("offload-arch") != std::string::npos        ? "offload-arch"
                                                                                           : "amdgpu-arch";
        const int listing = new_listing();
        for (std::size_t k = 1; k < hit.lines.size(); ++k) {
            const std::string row(after(k));
            const auto target = agent_list_target(row);
            if (!target) break;
            if (*target != "gfx000") gpu_line(input, k_agent_list, source, *target, "", false, listing);
        }
        break;
    }
    case Probe::lspci: {
        // "03:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 21
        // [Radeon RX 6800/6800 XT / 6900 XT] (rev c1)"; lspci -nn adds " [0300]" and " [1002:73bf]".
        // One row per PCI address; an address seen again (lspci pasted twice) is the same GPU.
        const auto row = lspci_amd_row(line);
        if (!row || !gfx_for_marketing_name(row->name)) break;
        const std::string source = row->address.empty() ? "lspci" : "lspci " + row->address;
        const bool seen = !row->address.empty() && std::any_of(m_gpus.begin(), m_gpus.end(), [&](const Candidate& c) {
            return c.source == source && c.input == input;
        });
        if (!seen) gpu_line(input, k_hardware, source, "", row->name, true, listing_of("lspci\n" + input));
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
    // A version alone ("2.0.0") does not say which build it is: a distribution's ROCm build and
    // PyPI's CUDA build print the same. Without the HIP version or a local tag ("+rocm6.0",
    // "+cpu", "+cu121") the report shows no torch install the kb could judge, so none is
    // stated: an absent HIP version would otherwise read as a CPU build (torch-cpu-build).
    const bool torch_build_shown =
        report.torch_hip_version || (report.torch_version && report.torch_version->find('+') != std::string::npos);
    if (torch_build_shown) {
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
