#include "detect/detect.hpp"

#include "detect/gfx.hpp"
#include "detect/parsers.hpp"
#include "util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <set>

namespace rmcp {

namespace {

constexpr std::string_view k_topology = "/sys/class/kfd/kfd/topology/nodes";
constexpr std::uint64_t k_amd_vendor = 0x1002;
constexpr std::uint64_t k_gib = std::uint64_t{1} << 30;

// Collects facts; remembers every failed read other than "does not exist".
class Collector {
public:
    Collector(const Root& root, Facts& facts) : m_root(root), m_facts(facts) {}

    // Reads a file as a Fact<string> (trimmed); ENOENT is absence, other errors unreadable.
    Fact<std::string> text(const std::string& path, std::size_t limit = std::size_t{1} << 20) {
        auto r = m_root.read_file(path, limit);
        if (r) return Fact<std::string>::known(std::string(*r), path);
        return failed<std::string>(path, r.error());
    }
    Fact<std::string> line(const std::string& path) {
        auto f = text(path, 4096);
        if (!f) return f;
        return Fact<std::string>::known(std::string(trim(*f)), path);
    }
    // A number file. Garbage, a negative or a huge number is unreadable (EINVAL) and listed
    // with the other unreadable paths: a value, never a guess.
    Fact<std::uint64_t> number(const std::string& path, bool hex = false) {
        const auto f = line(path);
        if (!f)
            return f.state() == FactState::unreadable ? Fact<std::uint64_t>::unreadable(path, f.error())
                                                      : Fact<std::uint64_t>::absent(path);
        const auto v = hex ? parse_hex(*f) : parse_u64(*f);
        if (!v) return malformed<std::uint64_t>(path);
        return Fact<std::uint64_t>::known(*v, path);
    }
    // A value that was read but does not parse; `where` is the path or "path:line".
    template <class T>
    Fact<T> malformed(const std::string& where) {
        m_facts.unreadable.push_back({where, EINVAL});
        return Fact<T>::unreadable(where, EINVAL);
    }
    std::vector<std::string> list(const std::string& path) {
        auto r = m_root.list_dir(path);
        if (r) return std::move(*r);
        note_failure(path, r.error());
        return {};
    }
    template <class T>
    Fact<T> failed(const std::string& path, const Error& e) {
        note_failure(path, e);
        if (e.os_error == ENOENT || e.os_error == ENOTDIR) return Fact<T>::absent(path);
        return Fact<T>::unreadable(path, e.os_error);
    }
    void note_failure(const std::string& path, const Error& e) {
        if (e.os_error != ENOENT && e.os_error != ENOTDIR) m_facts.unreadable.push_back({path, e.os_error});
    }
    const Root& root() const { return m_root; }

private:
    const Root& m_root;
    Facts& m_facts;
};

std::vector<unsigned> numeric_entries(const std::vector<std::string>& names) {
    std::vector<unsigned> out;
    for (const auto& n : names)
        if (const auto v = parse_u64(n); v && *v < 1'000'000) out.push_back(static_cast<unsigned>(*v));
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string> split_on(std::string_view s, char sep) {
    std::vector<std::string> out;
    for (std::size_t pos = 0; pos <= s.size();) {
        const auto end = std::min(s.find(sep, pos), s.size());
        out.emplace_back(s.substr(pos, end - pos));
        pos = end + 1;
    }
    return out;
}

std::string basename_of(std::string_view path) {
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    return std::string(basename(path));
}

// Python library directories under `prefix/lib`: python3, python3.11, ...
std::vector<std::string> python_dirs(Collector& c, const std::string& lib) {
    std::vector<std::string> out;
    for (const auto& name : c.list(lib))
        if (name.starts_with("python3")) out.push_back(lib + "/" + name);
    return out;
}

void collect_env(Collector& c, Facts& facts, std::map<std::string, std::string>& all_env) {
    if (auto environ = c.text("/proc/self/environ", std::size_t{4} << 20)) all_env = parse_environ(*environ);
    for (const auto& [k, v] : all_env)
        if (is_relevant_env(k)) facts.env.emplace(k, v);
}

void collect_user(Collector& c, Facts& facts) {
    if (const auto status = c.text("/proc/self/status")) {
        const auto st = parse_proc_status(*status);
        if (st.uid) facts.user.uid = Fact<std::uint64_t>::known(*st.uid, "/proc/self/status");
        if (st.gid) facts.user.gid = Fact<std::uint64_t>::known(*st.gid, "/proc/self/status");
        facts.user.groups = st.groups;
    }
    if (facts.user.uid)
        if (const auto passwd = c.text("/etc/passwd"))
            if (const auto name = passwd_name_for(*passwd, *facts.user.uid))
                facts.user.name = Fact<std::string>::known(*name, "/etc/passwd");
}

// Permission check as the kernel does it for a non-root user; root may open anything.
bool may_read_write(const User& user, const FileStat& st) {
    if (user.uid && *user.uid == 0) return true;
    if (user.uid && *user.uid == st.uid) return (st.mode & 0600) == 0600;
    const bool in_group = (user.gid && *user.gid == st.gid) ||
                          std::find(user.groups.begin(), user.groups.end(), st.gid) != user.groups.end();
    if (in_group) return (st.mode & 0060) == 0060;
    return (st.mode & 0006) == 0006;
}

DeviceAccess device_access(Collector& c, const Facts& facts, const std::vector<GroupEntry>& groups,
                           const std::string& path) {
    DeviceAccess a;
    a.path = path;
    const auto st = c.root().stat(path);
    if (!st) {
        a.present = st.error().os_error != ENOENT && st.error().os_error != ENOTDIR;
        if (a.present) c.note_failure(path, st.error());
        return a;
    }
    a.present = true;
    a.mode = Fact<std::uint32_t>::known(st->mode, path);
    const GroupEntry* owner = nullptr;
    for (const auto& g : groups)
        if (g.gid == st->gid) owner = &g;
    if (owner) a.group = Fact<std::string>::known(owner->name, "/etc/group");
    if (!a.group) a.group = Fact<std::string>::known(std::to_string(st->gid), path);
    if (facts.user.uid) {
        a.accessible = Fact<bool>::known(may_read_write(facts.user, *st), path);
        const bool member =
            (facts.user.gid && *facts.user.gid == st->gid) ||
            std::find(facts.user.groups.begin(), facts.user.groups.end(), st->gid) != facts.user.groups.end();
        a.user_in_group = Fact<bool>::known(member, "/proc/self/status");
    }
    if (owner && facts.user.name) {
        const bool listed =
            (facts.user.gid && *facts.user.gid == st->gid) ||
            std::find(owner->members.begin(), owner->members.end(), *facts.user.name) != owner->members.end();
        a.user_listed_in_group = Fact<bool>::known(listed, "/etc/group");
    }
    return a;
}

void collect_driver(Collector& c, Facts& facts) {
    auto& d = facts.driver;
    d.initstate = c.line("/sys/module/amdgpu/initstate");
    // A built-in amdgpu has /sys/module/amdgpu/parameters but no initstate (only loadable
    // modules have one: kernel.org Documentation/ABI/stable/sysfs-module); it is running.
    d.builtin = d.initstate.state() == FactState::absent && c.root().exists("/sys/module/amdgpu/parameters");
    d.loaded = (d.initstate && d.initstate->find("live") != std::string::npos) || d.builtin;
    d.dkms_version = c.line("/sys/module/amdgpu/version");
    const std::string params = "/sys/module/amdgpu/parameters";
    if (c.root().exists(params))
        for (const auto& name : c.list(params)) d.params.emplace(name, c.line(params + "/" + name));
    d.kernel_release = c.line("/proc/sys/kernel/osrelease");
    auto os = c.text("/etc/os-release");
    if (!os) os = c.text("/usr/lib/os-release");
    if (os) {
        const auto kv = parse_os_release(*os);
        const auto get = [&](const char* key) {
            const auto it = kv.find(key);
            return it == kv.end() ? Fact<std::string>::absent(os.source())
                                  : Fact<std::string>::known(it->second, os.source());
        };
        d.os = {get("ID"), get("VERSION_ID"), get("PRETTY_NAME")};
    }
}

// ROCm's own version header, else HIP's. HIP's major.minor follow ROCm's, but its patch is a
// build number (HIP 5.2.21153 ships in ROCm 5.2.3), so only major.minor are reported from it.
void version_from_headers(Collector& c, const std::string& prefix, RocmInstall& r) {
    for (const auto* header : {"/include/rocm-core/rocm_version.h", "/include/rocm_version.h"}) {
        if (auto h = c.text(prefix + header)) {
            const auto defs = parse_c_defines(*h);
            if (defs.contains("ROCM_VERSION_MAJOR") && defs.contains("ROCM_VERSION_MINOR")) {
                const auto patch = defs.contains("ROCM_VERSION_PATCH") ? defs.at("ROCM_VERSION_PATCH") : "0";
                r.version = Fact<std::string>::known(fmt::format("{}.{}.{}", defs.at("ROCM_VERSION_MAJOR"),
                                                                 defs.at("ROCM_VERSION_MINOR"), patch),
                                                     h.source());
                r.version_source = h.source();
                return;
            }
        }
    }
    if (auto h = c.text(prefix + "/include/hip/hip_version.h")) {
        const auto defs = parse_c_defines(*h);
        if (defs.contains("HIP_VERSION_MAJOR") && defs.contains("HIP_VERSION_MINOR")) {
            r.version = Fact<std::string>::known(fmt::format("{}.{}", defs.at("HIP_VERSION_MAJOR"),
                                                             defs.at("HIP_VERSION_MINOR")),
                                                 h.source());
            r.version_source = h.source();
        }
    }
}

void collect_rocm(Collector& c, Facts& facts, const std::map<std::string, std::string>& env) {
    std::vector<std::string> candidates;
    if (c.root().exists("/opt/rocm")) candidates.emplace_back("/opt/rocm");
    for (const auto& name : c.list("/opt"))
        if (name.starts_with("rocm-")) candidates.push_back("/opt/" + name);
    // /opt/rocm is usually a link to /opt/rocm-X.Y.Z, directly or through update-alternatives
    // (/opt/rocm -> /etc/alternatives/rocm -> /opt/rocm-X.Y.Z): report the versioned directory once.
    if (!candidates.empty() && candidates.front() == "/opt/rocm")
        if (const auto target = c.root().canonical("/opt/rocm"); target && *target != "/opt/rocm")
            if (std::find(candidates.begin() + 1, candidates.end(), *target) != candidates.end())
                candidates.erase(candidates.begin());

    // Compare where paths lead, not how they are spelled: ROCM_PATH=/opt/rocm selects the
    // /opt/rocm-X.Y.Z it links to.
    const auto in_root = [&](std::string_view p) {
        p = trim(p);
        while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
        if (p.empty() || p.front() != '/') return std::string(p);
        auto r = c.root().canonical(p);
        return r ? *r : std::string(p);
    };
    const auto rocm_path = env.contains("ROCM_PATH") ? in_root(env.at("ROCM_PATH")) : std::string{};
    std::vector<std::string> ld_dirs;
    if (env.contains("LD_LIBRARY_PATH"))
        for (const auto& dir : split_on(env.at("LD_LIBRARY_PATH"), ':'))
            if (!dir.empty()) ld_dirs.push_back(in_root(dir));
    const std::string default_rocm = c.root().exists("/opt/rocm") ? in_root("/opt/rocm") : std::string{};
    const auto selected_by = [&](const std::string& p) -> std::string {
        if (!rocm_path.empty() && rocm_path == p) return "ROCM_PATH";
        for (const auto& dir : ld_dirs)
            if (dir == p + "/lib" || dir == p + "/lib64" || dir.starts_with(p + "/lib/")) return "LD_LIBRARY_PATH";
        return "";
    };

    for (const auto& p : candidates) {
        RocmInstall r;
        r.path = p;
        r.kind = "opt";
        if (auto v = c.line(p + "/.info/version")) {
            // "6.1.0-82": the package build number after '-' is not part of the ROCm version.
            r.version = Fact<std::string>::known(std::string(v->substr(0, v->find('-'))), v.source());
            r.version_source = v.source();
        } else {
            version_from_headers(c, p, r);
        }
        r.selected_by = selected_by(p);
        if (r.selected_by.empty() && p == default_rocm) r.selected_by = "default";
        facts.rocm.push_back(std::move(r));
    }

    // Debian's packaged ROCm lives under /usr (libamdhip64-5 and friends).
    if (c.root().exists("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5") ||
        c.root().exists("/usr/include/hip/hip_version.h")) {
        RocmInstall r;
        r.path = "/usr";
        r.kind = "debian";
        if (auto status = c.text("/var/lib/dpkg/status", std::size_t{64} << 20)) {
            for (const auto* pkg : {"libamdhip64-5", "libamdhip64-dev", "hipcc"})
                if (const auto v = dpkg_installed_version(*status, pkg)) {
                    // "[epoch:]upstream[-debian_revision]": the ROCm version is the upstream part.
                    std::string_view upstream = *v;
                    if (const auto colon = upstream.find(':'); colon != std::string_view::npos)
                        upstream.remove_prefix(colon + 1);
                    upstream = upstream.substr(0, upstream.rfind('-'));
                    r.version = Fact<std::string>::known(std::string(upstream), "/var/lib/dpkg/status");
                    r.version_source = fmt::format("/var/lib/dpkg/status ({})", pkg);
                    break;
                }
        }
        // Without dpkg (a source build into /usr, or another distribution's packages) the headers say it.
        if (!r.version) version_from_headers(c, "/usr", r);
        r.selected_by = selected_by("/usr");
        if (r.selected_by.empty() && candidates.empty()) r.selected_by = "default";
        facts.rocm.push_back(std::move(r));
    }
}

void collect_torch(Collector& c, Facts& facts, const std::map<std::string, std::string>& env) {
    std::vector<std::pair<std::string, std::string>> site_dirs;  // (dir, origin)
    site_dirs.emplace_back("/usr/lib/python3/dist-packages", "debian");
    for (const auto& lib : {"/usr/local/lib", "/usr/lib"})
        for (const auto& d : python_dirs(c, lib)) {
            site_dirs.emplace_back(d + "/dist-packages", "system");
            site_dirs.emplace_back(d + "/site-packages", "system");
        }
    std::string home;
    if (env.contains("HOME")) home = env.at("HOME");
    else if (facts.user.uid)
        if (auto passwd = c.text("/etc/passwd")) home = passwd_home_for(*passwd, *facts.user.uid).value_or("");
    if (!home.empty())
        for (const auto& d : python_dirs(c, home + "/.local/lib")) site_dirs.emplace_back(d + "/site-packages", "user");
    for (const auto& [var, origin] : {std::pair{"VIRTUAL_ENV", "venv"}, std::pair{"CONDA_PREFIX", "conda"}})
        if (env.contains(var))
            for (const auto& d : python_dirs(c, env.at(var) + "/lib"))
                site_dirs.emplace_back(d + "/site-packages", origin);

    std::set<std::string> seen;
    for (const auto& [dir, origin] : site_dirs) {
        const std::string torch_dir = dir + "/torch";
        if (seen.contains(torch_dir)) continue;
        auto version_py = c.text(torch_dir + "/version.py");
        if (!version_py) continue;
        seen.insert(torch_dir);
        TorchInstall t;
        t.path = torch_dir;
        t.origin = origin;
        const auto vars = parse_python_assignments(*version_py);
        const auto get = [&](const char* key) {
            const auto it = vars.find(key);
            if (it == vars.end() || !it->second) return Fact<std::string>::absent(version_py.source());
            return Fact<std::string>::known(*it->second, version_py.source());
        };
        t.version = get("__version__");
        t.hip_version = get("hip");
        t.cuda_version = get("cuda");
        t.has_libtorch_hip = c.root().exists(torch_dir + "/lib/libtorch_hip.so");
        facts.torch.push_back(std::move(t));
    }
}

AmdgpuIds load_amdgpu_ids(Collector& c, const Facts& facts) {
    std::vector<std::string> paths{"/usr/share/libdrm/amdgpu.ids", "/opt/amdgpu/share/libdrm/amdgpu.ids"};
    for (const auto& t : facts.torch) paths.push_back(t.path + "/share/libdrm/amdgpu.ids");
    for (const auto& p : paths)
        if (auto text = c.text(p, std::size_t{4} << 20)) return parse_amdgpu_ids(*text);
    return {};
}

// Fills the PCI side of a GPU from its DRM device directory.
void collect_drm_device(Collector& c, Gpu& gpu, const std::string& device_dir) {
    const auto vendor = c.number(device_dir + "/vendor", true);
    const auto device = c.number(device_dir + "/device", true);
    if (vendor && device)
        gpu.pci_id = Fact<std::string>::known(fmt::format("{:04x}:{:04x}", *vendor, *device), device_dir + "/device");
    gpu.revision = c.line(device_dir + "/revision");
    if (gpu.revision && !parse_hex(*gpu.revision)) gpu.revision = c.malformed<std::string>(device_dir + "/revision");
    const auto sub_vendor = c.number(device_dir + "/subsystem_vendor", true);
    const auto sub_device = c.number(device_dir + "/subsystem_device", true);
    if (sub_vendor && sub_device)
        gpu.subsystem_id = Fact<std::string>::known(fmt::format("{:04x}:{:04x}", *sub_vendor, *sub_device),
                                                    device_dir + "/subsystem_device");
    if (auto link = c.root().read_link(device_dir))
        gpu.pci_address = Fact<std::string>::known(basename_of(*link), device_dir);
    gpu.vram_bytes = c.number(device_dir + "/mem_info_vram_total");
    gpu.gtt_bytes = c.number(device_dir + "/mem_info_gtt_total");
    // ollama's integrated-GPU rule (docs/domain.md).
    const bool board_info = c.root().exists(device_dir + "/board_info");
    const bool vram_vendor = c.root().exists(device_dir + "/mem_info_vram_vendor");
    // The memory rule misses an APU whose firmware carves out a large VRAM share (a Strix Halo
    // set to 64 GiB): a target that exists only as an APU (LLVM's processor table) is integrated
    // whatever its carve-out.
    if (board_info || vram_vendor) gpu.integrated = Fact<bool>::known(false, device_dir);
    else if (gpu.gfx_target && gfx_integrated(*gpu.gfx_target) == true)
        gpu.integrated = Fact<bool>::known(true, gpu.gfx_target.source());
    else if (gpu.vram_bytes && gpu.gtt_bytes)
        gpu.integrated = Fact<bool>::known(*gpu.vram_bytes <= 4 * k_gib && *gpu.gtt_bytes >= 8 * k_gib &&
                                               *gpu.gtt_bytes >= 4 * *gpu.vram_bytes,
                                           device_dir);
}

void apply_marketing_name(Gpu& gpu, const AmdgpuIds& ids) {
    if (!gpu.pci_id || !gpu.revision) return;
    const auto device = parse_hex(gpu.pci_id->substr(5));
    const auto revision = parse_hex(*gpu.revision);
    if (!device || !revision) return;
    const auto name = ids.lookup(static_cast<std::uint32_t>(*device), static_cast<std::uint32_t>(*revision));
    // libdrm's own fallback name for pairs it does not know.
    gpu.marketing_name = Fact<std::string>::known(name.value_or("AMD Radeon Graphics"), "amdgpu.ids");
}

}  // namespace

void apply_gfx_override(Gpu& gpu, const std::map<std::string, std::string>& env) {
    if (!gpu.gfx_target) return;
    std::optional<std::pair<std::string, std::string>> source;
    if (gpu.node) {
        const auto per_node = fmt::format("HSA_OVERRIDE_GFX_VERSION_{}", *gpu.node);
        if (env.contains(per_node)) source = {per_node, env.at(per_node)};
    }
    if (!source && env.contains("HSA_OVERRIDE_GFX_VERSION"))
        source = {"HSA_OVERRIDE_GFX_VERSION", env.at("HSA_OVERRIDE_GFX_VERSION")};
    if (!source) {
        gpu.effective_gfx_target = gpu.gfx_target;
        return;
    }
    GfxOverride o;
    o.variable = source->first;
    o.value = source->second;
    o.target = parse_gfx_override(trim(o.value));
    if (o.target) {
        if (*o.target == *gpu.gfx_target) o.relation = OverrideRelation::identical;
        else if (same_isa_family(*o.target, *gpu.gfx_target)) o.relation = OverrideRelation::same_family;
        else o.relation = OverrideRelation::cross_family;
        gpu.effective_gfx_target = Fact<std::string>::known(*o.target, "env:" + o.variable);
    } else {
        // A malformed value makes runtime initialisation fail: there is no effective target.
        gpu.effective_gfx_target = Fact<std::string>::absent("env:" + o.variable);
    }
    gpu.gfx_override = std::move(o);
}

namespace {

void fill_target(Gpu& gpu, std::uint64_t version, const std::string& source) {
    gpu.gfx_target_version = Fact<std::uint64_t>::known(version, source);
    if (const auto name = decode_gfx_target_version(version)) {
        gpu.gfx_target = Fact<std::string>::known(*name, source);
        if (const auto fam = gfx_family(*name)) gpu.family = Fact<std::string>::known(*fam, source);
        if (const auto gen = gfx_generic_target(*name)) gpu.generic_target = Fact<std::string>::known(*gen, source);
        gpu.officially_supported = Fact<bool>::known(gfx_officially_supported(*name), source);
    } else {
        gpu.gfx_target = Fact<std::string>::unreadable(source, EINVAL);
    }
}

// The facts a KFD node's properties file gives; a value on a malformed line is unreadable.
void fill_from_properties(Collector& c, Gpu& gpu, const KfdProperties& props, const std::string& source) {
    const auto known = [&](const char* key) {
        if (const auto line = props.bad_line_of(key))
            return c.malformed<std::uint64_t>(fmt::format("{}:{}", source, *line));
        const auto v = props.get(key);
        return v ? Fact<std::uint64_t>::known(*v, source) : Fact<std::uint64_t>::absent(source);
    };
    if (const auto bad = known("gfx_target_version"); bad.state() == FactState::unreadable) {
        gpu.gfx_target_version = bad;
        gpu.gfx_target = Fact<std::string>::unreadable(bad.source(), EINVAL);
    } else {
        fill_target(gpu, props.get("gfx_target_version").value_or(0), source);
    }
    gpu.mec_firmware = known("fw_version");
    gpu.max_engine_clock_mhz = known("max_engine_clk_fcompute");
    gpu.drm_render_minor = known("drm_render_minor");
    if (const auto simd = known("simd_count"), per_cu = known("simd_per_cu"); simd && per_cu && *per_cu)
        gpu.compute_units = Fact<std::uint64_t>::known(*simd / *per_cu, source);
    if (const auto vendor = known("vendor_id"), device = known("device_id"); vendor && device)
        gpu.pci_id = Fact<std::string>::known(fmt::format("{:04x}:{:04x}", *vendor, *device), source);
}

// PCIe atomics: io_link flags bit 8 = no 64-bit atomics (kfd_topology.c).
void collect_pcie_atomics(Collector& c, Gpu& gpu, const std::string& links_dir) {
    if (!c.root().exists(links_dir)) return;
    bool atomics = true;
    bool any = false;
    for (const unsigned link : numeric_entries(c.list(links_dir))) {
        const auto link_path = fmt::format("{}/{}/properties", links_dir, link);
        const auto link_text = c.text(link_path);
        if (!link_text) continue;
        const auto link_props = parse_kfd_properties(*link_text);
        if (const auto bad = link_props.bad_line_of("flags")) {
            c.malformed<std::uint64_t>(fmt::format("{}:{}", link_path, *bad));
            continue;
        }
        any = true;
        if (const auto flags = link_props.get("flags"); flags && (*flags & 8U)) atomics = false;
    }
    if (any) gpu.pcie_atomics = Fact<bool>::known(atomics, links_dir);
}

// ROCr enumerates GPU agents in KFD node order, and HIP (so PyTorch's cuda:N) numbers them
// the same way; a node whose files the runtime cannot read is not enumerated.
void number_rocm_devices(Facts& facts) {
    std::vector<Gpu*> enumerated;
    for (auto& g : facts.gpus)
        if (g.node && g.visible) enumerated.push_back(&g);
    std::sort(enumerated.begin(), enumerated.end(), [](const Gpu* a, const Gpu* b) { return *a->node < *b->node; });
    for (unsigned i = 0; i < enumerated.size(); ++i) enumerated[i]->rocm_index = i;
}

std::vector<Gpu> collect_drm_only_gpus(Collector& c, const AmdgpuIds& ids, const std::set<std::uint64_t>& kfd_minors);
void pair_hidden_nodes(Facts& facts, std::vector<Gpu>& drm_only);

void collect_gpus(Collector& c, Facts& facts, const std::map<std::string, std::string>& env) {
    const auto ids = load_amdgpu_ids(c, facts);
    std::set<std::uint64_t> kfd_minors;
    for (const unsigned node : numeric_entries(c.list(std::string(k_topology)))) {
        const auto dir = fmt::format("{}/{}", k_topology, node);
        Gpu gpu;
        gpu.node = node;
        gpu.gpu_id = c.number(dir + "/gpu_id");
        const auto props_text = c.text(dir + "/properties");
        if (!props_text) {
            if (props_text.state() == FactState::absent) continue;
            // EPERM inside a container whose device cgroup hides this GPU (docs/domain.md).
            gpu.visible = false;
            facts.gpus.push_back(std::move(gpu));
            continue;
        }
        const auto props = parse_kfd_properties(*props_text);
        const std::string source = dir + "/properties";
        // A CPU node says so with zeros; a node whose values are unreadable is kept, never
        // taken for a CPU.
        if (!props.bad_lines.empty() && !props.get("gfx_target_version") && !props.get("simd_count") &&
            !props.bad_line_of("gfx_target_version") && !props.bad_line_of("simd_count")) {
            // Nothing readable says what the node is: present but unreadable, as with EPERM,
            // never taken for a CPU (and paired with its DRM device below).
            c.malformed<std::uint64_t>(source);
            gpu.visible = false;
            facts.gpus.push_back(std::move(gpu));
            continue;
        }
        const auto gfx_version = props.get("gfx_target_version");
        if (gfx_version.value_or(0) == 0 && props.get("simd_count").value_or(0) == 0 &&
            !props.bad_line_of("gfx_target_version") && !props.bad_line_of("simd_count"))
            continue;
        fill_from_properties(c, gpu, props, source);
        gpu.asic_name = c.line(dir + "/name");
        collect_pcie_atomics(c, gpu, dir + "/io_links");

        if (gpu.drm_render_minor) {
            kfd_minors.insert(*gpu.drm_render_minor);
            collect_drm_device(c, gpu, fmt::format("/sys/class/drm/renderD{}/device", *gpu.drm_render_minor));
        }
        apply_marketing_name(gpu, ids);
        apply_gfx_override(gpu, env);
        facts.gpus.push_back(std::move(gpu));
    }

    auto drm_only = collect_drm_only_gpus(c, ids, kfd_minors);
    pair_hidden_nodes(facts, drm_only);
    for (auto& g : drm_only) facts.gpus.push_back(std::move(g));
    number_rocm_devices(facts);
    apply_visibility(facts.gpus, env);
}

// AMD DRM devices that KFD did not take (e.g. "PCI rejects atomics"): present, not usable.
std::vector<Gpu> collect_drm_only_gpus(Collector& c, const AmdgpuIds& ids, const std::set<std::uint64_t>& kfd_minors) {
    std::vector<Gpu> drm_only;
    for (const auto& name : c.list("/sys/class/drm")) {
        if (!name.starts_with("renderD")) continue;
        const auto minor = parse_u64(std::string_view(name).substr(7));
        if (!minor || kfd_minors.contains(*minor)) continue;
        const auto dir = "/sys/class/drm/" + name + "/device";
        const auto vendor = c.number(dir + "/vendor", true);
        if (!vendor || *vendor != k_amd_vendor) continue;
        Gpu gpu;
        gpu.visible = false;
        gpu.drm_render_minor = Fact<std::uint64_t>::known(*minor, "/sys/class/drm/" + name);
        collect_drm_device(c, gpu, dir);
        apply_marketing_name(gpu, ids);
        drm_only.push_back(std::move(gpu));
    }
    return drm_only;
}

// A container's device cgroup hides a GPU's KFD files (EPERM) but not its sysfs DRM
// device, so a hidden node also shows up as a DRM device without a KFD node. KFD
// nodes and render minors are both assigned in probe order: when the counts agree, the
// n-th hidden node is the n-th such device. Otherwise keep both (cannot tell which).
void pair_hidden_nodes(Facts& facts, std::vector<Gpu>& drm_only) {
    std::vector<Gpu*> hidden;
    for (auto& g : facts.gpus)
        if (g.node && !g.visible) hidden.push_back(&g);
    if (!hidden.empty() && hidden.size() == drm_only.size()) {
        for (std::size_t i = 0; i < hidden.size(); ++i) {
            Gpu& h = *hidden[i];
            Gpu& d = drm_only[i];
            h.drm_render_minor = d.drm_render_minor;
            h.pci_id = d.pci_id;
            h.revision = d.revision;
            h.subsystem_id = d.subsystem_id;
            h.pci_address = d.pci_address;
            h.marketing_name = d.marketing_name;
            h.vram_bytes = d.vram_bytes;
            h.gtt_bytes = d.gtt_bytes;
            h.integrated = d.integrated;
        }
        drm_only.clear();
    }
}

void collect_access(Collector& c, Facts& facts) {
    std::vector<GroupEntry> groups;
    if (auto text = c.text("/etc/group")) groups = parse_group_file(*text);
    facts.kfd = device_access(c, facts, groups, "/dev/kfd");
    for (const auto& gpu : facts.gpus)
        if (gpu.drm_render_minor)
            facts.render_nodes.push_back(
                device_access(c, facts, groups, fmt::format("/dev/dri/renderD{}", *gpu.drm_render_minor)));
}

}  // namespace

namespace {
// The positions a *_VISIBLE_DEVICES value selects, or nullopt when it names a UUID or
// anything else that is not an index list (then nothing can be decided).
std::optional<std::vector<std::size_t>> visible_indices(std::string_view value) {
    std::vector<std::size_t> out;
    if (value.find_first_not_of(" \t") == std::string_view::npos) return out;  // empty: none
    for (auto part : split(value, ',')) {
        while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
        while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
        const auto n = parse_u64(part);
        if (!n) return std::nullopt;
        out.push_back(static_cast<std::size_t>(*n));
    }
    return out;
}
}  // namespace

void apply_visibility(std::vector<Gpu>& gpus, const std::map<std::string, std::string>& env) {
    std::vector<Gpu*> agents;
    for (auto& g : gpus) {
        g.hidden_by.reset();
        g.torch_index.reset();
        if (g.rocm_index) agents.push_back(&g);
    }
    std::sort(agents.begin(), agents.end(), [](const Gpu* a, const Gpu* b) { return *a->rocm_index < *b->rocm_index; });
    const auto select = [&](const char* variable) {
        const auto it = env.find(variable);
        if (it == env.end()) return;
        const auto keep = visible_indices(it->second);
        if (!keep) return;
        std::vector<Gpu*> left;
        for (std::size_t i = 0; i < agents.size(); ++i) {
            if (std::find(keep->begin(), keep->end(), i) != keep->end()) left.push_back(agents[i]);
            else agents[i]->hidden_by = variable;
        }
        agents = std::move(left);
    };
    bool decidable = true;
    const auto select_decided = [&](const char* variable) {
        const auto it = env.find(variable);
        if (it != env.end() && !visible_indices(it->second)) decidable = false;
        select(variable);
    };
    select_decided("ROCR_VISIBLE_DEVICES");
    select_decided(env.count("HIP_VISIBLE_DEVICES") != 0 ? "HIP_VISIBLE_DEVICES" : "CUDA_VISIBLE_DEVICES");
    // HIP numbers what is left from 0, so the survivors' order is PyTorch's cuda:N.
    if (decidable)
        for (unsigned i = 0; i < agents.size(); ++i) agents[i]->torch_index = i;
}

namespace {
// TORCH_ROCM_: PyTorch's ROCm switches (TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL turns on
// the flash/memory-efficient attention kernels for consumer GPUs).
constexpr std::array<std::string_view, 10> k_env_prefixes{"HSA_",     "HIP_",     "ROCR_", "ROCM_", "MIOPEN_",
                                                          "ROCBLAS_", "PYTORCH_", "AMD_",  "GPU_",  "TORCH_ROCM_"};
constexpr std::array<std::string_view, 6> k_env_exact{"CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "LD_PRELOAD",
                                                      "VIRTUAL_ENV",          "CONDA_PREFIX",    "RMCP_PROFILE"};
}  // namespace

bool is_relevant_env(std::string_view name) {
    return std::any_of(k_env_prefixes.begin(), k_env_prefixes.end(), [&](auto p) { return name.starts_with(p); }) ||
           std::find(k_env_exact.begin(), k_env_exact.end(), name) != k_env_exact.end();
}

RelevantEnvNames relevant_env_names() { return {k_env_prefixes, k_env_exact}; }

std::string relevant_env_pattern() {
    std::string prefixes, exact;
    for (const auto p : k_env_prefixes) prefixes += (prefixes.empty() ? "" : "|") + std::string(p);
    for (const auto e : k_env_exact) exact += (exact.empty() ? "" : "|") + std::string(e);
    return "\\b(" + prefixes + ")[A-Z0-9_]+|\\b(" + exact + ")\\b";
}

Facts detect(const Root& root) {
    Facts facts;
    facts.root = root.base().string();
    Collector c(root, facts);
    std::map<std::string, std::string> env;
    collect_env(c, facts, env);
    collect_user(c, facts);
    collect_driver(c, facts);
    collect_rocm(c, facts, env);
    collect_torch(c, facts, env);
    collect_gpus(c, facts, env);
    collect_access(c, facts);
    return facts;
}

}  // namespace rmcp
