// The machine matrix's checker (docs/testing.md, "Machine matrix"): for every machine of a
// manifest written by tests/matrix/gen_machines.py it runs, in process and on the real tree,
// what a user runs:
//
//   doctor                       patch::doctor_with_state (detect -> scan -> kb -> statuses, next:)
//   the `next:` of every finding `rmcp patch apply ID`: plan + Applier on a copy of the tree,
//                                then doctor again on the copy
//   doctor --fix                 patch::fix_patch_ids, applied together on a copy, doctor again
//   env --profile auto           the auto decision doctor --fix reports (patch::choose_auto),
//                                composed over profile.env as `rmcp env` composes it
//
// and judges the result by the invariants of issue 28, against the ground truth the generator
// wrote from data/gfx-targets.toml (each GPU's target, ISA family, integrated or not; the
// wheel's targets), not against rmcp's own facts:
//
//   I1 cross-family  no override across ISA families is proposed, or left in effect by a step
//                    that changes override variables
//   I2 needed        no step removes an override the installed PyTorch needs (rmcp installs
//                    nothing: an advisory "install this build" is printed, not applied, so it
//                    never excuses the removal)
//   I3 igpu          no step makes an iGPU run ROCm (visible and with code or an override)
//                    while a discrete AMD GPU is present, when it did not before
//   I4 false-alarm   no open critical when PyTorch has code for every GPU's own target, no
//                    override is set, the device nodes are accessible and the driver is live
//   I5 hide          without an AMD GPU, no step exports a variable that hides GPUs
//   I6 worse         following `next:` (and doctor --fix) never leaves more criticals, never
//                    stops a GPU that ran, and with the same criticals never adds warnings. A
//                    critical that was hidden by the state the step fixed (one critical fixed,
//                    the next one shown: "unmasked") is the doctor's progress, not harm.
//
// Advisory patches (every operation prints a command) change nothing: they are judged by the
// text they print (I1: an HSA_OVERRIDE_GFX_VERSION value it tells the user to set).
//
// Output: one JSON object per violation on stdout, a summary on stderr. Exit 0 when every
// machine was checked (violations or not), 2 on a usage or manifest error.
#include "detect/detect.hpp"
#include "detect/gfx.hpp"
#include "kb/doctor.hpp"
#include "kb/kb.hpp"
#include "patch/applier.hpp"
#include "patch/doctor_fix.hpp"
#include "patch/patch.hpp"
#include "patch/profile.hpp"
#include "root/root.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct GpuTruth {
    unsigned node = 0;
    std::string gfx;
    std::string family;  // the ISA family an override may stay within (gen_machines.override_family)
    bool integrated = false;
};

struct Machine {
    std::string id;
    fs::path path;
    json dims;
    std::vector<GpuTruth> gpus;
    std::map<std::string, std::string> env;  // the process environment the tree's /proc/self/environ has
    std::string torch_kind;
    std::set<std::string> torch_targets;
    bool per_node_read = true;  // the runtime reads HSA_OVERRIDE_GFX_VERSION_<node> (6.3 and later)
    std::string home;
    std::string user;
    bool amd_gpu = false;
};

// The family of a target by the table (targets outside it are their own family).
std::map<std::string, std::string> g_family;

// Targets of another family users run a chip as (the table's works_as: RDNA1 as gfx1030).
std::map<std::string, std::set<std::string>> g_works_as;

std::string family_of(const std::string& gfx) {
    const auto it = g_family.find(gfx);
    return it == g_family.end() ? gfx : it->second;
}

// Code for `as` runs on `chip`: the same ISA family, or a pairing users rely on (works_as).
bool runs_correctly_as(const std::string& chip, const std::string& as) {
    if (family_of(chip) == family_of(as)) return true;
    const auto it = g_works_as.find(chip);
    return it != g_works_as.end() && it->second.count(as) != 0;
}

