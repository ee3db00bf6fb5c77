#include "patch/auto_profile.hpp"

#include "facts/facts.hpp"
#include "kb/doctor.hpp"
#include "kb/kb.hpp"
#include "patch/patch.hpp"
#include "util/toml_read.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace rmcp::patch {

namespace detail = toml_read;
using detail::data_error;
using detail::line_of;

namespace {
Result<std::optional<bool>> opt_bool_condition(const toml::table& t, std::string_view key, const std::string& file) {
    const toml::node* n = t.get(key);
    if (!n) return std::optional<bool>{};
    if (!n->is_boolean()) return data_error(file, line_of(*n), fmt::format("'{}' must be true or false", key));
    return std::optional<bool>{n->as_boolean()->get()};
}
}  // namespace

Result<AutoChoice> choose_auto_profile(const ProfileSet& profiles, const std::filesystem::path& rules_file,
                                       const Facts& facts, const nlohmann::json* libraries) {
    const std::string file = rules_file.string();
    std::ifstream in(rules_file, std::ios::binary);
    if (!in) return Error{"reading auto-profile rules", file, "cannot open", ExitCode::environment};
    std::stringstream buf;
    buf << in.rdbuf();
    auto parsed = detail::parse_toml(buf.str(), file);
    if (!parsed) return parsed.error();
    if (auto s = detail::check_keys(*parsed, file, {"rule"}, "the auto-profile rules"); !s) return s.error();
    const toml::node* rules = parsed->get("rule");
    if (!rules || !rules->is_array_of_tables()) return data_error(file, 1, "expected [[rule]] tables");

    const auto targets = gpu_targets(facts);
    for (const auto& item : *rules->as_array()) {
        const auto& t = *item.as_table();
        const unsigned line = line_of(item);
        if (auto s = detail::check_keys(t, file,
                                        {"profile", "why", "gpu_count", "kfd_accessible", "officially_supported",
                                         "override_applies", "rocm_installed", "needs_override"},
                                        "a rule");
            !s)
            return s.error();
        auto name = detail::req_string(t, "profile", file, line);
        if (!name) return name.error();
        auto why = detail::req_string(t, "why", file, line);
        if (!why) return why.error();
        const Profile* profile = profiles.find(*name);
        if (!profile) return data_error(file, line, fmt::format("rule names no profile: '{}'", *name));
        bool holds = true;
        if (const toml::node* n = t.get("gpu_count")) {
            if (!n->is_integer()) return data_error(file, line_of(*n), "'gpu_count' must be an integer");
            holds = holds && static_cast<std::int64_t>(targets.size()) == n->as_integer()->get();
        }
        auto kfd = opt_bool_condition(t, "kfd_accessible", file);
        if (!kfd) return kfd.error();
        // An unknown fact never satisfies a condition.
        if (*kfd) holds = holds && facts.kfd.accessible.is_known() && *facts.kfd.accessible == **kfd;
        auto supported = opt_bool_condition(t, "officially_supported", file);
        if (!supported) return supported.error();
        if (*supported) {
            bool all_supported = !facts.gpus.empty();
            bool all_known = true;
            for (const auto& g : facts.gpus) {
                all_known = all_known && g.officially_supported.is_known();
                all_supported = all_supported && g.officially_supported.value_or(false);
            }
            holds = holds && all_known && all_supported == **supported;
        }
        auto applies = opt_bool_condition(t, "override_applies", file);
        if (!applies) return applies.error();
        if (*applies) holds = holds && ProfileSet::override_applies(*profile, targets) == **applies;
        auto installed = opt_bool_condition(t, "rocm_installed", file);
        if (!installed) return installed.error();
        if (*installed) {
            const bool rocm_torch = std::any_of(facts.torch.begin(), facts.torch.end(),
                                                [](const TorchInstall& ti) { return ti.hip_version.is_known(); });
            holds = holds && (rocm_torch || !facts.rocm.empty()) == **installed;
        }
        auto needs = opt_bool_condition(t, "needs_override", file);
        if (!needs) return needs.error();
        if (*needs) {
            // A GPU whose needed value is not what it runs with now (one that already runs
            // through its own same-family override needs nothing new).
            bool some = false;
            for (const auto& [node, value] : gpus_needing_override(facts, profiles.find("isa-override"), libraries))
                for (const auto& g : facts.gpus)
                    if (g.node == node && !(g.gfx_override && g.gfx_override->value == value)) some = true;
            holds = holds && some == **needs;
        }
        if (holds) return AutoChoice{*name, *why, line};
    }
    return Error{"choosing a profile with", file, "no rule matched (end the file with a rule without conditions)",
                 ExitCode::usage};
}

