// Patches as data (docs/patches.md): one TOML file per patch under patches/
// (docs/patches.md), each a list of typed operations. Planning turns them into exact
// file contents and diffs; the Applier (applier.hpp) is the only code that writes.
#pragma once

#include "patch/amdgpu_params.hpp"
#include "root/root.hpp"
#include "util/error.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp {
struct Facts;
}

namespace rmcp::patch {

enum class OpKind { env, modprobe, python_hook, advisory };

// An advisory command chosen by distribution (os-release ID, then ID_LIKE).
struct DistroCommand {
    std::vector<std::string> ids;
    std::string command;
};

// An advisory command chosen by the GPUs of the machine: the first entry one of whose
// targets is the chip target (KFD) of some GPU wins; without a match, `command` is used.
struct GpuCommand {
    std::vector<std::string> targets;
    std::string command;
};

struct Operation {
    OpKind kind = OpKind::advisory;
    unsigned line = 0;
    // env: variables the user's profile.env sets (`set`; values may name {placeholders}
    // from PlanContext::vars), unsets (`unset`: `rmcp env`/`rmcp run` remove them from the
    // environment) or stops mentioning (`remove`).
    std::map<std::string, std::string> set;
    std::vector<std::string> unset;
    std::vector<std::string> remove;
    // modprobe: amdgpu parameters for /etc/modprobe.d/<file> (default rmcp-<patch id>.conf).
    std::map<std::string, std::string> params;
    std::string file;
    // env: a set of variables computed from the machine's facts (PlanContext::derived),
    // e.g. "per-node-override": HSA_OVERRIDE_GFX_VERSION_<node> per GPU that needs one.
    std::string derived;
    // advisory: a command rmcp prints and never runs, fixed or per distribution.
    std::string command;
    std::vector<DistroCommand> by_distro;
    std::vector<GpuCommand> by_gpu;
    std::string note;  // why / what to do after (also for the other kinds)
};

// When what a patch asks for is in effect. A modprobe operation always needs a reboot (module
// options are read when amdgpu loads); `takes_effect = "re-login"` marks an advisory whose
// result a running login session does not see (a new group membership).
enum class TakesEffect { at_once, relogin };

struct Patch {
    std::string id;
    std::string title;
    std::string why;
    std::string cost;
    std::string evidence;  // vendor-confirmed | user-confirmed | reported | hypothesis
    std::vector<std::string> references;
    std::vector<Operation> operations;
    TakesEffect takes_effect = TakesEffect::at_once;
    std::string file;