// HSA_OVERRIDE_GFX_VERSION as libhsakmt parses it ("%u.%u.%u", major <= 63, minor/step <= 255),
// written as the target it selects; nullopt when malformed. An independent reading: the
// oracle does not use rmcp's parser.
std::optional<std::string> parse_override(const std::string& v) {
    static const std::regex re(R"(^(\d{1,3})\.(\d{1,3})\.(\d{1,3})$)");
    std::smatch m;
    if (!std::regex_match(v, m, re)) return std::nullopt;
    const int a = std::stoi(m[1]), b = std::stoi(m[2]), c = std::stoi(m[3]);
    if (a == 0 || a > 63 || b > 255 || c > 255) return std::nullopt;
    if (b > 15 || c > 15) return fmt::format("gfx{}{}{}", a, b, c);
    return fmt::format("gfx{}{:x}{:x}", a, b, c);
}

const std::string k_override = "HSA_OVERRIDE_GFX_VERSION";

// The override value in effect for one GPU: the per-node variable where the runtime reads it,
// else the global one.
std::optional<std::string> override_for(const Machine& m, const GpuTruth& g,
                                        const std::map<std::string, std::string>& env) {
    if (m.per_node_read)
        if (auto it = env.find(fmt::format("{}_{}", k_override, g.node)); it != env.end()) return it->second;
    if (auto it = env.find(k_override); it != env.end()) return it->second;
    return std::nullopt;
}

bool torch_covers(const Machine& m, const std::string& gfx) {
    return m.torch_kind.rfind("rocm", 0) == 0 && m.torch_targets.count(gfx) != 0;
}

// The target the runtime runs a GPU as; nullopt when the override is malformed (init fails).
std::optional<std::string> runs_as(const Machine& m, const GpuTruth& g, const std::map<std::string, std::string>& env) {
    const auto ov = override_for(m, g, env);
    if (!ov) return g.gfx;
    return parse_override(*ov);
}

bool has_dgpu(const Machine& m);

// A GPU the machine is meant to compute on: any GPU, except an iGPU next to a discrete one
// (AMD: ROCm does not support it and enumerating it may crash the system; I3 keeps ROCm off it).
bool meant_to_run(const Machine& m, const GpuTruth& g) { return !g.integrated || !has_dgpu(m); }

// PyTorch runs this GPU only through its override: no code for the chip, code for the target
// the override selects, and that code runs on the chip (same ISA family, or works_as). An
// override that only makes an iGPU next to a discrete GPU run is not needed.
bool override_needed(const Machine& m, const GpuTruth& g, const std::map<std::string, std::string>& env) {
    const auto ov = override_for(m, g, env);
    if (!ov || torch_covers(m, g.gfx) || !meant_to_run(m, g)) return false;
    const auto as = parse_override(*ov);
    return as && torch_covers(m, *as) && runs_correctly_as(g.gfx, *as);
}

// GPUs HIP enumerates: ROCR_VISIBLE_DEVICES over every GPU agent in node order, then
// HIP_VISIBLE_DEVICES (else CUDA_VISIBLE_DEVICES, else GPU_DEVICE_ORDINAL) over those. A list
// stops at its first token that is not an index in range; an empty value leaves none.
std::vector<bool> visible(const Machine& m, const std::map<std::string, std::string>& env) {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < m.gpus.size(); ++i) order.push_back(i);
    const auto filter = [&](const std::string& value) {
        std::vector<std::size_t> kept;
        std::size_t start = 0;
        while (start <= value.size()) {
            auto end = value.find(',', start);
            if (end == std::string::npos) end = value.size();
            const std::string tok = value.substr(start, end - start);
            if (tok.empty() || tok.find_first_not_of("0123456789") != std::string::npos) break;
            const auto idx = std::stoul(tok);
            if (idx >= order.size()) break;
            kept.push_back(order[idx]);
            start = end + 1;
        }
        order = kept;
    };
    if (auto it = env.find("ROCR_VISIBLE_DEVICES"); it != env.end()) filter(it->second);
    for (const char* name : {"HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"})
        if (auto it = env.find(name); it != env.end()) {
            filter(it->second);
            break;
        }
    std::vector<bool> out(m.gpus.size(), false);
    for (auto i : order) out[i] = true;
    return out;
}