namespace {

// A finding's fixes are alternatives: the first one with an environment operation that this
// machine can resolve is used. Across findings, a variable that one fix sets is not unset by
// another.
void add_findings_env(const kb::KnowledgeBase& kb, const nlohmann::json& doctor_facts, const Facts& facts,
                      const PatchSet& patches, const ProfileSet& profiles, AutoDecision& d) {
    PlanContext pc;
    pc.vars = machine_vars(facts);
    const nlohmann::json* libraries = nullptr;
    if (auto it = doctor_facts.find("libraries"); it != doctor_facts.end()) libraries = &*it;
    auto derived = machine_derived_sets(facts, profiles.find("isa-override"), libraries);
    pc.derived = std::move(derived.sets);
    pc.derived_why = std::move(derived.why);
    add_override_guard(pc, facts, profiles.find("isa-override"), libraries);
    pc.env = facts.env;
    std::map<std::string, std::string> set;
    std::set<std::string> unset;
    const auto report = kb::run_doctor(kb, doctor_facts);
    for (const auto& finding : report.findings) {
        // An info finding is a fact, not a problem: auto changes nothing for it (issue 28).
        if (finding.entry->severity == kb::Severity::info) continue;
        for (const auto& fix : finding.entry->fixes) {
            const Patch* p = patches.find(fix.patch);
            if (!p) continue;
            std::vector<ResolvedEnv> changes;
            bool resolved = true;
            for (const auto& op : p->operations) {
                if (op.kind != OpKind::env) continue;
                auto change = resolve_env_operation(*p, op, pc);
                if (!change) {
                    resolved = false;
                    break;
                }
                changes.push_back(std::move(*change));
            }
            if (!resolved) d.verbose.push_back(fmt::format("auto: {} does not apply on this machine", p->id));
            if (!resolved || changes.empty()) continue;  // try the finding's next fix
            {
                // The override guard over everything auto would set: the rung, the fixes so far, this one.
                std::map<std::string, std::string> all_set = d.env.set;
                std::vector<std::string> all_unset = d.env.unset;
                for (const auto& [k, v] : set) all_set[k] = v;
                all_unset.insert(all_unset.end(), unset.begin(), unset.end());
                for (const auto& c : changes) {
                    for (const auto& k : c.unset) {
                        all_set.erase(k);
                        all_unset.push_back(k);
                    }
                    for (const auto& [k, v] : c.set) all_set[k] = v;
                }
                if (auto refused = override_guard(pc, all_set, all_unset, p->id); !refused.empty()) {
                    d.verbose.push_back("auto: " + refused);
                    continue;
                }
            }
            if (std::find(d.patches.begin(), d.patches.end(), p->id) == d.patches.end()) {
                d.patches.push_back(p->id);
                d.notes.push_back(fmt::format("auto: finding {} → patch {}", finding.entry->id, p->id));
            }
            for (const auto& c : changes) {
                for (const auto& k : c.unset) unset.insert(k);
                for (const auto& [k, v] : c.set) set[k] = v;
            }
            break;
        }
    }
    auto& env = d.env;
    for (const auto& k : unset)
        if (set.count(k) == 0) {
            env.set.erase(k);
            if (std::find(env.unset.begin(), env.unset.end(), k) == env.unset.end()) env.unset.push_back(k);
        }
    for (const auto& [k, v] : set) {
        env.set[k] = v;
        env.unset.erase(std::remove(env.unset.begin(), env.unset.end(), k), env.unset.end());
    }
}

}  // namespace

Result<AutoDecision> choose_auto(const ProfileSet& profiles, const Facts& facts, const nlohmann::json& doctor_facts,
                                 const AutoSources& sources) {
    const nlohmann::json* libraries = nullptr;
    if (auto it = doctor_facts.find("libraries"); it != doctor_facts.end()) libraries = &*it;
    auto choice = choose_auto_profile(profiles, sources.rules_file, facts, libraries);
    if (!choice) return choice.error();
    AutoDecision d;
    d.choice = *choice;
    d.notes.push_back(fmt::format("auto: profile {} ({})", choice->profile, choice->why));
    auto resolved = profiles.resolve(choice->profile, gpu_targets(facts));
    if (!resolved) return resolved.error();
    d.env = std::move(*resolved);
    // One global override reaches every GPU the runtime enumerates: never where that includes
    // an iGPU next to a discrete GPU (AMD: ROCm does not support integrated graphics; the
    // machine matrix, issue 28). The findings' fixes then write per-node values.
    if (d.env.set.count("HSA_OVERRIDE_GFX_VERSION") != 0 && runs_igpu_next_to_dgpu(facts)) {
        d.env.set.erase("HSA_OVERRIDE_GFX_VERSION");
        d.notes.push_back("auto: no global HSA_OVERRIDE_GFX_VERSION: it would reach the integrated GPU next to the "
                          "discrete one");
    }
    if (d.env.hide_gpu) return d;
    auto patches = load_patches(sources.patch_dir);
    if (!patches) return patches.error();
    if (sources.kb) {
        add_findings_env(*sources.kb, doctor_facts, facts, *patches, profiles, d);
        return d;
    }
    auto kb = kb::load(sources.kb_dir);
    if (!kb) {
        d.notes.push_back(fmt::format("auto: knowledge base not used ({}); the profile comes from the rules alone",
                                      kb.error().message()));
        return d;
    }
    add_findings_env(*kb, doctor_facts, facts, *patches, profiles, d);
    return d;
}

}  // namespace rmcp::patch