    // Whether `rmcp patch rollback` undoes all of it (advisory steps are the user's to undo).
    [[nodiscard]] bool fully_reversible() const;
};

struct PatchSet {
    std::vector<Patch> patches;  // sorted by id
    [[nodiscard]] const Patch* find(std::string_view id) const;
};

Result<Patch> parse_patch(std::string_view text, const std::string& file);
// Loads every *.toml in dir; errors name file:line (ExitCode::usage).
Result<PatchSet> load_patches(const std::filesystem::path& dir);

std::string_view op_kind_name(OpKind k);

// ---- planning ------------------------------------------------------------------------

// Where things are, for one invocation: the process environment (HOME, XDG_*), the
// site-packages chosen for the startup hook, the distribution for advisory commands.
struct PlanContext {
    std::map<std::string, std::string> env;
    std::string site_packages;             // logical path (inside the root); empty: not chosen
    std::string distro_id;                 // os-release ID
    std::vector<std::string> distro_like;  // os-release ID_LIKE
    // Values derived from this machine's facts for {placeholders} in env values:
    // dgpu_indices (HIP ordinals of the discrete GPUs, comma-separated),
    // ld_library_path_without_rocm. See machine_vars().
    std::map<std::string, std::string> vars;
    // Named variable sets derived from facts for env operations with `derived = NAME`.
    std::map<std::string, std::map<std::string, std::string>> derived;
    // Why a derived set is empty on this machine (shown when a plan needs it); by set name.
    std::map<std::string, std::string> derived_why;
    // Chip targets of the machine's GPUs, for advisory commands chosen by GPU.
    std::vector<std::string> gpu_targets;
    // The override guard (kb-format.md rule 6, made a property of the planner): the value each
    // GPU needs (KFD node -> value, gpus_needing_override), and whether the runtime reads the
    // per-node form. A plan whose environment leaves such a GPU without its value is refused.
    std::optional<std::map<unsigned, std::string>> needed_overrides;
    bool per_node_read = true;
};

// The {placeholder} values a machine's facts give (only those that are known).
std::map<std::string, std::string> machine_vars(const Facts& facts);
// Variable sets derived from facts for `derived = NAME` env operations (docs/patches.md):
//  "per-node-override": HSA_OVERRIDE_GFX_VERSION_<KFD node> for each GPU that needs an
//      override, with the value of the supported member of its own ISA family;
//  "same-family-override": the same values, as one global HSA_OVERRIDE_GFX_VERSION when all
//      GPUs belong to one ISA family, else per node.
// A GPU needs an override when the coverage facts (`libraries`, from scan) say the installed
// PyTorch has no code for the chip but has code for a target of its family (chip_override);
// without coverage facts, when it is outside AMD's list and `override_profile` (isa-override)
// has a rule for it. Per-node variables are read by libhsakmt from ROCm 6.3 on; when the
// runtime that would read them is older (torch.version.hip of a wheel, else the system
// ROCm), the per-node forms are left empty and `why` says so: a per-node variable the
// runtime ignores would silently drop an override the GPU needs.
struct Profile;
struct DerivedSets {
    std::map<std::string, std::map<std::string, std::string>> sets;
    std::map<std::string, std::string> why;  // set name -> why it is empty
};
DerivedSets machine_derived_sets(const Facts& facts, const Profile* override_profile,
                                 const nlohmann::json* libraries = nullptr);
// The GPUs (KFD node -> value) that need an override by the rule above; never a GPU that
// *_VISIBLE_DEVICES hides, nor an integrated GPU next to a discrete one (issue 28).
std::map<unsigned, std::string> gpus_needing_override(const Facts& facts, const Profile* override_profile,
                                                      const nlohmann::json* libraries = nullptr);
// Why an environment (`set` and `unset` over the process environment ctx.env) leaves a GPU of
// ctx.needed_overrides without the override it needs, naming `patch_id`; "" when it does not.
std::string override_guard(const PlanContext& ctx, const std::map<std::string, std::string>& set,
                           const std::vector<std::string>& unset, const std::string& patch_id);
// Whether an integrated GPU that the runtime enumerates (a KFD node no *_VISIBLE_DEVICES hides)
// sits next to a discrete GPU: such an iGPU is to be hidden, never given an override (AMD's
// install guide: ROCm does not support integrated graphics; KB audit 2, docs/kb-audit.md).
bool runs_igpu_next_to_dgpu(const Facts& facts);
// Fills the override guard of `pc` (PlanContext::needed_overrides) for this machine.
void add_override_guard(PlanContext& pc, const Facts& facts, const Profile* override_profile,
                        const nlohmann::json* libraries);
// The sets only (older callers).
std::map<std::string, std::map<std::string, std::string>> machine_derived(const Facts& facts,
                                                                          const Profile* override_profile);
// The HIP runtime version that would read environment variables, as known from facts: the
// lowest torch.version.hip of the PyTorch installations that have one, else the lowest ROCm
// version; nullopt when neither is known.
std::optional<std::string> runtime_version(const Facts& facts);

// Reads ID / ID_LIKE from <root>/etc/os-release (then /usr/lib/os-release).
void read_distro(const Root& root, PlanContext& ctx);

struct PlannedStep {
    const Patch* patch = nullptr;
    const Operation* op = nullptr;
    std::string target;    // logical absolute path; empty for advisory steps
    bool system = false;   // under /etc: needs root
    bool existed = false;  // target state before this step (after earlier steps)
    std::string old_content;
    std::uint32_t old_mode = 0;
    std::string new_content;
    std::uint32_t new_mode = 0644;
    bool in_effect = false;  // nothing to do: skipped by apply
    std::string advisory;    // advisory: the exact command(s)
    std::string summary;     // one line: what the step does
};

struct Plan {
    std::vector<std::string> patch_ids;
    std::vector<PlannedStep> steps;
    [[nodiscard]] bool has_system_targets() const;
    [[nodiscard]] std::size_t writes() const;  // steps that would change a file
};

// What an env operation sets and unsets on this machine: placeholders expanded, derived
// sets added. Errors when the machine's facts do not give a value the operation needs.
struct ResolvedEnv {
    std::map<std::string, std::string> set;
    std::vector<std::string> unset;
};
Result<ResolvedEnv> resolve_env_operation(const Patch& patch, const Operation& op, const PlanContext& ctx);

// Reads current target state through the Root; touches nothing.
Result<Plan> make_plan(const Root& root, const PatchSet& set, const std::vector<std::string>& ids,
                       const PlanContext& ctx);

// The startup hook written by python-hook operations (a .pth line; Python runs lines that
// start with "import" at start-up). It never raises: a missing rmcp package or a failing
// enable() leaves Python start-up untouched.
std::string startup_hook_content();
inline constexpr std::string_view k_startup_hook_name = "rmcp-startup.pth";

// State dirs for journals: $XDG_STATE_HOME/rmcp (default $HOME/.local/state/rmcp) for
// user targets, /var/lib/rmcp for transactions with a system target (logical paths).
std::string user_state_dir(const std::map<std::string, std::string>& env);
inline constexpr std::string_view k_system_state_dir = "/var/lib/rmcp";

}  // namespace rmcp::patch