bool has_dgpu(const Machine& m) {
    for (const auto& g : m.gpus)
        if (!g.integrated) return true;
    return false;
}

// An iGPU runs ROCm kernels: HIP sees it and it has code (its own, or through an override).
bool igpu_runs(const Machine& m, std::size_t i, const std::map<std::string, std::string>& env) {
    const auto& g = m.gpus[i];
    if (!g.integrated || !visible(m, env)[i]) return false;
    if (override_for(m, g, env)) return runs_as(m, g, env).has_value();
    return torch_covers(m, g.gfx);
}

const char* k_hiding[] = {"HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"};

struct Counts {
    int critical = 0;
    int warning = 0;
    std::set<std::string> critical_keys;
};

Counts count_open(const rmcp::kb::DoctorReport& r) {
    Counts c;
    for (const auto& f : r.findings) {
        if (f.status != rmcp::kb::FindingStatus::open) continue;
        if (f.entry->severity == rmcp::kb::Severity::critical) {
            ++c.critical;
            c.critical_keys.insert(f.entry->id + (f.gpu_node ? fmt::format("@node{}", *f.gpu_node) : ""));
        } else if (f.entry->severity == rmcp::kb::Severity::warning) ++c.warning;
    }
    return c;
}

std::string summary(const Counts& c) {
    return fmt::format("{} critical ({}), {} warning", c.critical, fmt::join(c.critical_keys, " "), c.warning);
}

struct Context {
    const rmcp::kb::KnowledgeBase* kb = nullptr;
    rmcp::patch::PatchSet patches;
    std::optional<rmcp::patch::ProfileSet> profiles;  // for planning, as `rmcp patch apply` loads them
    fs::path data;
    fs::path scratch;  // copies go here
    std::vector<json> violations;
    std::size_t applies = 0;
};

void violate(Context& cx, const Machine& m, const std::string& invariant, const std::string& step,
             const std::vector<std::string>& responsible, const std::string& detail) {
    json v = {{"machine", m.id},        {"dims", m.dims}, {"tree", m.path.string()},
              {"invariant", invariant}, {"step", step},   {"responsible", responsible},
              {"detail", detail}};
    std::cout << v.dump() << '\n';
    cx.violations.push_back(std::move(v));
}

std::map<std::string, std::string> request_env(const Machine& m) {
    return {{"HOME", m.home}, {"USER", m.user}, {"PATH", "/usr/bin:/bin"}};
}

// One step a user takes: which patches it applies (or the auto rung and the patches auto
// takes its changes from), and the baseline report, whose findings chose them.
struct Change {
    std::string step;
    std::vector<std::string> patches;
    std::string profile;  // env --profile auto: the rung
    const rmcp::kb::DoctorReport* report = nullptr;
};

bool is_override_var(const std::string& k) { return k.rfind(k_override, 0) == 0; }
bool is_visibility_var(const std::string& k) {
    return std::any_of(std::begin(k_hiding), std::end(k_hiding), [&](const char* h) { return k == h; });
}

// Whether a patch's environment operations touch variables `pred` selects (a derived set is
// an override set: docs/patches.md, "per-node-override", "same-family-override").
template <class Pred>
bool patch_touches(const rmcp::patch::Patch& p, Pred pred) {
    for (const auto& op : p.operations) {
        if (op.kind != rmcp::patch::OpKind::env) continue;
        if (!op.derived.empty() && pred(k_override)) return true;
        for (const auto& [k, v] : op.set)
            if (pred(k)) return true;
        for (const auto* list : {&op.unset, &op.remove})
            for (const auto& k : *list)
                if (pred(k)) return true;
    }
    return false;
}

