// Environment profiles: named sets of environment changes that form an escalation ladder
// (docs/run.md). Profiles are data: one TOML file per profile under
// profiles/ (docs/patches.md describes the format). The supervisor (`rmcp run`) climbs the
// ladder with next_stricter(); `rmcp env` prints a resolved profile for eval.
//
// Typical use in the supervisor:
//   auto set = patch::load_profiles(ctx.data_dir() / "profiles");      // Result<ProfileSet>
//   auto env = set->resolve("miopen-no-gemm", patch::gpu_targets(facts)); // Result<ProfileEnv>
//   patch::apply_profile_env(child_env, *env);
//   const Profile* next = set->next_stricter("miopen-no-gemm", targets); // nullptr at the top
#pragma once

#include "util/error.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp {
struct Facts;
class Root;
}  // namespace rmcp

namespace rmcp::patch {

// HSA_OVERRIDE_GFX_VERSION as a function of the physical target: the ISA-family override
// rung sets `value` only when every GPU on the machine is one of `targets` (docs/domain.md "ISA
// families and what an override can do": 10.3.0 is ISA-safe on gfx1031–gfx1036 only).
struct GfxOverrideRule {
    std::vector<std::string> targets;
    std::string value;
    unsigned line = 0;
};

struct Profile {
    std::string name;
    std::string description;
    std::string cost;     // what it costs, in words ("conv ~2x slower")
    int rank = 0;         // ladder position: lower is less strict
    std::string extends;  // parent profile (its changes come first); may be empty
    std::map<std::string, std::string> set;
    std::vector<std::string> unset;
    bool hide_gpu = false;  // the CPU rung: the child must not see any GPU
    std::vector<GfxOverrideRule> gfx_override;
    // Overrides this rung never sets but keeps where a machine already runs on them and its
    // PyTorch has no code for the chip (RDNA1 as 10.3.0: not ISA-safe, reported working; KB
    // audit 2, item 2): no fix removes them without a build that has the chip's code.
    std::vector<GfxOverrideRule> gfx_kept;
    std::string file;  // where it was defined
};

// A profile with its `extends` chain flattened and its override rules decided for one machine.
struct ProfileEnv {
    std::string name;
    std::map<std::string, std::string> set;
    std::vector<std::string> unset;  // never also in `set`
    bool hide_gpu = false;
    std::vector<std::string> notes;  // e.g. why an override rule did not apply
};

class ProfileSet {
public:
    // Profiles ordered from least to most strict (rank, then name).
    [[nodiscard]] std::vector<const Profile*> ladder() const;
    [[nodiscard]] const Profile* find(std::string_view name) const;
    // The next rung above `name` that changes something on a machine with these GPU targets
    // (rungs whose only content is an inapplicable override are skipped); nullptr at the top
    // or when `name` is unknown. Pass an empty vector to skip nothing but empty rungs.
    [[nodiscard]] const Profile* next_stricter(std::string_view name,
                                               const std::vector<std::string>& gpu_targets = {}) const;
    // Flattens `extends` and decides override rules for the physical gfx targets.
    [[nodiscard]] Result<ProfileEnv> resolve(std::string_view name, const std::vector<std::string>& gpu_targets) const;
    // Whether the profile's own override rules can apply on these targets (false when it has none).
    [[nodiscard]] static bool override_applies(const Profile& p, const std::vector<std::string>& gpu_targets);

    [[nodiscard]] const std::vector<Profile>& all() const { return m_profiles; }
    void add(Profile p) { m_profiles.push_back(std::move(p)); }
    // Replaces the profile of the same name; false (and nothing changed) when there is none.
    bool replace(const Profile& p) {
        for (auto& mine : m_profiles)
            if (mine.name == p.name) {
                mine = p;
                return true;
            }
        return false;
    }

private:
    std::vector<Profile> m_profiles;
};

// Loads every *.toml in dir; a malformed file, unknown key, bad variable name, duplicate
// name or an `extends` that names no profile (or loops) is an error naming file:line
// (ExitCode::usage).
Result<ProfileSet> load_profiles(const std::filesystem::path& dir);
Result<Profile> parse_profile(std::string_view text, const std::string& file);
// Every `extends` names a profile of the set, without loops.
Status check_extends(const ProfileSet& set);

// The user's own profiles, found by name like the shipped ones (`rmcp probe --save` output,
// hand-written rungs): $XDG_CONFIG_HOME/rmcp/profiles/*.toml (default ~/.config/rmcp/profiles).
std::string user_profiles_dir(const std::map<std::string, std::string>& process_env);
// The shipped ladder plus the user's profiles, read through the Root (so under --root from
// inside it). A user's profile with a shipped name replaces it, and `notes` says so.
Result<ProfileSet> load_profiles_with_user(const std::filesystem::path& shipped_dir, const Root& root,
                                           const std::map<std::string, std::string>& process_env,
                                           std::vector<std::string>& notes);

// Applies the changes to an environment map (unset first, then set).
void apply_profile_env(std::map<std::string, std::string>& env, const ProfileEnv& profile);

// The physical gfx targets of the GPUs detect found (not the overridden ones).
std::vector<std::string> gpu_targets(const Facts& facts);

// The user's profile env file, written by env patches: $XDG_CONFIG_HOME/rmcp/profile.env
// (default $HOME/.config/rmcp/profile.env). Lines are `export NAME='value'` (sh quoting),
// comments and blank lines; `rmcp env` and `rmcp run` apply it before the profile.
std::string user_env_file_path(const std::map<std::string, std::string>& process_env);
// Lines may also be `unset NAME` (env-unset-* patches): use parse_user_env to honour them.
struct UserEnv {
    std::map<std::string, std::string> set;
    std::vector<std::string> unset;  // sorted, never also in `set`
    bool operator==(const UserEnv&) const = default;
};
Result<UserEnv> parse_user_env(std::string_view text, const std::string& file);
// The `export` lines only (kept for callers that predate `unset` lines); errors name file:line.
Result<std::map<std::string, std::string>> parse_env_file(std::string_view text, const std::string& file);
std::string render_env_file(const UserEnv& env);
// Applies a profile.env to an environment map (unset first, then set).
void apply_user_env(std::map<std::string, std::string>& env, const UserEnv& user);

// The environment variable rmcp.torch reads to turn MIOpen off in PyTorch
// (torch.backends.cudnn.enabled = False); set by the "miopen-off" rung.
inline constexpr std::string_view k_disable_miopen_variable = "RMCP_DISABLE_MIOPEN";

bool valid_env_name(std::string_view name);

}  // namespace rmcp::patch
