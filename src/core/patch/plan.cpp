// Planning: patches and the machine's state into exact file contents and diffs, read
// through the Root; nothing here writes.
#include "patch/patch.hpp"

#include "detect/gfx.hpp"
#include "facts/facts.hpp"
#include "kb/version.hpp"
#include "patch/env_change.hpp"
#include "patch/profile.hpp"
#include "util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <sstream>

namespace rmcp::patch {

std::string user_state_dir(const std::map<std::string, std::string>& env) {
    const auto get = [&](const char* k) {
        const auto it = env.find(k);
        return it == env.end() ? std::string() : it->second;
    };
    std::string state = get("XDG_STATE_HOME");
    if (state.empty() || state.front() != '/') state = get("HOME") + "/.local/state";
    return state + "/rmcp";
}

void read_distro(const Root& root, PlanContext& ctx) {
    auto text = root.read_file("/etc/os-release");
    if (!text) text = root.read_file("/usr/lib/os-release");
    if (!text) return;
    for (const auto raw : split_lines(*text)) {
        const auto line = trim(raw);
        const auto eq = line.find('=');
        if (eq == std::string_view::npos) continue;
        const auto key = line.substr(0, eq);
        std::string value(line.substr(eq + 1));
        if (value.size() >= 2 && (value.front() == '"' || value.front() == '\''))
            value = value.substr(1, value.size() - 2);
        if (key == "ID") ctx.distro_id = value;
        if (key == "ID_LIKE") {
            std::istringstream words(value);
            for (std::string w; words >> w;) ctx.distro_like.push_back(w);
        }
    }
}

std::map<std::string, std::string> machine_vars(const Facts& facts) {
    std::map<std::string, std::string> vars;
    // HIP numbers the GPUs it can see in KFD node order (docs/kb-format.md, env-hip-visible-dgpu).
    unsigned index = 0;
    std::string dgpus;
    for (const auto& gpu : facts.gpus) {
        if (!gpu.node || !gpu.visible) continue;
        if (gpu.integrated.is_known() && !*gpu.integrated) dgpus += (dgpus.empty() ? "" : ",") + std::to_string(index);
        ++index;
    }
    if (!dgpus.empty()) vars["dgpu_indices"] = dgpus;
    // The interpreter a pip command must run under: the venv's or conda env's own python
    // when detect found PyTorch there (a bare python3 would install into another
    // environment), else python3 (the system or user site of the python3 on PATH).
    vars["python"] = "python3";
    for (const auto& t : facts.torch) {
        if (t.origin != "venv" && t.origin != "conda") continue;
        const auto at = t.path.find("/lib/python");
        if (at == std::string::npos) continue;
        vars["python"] = sh_word(t.path.substr(0, at) + "/bin/python");
        break;
    }
    // LD_LIBRARY_PATH without the entries under a ROCm prefix (/opt/rocm*, $ROCM_PATH).
    if (const auto it = facts.env.find("LD_LIBRARY_PATH"); it != facts.env.end()) {
        const auto rocm = facts.env.find("ROCM_PATH");
        std::string kept;
        std::size_t start = 0;
        while (start <= it->second.size()) {
            auto end = it->second.find(':', start);
            if (end == std::string::npos) end = it->second.size();
            const std::string dir = it->second.substr(start, end - start);
            const bool rocm_dir = dir.rfind("/opt/rocm", 0) == 0 ||
                                  (rocm != facts.env.end() && !rocm->second.empty() && dir.rfind(rocm->second, 0) == 0);
            if (!dir.empty() && !rocm_dir) kept += (kept.empty() ? "" : ":") + dir;
            start = end + 1;
        }
        vars["ld_library_path_without_rocm"] = kept;
    }
    return vars;
}

std::optional<std::string> runtime_version(const Facts& facts) {
    std::optional<std::string> lowest;
    std::optional<std::vector<unsigned long>> lowest_v;
    const auto consider = [&](const Fact<std::string>& f) {
        if (!f) return;
        const auto v = kb::parse_version(*f);
        if (!v) return;
        if (!lowest_v || kb::compare_versions(*v, *lowest_v) < 0) {
            lowest_v = v;
            lowest = *f;
        }
    };
    for (const auto& t : facts.torch) consider(t.hip_version);
    if (lowest) return lowest;
    for (const auto& r : facts.rocm) consider(r.version);
    return lowest;
}

namespace {

// libhsakmt reads HSA_OVERRIDE_GFX_VERSION_<node> from ROCm 6.3 on: the per-node lookup is
// in ROCR-Runtime's libhsakmt (commit 84567b641642, on rocm-rel-6.3.0.1, not on rocm-6.2.x;
// ROCT-Thunk-Interface's rocm-6.2.4 tag has only the global variable).
constexpr const char* k_per_node_min_runtime = "6.3";

// GPUs that run the same ISA share a key: their LLVM generic target (docs/domain.md, "ISA
// families"), else the target itself.
std::string gpu_family_key(const std::string& gfx) { return gfx_generic_target(gfx).value_or(gfx); }

// The value a GPU needs, or nullopt: coverage first (the torch library's verdict for the chip
// itself), then AMD's list and the isa-override rules. A GPU that already runs through a
// same-family override its library has code for needs that value, its own: it is kept, never
// replaced by another sibling's (the healthy-machine zoo: a 780M run as 11.0.2), and never
// removed without a replacement (the machine matrix: a global 10.3.0 an RX 6600 runs on).
std::optional<std::string> needed_override(const Gpu& gpu, const Profile* rules, const nlohmann::json* libraries) {
    if (!gpu.node || !gpu.gfx_target) return std::nullopt;
    // Its own override is one to keep: same-family, or a kept cross-family one (profile gfx_kept).
    const auto kept = [&] {
        if (!rules || !gpu.gfx_override) return false;
        for (const auto& rule : rules->gfx_kept)
            if (rule.value == gpu.gfx_override->value &&
                std::find(rule.targets.begin(), rule.targets.end(), *gpu.gfx_target) != rule.targets.end())
                return true;
        return false;
    };
    const bool own_same_family =
        gpu.gfx_override && gpu.gfx_override->target && gpu.gfx_override->relation == OverrideRelation::same_family;
    // A kept cross-family override counts only where the library shows the GPU runs on it.
    const bool own_kept = own_same_family || (gpu.gfx_override && gpu.gfx_override->target && kept());
    if (libraries && libraries->contains("coverage") && (*libraries)["coverage"].is_array()) {
        bool any_row = false;
        std::optional<std::string> value;
        for (const auto& row : (*libraries)["coverage"]) {
            if (!row.is_object() || row.value("node", nlohmann::json()).is_null()) continue;
            if (row["node"].get<unsigned>() != *gpu.node || row.value("library", "") != "torch_hip") continue;
            any_row = true;
            if (row.value("chip_covered", true)) continue;  // code for the chip itself: nothing needed
            const auto chip_override = row.value("chip_override", nlohmann::json());
            if (own_kept && row.value("covered", false)) value = gpu.gfx_override->value;
            else if (chip_override.is_string()) value = chip_override.get<std::string>();
        }
        if (any_row) return value;  // the library decides; no row: fall back to the list
    }
    if (gpu.officially_supported.value_or(true)) return std::nullopt;
    if (own_same_family) return gpu.gfx_override->value;
    if (!rules) return std::nullopt;
    for (const auto& rule : rules->gfx_override)
        if (std::find(rule.targets.begin(), rule.targets.end(), *gpu.gfx_target) != rule.targets.end())
            return rule.value;
    return std::nullopt;
}

}  // namespace

namespace {
bool has_discrete_gpu(const Facts& facts) {
    return std::any_of(facts.gpus.begin(), facts.gpus.end(),
                       [](const Gpu& g) { return g.node && !g.integrated.value_or(false); });
}
}  // namespace

namespace {
// libhsakmt reads the per-node form from ROCm 6.3 on (k_per_node_min_runtime); unknown: assumed.
bool runtime_reads_per_node(const Facts& facts) {
    const auto runtime = runtime_version(facts);
    return !runtime || kb::VersionRange::parse(std::string(">=") + k_per_node_min_runtime)->contains(*runtime);
}
}  // namespace

bool runs_igpu_next_to_dgpu(const Facts& facts) {
    return has_discrete_gpu(facts) && std::any_of(facts.gpus.begin(), facts.gpus.end(), [](const Gpu& g) {
               return g.node && !g.hidden_by && g.integrated.value_or(false);
           });
}

std::map<unsigned, std::string> gpus_needing_override(const Facts& facts, const Profile* override_profile,
                                                      const nlohmann::json* libraries) {
    std::map<unsigned, std::string> needs;  // KFD node -> value
    // An integrated GPU next to a discrete one is never given an override: AMD's install guide
    // says ROCm does not support integrated graphics and may crash the system when it can
    // enumerate one (igpu-selected hides it instead; KB audit 2, docs/kb-audit.md). A GPU that
    // *_VISIBLE_DEVICES hides runs nothing. Both still count among the families below, so no
    // global value reaches them from a sibling of another family.
    const bool has_dgpu = has_discrete_gpu(facts);
    for (const auto& gpu : facts.gpus) {
        if (!gpu.node || !gpu.gfx_target || gpu.hidden_by) continue;
        if (has_dgpu && gpu.integrated.value_or(false)) continue;
        if (auto v = needed_override(gpu, override_profile, libraries)) needs[*gpu.node] = *v;
    }
    return needs;
}

void add_override_guard(PlanContext& pc, const Facts& facts, const Profile* override_profile,
                        const nlohmann::json* libraries) {
    pc.needed_overrides = gpus_needing_override(facts, override_profile, libraries);
    pc.per_node_read = runtime_reads_per_node(facts);
}

DerivedSets machine_derived_sets(const Facts& facts, const Profile* override_profile, const nlohmann::json* libraries) {
    DerivedSets out;
    const auto needs = gpus_needing_override(facts, override_profile, libraries);
    std::set<std::string> families;  // of every GPU with a KFD node
    for (const auto& gpu : facts.gpus)
        if (gpu.node && gpu.gfx_target) families.insert(gpu_family_key(*gpu.gfx_target));
    auto& per_node = out.sets["per-node-override"];
    auto& same_family = out.sets["same-family-override"];
    if (needs.empty()) {
        const std::string why = "no GPU on this machine needs an override (the installed PyTorch has code for each "
                                "chip, or no supported target of its ISA family is known)";
        out.why["per-node-override"] = why;
        out.why["same-family-override"] = why;
        return out;
    }
    const auto runtime = runtime_version(facts);
    const bool per_node_read = runtime_reads_per_node(facts);
    std::set<std::string> values;
    for (const auto& [node, value] : needs) values.insert(value);
    // A global value reaches every GPU the runtime enumerates: not when that includes an iGPU
    // next to a discrete GPU, which it would then point ROCm at (the machine matrix, issue 28).
    if (families.size() == 1 && values.size() == 1 && !runs_igpu_next_to_dgpu(facts)) {
        // One ISA family: one global value is right for every GPU (those that do not need it
        // run as a sibling of their own family, or as themselves).
        same_family["HSA_OVERRIDE_GFX_VERSION"] = *values.begin();
    }
    if (!per_node_read) {
        const std::string why = fmt::format(
            "the HIP runtime here ({}) does not read HSA_OVERRIDE_GFX_VERSION_<node>, which libhsakmt reads from "
            "ROCm {} on; setting it would silently drop the override the GPU needs",
            *runtime, k_per_node_min_runtime);
        out.why["per-node-override"] = why;
        if (same_family.empty())
            out.why["same-family-override"] =
                "the GPUs here belong to different ISA families, so one global HSA_OVERRIDE_GFX_VERSION would be "
                "wrong for some of them; and " +
                why;
        return out;
    }
    for (const auto& [node, value] : needs) per_node[fmt::format("HSA_OVERRIDE_GFX_VERSION_{}", node)] = value;
    if (same_family.empty()) same_family = per_node;
    return out;
}

std::map<std::string, std::map<std::string, std::string>> machine_derived(const Facts& facts,
                                                                          const Profile* override_profile) {
    return machine_derived_sets(facts, override_profile).sets;
}

std::string startup_hook_content() {
    // One line: site.py executes .pth lines that start with "import". Everything is inside
    // try/except so a missing or broken rmcp package can never break Python start-up;
    // RMCP_STARTUP_HOOK=0 turns the hook off for one process.
    return "# rmcp start-up hook, written by `rmcp patch apply` (undo: rmcp patch rollback)\n"
           "import os; exec(\"try:\\n if os.environ.get('RMCP_STARTUP_HOOK', '1') != '0':\\n"
           "  import rmcp.torch\\n  rmcp.torch.enable()\\nexcept Exception:\\n pass\")\n";
}

bool Plan::has_system_targets() const {
    return std::any_of(steps.begin(), steps.end(), [](const PlannedStep& s) { return s.system; });
}

std::size_t Plan::writes() const {
    return static_cast<std::size_t>(std::count_if(steps.begin(), steps.end(), [](const PlannedStep& s) {
        return !s.target.empty() && !s.in_effect;
    }));
}

namespace {
struct TargetState {
    bool exists = false;
    std::string content;
    std::uint32_t mode = 0644;
};

Result<TargetState> read_target(const Root& root, const std::string& path) {
    TargetState st;
    auto stat = root.stat(path);
    if (!stat) {
        if (stat.error().os_error == ENOENT || stat.error().os_error == ENOTDIR) return st;
        return stat.error();
    }
    if (stat->type != FileType::regular)
        return Error{"planning a write to", path, "exists and is not a regular file", ExitCode::environment};
    auto content = root.read_file(path, std::size_t{16} << 20);
    if (!content) return content.error();
    st.exists = true;
    st.content = std::move(*content);
    st.mode = stat->mode;
    return st;
}

std::string advisory_text(const Operation& op, const PlanContext& ctx) {
    std::vector<std::string> lines;
    const GpuCommand* by_gpu = nullptr;
    for (const auto& gc : op.by_gpu) {
        for (const auto& t : ctx.gpu_targets)
            if (std::find(gc.targets.begin(), gc.targets.end(), t) != gc.targets.end()) by_gpu = &gc;
        if (by_gpu) break;
    }
    if (by_gpu) lines.push_back(by_gpu->command);
    else if (!op.command.empty()) lines.push_back(op.command);
    if (!op.by_distro.empty()) {
        const DistroCommand* chosen = nullptr;
        std::vector<std::string> candidates{ctx.distro_id};
        candidates.insert(candidates.end(), ctx.distro_like.begin(), ctx.distro_like.end());
        for (const auto& id : candidates) {
            if (id.empty() || chosen) continue;
            for (const auto& dc : op.by_distro)
                if (std::find(dc.ids.begin(), dc.ids.end(), id) != dc.ids.end()) {
                    chosen = &dc;
                    break;
                }
        }
        if (chosen) {
            lines.push_back(chosen->command);
        } else {
            for (const auto& dc : op.by_distro) {
                std::string ids;
                for (const auto& id : dc.ids) ids += (ids.empty() ? "" : ", ") + id;
                lines.push_back(fmt::format("{}    # on {}", dc.command, ids));
            }
        }
    }
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    // Machine variables in a command to paste ({python}: the interpreter of the PyTorch
    // detect found); any other brace is the command's own text.
    for (const auto& [name, value] : ctx.vars) {
        const auto token = "{" + name + "}";
        for (auto at = out.find(token); at != std::string::npos; at = out.find(token, at + value.size()))
            out.replace(at, token.size(), value);
    }
    return out;
}

Result<std::string> expand_placeholders(const std::string& value, const std::map<std::string, std::string>& vars,
                                        const Patch& p) {
    // Each "{name}", name in [a-z_]+, leftmost first; any other '{' is text.
    std::string out;
    std::size_t last = 0;
    for (std::size_t i = 0; i < value.size(); ++i) {
        if (value[i] != '{') continue;
        std::size_t j = i + 1;
        while (j < value.size() && ((value[j] >= 'a' && value[j] <= 'z') || value[j] == '_')) ++j;
        if (j == i + 1 || j >= value.size() || value[j] != '}') continue;
        const std::string name = value.substr(i + 1, j - i - 1);
        const auto found = vars.find(name);
        if (found == vars.end())
            return Error{"planning patch", p.id,
                         fmt::format("it needs {{{}}}, which this machine's facts do not give", name),
                         ExitCode::environment};
        out += value.substr(last, i - last);
        out += found->second;
        last = j + 1;
        i = j;
    }
    out += value.substr(last);
    return out;
}

std::string modprobe_content(const Patch& p, const Operation& op) {
    std::string opts;
    for (const auto& [k, v] : op.params) opts += fmt::format(" {}={}", k, v);
    return fmt::format("# Written by rmcp, patch {}: {}\n"
                       "# Undo with `rmcp patch rollback`. Takes effect when amdgpu is next loaded\n"
                       "# (most distributions: rebuild the initramfs, then reboot).\n"
                       "options amdgpu{}\n",
                       p.id, p.title, opts);
}
}  // namespace

Result<ResolvedEnv> resolve_env_operation(const Patch& patch, const Operation& op, const PlanContext& ctx) {
    ResolvedEnv change;
    change.unset = op.unset;
    std::map<std::string, std::string> to_set = op.set;
    if (!op.derived.empty()) {
        const auto d = ctx.derived.find(op.derived);
        if (d == ctx.derived.end() || d->second.empty()) {
            const auto why = ctx.derived_why.find(op.derived);
            return Error{"planning patch", patch.id,
                         why != ctx.derived_why.end()
                             ? why->second
                             : fmt::format("no GPU on this machine needs the {} variables", op.derived),
                         ExitCode::environment};
        }
        to_set.insert(d->second.begin(), d->second.end());
    }
    for (const auto& [k, v] : to_set) {
        auto value = expand_placeholders(v, ctx.vars, patch);
        if (!value) return value.error();
        change.set[k] = *value;
    }
    // A derived set may set what the operation otherwise clears (the global override, or one
    // node's): what is set wins.
    change.unset.erase(std::remove_if(change.unset.begin(), change.unset.end(),
                                      [&](const std::string& k) { return change.set.count(k) != 0; }),
                       change.unset.end());
    return change;
}

std::string override_guard(const PlanContext& ctx, const std::map<std::string, std::string>& set,
                           const std::vector<std::string>& unset, const std::string& patch_id) {
    if (!ctx.needed_overrides) return {};
    const auto lookup = [&](const std::string& k) -> std::optional<std::string> {
        if (auto it = set.find(k); it != set.end()) return it->second;
        if (std::find(unset.begin(), unset.end(), k) != unset.end()) return std::nullopt;
        if (auto it = ctx.env.find(k); it != ctx.env.end()) return it->second;
        return std::nullopt;
    };
    for (const auto& [node, value] : *ctx.needed_overrides) {
        std::optional<std::string> effective;
        if (ctx.per_node_read) effective = lookup(fmt::format("HSA_OVERRIDE_GFX_VERSION_{}", node));
        if (!effective) effective = lookup("HSA_OVERRIDE_GFX_VERSION");
        if (effective == value) continue;
        return fmt::format("{} would leave the GPU at KFD node {} {}; it runs through HSA_OVERRIDE_GFX_VERSION={} "
                           "(the installed PyTorch has no code for the chip itself, rmcp scan), and no fix may "
                           "remove an override the installed PyTorch needs (docs/kb-format.md, rule 6)",
                           patch_id, node, effective ? "with " + *effective : std::string("without it"), value);
    }
    return {};
}

namespace {

// Names in a summary: all of them when there are few, else the first and last and how many
// (an override unset for nine KFD nodes is one item, not nine: newcomer review, finding 12).
std::string name_list(const std::vector<std::string>& names) {
    if (names.size() <= 3) return join(names, " ");
    return fmt::format("{} … {} ({} variables)", names.front(), names.back(), names.size());
}

}  // namespace

// What an env step does to profile.env, as the diff shows it (newcomer review, finding 13:
// the summary named the patch's unsets while the diff exported the derived value):
// "export NAME='value'" for each variable it sets or changes, "unset ..." for those `rmcp env`
// will now remove, "forget ..." for those the file stops mentioning.
std::string describe_env_change(const UserEnv& before, const UserEnv& after) {
    std::vector<std::string> parts;
    for (const auto& [k, v] : after.set) {
        const auto it = before.set.find(k);
        if (it == before.set.end() || it->second != v) parts.push_back(fmt::format("export {}={}", k, sh_quote(v)));
    }
    std::vector<std::string> unset;
    for (const auto& k : after.unset)
        if (std::find(before.unset.begin(), before.unset.end(), k) == before.unset.end()) unset.push_back(k);
    if (!unset.empty()) parts.push_back("unset " + name_list(unset));
    std::vector<std::string> forget;
    const auto mentioned = [](const UserEnv& env, const std::string& k) {
        return env.set.count(k) != 0 || std::find(env.unset.begin(), env.unset.end(), k) != env.unset.end();
    };
    for (const auto& [k, v] : before.set)
        if (!mentioned(after, k)) forget.push_back(k);
    for (const auto& k : before.unset)
        if (!mentioned(after, k)) forget.push_back(k);
    if (!forget.empty()) parts.push_back("forget " + name_list(forget));
    if (parts.empty()) return "no change (already in effect)";
    return join(parts, "; ");
}

Result<Plan> make_plan(const Root& root, const PatchSet& set, const std::vector<std::string>& ids,
                       const PlanContext& ctx) {
    Plan plan;
    std::map<std::string, TargetState> pending;  // state after earlier steps of this plan
    const auto state_of = [&](const std::string& path) -> Result<TargetState> {
        if (auto it = pending.find(path); it != pending.end()) return it->second;
        return read_target(root, path);
    };
    for (const auto& id : ids) {
        const Patch* p = set.find(id);
        if (!p) {
            std::vector<std::string_view> known;
            for (const auto& q : set.patches) known.push_back(q.id);
            return Error{"looking up patch", id, fmt::format("no such patch (known: {})", join(known, ", ")),
                         ExitCode::usage};
        }
        if (std::find(plan.patch_ids.begin(), plan.patch_ids.end(), id) != plan.patch_ids.end()) continue;
        plan.patch_ids.push_back(id);
        for (const auto& op : p->operations) {
            PlannedStep step;
            step.patch = p;
            step.op = &op;
            switch (op.kind) {
            case OpKind::advisory:
                step.advisory = advisory_text(op, ctx);
                step.summary = "advisory: run this yourself (rmcp never runs it)";
                plan.steps.push_back(std::move(step));
                continue;
            case OpKind::env:
                step.target = user_env_file_path(ctx.env);
                break;  // the summary says what the diff does, once it is known (below)
            case OpKind::modprobe: {
                step.target =
                    op.file.empty() ? fmt::format("/etc/modprobe.d/rmcp-{}.conf", p->id) : "/etc/modprobe.d/" + op.file;
                std::string what;
                for (const auto& [k, v] : op.params) what += fmt::format(" {}={}", k, v);
                step.summary = "amdgpu module options:" + what;
                step.system = true;
                break;
            }
            case OpKind::python_hook:
                if (ctx.site_packages.empty())
                    return Error{"planning patch", id,
                                 "the python start-up hook needs a site-packages directory: pass --site-packages DIR",
                                 ExitCode::usage};
                step.target = ctx.site_packages + "/" + std::string(k_startup_hook_name);
                step.summary = "install the Python start-up hook (calls rmcp.torch.enable())";
                break;
            }
            auto st = state_of(step.target);
            if (!st) return st.error();
            step.existed = st->exists;
            step.old_content = st->content;
            step.old_mode = st->mode;
            step.new_mode = st->exists ? st->mode : 0644;
            if (op.kind == OpKind::env) {
                auto cur = parse_user_env(st->content, root.host_path(step.target));
                if (!cur) return cur.error();
                UserEnv next = *cur;
                const auto drop_unset = [&](const std::string& k) {
                    next.unset.erase(std::remove(next.unset.begin(), next.unset.end(), k), next.unset.end());
                };
                for (const auto& k : op.remove) {
                    next.set.erase(k);
                    drop_unset(k);
                }
                for (const auto& k : op.unset) {
                    next.set.erase(k);
                    drop_unset(k);
                    next.unset.push_back(k);
                }
                std::sort(next.unset.begin(), next.unset.end());
                auto change = resolve_env_operation(*p, op, ctx);
                if (!change) return change.error();
                for (const auto& [k, v] : change->set) {
                    drop_unset(k);
                    next.set[k] = v;
                }
                if (auto refused = override_guard(ctx, next.set, next.unset, id); !refused.empty())
                    return Error{"planning patch", id, refused, ExitCode::environment};
                // In effect when the variables already say so, whatever the file's layout.
                step.in_effect = st->exists && next == *cur;
                step.new_content = step.in_effect ? st->content : render_env_file(next);
                step.summary = "profile.env: " + describe_env_change(*cur, next);
            } else if (op.kind == OpKind::modprobe) {
                step.new_content = modprobe_content(*p, op);
                step.in_effect = st->exists && st->content == step.new_content;
            } else {
                step.new_content = startup_hook_content();
                step.in_effect = st->exists && st->content == step.new_content;
            }
            pending[step.target] = TargetState{true, step.new_content, step.new_mode};
            plan.steps.push_back(std::move(step));
        }
    }
    return plan;
}

}  // namespace rmcp::patch