// Who is responsible for a change to the variables `pred` selects: the patches of the step that
// touch them (all of the step's patches when none does), each with the findings that chose it,
// and the auto rung when its own settings touch them. Node numbers are left out ("@nodeN").
template <class Pred>
std::vector<std::string> blame(const Context& cx, const Change& c, Pred pred) {
    std::vector<std::string> patches;
    for (const auto& id : c.patches)
        if (const auto* p = cx.patches.find(id); p && patch_touches(*p, pred)) patches.push_back(id);
    if (patches.empty()) patches = c.patches;
    std::vector<std::string> out;
    for (const auto& id : patches) {
        std::set<std::string> entries;
        if (c.report)
            for (const auto& f : c.report->findings) {
                if (f.status != rmcp::kb::FindingStatus::open) continue;
                const bool chose = c.profile.empty()
                                       ? f.chosen_fix == id
                                       : std::any_of(f.entry->fixes.begin(), f.entry->fixes.end(),
                                                     [&](const rmcp::kb::FixRef& x) { return x.patch == id; });
                if (chose) entries.insert(f.entry->id);
            }
        out.push_back(entries.empty() ? "patch " + id
                                      : fmt::format("patch {} (first fix of {})", id, fmt::join(entries, ", ")));
    }
    if (!c.profile.empty() && cx.profiles)
        if (const auto* prof = cx.profiles->find(c.profile)) {
            bool touches = false;
            for (const auto& [k, v] : prof->set) touches = touches || pred(k);
            for (const auto& k : prof->unset) touches = touches || pred(k);
            if (touches || patches.empty()) out.push_back("auto rung " + c.profile);
        }
    return out;
}

rmcp::patch::DoctorRequest doctor_request(const Context& cx, const Machine& m, const fs::path& root, bool with_auto) {
    rmcp::patch::DoctorRequest rq;
    rq.env = request_env(m);
    rq.decide_auto = with_auto;
    rq.scan = true;
    rq.profile_dir = cx.data / "profiles";
    rq.patch_dir = cx.data / "patches";
    rq.kb_dir = cx.data / "kb";
    rq.command = fmt::format("rmcp --root {}", root.string());
    return rq;
}

// A copy that shares file contents with the original: the Applier replaces files by rename,
// so writes to the copy never reach the original's inodes.
void link_copy(const fs::path& from, const fs::path& to) {
    fs::create_directories(to);
    for (auto it = fs::recursive_directory_iterator(from); it != fs::recursive_directory_iterator(); ++it) {
        const auto rel = it->path().lexically_relative(from);  // fs::relative would follow links
        const auto st = it->symlink_status();
        if (fs::is_symlink(st)) {
            fs::copy_symlink(it->path(), to / rel);
        } else if (fs::is_directory(st)) {
            fs::create_directory(to / rel);
        } else {
            fs::create_hard_link(it->path(), to / rel);
        }
    }
}

// The environment a training run gets on the tree at `root`: the process environment plus
// the user's profile.env (what `rmcp run` and `rmcp env` apply).
std::map<std::string, std::string> env_with_profile(const Machine& m, const rmcp::Root& root) {
    auto env = m.env;
    const auto file = rmcp::patch::user_env_file_path(request_env(m));
    if (auto text = root.read_file(file)) {
        if (auto user = rmcp::patch::parse_user_env(*text, file)) rmcp::patch::apply_user_env(env, *user);
    }
    return env;
}

