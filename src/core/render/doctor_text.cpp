#include "render/doctor_text.hpp"

#include "kb/describe.hpp"
#include "util/strings.hpp"
#include "util/terminal.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>

namespace rmcp {

namespace {
using kb::Finding;
using kb::FindingStatus;
using kb::Severity;
using nlohmann::json;

struct Glyphs {
    std::string ok, warn, bad, dot, dash;
};

// From the Style's one decision (UTF-8 glyphs or their ASCII spellings: util/terminal.hpp's table).
Glyphs glyphs(const Style& s) {
    return {fmt::format("[{}]", s.check()), "[!]", fmt::format("[{}]", s.cross()), fmt::format(" {} ", s.dot()),
            fmt::format(" {} ", s.dash())};
}

// A paragraph indented by `indent`, wrapped, ending in a newline.
std::string paragraph(std::string_view text, std::size_t indent, std::size_t width) {
    return std::string(indent, ' ') + wrap_hanging(text, indent, indent, width) + '\n';
}

const json* gpu_facts(const json& facts, std::size_t index) {
    const auto it = facts.find("gpus");
    if (it == facts.end() || !it->is_array() || index >= it->size()) return nullptr;
    return &(*it)[index];
}

std::string str(const json& o, std::string_view key) {
    const auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The one user-facing GPU number (ROCm's device index); a GPU ROCm does not enumerate is
// named by its KFD node, or as a DRM device.
std::string gpu_label(const json& facts, std::size_t index) {
    const json* g = gpu_facts(facts, index);
    if (!g) return fmt::format("GPU #{}", index);
    if (const auto r = g->find("rocm_index"); r != g->end() && r->is_number_unsigned())
        return fmt::format("GPU {}", r->get<unsigned>());
    if (const auto n = g->find("node"); n != g->end() && n->is_number_unsigned())
        return fmt::format("GPU (KFD node {})", n->get<unsigned>());
    return "GPU (no KFD node)";
}

std::string short_name(std::string name) {
    if (name.starts_with("AMD ")) name.erase(0, 4);
    return name.empty() ? std::string("AMD GPU") : name;
}

// ---- check areas ----------------------------------------------------------------------

enum class AreaKind { driver, gpu_target, gpu_code, install, environment };

struct Area {
    AreaKind kind;
    std::size_t gpu = 0;
    std::string title;
    std::vector<const Finding*> findings;
};

bool code_category(std::string_view c) {
    return c == "missing-code-object" || c == "rocblas-missing-arch" || c == "miopen-failure";
}

// Where a finding belongs on the checklist: a GPU's findings under that GPU (its code in
// PyTorch and the libraries, or its target and override), the rest by category.
std::pair<AreaKind, std::size_t> area_of(const Finding& f) {
    const auto& c = f.entry->category;
    if (f.gpu_index) return {code_category(c) ? AreaKind::gpu_code : AreaKind::gpu_target, *f.gpu_index};
    if (c == "device-access" || c == "kernel-driver-fault" || c == "gpu-hang") return {AreaKind::driver, 0};
    if (c == "install-mismatch" || code_category(c)) return {AreaKind::install, 0};
    return {AreaKind::environment, 0};
}

// An open or pending finding that is more than a note.
bool counts_against(const Finding& f) {
    return f.entry->severity != Severity::info &&
           (f.status == FindingStatus::open || f.status == FindingStatus::pending);
}

// ✗ for an open critical finding, ! for anything else open or pending, ✓ otherwise.
std::string_view area_glyph(const Area& a, const Glyphs& g, const Style& s, std::string& coloured) {
    bool bad = false;
    bool warn = false;
    for (const auto* f : a.findings) {
        if (!counts_against(*f)) continue;
        if (f->status == FindingStatus::open && f->entry->severity == Severity::critical) bad = true;
        else warn = true;
    }
    const auto glyph = bad ? g.bad : warn ? g.warn : g.ok;
    coloured = bad ? s.red(glyph) : warn ? s.yellow(glyph) : s.green(glyph);
    return glyph;
}

std::string finding_words(const Finding& f) {
    switch (f.status) {
    case FindingStatus::open:
        if (f.entry->severity == Severity::info) return fmt::format("note: {}", f.entry->id);
        return fmt::format("{} ({})", f.entry->id, kb::severity_name(f.entry->severity));
    case FindingStatus::pending: return fmt::format("{} (pending)", f.entry->id);
    case FindingStatus::info: return fmt::format("note: {}", f.entry->id);
    case FindingStatus::fixed_by_profile:
        return fmt::format("{} (fixed by {})", f.entry->id,
                           f.status_detail.find("profile.env") != std::string::npos ? "profile.env" : "the profile");
    case FindingStatus::fixed: return fmt::format("{} (fixed)", f.entry->id);
    }
    return f.entry->id;
}

std::string join_words(const std::vector<std::string>& words, std::string_view sep = ", ") {
    std::string out;
    for (const auto& w : words) out += (out.empty() ? "" : std::string(sep)) + w;
    return out;
}

// What a passing area checked, in words, from the facts.
std::string ok_words(const Area& a, const json& facts) {
    switch (a.kind) {
    case AreaKind::driver: {
        std::vector<std::string> parts;
        if (const auto d = facts.find("driver"); d != facts.end() && d->is_object()) {
            const bool loaded = d->value("loaded", false);
            const auto k = str(*d, "kernel_release");
            parts.push_back(loaded ? fmt::format("amdgpu{}", k.empty() ? "" : " on " + k)
                                   : std::string("amdgpu not loaded"));
        }
        if (const auto k = facts.find("kfd"); k != facts.end() && k->is_object()) {
            if (!k->value("present", false)) parts.emplace_back("no /dev/kfd");
            else if (const auto acc = k->find("accessible"); acc != k->end() && acc->is_boolean())
                parts.emplace_back(acc->get<bool>() ? "/dev/kfd read-write" : "/dev/kfd not accessible");
        }
        return join_words(parts);
    }
    case AreaKind::gpu_target: {
        const json* g = gpu_facts(facts, a.gpu);
        if (!g) return {};
        std::vector<std::string> parts;
        if (const auto o = g->find("override"); o != g->end() && o->is_object()) {
            auto relation = str(*o, "relation");
            std::replace(relation.begin(), relation.end(), '_', ' ');
            parts.push_back(fmt::format("override {} ({})", str(*o, "value"), relation));
        } else parts.emplace_back("no override");
        if (const auto s = g->find("officially_supported"); s != g->end() && s->is_boolean())
            parts.emplace_back(s->get<bool>() ? "on ROCm's support list" : "not on ROCm's support list");
        if (const auto h = str(*g, "hidden_by"); !h.empty()) parts.push_back("hidden by " + h);
        return join_words(parts);
    }
    case AreaKind::gpu_code: {
        const json* g = gpu_facts(facts, a.gpu);
        const auto lib = facts.find("libraries");
        if (!g || lib == facts.end() || !lib->contains("coverage")) return "not checked (no library headers read)";
        const auto node = g->find("node");
        std::set<std::string> covered;
        std::set<std::string> missing;
        for (const auto& c : (*lib)["coverage"]) {
            if (node == g->end() || c.value("node", json()) != *node) continue;
            (c.value("covered", false) ? covered : missing).insert(str(c, "library"));
        }
        if (covered.empty() && missing.empty()) return "no library with GPU code found";
        const auto target = str(*g, "effective_gfx_target");
        return fmt::format("{} code in {} of {} GPU libraries", target.empty() ? "its" : target, covered.size(),
                           covered.size() + missing.size());
    }
    case AreaKind::install: {
        std::vector<std::string> parts;
        if (const auto r = facts.find("rocm"); r != facts.end() && r->is_array() && !r->empty())
            parts.push_back(fmt::format("ROCm {} at {}", str(r->front(), "version"), str(r->front(), "path")));
        else parts.emplace_back("no ROCm installation");
        if (const auto t = facts.find("torch"); t != facts.end() && t->is_array() && !t->empty())
            parts.push_back("PyTorch " + str(t->front(), "version"));
        return join_words(parts);
    }
    case AreaKind::environment: {
        const auto e = facts.find("env");
        if (e == facts.end() || !e->is_object() || e->empty()) return "no ROCm variables set";
        std::vector<std::string> names;
        for (const auto& [k, v] : e->items())
            if (k != "VIRTUAL_ENV" && k != "CONDA_PREFIX") names.push_back(k);
        return names.empty() ? std::string("no ROCm variables set") : "set: " + join_words(names);
    }
    }
    return {};
}

std::vector<Area> build_areas(const kb::DoctorReport& r, const json& facts) {
    std::vector<Area> areas;
    areas.push_back({AreaKind::driver, 0, "Driver and device nodes", {}});
    const auto gpus = facts.find("gpus");
    const std::size_t n = gpus != facts.end() && gpus->is_array() ? gpus->size() : 0;
    for (std::size_t i = 0; i < n; ++i) {
        const auto label = gpu_label(facts, i);
        const auto target = str((*gpus)[i], "gfx_target");
        areas.push_back({AreaKind::gpu_target,
                         i,
                         fmt::format("{} {}: override", label, target.empty() ? "target unknown" : target),
                         {}});
        areas.push_back(
            {AreaKind::gpu_code, i, fmt::format("{} {}: code", label, target.empty() ? "target unknown" : target), {}});
    }
    areas.push_back({AreaKind::install, 0, "ROCm and PyTorch", {}});
    areas.push_back({AreaKind::environment, 0, "Environment", {}});
    for (const auto& f : r.findings) {
        // Copies, not structured bindings: a lambda may not capture a binding before C++20's
        // P1091 (clang 14, the ASan build, refuses it).
        const auto where = area_of(f);
        const auto kind = where.first;
        const auto gpu = where.second;
        auto it = std::find_if(areas.begin(), areas.end(), [&](const Area& a) {
            return a.kind == kind && (kind != AreaKind::gpu_target && kind != AreaKind::gpu_code ? true : a.gpu == gpu);
        });
        if (it == areas.end()) it = areas.end() - 1;  // a GPU the facts do not list: environment
        it->findings.push_back(&f);
    }
    return areas;
}

// ---- the machine line ------------------------------------------------------------------

std::string machine_words(const json& facts, const Glyphs& g) {
    std::vector<std::string> parts;
    const auto gpus = facts.find("gpus");
    if (gpus == facts.end() || !gpus->is_array() || gpus->empty()) parts.emplace_back("no AMD GPU found");
    else
        for (std::size_t i = 0; i < gpus->size(); ++i) {
            const auto& gpu = (*gpus)[i];
            const auto target = str(gpu, "gfx_target");
            std::string words = fmt::format("{} {} ({}{})", gpu_label(facts, i), short_name(str(gpu, "marketing_name")),
                                            target.empty() ? "target unknown" : target,
                                            gpu.value("integrated", false) ? ", integrated" : "");
            if (const auto t = gpu.find("torch_index"); t != gpu.end() && t->is_number_unsigned()) {
                if (t->get<unsigned>() != gpu.value("rocm_index", 0U))
                    words += fmt::format(" = cuda:{}", t->get<unsigned>());
            }
            parts.push_back(std::move(words));
        }
    if (const auto r = facts.find("rocm"); r != facts.end() && r->is_array() && !r->empty())
        parts.push_back("ROCm " + str(r->front(), "version"));
    else parts.emplace_back("no ROCm");
    if (const auto t = facts.find("torch"); t != facts.end() && t->is_array() && !t->empty()) {
        const auto& torch = t->front();
        auto path = str(torch, "path");
        // The environment it belongs to: the prefix before lib/pythonX.Y (a venv, conda, /usr).
        if (const auto at = path.find("/lib/python"); at != std::string::npos) path = path.substr(0, at);
        parts.push_back(
            fmt::format("PyTorch {} ({} {})", str(torch, "version"), str(torch, "origin"), path.empty() ? "?" : path));
        if (t->size() > 1) parts.back() += fmt::format(" +{} more", t->size() - 1);
    } else {
        parts.emplace_back("no PyTorch");
    }
    return join_words(parts, g.dot);
}

// The command that reverses a `patch apply` step, with the same privilege: a system patch on the
// live machine is applied with sudo (patch/next_step.cpp), so it is rolled back with sudo too.
std::string undo_of(std::string_view command, const std::string& prefix) {
    constexpr std::string_view sudo = "sudo ";
    const bool privileged = command.starts_with(sudo);
    if (privileged) command.remove_prefix(sudo.size());
    if (!command.starts_with(prefix + " patch apply ")) return {};
    return (privileged ? std::string(sudo) : std::string()) + prefix + " patch rollback";
}

// The cost of the fix a finding's next command applies, from the kb entry.
std::string chosen_cost(const Finding& f) {
    for (const auto& fix : f.entry->fixes)
        if (fix.patch == f.chosen_fix) return fix.cost;
    return {};
}

}  // namespace

std::vector<DoctorNextStep> doctor_next_steps(const kb::DoctorReport& r, const std::string& prefix) {
    std::vector<DoctorNextStep> steps;
    // Findings come most severe first, so the first step answers the most severe finding.
    for (const auto& f : r.findings) {
        if (f.next_command.empty()) continue;
        if (f.status != FindingStatus::open && f.status != FindingStatus::fixed_by_profile &&
            f.status != FindingStatus::pending)
            continue;
        auto it = std::find_if(steps.begin(), steps.end(),
                               [&](const DoctorNextStep& s) { return s.command == f.next_command; });
        if (it == steps.end()) {
            steps.push_back({f.next_command, undo_of(f.next_command, prefix), {}});
            it = steps.end() - 1;
        }
        if (std::find(it->finding_ids.begin(), it->finding_ids.end(), f.entry->id) == it->finding_ids.end())
            it->finding_ids.push_back(f.entry->id);
    }
    return steps;
}

std::string doctor_summary_line(const kb::DoctorReport& r) {
    std::size_t critical = 0;
    std::size_t warning = 0;
    std::size_t pending = 0;
    std::size_t fixed = 0;
    std::size_t notes = 0;
    for (const auto& f : r.findings) {
        if (f.status == FindingStatus::info || f.entry->severity == Severity::info) ++notes;
        else if (f.status == FindingStatus::pending) ++pending;
        else if (f.status != FindingStatus::open) ++fixed;
        else if (f.entry->severity == Severity::critical) ++critical;
        else ++warning;
    }
    const auto plural = [](std::size_t n, std::string_view word) {
        return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
    };
    std::string out = "rmcp doctor: ";
    out += critical + warning == 0
               ? std::string("nothing open")
               : fmt::format("{} open ({} critical, {} warning)", critical + warning, critical, warning);
    if (pending) out += fmt::format("; {} pending", pending);
    if (fixed) out += fmt::format("; {} fixed", fixed);
    if (notes) out += "; " + plural(notes, "note");
    out += fmt::format("; {}, {}", plural(r.entries_checked, "check"), plural(r.gpus, "AMD GPU"));
    return out;
}

std::string render_doctor_text(const kb::DoctorReport& r, const json& facts, const std::string& prefix,
                               const DoctorTextOptions& o, const Style& s) {
    const auto summary = doctor_summary_line(r);
    if (o.quiet) return summary + '\n';
    const auto g = glyphs(s);
    const std::size_t width = std::max<std::size_t>(static_cast<std::size_t>(s.width()), 40);
    std::string out;

    // The machine, in one (wrapped) line.
    out += s.bold("rmcp doctor") + std::string(g.dot) +
           wrap_hanging(machine_words(facts, g), display_width("rmcp doctor") + display_width(g.dot), 2, width) + '\n';
    for (const auto& note : r.notes) out += paragraph("note: " + note, 0, width);
    out += '\n';

    // The checklist: one line per area, its findings (or what passed) after the title.
    const auto areas = build_areas(r, facts);
    std::size_t title_cols = 0;
    for (const auto& a : areas) title_cols = std::max(title_cols, display_width(a.title));
    title_cols = std::min<std::size_t>(title_cols, 36);
    for (const auto& a : areas) {
        std::string coloured;
        area_glyph(a, g, s, coloured);
        // Problems by id; with none, what passed; notes (info findings) after either.
        std::vector<std::string> problems;
        std::vector<std::string> notes;
        for (const auto* f : a.findings)
            (f->status == FindingStatus::info || f->entry->severity == Severity::info ? notes : problems)
                .push_back(finding_words(*f));
        std::string detail = problems.empty() ? ok_words(a, facts) : join_words(problems);
        if (!notes.empty()) detail += (detail.empty() ? "" : "; ") + join_words(notes);
        const auto lead_cols = 1 + 3 + 1 + std::max(title_cols, display_width(a.title)) + 2;
        std::string title = a.title;
        title.append(lead_cols - 1 - 3 - 1 - 2 - display_width(a.title), ' ');
        out += " " + coloured + " " + title + "  ";
        out += detail.empty() ? std::string() : wrap_hanging(detail, lead_cols, lead_cols, width);
        // No trailing blanks when there is nothing after the title.
        while (!out.empty() && out.back() == ' ') out.pop_back();
        out += '\n';
    }
    out += '\n';
    out += s.bold(wrap_hanging(summary, 0, 2, width)) + '\n';

    // Next steps, de-duplicated, each with what it answers, the fix's cost and its undo.
    const auto steps = doctor_next_steps(r, prefix);
    const auto open_count =
        std::count_if(r.findings.begin(), r.findings.end(), [](const Finding& f) { return counts_against(f); });
    if (!steps.empty()) {
        std::size_t answered = 0;
        for (const auto& st : steps) answered += st.finding_ids.size();
        out += s.bold(fmt::format("Next step{} ({} command{} for {} finding{}):", steps.size() == 1 ? "" : "s",
                                  steps.size(), steps.size() == 1 ? "" : "s", answered, answered == 1 ? "" : "s")) +
               '\n';
        for (std::size_t i = 0; i < steps.size(); ++i) {
            const auto& st = steps[i];
            const auto lines = split_lines(st.command);
            const auto number = fmt::format("  {}. ", i + 1);
            for (std::size_t l = 0; l < lines.size(); ++l) {
                // A command stays on one line (it is pasted); its "  # comment" is prose, wrapped.
                auto line = lines[l];
                std::string_view comment;
                if (const auto hash = line.find("  # "); hash != std::string_view::npos) {
                    comment = line.substr(hash + 2);
                    line = line.substr(0, hash);
                }
                while (!line.empty() && line.back() == ' ') line.remove_suffix(1);
                const std::string pad(number.size(), ' ');
                out += (l == 0 ? number : pad) + s.green(std::string(line)) + '\n';
                if (!comment.empty())
                    out += pad + s.dim(wrap_hanging(comment, pad.size(), pad.size() + 2, width)) + '\n';
            }
            std::string about = "for " + join_words(st.finding_ids);
            // The cost of the fix the command applies: what following it gives up or leaves
            // to do (a removed override can leave the GPU without code until another step).
            for (const auto& f : r.findings)
                if (f.next_command == st.command && !f.chosen_fix.empty()) {
                    // Its first clause: the consequence; the rest is in -v and `kb show`.
                    if (auto cost = chosen_cost(f); !cost.empty())
                        about += "; cost: " + cost.substr(0, std::min(cost.find("; "), cost.size()));
                    break;
                }
            out += std::string(number.size(), ' ') + wrap_hanging(about, number.size(), number.size(), width) + '\n';
            // On a line of its own, never wrapped: it is pasted too.
            if (!st.undo.empty()) out += std::string(number.size(), ' ') + "undo: " + st.undo + '\n';
        }
    } else if (open_count > 0) {
        out += paragraph(fmt::format("No command fixes the open finding{} here: read `{} kb show ID`.",
                                     open_count == 1 ? "" : "s", prefix),
                         0, width);
    } else if (r.findings.empty()) {
        out += s.green("No known problem applies to this machine.") + '\n';
    } else {
        out += s.green("Nothing to do: no finding is open.") + '\n';
    }
    if (!o.verbose) {
        if (!r.findings.empty())
            out +=
                s.dim(wrap_hanging(fmt::format("Details: add -v{}one finding: rmcp kb show ID", g.dot), 0, 0, width)) +
                '\n';
        return out;
    }

    // -v: every finding in full.
    for (const auto& f : r.findings) {
        const auto& e = *f.entry;
        std::string sev(kb::severity_name(e.severity));
        for (auto& c : sev) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        const auto sev_col = fmt::format("{:<8}", sev);
        const auto sev_text = e.severity == Severity::critical  ? s.red(sev_col)
                              : e.severity == Severity::warning ? s.yellow(sev_col)
                                                                : s.dim(sev_col);
        out += '\n';
        out += fmt::format("{} {}  [{}, {}]{}\n", sev_text, s.bold(e.id), e.category, kb::confidence_name(e.confidence),
                           f.gpu_index ? "  " + gpu_label(facts, *f.gpu_index) : std::string());
        out += paragraph(e.title, 2, width);
        out += paragraph(e.summary, 2, width);
        out += "  why it applies here:\n";
        for (const auto& ev : f.evidence) {
            // "gpus[1].override.relation" → "GPU 1: how the override's target relates to the chip".
            std::string subject = ev.fact;
            std::string gloss_key = ev.fact;
            if (subject.starts_with("gpus[")) {
                const auto close = subject.find("].");
                const auto index = parse_u64(std::string_view(subject).substr(5, close - 5));
                if (close != std::string::npos && index) {
                    gloss_key = "gpu." + subject.substr(close + 2);
                    subject = gpu_label(facts, *index) + ": " + subject.substr(close + 2);
                }
            }
            // The fact in words when the glossary has them (the path is in `kb show`'s rule).
            if (const auto gloss = kb::fact_gloss(gloss_key); !gloss.empty())
                subject = subject.starts_with("GPU") ? subject.substr(0, subject.find(": ") + 2) + std::string(gloss)
                                                     : std::string(gloss);
            const auto value = ev.value.is_null()
                                   ? std::string(ev.fact.starts_with("env.") ? "is not set" : "is absent")
                                   : "is " + (ev.value.is_string() ? ev.value.get<std::string>() : json_text(ev.value));
            out += "    " + wrap_hanging(subject + " " + value, 4, 6, width) + '\n';
        }
        if (!e.fixes.empty()) {
            out += "  fixes:\n";
            for (const auto& fix : e.fixes)
                out += "    " + wrap_hanging(fmt::format("{}{}{}", fix.patch, g.dash, fix.cost), 4, 6, width) + '\n';
        }
        out += "  references:\n";
        for (const auto& ref : e.references) out += fmt::format("    {}\n", ref);
        out += "  status: " +
               (f.status == FindingStatus::open
                    ? s.bold("open")
                    : s.green(f.status_detail.empty() ? std::string(kb::finding_status_name(f.status))
                                                      : f.status_detail)) +
               '\n';
        if (!f.next_command.empty()) {
            const auto lines = split_lines(f.next_command);
            for (std::size_t l = 0; l < lines.size(); ++l)
                out += fmt::format("{}{}\n", l == 0 ? "  next: " : "        ", lines[l]);
            if (const auto undo = undo_of(f.next_command, prefix); !undo.empty())
                out += fmt::format("  undo: {}\n", undo);
        }
    }
    return out;
}

}  // namespace rmcp
