#include "patch/doctor_fix.hpp"

#include "detect/detect.hpp"
#include "facts/facts_json.hpp"
#include "kb/libraries.hpp"
#include "patch/applier.hpp"
#include "scan/coverage.hpp"
#include "util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <set>

namespace rmcp::patch {

std::string default_site_packages(const Root& root, const Facts& facts, const std::map<std::string, std::string>& env) {
    for (const auto& t : facts.torch)
        if (t.origin == "venv" || t.origin == "user" || t.origin == "conda")
            return std::filesystem::path(t.path).parent_path().string();
    auto home = env.find("HOME");
    auto libs = root.list_dir("/usr/lib");
    if (home == env.end() || !libs) return {};
    std::string best;
    unsigned best_minor = 0;
    for (const auto& name : *libs) {
        if (name.rfind("python3.", 0) != 0) continue;
        char* end = nullptr;
        const unsigned long minor = std::strtoul(name.c_str() + 8, &end, 10);
        if (*end != '\0') continue;
        if (best.empty() || minor > best_minor) {
            best = name;
            best_minor = static_cast<unsigned>(minor);
        }
    }
    return best.empty() ? std::string() : home->second + "/.local/lib/" + best + "/site-packages";
}

PlanContext machine_plan_context(const Root& root, const Facts& facts, const PatchSet& set,
                                 const std::vector<std::string>& ids, const ProfileSet* profiles,
                                 std::string site_packages, const std::map<std::string, std::string>& env,
                                 const nlohmann::json* libraries) {
    PlanContext pc;
    pc.env = env;
    read_distro(root, pc);
    pc.site_packages = std::move(site_packages);
    bool needs_site = false;
    bool needs_derived = false;
    bool touches_override = false;  // the override guard then needs coverage facts
    const auto is_override = [](const std::string& k) { return k.rfind("HSA_OVERRIDE_GFX_VERSION", 0) == 0; };
    for (const auto& id : ids)
        if (const auto* p = set.find(id))
            for (const auto& op : p->operations) {
                needs_site = needs_site || op.kind == OpKind::python_hook;
                needs_derived = needs_derived || !op.derived.empty();
                touches_override =
                    touches_override || !op.derived.empty() ||
                    std::any_of(op.unset.begin(), op.unset.end(), is_override) ||
                    std::any_of(op.remove.begin(), op.remove.end(), is_override) ||
                    std::any_of(op.set.begin(), op.set.end(), [&](const auto& kv) { return is_override(kv.first); });
            }
    if (needs_site && pc.site_packages.empty()) pc.site_packages = default_site_packages(root, facts, env);
    pc.vars = machine_vars(facts);
    for (const auto& gpu : facts.gpus)
        if (gpu.gfx_target) pc.gpu_targets.push_back(*gpu.gfx_target);
    // Derived override sets use the same ISA-family rules as the isa-override rung, and what
    // the installed PyTorch contains (coverage facts, headers only: docs/scan.md).
    if (profiles) {
        nlohmann::json scanned;
        if ((needs_derived || touches_override) && !libraries) {
            scanned = scan::libraries_facts(root, facts);
            libraries = &scanned;
        }
        auto derived = machine_derived_sets(facts, profiles->find("isa-override"), needs_derived ? libraries : nullptr);
        pc.derived = std::move(derived.sets);
        pc.derived_why = std::move(derived.why);
        if (touches_override) add_override_guard(pc, facts, profiles->find("isa-override"), libraries);
    }
    return pc;
}

Facts facts_with_env(const Facts& facts, const UserEnv& user, const ProfileEnv* profile) {
    Facts out = facts;
    std::map<std::string, std::string> env = facts.env;
    apply_user_env(env, user);
    if (profile) apply_profile_env(env, *profile);
    out.env.clear();
    for (const auto& [k, v] : env)
        if (is_relevant_env(k)) out.env.emplace(k, v);
    for (auto& gpu : out.gpus) {
        gpu.gfx_override.reset();
        apply_gfx_override(gpu, out.env);
    }
    apply_visibility(out.gpus, out.env);
    return out;
}

namespace {

// The owning group of a device node this user cannot open, when /etc/group already lists the
// user in it but this process lacks it: the user joined after this login session began.
std::optional<std::string> group_joined_after_login(const Facts& facts) {
    std::vector<const DeviceAccess*> nodes{&facts.kfd};
    for (const auto& a : facts.render_nodes) nodes.push_back(&a);
    for (const DeviceAccess* a : nodes) {
        if (!a->present || !a->accessible || *a->accessible) continue;
        if (a->user_in_group && !*a->user_in_group && a->user_listed_in_group && *a->user_listed_in_group && a->group)
            return *a->group;
    }
    return std::nullopt;
}

nlohmann::json doctor_facts(const Root& root, const Facts& facts, bool scan) {
    auto json = facts_to_json(facts);
    if (scan) kb::merge_libraries(json, scan::libraries_facts(root, facts));
    return json;
}

using Key = std::pair<std::string, std::size_t>;
Key key_of(const kb::Finding& f) { return {f.entry->id, f.gpu_index.value_or(~std::size_t{0})}; }

std::set<Key> keys_of(const kb::DoctorReport& r) {
    std::set<Key> out;
    for (const auto& f : r.findings) out.insert(key_of(f));
    return out;
}

bool has_kind(const Patch& p, OpKind kind) {
    return std::any_of(p.operations.begin(), p.operations.end(), [&](const Operation& op) { return op.kind == kind; });
}

// The newest applied transaction that lists `patch_id` (and, when given, touched `target`).
const Transaction* newest_with(const std::vector<Transaction>& txns, std::string_view patch_id,
                               std::string_view target) {
    for (auto it = txns.rbegin(); it != txns.rend(); ++it) {
        if (!it->corrupt.empty() || it->state != TxnState::applied) continue;
        const bool has_patch =
            patch_id.empty() || std::find(it->patches.begin(), it->patches.end(), patch_id) != it->patches.end();
        const bool has_target = target.empty() || std::any_of(it->targets.begin(), it->targets.end(),
                                                              [&](const JournalTarget& t) { return t.path == target; });
        if (has_patch && has_target) return &*it;
    }
    return nullptr;
}

bool advisory_only(const Patch& p) {
    return std::all_of(p.operations.begin(), p.operations.end(),
                       [](const Operation& op) { return op.kind == OpKind::advisory; });
}

// An advisory's command lines; `rmcp ...` ones as the user runs rmcp here (with --root).
std::string join_advisory(const Plan& plan, const std::string& command) {
    std::vector<std::string> lines;
    for (const auto& s : plan.steps)
        if (s.op->kind == OpKind::advisory)
            for (const auto line : split_lines(s.advisory))
                // `true` is the data's way to say "nothing to run" (patches/advise-ignore.toml).
                if (!trim(line).empty() && trim(line) != "true") lines.emplace_back(trim(line));
    std::string out;
    for (auto l : lines) {
        if (l.rfind("rmcp ", 0) == 0) l = command + l.substr(4);
        out += (out.empty() ? "" : "\n") + l;
    }
    return out;
}

}  // namespace

Result<DoctorOutcome> doctor_with_state(const Root& root, const kb::KnowledgeBase& kb, const DoctorRequest& request) {
    DoctorOutcome out;
    const Facts facts = detect(root);
    const auto raw_json = doctor_facts(root, facts, request.scan);
    kb::DoctorReport raw = kb::run_doctor(kb, raw_json);

    // profile.env as `rmcp run` reads it; absent is no changes.
    out.env_file = user_env_file_path(request.env);
    UserEnv user;
    if (auto text = root.read_file(out.env_file)) {
        auto parsed = parse_user_env(*text, root.host_path(out.env_file));
        if (!parsed) return parsed.error();
        user = std::move(*parsed);
    }

    auto profiles = load_profiles_with_user(request.profile_dir, root, request.env, out.notes);
    if (!profiles) return profiles.error();
    std::optional<ProfileEnv> profile_env;
    if (request.profile == "auto" || request.decide_auto) {
        AutoSources sources{request.profile_dir / "rules" / "auto.toml", request.patch_dir, request.kb_dir, &kb};
        auto decision = choose_auto(*profiles, facts, raw_json, sources);
        if (!decision) return decision.error();
        if (request.profile == "auto") profile_env = decision->env;
        out.auto_decision = std::move(*decision);
    }
    if (!request.profile.empty() && request.profile != "auto") {
        auto resolved = profiles->resolve(request.profile, gpu_targets(facts));
        if (!resolved) return resolved.error();
        profile_env = std::move(*resolved);
    }

    const bool user_changes = !user.set.empty() || !user.unset.empty();
    out.facts =
        user_changes || profile_env ? facts_with_env(facts, user, profile_env ? &*profile_env : nullptr) : facts;
    kb::DoctorReport with_user = raw;
    out.facts_json = raw_json;
    if (user_changes) {
        out.facts_json = doctor_facts(root, facts_with_env(facts, user, nullptr), request.scan);
        with_user = kb::run_doctor(kb, out.facts_json);
    }
    kb::DoctorReport effective = with_user;
    if (profile_env) {
        out.facts_json = doctor_facts(root, facts_with_env(facts, user, &*profile_env), request.scan);
        effective = kb::run_doctor(kb, out.facts_json);
    }

    auto patches = load_patches(request.patch_dir);
    if (!patches) return patches.error();
    std::vector<Transaction> txns;
    if (auto listed = list_transactions(root, request.env)) txns = std::move(*listed);

    const auto effective_keys = keys_of(effective);
    const auto user_keys = keys_of(with_user);
    out.report = effective;
    out.report.findings.clear();
    // What holds in the process environment but not in the effective one was fixed by
    // profile.env or the profile; what holds in the effective one is looked up in journals.
    for (auto f : raw.findings) {
        if (effective_keys.count(key_of(f)) != 0) continue;
        f.status = kb::FindingStatus::fixed_by_profile;
        if (user_keys.count(key_of(f)) == 0) {
            const Transaction* t = nullptr;
            for (const auto& fix : f.entry->fixes)
                if (!t) t = newest_with(txns, fix.patch, out.env_file);
            if (!t) t = newest_with(txns, "", out.env_file);
            if (t) f.fixed_by = t->id;
            f.status_detail = t ? fmt::format("fixed by profile.env (transaction {})", t->id) : "fixed by profile.env";
            f.next_command = fmt::format("eval \"$({} env)\"", request.command);
        } else {
            f.status_detail = fmt::format("fixed when run under `rmcp run --profile {}`", sh_word(request.profile));
            f.next_command = fmt::format("eval \"$({} env --profile {})\"", request.command, sh_word(request.profile));
        }
        out.report.findings.push_back(std::move(f));
    }
    for (auto f : effective.findings) {
        if (f.entry->severity == kb::Severity::info) {
            f.status = kb::FindingStatus::info;
            out.report.findings.push_back(std::move(f));
            continue;
        }
        for (const auto& fix : f.entry->fixes) {
            const Patch* p = patches->find(fix.patch);
            if (p && p->takes_effect == TakesEffect::relogin) {
                if (auto group = group_joined_after_login(facts)) {
                    f.status = kb::FindingStatus::pending;
                    f.status_detail = fmt::format(
                        "pending: needs re-login (/etc/group lists this user in '{}', which this login session "
                        "does not have yet: log out and back in)",
                        *group);
                    f.next_command.clear();  // no command does it for the user
                    break;
                }
            }
            // An advisory step in a journal says rmcp printed it, not that anyone ran it.
            if (!p || advisory_only(*p)) continue;
            const Transaction* t = newest_with(txns, fix.patch, "");
            if (!t) continue;
            f.fixed_by = t->id;
            if (has_kind(*p, OpKind::modprobe)) {
                f.status = kb::FindingStatus::pending;
                f.status_detail = fmt::format("pending: needs reboot (patch {}, transaction {}; module options are "
                                              "read when amdgpu loads)",
                                              p->id, t->id);
                f.next_command = "sudo reboot";
            } else {
                f.status = kb::FindingStatus::fixed;
                f.status_detail = fmt::format("fixed by patch {} (transaction {})", p->id, t->id);
            }
            break;
        }
        out.report.findings.push_back(std::move(f));
    }
    std::stable_sort(out.report.findings.begin(), out.report.findings.end(),
                     [](const kb::Finding& a, const kb::Finding& b) {
                         if (a.entry->severity != b.entry->severity) return a.entry->severity > b.entry->severity;
                         if (a.entry->id != b.entry->id) return a.entry->id < b.entry->id;
                         return a.gpu_index.value_or(0) < b.gpu_index.value_or(0);
                     });

    // The next command of an open finding: its first fix that plans here.
    std::vector<std::string> all_fixes;
    for (const auto& f : out.report.findings)
        if (f.status == kb::FindingStatus::open)
            for (const auto& fix : f.entry->fixes) all_fixes.push_back(fix.patch);
    if (all_fixes.empty()) return out;
    const nlohmann::json* libraries = nullptr;
    if (auto it = raw_json.find("libraries"); it != raw_json.end()) libraries = &*it;
    const PlanContext pc =
        machine_plan_context(root, facts, *patches, all_fixes, &*profiles, {}, request.env, libraries);
    std::map<std::string, std::optional<Plan>> planned;
    for (auto& f : out.report.findings) {
        if (f.status != kb::FindingStatus::open) continue;
        for (const auto& fix : f.entry->fixes) {
            const Patch* p = patches->find(fix.patch);
            if (!p) continue;
            auto [it, fresh] = planned.try_emplace(fix.patch);
            if (fresh)
                if (auto plan = make_plan(root, *patches, {fix.patch}, pc)) it->second = std::move(*plan);
            if (!it->second) continue;
            f.chosen_fix = p->id;
            if (advisory_only(*p)) f.next_command = join_advisory(*it->second, request.command);
            else
                f.next_command = fmt::format("{}{} patch apply {}",
                                             root.is_live() && it->second->has_system_targets() ? "sudo " : "",
                                             request.command, sh_word(p->id));
            break;
        }
    }
    return out;
}

std::vector<std::string> fix_patch_ids(const kb::DoctorReport& report) {
    std::vector<std::string> ids;
    for (const auto& f : report.findings)
        if (f.status == kb::FindingStatus::open && !f.chosen_fix.empty() && !f.next_command.empty() &&
            std::find(ids.begin(), ids.end(), f.chosen_fix) == ids.end())
            ids.push_back(f.chosen_fix);
    return ids;
}

}  // namespace rmcp::patch