// I1, I2, I3, I5 on a change of environment.
void judge_env_change(Context& cx, const Machine& m, const Change& c, const std::map<std::string, std::string>& before,
                      const std::map<std::string, std::string>& after) {
    const auto& step = c.step;
    const auto override_blame = [&] { return blame(cx, c, is_override_var); };
    const auto run_blame = [&] {
        return blame(cx, c, [](const std::string& k) { return is_override_var(k) || is_visibility_var(k); });
    };
    bool override_touched = false;
    for (const auto* env : {&before, &after})
        for (const auto& [k, v] : *env)
            if (k.rfind(k_override, 0) == 0) {
                const auto a = before.find(k);
                const auto b = after.find(k);
                if ((a == before.end()) != (b == after.end()) || (a != before.end() && a->second != b->second))
                    override_touched = true;
            }
    for (std::size_t i = 0; i < m.gpus.size(); ++i) {
        const auto& g = m.gpus[i];
        if (override_touched) {
            if (const auto ov = override_for(m, g, after)) {
                const auto as = parse_override(*ov);
                // A works_as pairing the GPU already ran on and needs (RDNA1 as gfx1030 with a
                // PyTorch without gfx101X code) may be kept, moved to its per-node form: I2
                // forbids removing it (KB audit 2, item 2). Proposing it anew stays a violation.
                const auto before_ov = override_for(m, g, before);
                const bool kept_as_it_ran = before_ov && parse_override(*before_ov) == as &&
                                            runs_correctly_as(g.gfx, *as) && override_needed(m, g, before);
                if (as && family_of(*as) != g.family && !kept_as_it_ran)
                    violate(cx, m, "I1 cross-family", step, override_blame(),
                            fmt::format("after it, node {} ({}, {}) runs as {} ({}={}), another ISA family", g.node,
                                        g.gfx, g.family, *as, k_override, *ov));
            }
        }
        if (override_needed(m, g, before)) {
            const auto as = runs_as(m, g, after);
            if (!as || !torch_covers(m, *as))
                violate(cx, m, "I2 needed-override", step, override_blame(),
                        fmt::format("node {} ({}) ran as {} through the override the installed PyTorch needs (it has "
                                    "no {} code); after it the runtime asks for {}, which that PyTorch lacks",
                                    g.node, g.gfx, *runs_as(m, g, before), g.gfx, as ? *as : "nothing (malformed)"));
        }
        // Pointed at it: it runs after, not before, and the step gave it an override or made it
        // visible (an iGPU that runs its own code once a malformed value is gone was not aimed at).
        const bool aimed = (override_for(m, g, after) && override_for(m, g, after) != override_for(m, g, before)) ||
                           (visible(m, after)[i] && !visible(m, before)[i]);
        if (g.integrated && has_dgpu(m) && aimed && !igpu_runs(m, i, before) && igpu_runs(m, i, after))
            violate(cx, m, "I3 igpu", step, run_blame(),
                    fmt::format("after it, ROCm runs kernels on the iGPU at node {} ({}, as {}) next to a discrete GPU",
                                g.node, g.gfx, runs_as(m, g, after).value_or("?")));
    }
    if (!m.amd_gpu)
        for (const char* name : k_hiding) {
            const auto b = after.find(name);
            if (b == after.end()) continue;
            const auto a = before.find(name);
            if (a == before.end() || a->second != b->second)
                violate(cx, m, "I5 hide-gpus", step, blame(cx, c, is_visibility_var),
                        fmt::format("no AMD GPU, yet it exports {}='{}'", name, b->second));
        }
}

// I1 for what an advisory prints: HSA_OVERRIDE_GFX_VERSION[_N]=V lines it tells the user to set.
void judge_advisory(Context& cx, const Machine& m, const std::string& step, const std::vector<std::string>& who,
                    const std::string& text) {
    // An assignment where a command starts (line start, after ; & | or `export`/`env`), outside
    // comments: "# remove any HSA_OVERRIDE_GFX_VERSION=11.0.0" asks for no override.
    static const std::regex re(
        R"((?:^|[;&|]\s*|\bexport\s+|\benv\s+)HSA_OVERRIDE_GFX_VERSION(?:_(\d+))?=['"]?([0-9]+\.[0-9]+\.[0-9]+))");
    for (std::size_t start = 0; start < text.size();) {
        auto end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(start, end - start);
        start = end + 1;
        line = line.substr(0, line.find('#'));  // std::regex's ^ is the start of this line only
        for (auto it = std::sregex_iterator(line.begin(), line.end(), re); it != std::sregex_iterator(); ++it) {
            const auto as = parse_override((*it)[2]);
            if (!as) continue;
            for (const auto& g : m.gpus) {
                if ((*it)[1].matched && std::to_string(g.node) != (*it)[1].str()) continue;
                if (!(*it)[1].matched && m.per_node_read && m.env.count(fmt::format("{}_{}", k_override, g.node)) != 0)
                    continue;  // a per-node value already wins over the global one there
                if (family_of(*as) != g.family)
                    violate(cx, m, "I1 cross-family", step, who,
                            fmt::format("it prints `{}`, which runs node {} ({}, {}) as {}, another ISA family",
                                        (*it)[0].str(), g.node, g.gfx, g.family, *as));
            }
        }
    }
}

