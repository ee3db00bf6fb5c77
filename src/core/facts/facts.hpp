// The typed model of a machine, collected once by detect and read-only afterwards.
// Its JSON projection (facts_json.hpp) is a public interface: `detect --format json`,
// the knowledge-base fact paths and users' scripts all use the same key names.
#pragma once

#include "facts/fact.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rmcp {

inline constexpr int k_facts_schema_version = 1;

enum class OverrideRelation { identical, same_family, cross_family, unknown };

// HSA_OVERRIDE_GFX_VERSION (or its per-node form) as it applies to one GPU.
struct GfxOverride {
    std::string variable;               // which variable supplied it
    std::string value;                  // as written
    std::optional<std::string> target;  // gfx name; nullopt when malformed
    OverrideRelation relation = OverrideRelation::unknown;
};

struct Gpu {
    std::optional<unsigned> node;  // KFD topology node; nullopt: DRM device without a KFD node
    bool visible = true;           // false: KFD node present but unreadable (container cgroup)
    // ROCm's device index with no *_VISIBLE_DEVICES set: the runtime enumerates the GPU agents
    // in KFD node order (HIP and PyTorch number them the same way: cuda:N); nullopt: not enumerated.
    std::optional<unsigned> rocm_index;
    // The variable that hides this GPU from ROCm programs in this environment
    // (ROCR_VISIBLE_DEVICES, then HIP_VISIBLE_DEVICES or CUDA_VISIBLE_DEVICES over what ROCr
    // left); nullopt: enumerated, or not decidable (a UUID in the list).
    std::optional<std::string> hidden_by;
    // PyTorch's cuda:N for this GPU in this environment: its position among the agents left
    // once *_VISIBLE_DEVICES are applied; nullopt: hidden, not enumerated, or not decidable.
    std::optional<unsigned> torch_index;
    Fact<std::uint64_t> gpu_id;
    Fact<std::uint64_t> gfx_target_version;
    Fact<std::string> gfx_target;
    Fact<std::string> effective_gfx_target;
    std::optional<GfxOverride> gfx_override;
    Fact<std::string> family;
    Fact<std::string> generic_target;
    Fact<bool> officially_supported;
    Fact<std::string> asic_name;     // KFD `name`: informational only (docs/domain.md)
    Fact<std::string> pci_id;        // "1002:731f"
    Fact<std::string> revision;      // "0xca"
    Fact<std::string> subsystem_id;  // "1da2:e411"
    Fact<std::string> pci_address;   // "0000:03:00.0"
    Fact<std::string> marketing_name;
    Fact<std::uint64_t> vram_bytes;
    Fact<std::uint64_t> gtt_bytes;
    Fact<bool> integrated;
    Fact<std::uint64_t> compute_units;
    Fact<std::uint64_t> mec_firmware;
    Fact<std::uint64_t> max_engine_clock_mhz;
    Fact<bool> pcie_atomics;  // no io_link to the CPU says "no 64-bit atomics"
    Fact<std::uint64_t> drm_render_minor;
};

struct OsRelease {
    Fact<std::string> id;
    Fact<std::string> version_id;
    Fact<std::string> pretty_name;
};

struct Driver {
    Fact<std::string> initstate;  // "live" when loaded as a module
    // amdgpu built into the kernel: /sys/module/amdgpu exists (it has parameters) but there
    // is no initstate, which only loadable modules have (kernel.org
    // Documentation/ABI/stable/sysfs-module).
    bool builtin = false;
    bool loaded = false;             // initstate "live", or built in
    Fact<std::string> dkms_version;  // only with AMD's DKMS driver
    std::map<std::string, Fact<std::string>> params;
    Fact<std::string> kernel_release;
    OsRelease os;
};

struct User {
    Fact<std::uint64_t> uid;
    Fact<std::uint64_t> gid;
    std::vector<std::uint64_t> groups;  // supplementary group ids
    Fact<std::string> name;
};

// Access to /dev/kfd or a render node for the current user.
struct DeviceAccess {
    std::string path;
    bool present = false;
    Fact<std::string> group;  // owning group name
    Fact<std::uint32_t> mode;
    Fact<bool> accessible;     // read+write for this user
    Fact<bool> user_in_group;  // this process has the owning group (/proc/self/status)
    // /etc/group lists the user in the owning group (or it is the user's primary group there):
    // true while user_in_group is false means the user joined after this login began, and a
    // new login gives access (docs/patches.md, "From finding to fixed").
    Fact<bool> user_listed_in_group;
};

struct RocmInstall {
    std::string path;
    Fact<std::string> version;
    std::string version_source;  // which file gave the version
    std::string kind;            // "opt" (AMD packages) or "debian"
    std::string selected_by;     // "ROCM_PATH", "LD_LIBRARY_PATH", "default" or ""
};

struct TorchInstall {
    std::string path;    // the torch package directory
    std::string origin;  // debian, system, user, venv, conda
    Fact<std::string> version;
    Fact<std::string> hip_version;
    Fact<std::string> cuda_version;
    bool has_libtorch_hip = false;
};

struct ReadProblem {
    std::string path;
    int err = 0;
};

struct Facts {
    std::string root;  // the --root in use ("/" on a live system)
    std::vector<Gpu> gpus;
    Driver driver;
    User user;
    DeviceAccess kfd;
    std::vector<DeviceAccess> render_nodes;
    std::vector<RocmInstall> rocm;
    std::vector<TorchInstall> torch;
    std::map<std::string, std::string> env;  // only the variables that matter (facts_json.cpp)
    std::vector<ReadProblem> unreadable;     // every read that failed other than ENOENT
};

}  // namespace rmcp