// GPUs PyTorch can run: HIP sees them, the runtime initialises (no malformed override), the
// installed PyTorch has code for the target each runs as, and that code runs on the chip;
// an iGPU next to a discrete GPU is not counted (meant_to_run).
int runnable(const Machine& m, const std::map<std::string, std::string>& env) {
    int n = 0;
    const auto vis = visible(m, env);
    for (std::size_t i = 0; i < m.gpus.size(); ++i) {
        const auto& g = m.gpus[i];
        const auto as = runs_as(m, g, env);
        if (meant_to_run(m, g) && vis[i] && as && torch_covers(m, *as) && runs_correctly_as(g.gfx, *as)) ++n;
    }
    for (const auto& g : m.gpus)  // a malformed override fails runtime init for every GPU
        if (const auto ov = override_for(m, g, env); ov && !parse_override(*ov)) return 0;
    return n;
}

// Applies the change's patches on a copy of the machine, runs doctor there, and judges it.
void judge_apply(Context& cx, const Machine& m, const Change& c, const Counts& before_counts) {
    const auto all = [&] { return blame(cx, c, [](const std::string&) { return true; }); };
    const fs::path copy = cx.scratch / fmt::format("{}.{}", m.id, cx.applies++);
    std::error_code ec;
    fs::remove_all(copy, ec);
    link_copy(m.path, copy);
    auto root = rmcp::Root::open(copy);
    if (!root) {
        violate(cx, m, "error", c.step, all(), root.error().message());
        return;
    }
    const auto env_before = env_with_profile(m, *root);
    const auto facts = rmcp::detect(*root);
    const auto pc = rmcp::patch::machine_plan_context(*root, facts, cx.patches, c.patches,
                                                      cx.profiles ? &*cx.profiles : nullptr, {}, request_env(m));
    auto plan = rmcp::patch::make_plan(*root, cx.patches, c.patches, pc);
    if (!plan) {
        violate(cx, m, "error", c.step, all(), "planning: " + plan.error().message());
        fs::remove_all(copy, ec);
        return;
    }
    rmcp::patch::ApplyOptions options;
    options.env = request_env(m);
    options.euid = 0;
    auto applied = rmcp::patch::apply_plan(*root, *plan, options);
    if (!applied) {
        violate(cx, m, "error", c.step, all(), "applying: " + applied.error().message());
        fs::remove_all(copy, ec);
        return;
    }
    std::map<std::string, std::string> advisory;  // patch -> what it prints
    for (const auto& s : plan->steps)
        if (s.op->kind == rmcp::patch::OpKind::advisory) advisory[s.patch->id] += s.advisory + "\n";
    for (const auto& [id, text] : advisory)
        judge_advisory(cx, m, c.step,
                       blame(cx, Change{c.step, {id}, {}, c.report}, [](const std::string&) { return true; }), text);
    auto root_after = rmcp::Root::open(copy);
    const auto env_after = env_with_profile(m, *root_after);
    judge_env_change(cx, m, c, env_before, env_after);
    auto after = rmcp::patch::doctor_with_state(*root_after, *cx.kb, doctor_request(cx, m, copy, false));
    if (!after) {
        violate(cx, m, "error", c.step, all(), "doctor after it: " + after.error().message());
    } else {
        const auto n = count_open(after->report);
        std::vector<std::string> fresh;
        for (const auto& k : n.critical_keys)
            if (before_counts.critical_keys.count(k) == 0) fresh.push_back(k);
        const int ran = runnable(m, env_before), runs = runnable(m, env_after);
        const bool worse = n.critical > before_counts.critical || runs < ran ||
                           (n.critical == before_counts.critical && fresh.empty() && n.warning > before_counts.warning);
        if (worse) {
            violate(cx, m, "I6 worse", c.step, all(),
                    fmt::format("before: {}; after: {}; GPUs PyTorch can run: {} before, {} after{}",
                                summary(before_counts), summary(n), ran, runs,
                                runs < ran ? " (it broke a working GPU)" : " (nothing that ran stops running)"));
        }
    }
    fs::remove_all(copy, ec);
}

bool is_advisory_only(const rmcp::patch::Patch& p) {
    for (const auto& op : p.operations)
        if (op.kind != rmcp::patch::OpKind::advisory) return false;
    return true;
}

void check_machine(Context& cx, const Machine& m) {
    auto root = rmcp::Root::open(m.path);
    if (!root) {
        violate(cx, m, "error", "open", {}, root.error().message());
        return;
    }
    auto outcome = rmcp::patch::doctor_with_state(*root, *cx.kb, doctor_request(cx, m, m.path, true));
    if (!outcome) {
        violate(cx, m, "error", "doctor", {}, outcome.error().message());
        return;
    }
    const auto& report = outcome->report;
    const Counts before = count_open(report);

    // I4: a machine that works raises no critical.
    bool healthy = m.amd_gpu && m.torch_kind.rfind("rocm", 0) == 0;
    for (const auto& [k, v] : m.env)
        if (k.rfind(k_override, 0) == 0) healthy = false;
    for (const auto& g : m.gpus)
        if (!torch_covers(m, g.gfx)) healthy = false;
    if (healthy && before.critical > 0)
        violate(cx, m, "I4 false-critical", "doctor",
                std::vector<std::string>(before.critical_keys.begin(), before.critical_keys.end()),
                fmt::format("PyTorch has code for every GPU, no override, nodes accessible, driver live; doctor: {}",
                            summary(before)));

    // next: of every open finding, each patch once.
    std::map<std::string, std::vector<std::string>> by_patch;  // patch -> findings that chose it
    for (const auto& f : report.findings) {
        if (f.status != rmcp::kb::FindingStatus::open || f.chosen_fix.empty()) continue;
        by_patch[f.chosen_fix].push_back(f.entry->id + (f.gpu_node ? fmt::format("@node{}", *f.gpu_node) : ""));
        const auto* p = cx.patches.find(f.chosen_fix);
        if (p && is_advisory_only(*p))
            judge_advisory(cx, m, "next:" + f.chosen_fix,
                           {fmt::format("patch {} (first fix of {})", f.chosen_fix, f.entry->id)}, f.next_command);
    }
    for (const auto& [patch_id, findings] : by_patch) {
        const auto* p = cx.patches.find(patch_id);
        if (!p || is_advisory_only(*p)) continue;  // prints only: judged by its text above
        judge_apply(cx, m, Change{"next:" + patch_id, {patch_id}, {}, &report}, before);
    }

    // doctor --fix: every open finding's first fix at once. When the patches that write are
    // none, or the one patch a next: above already applied, the same change was judged there.
    const auto ids = rmcp::patch::fix_patch_ids(report);
    std::vector<std::string> writing;
    for (const auto& id : ids)
        if (const auto* p = cx.patches.find(id); p && !is_advisory_only(*p)) writing.push_back(id);
    const bool same_as_next = writing.empty() || (writing.size() == 1 && by_patch.count(writing.front()) != 0);
    if (!same_as_next) {
        judge_apply(cx, m, Change{"doctor --fix", ids, {}, &report}, before);
    }

    // env --profile auto (profile.env first, then the decision, as src/cli/env.cpp composes them)
    if (outcome->auto_decision) {
        const auto& d = *outcome->auto_decision;
        auto env = env_with_profile(m, *root);
        const auto before_env = env;
        rmcp::patch::apply_profile_env(env, d.env);
        judge_env_change(cx, m, Change{"env --profile auto", d.patches, d.choice.profile, &report}, before_env, env);
    }
}

Machine read_machine(const json& j, const fs::path& base) {
    Machine m;
    m.id = j.at("id").get<std::string>();
    m.path = base / m.id;
    m.dims = j.at("dims");
    for (const auto& g : j.at("gpus"))
        m.gpus.push_back(GpuTruth{g.at("node").get<unsigned>(), g.at("gfx").get<std::string>(),
                                  g.at("family").get<std::string>(), g.at("integrated").get<bool>()});
    for (const auto& [k, v] : j.at("env").items()) m.env[k] = v.get<std::string>();
    const auto& t = j.at("torch");
    m.torch_kind = t.at("kind").get<std::string>();
    if (t.contains("targets"))
        for (const auto& x : t.at("targets")) m.torch_targets.insert(x.get<std::string>());
    m.per_node_read = m.dims.at("runtime").get<std::string>() != "6.2";
    m.home = j.at("home").get<std::string>();
    m.user = j.at("user").get<std::string>();
    m.amd_gpu = j.at("amd_gpu").get<bool>();
    return m;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s MANIFEST DATA_DIR SCRATCH_DIR\n", argv[0]);
        return 2;
    }
    const fs::path manifest_path = argv[1];
    std::ifstream in(manifest_path);
    json manifest;
    try {
        manifest = json::parse(in);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "reading %s: %s\n", argv[1], e.what());
        return 2;
    }
    Context cx;
    cx.data = argv[2];
    cx.scratch = argv[3];
    fs::create_directories(cx.scratch);
    auto kb = rmcp::kb::load(cx.data / "kb");
    if (!kb) {
        std::fprintf(stderr, "%s\n", kb.error().message().c_str());
        return 2;
    }
    cx.kb = &*kb;
    auto patches = rmcp::patch::load_patches(cx.data / "patches");
    if (!patches) {
        std::fprintf(stderr, "%s\n", patches.error().message().c_str());
        return 2;
    }
    cx.patches = std::move(*patches);
    if (auto profiles = rmcp::patch::load_profiles(cx.data / "profiles")) cx.profiles = std::move(*profiles);
    for (const auto& [gfx, fam] : manifest.at("families").items()) g_family[gfx] = fam.get<std::string>();
    for (const auto& [gfx, list] : manifest.at("works_as").items())
        for (const auto& t : list) g_works_as[gfx].insert(t.get<std::string>());

    // The table and rmcp's own target knowledge (src/core/detect/gfx.cpp) agree: architecture
    // generation, LLVM generic target where rmcp knows one, APU-only/discrete-only. A generic
    // target rmcp does not know is a note (gfx9-4-generic): rmcp then treats those chips as a
    // family of one, which never allows more than the table does.
    const json no_rows = json::object();
    const json& rows = manifest.value("check_table", false) ? manifest.at("table") : no_rows;
    for (const auto& [gfx, row] : rows.items()) {
        const auto fam = rmcp::gfx_family(gfx);
        const auto gen = rmcp::gfx_generic_target(gfx);
        const auto integ = rmcp::gfx_integrated(gfx);
        const auto want_gen = row.at("generic").get<std::string>();
        std::string problem;
        if (fam != row.at("family").get<std::string>())
            problem =
                fmt::format("family {} in the table, {} in gfx.cpp", row.at("family").dump(), fam.value_or("none"));
        else if (gen && *gen != want_gen)
            problem = fmt::format("generic {} in the table, {} in gfx.cpp", want_gen, *gen);
        else if (integ && *integ != row.at("integrated").get<bool>())
            problem = fmt::format("integrated {} in the table, {} in gfx.cpp", row.at("integrated").dump(), *integ);
        if (!problem.empty()) {
            Machine table;
            table.id = "data/gfx-targets.toml:" + gfx;
            table.dims = json::object();
            violate(cx, table, "table", "gfx.cpp", {gfx}, problem);
        } else if (!gen && !want_gen.empty()) {
            std::fprintf(stderr, "note: gfx.cpp has no generic target for %s (the table: %s)\n", gfx.c_str(),
                         want_gen.c_str());
        }
    }

    const auto start = std::chrono::steady_clock::now();
    std::size_t n = 0;
    for (const auto& j : manifest.at("machines")) {
        const Machine m = read_machine(j, manifest_path.parent_path());
        try {
            check_machine(cx, m);
        } catch (const std::exception& e) {
            violate(cx, m, "error", "checker", {}, e.what());  // a broken tree or copy, not a verdict
        }
        ++n;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "matrix_check: %zu machines, %zu copies applied, %zu violations, %.1f s\n", n, cx.applies,
                 cx.violations.size(), secs);
    return 0;
}
