#include "render/doctor_render.hpp"

#include <fmt/format.h>

#include "render/doctor_text.hpp"
#include "render/facts_text.hpp"
#include "util/strings.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <array>
#include <map>

namespace rmcp {

namespace {
using kb::Finding;
using kb::Severity;

std::array<std::size_t, 3> count_by_severity(const kb::DoctorReport& r) {
    std::array<std::size_t, 3> n{};
    for (const auto& f : r.findings) ++n[static_cast<std::size_t>(f.entry->severity)];
    return n;
}

std::string gpu_label(const Finding& f) {
    if (f.gpu_node) return std::to_string(*f.gpu_node);
    if (f.gpu_index) return fmt::format("index{}", *f.gpu_index);
    return "";
}

std::string prom_escape(std::string_view s) {
    std::string out;
    for (const char c : s) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}
}  // namespace

nlohmann::json doctor_to_json(const kb::DoctorReport& r, const std::string& command_prefix) {
    using nlohmann::json;
    const auto n = count_by_severity(r);
    const auto steps = doctor_next_steps(r, command_prefix);
    json next_steps = json::array();
    for (const auto& st : steps)
        next_steps.push_back({{"next", st.command},
                              {"undo", st.undo.empty() ? json(nullptr) : json(st.undo)},
                              {"findings", st.finding_ids}});
    json findings = json::array();
    for (const auto& f : r.findings) {
        const auto& e = *f.entry;
        json evidence = json::array();
        for (const auto& ev : f.evidence)
            evidence.push_back({{"fact", ev.fact}, {"value", ev.value}, {"test", ev.test}});
        json fixes = json::array();
        for (const auto& fix : e.fixes) fixes.push_back({{"patch", fix.patch}, {"cost", fix.cost}});
        findings.push_back({
            {"id", e.id},
            {"title", e.title},
            {"category", e.category},
            {"severity", kb::severity_name(e.severity)},
            {"confidence", kb::confidence_name(e.confidence)},
            {"scope", kb::scope_name(e.scope)},
            {"gpu", f.gpu_index ? json{{"index", *f.gpu_index},
                                       {"rocm_index", f.gpu_rocm_index ? json(*f.gpu_rocm_index) : json(nullptr)},
                                       {"node", f.gpu_node ? json(*f.gpu_node) : json(nullptr)}}
                                : json(nullptr)},
            {"summary", e.summary},
            {"evidence", evidence},
            {"fixes", fixes},
            {"references", e.references},
            {"status", kb::finding_status_name(f.status)},
            {"status_detail", f.status_detail.empty() ? json(nullptr) : json(f.status_detail)},
            {"fixed_by", f.fixed_by.empty() ? json(nullptr) : json(f.fixed_by)},
            {"next", f.next_command.empty() ? json(nullptr) : json(f.next_command)},
            {"undo",
             [&] {
                 for (const auto& st : steps)
                     if (st.command == f.next_command && !st.undo.empty()) return json(st.undo);
                 return json(nullptr);
             }()},
        });
    }
    return json{
        {"schema_version", k_doctor_schema_version},
        {"entries_checked", r.entries_checked},
        {"gpus", r.gpus},
        {"notes", r.notes},
        {"summary",
         {{"critical", n[2]},
          {"warning", n[1]},
          {"info", n[0]},
          {"open", std::count_if(r.findings.begin(), r.findings.end(),
                                 [](const Finding& f) { return f.status == kb::FindingStatus::open; })}}},
        {"findings", findings},
        {"next_steps", next_steps},
    };
}

namespace {

// One metric family: HELP and TYPE once, then its samples (the text format wants a family's
// samples together; https://prometheus.io/docs/instrumenting/exposition_formats/).
class PromFamily {
public:
    PromFamily(std::string& out, std::string_view name, std::string_view type, std::string_view help)
        : m_out(out), m_name(name) {
        m_out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
    }
    // labels: name, value pairs; values are escaped here.
    void sample(std::initializer_list<std::pair<std::string_view, std::string_view>> labels, std::string_view value) {
        m_out += m_name;
        if (labels.size() != 0) {
            m_out += '{';
            bool first = true;
            for (const auto& [k, v] : labels) {
                m_out += fmt::format("{}{}=\"{}\"", first ? "" : ",", k, prom_escape(v));
                first = false;
            }
            m_out += '}';
        }
        m_out += fmt::format(" {}\n", value);
    }
    template <class N>
    void sample(std::initializer_list<std::pair<std::string_view, std::string_view>> labels, N n) {
        sample(labels, std::string_view(fmt::format("{}", n)));
    }

private:
    std::string& m_out;
    std::string m_name;
};

std::string fact_text(const Fact<std::string>& f) { return f ? *f : ""; }
std::string_view bool_text(bool b) { return b ? "true" : "false"; }

// The label every per-GPU metric shares with rmcp_finding: the KFD node, else "index<i>".
std::string gpu_key(const Gpu& g, std::size_t i) {
    return g.node ? std::to_string(*g.node) : fmt::format("index{}", i);
}

// Every classification `rmcp run` writes (docs/run.md, "Incident report"), so each counter
// exists from the first scrape and increase() sees its first incident.
constexpr std::array<std::string_view, 6> k_incident_classifications = {"gpu-failure", "stall",       "recovered",
                                                                        "failure",     "interrupted", "success"};

bool probe_passed_now(const NodeMetrics& node) {
    return node.probe && node.probe->passed && node.probe->outdated_by.empty();
}

}  // namespace

std::string render_doctor_prometheus(const kb::DoctorReport& r, double now_unix_s, const NodeMetrics& node) {
    std::string out;
    {
        PromFamily f(out, "rmcp_finding", "gauge",
                     "A known ROCm problem that applies to this node (rmcp doctor); 1 while present. status: open, "
                     "fixed-by-profile, fixed, pending, info.");
        for (const auto& finding : r.findings) {
            const auto& e = *finding.entry;
            f.sample({{"id", e.id},
                      {"severity", kb::severity_name(e.severity)},
                      {"category", e.category},
                      {"confidence", kb::confidence_name(e.confidence)},
                      {"gpu", gpu_label(finding)},
                      {"status", kb::finding_status_name(finding.status)}},
                     1);
        }
    }
    const auto n = count_by_severity(r);
    std::array<std::size_t, 3> open{};
    for (const auto& f : r.findings)
        if (f.status == kb::FindingStatus::open) ++open[static_cast<std::size_t>(f.entry->severity)];
    // A count of what holds now is a gauge, and only counters end in _total
    // (https://prometheus.io/docs/practices/naming/).
    {
        PromFamily f(out, "rmcp_findings", "gauge", "Findings of rmcp doctor on this node, by severity.");
        for (const auto sev : {Severity::critical, Severity::warning, Severity::info})
            f.sample({{"severity", kb::severity_name(sev)}}, n[static_cast<std::size_t>(sev)]);
    }
    {
        PromFamily f(out, "rmcp_open_findings", "gauge",
                     "Findings still open (not fixed by profile.env, a patch or pending a reboot), by severity.");
        for (const auto sev : {Severity::critical, Severity::warning, Severity::info})
            f.sample({{"severity", kb::severity_name(sev)}}, open[static_cast<std::size_t>(sev)]);
    }
    PromFamily(out, "rmcp_amd_gpus", "gauge", "AMD GPUs rmcp detect found on this node.").sample({}, r.gpus);
    if (node.facts) {
        const Facts& facts = *node.facts;
        {
            PromFamily f(out, "rmcp_gpu_info", "gauge",
                         "One per AMD GPU, always 1: gpu is the KFD node (as in rmcp_finding), rocm_index the "
                         "ROCm device number, effective_target what ROCm runs it as (HSA_OVERRIDE_GFX_VERSION).");
            for (std::size_t i = 0; i < facts.gpus.size(); ++i) {
                const auto& g = facts.gpus[i];
                const auto key = gpu_key(g, i);
                const auto rocm_index = g.rocm_index ? std::to_string(*g.rocm_index) : "";
                const auto target = fact_text(g.gfx_target), effective = fact_text(g.effective_gfx_target);
                const auto name = fact_text(g.marketing_name), family = fact_text(g.family);
                const auto pci = fact_text(g.pci_address);
                const std::string integrated = g.integrated ? std::string(bool_text(*g.integrated)) : "";
                f.sample({{"gpu", key},
                          {"rocm_index", rocm_index},
                          {"target", target},
                          {"effective_target", effective},
                          {"marketing_name", name},
                          {"family", family},
                          {"integrated", integrated},
                          {"pci_address", pci}},
                         1);
            }
        }
        {
            PromFamily f(out, "rmcp_rocm_info", "gauge",
                         "The ROCm installations found, always 1; selected_by says why programs load that one "
                         "(ROCM_PATH, LD_LIBRARY_PATH, default).");
            for (const auto& install : facts.rocm)
                f.sample({{"version", fact_text(install.version)},
                          {"path", install.path},
                          {"selected_by", install.selected_by}},
                         1);
        }
        {
            PromFamily f(out, "rmcp_pytorch_info", "gauge", "The PyTorch installations found, always 1.");
            for (const auto& t : facts.torch)
                f.sample({{"version", fact_text(t.version)},
                          {"hip_version", fact_text(t.hip_version)},
                          {"origin", t.origin},
                          {"path", t.path}},
                         1);
        }
        PromFamily(out, "rmcp_kernel_info", "gauge", "The running kernel and amdgpu driver, always 1.")
            .sample({{"release", fact_text(facts.driver.kernel_release)},
                     {"amdgpu_dkms_version", fact_text(facts.driver.dkms_version)},
                     {"amdgpu_loaded", bool_text(facts.driver.loaded)}},
                    1);
    }
    if (!node.rmcp_version.empty() || !node.kb_version.empty())
        PromFamily(out, "rmcp_build_info", "gauge", "The rmcp and knowledge-base versions that wrote this, always 1.")
            .sample({{"version", node.rmcp_version}, {"kb_version", node.kb_version}}, 1);
    if (!node.probe_result_path.empty()) {
        PromFamily(out, "rmcp_probe_result_present", "gauge",
                   "1 when a saved rmcp probe result was read (path label), 0 when none or unusable.")
            .sample({{"path", node.probe_result_path}}, node.probe ? 1 : 0);
        if (const auto& p = node.probe) {
            PromFamily(out, "rmcp_probe_passed", "gauge",
                       "1 when the saved probe passed every scenario (with --bisect: some configuration did).")
                .sample({}, p->passed ? 1 : 0);
            {
                PromFamily f(out, "rmcp_probe_scenarios", "gauge",
                             "Scenarios of the saved probe result, by outcome under the default configuration.");
                for (const auto& [outcome, count] : p->by_outcome) f.sample({{"outcome", outcome}}, count);
            }
            PromFamily(out, "rmcp_probe_timestamp_seconds", "gauge",
                       "When the probe result was saved (the file's modification time, Unix time).")
                .sample({}, fmt::format("{:.3f}", p->saved_unix_s));
            PromFamily(
                out, "rmcp_probe_info", "gauge",
                "The saved probe result: chosen profile, GPU target, torch, kernel and ROCm it ran on; always 1.")
                .sample({{"profile", p->profile},
                         {"gfx_target", p->gfx_target},
                         {"torch_version", p->torch_version},
                         {"kernel", p->kernel},
                         {"rocm_version", p->rocm_version}},
                        1);
            PromFamily f(out, "rmcp_probe_outdated", "gauge",
                         "1 when the kernel, ROCm or PyTorch installed now differs from the one the probe ran on.");
            for (const std::string_view reason : {"kernel", "rocm", "torch"})
                f.sample({{"reason", reason}}, std::count(p->outdated_by.begin(), p->outdated_by.end(), reason));
        }
    }
    if (!node.incident_dir.empty()) {
        // Counted from the reports in the directory, so the value only grows while reports are
        // kept; deleting reports is a counter reset, which rate() and increase() handle.
        std::map<std::string, std::size_t> by_class(node.incidents.by_classification.begin(),
                                                    node.incidents.by_classification.end());
        for (const auto c : k_incident_classifications) by_class.try_emplace(std::string(c), 0);
        {
            PromFamily f(out, "rmcp_run_incidents_total", "counter",
                         "Incident reports of rmcp run in the incident directory, by classification.");
            for (const auto& [c, count] : by_class) f.sample({{"classification", c}}, count);
        }
        {
            PromFamily f(out, "rmcp_run_incident_categories_total", "counter",
                         "Incident reports of rmcp run that matched a knowledge-base entry of this category.");
            for (const auto& [c, count] : node.incidents.by_category) f.sample({{"category", c}}, count);
        }
        PromFamily(out, "rmcp_run_incident_reports_unreadable", "gauge",
                   "Files in the incident directory that are not readable incident reports.")
            .sample({}, node.incidents.unreadable);
    }
    // So an alert can tell a stale textfile from a healthy node (the textfile collector's
    // own mtime metric says when the file changed, not that doctor ran).
    PromFamily(out, "rmcp_last_run_timestamp_seconds", "gauge", "When rmcp doctor wrote this (Unix time).")
        .sample({}, fmt::format("{:.3f}", now_unix_s));
    if (node.check_duration_s > 0)
        PromFamily(out, "rmcp_check_duration_seconds", "gauge",
                   "How long rmcp doctor took to check this node (detect, scan, knowledge base, inputs).")
            .sample({}, fmt::format("{:.6f}", node.check_duration_s));
    return out;
}

std::string render_doctor_nfd(const kb::DoctorReport& r, const NodeMetrics& node) {
    std::string out = node.facts ? render_facts_nfd(*node.facts) : std::string();
    out += fmt::format("rmcp.healthy={}\n", bool_text(!kb::has_findings_at_or_above(r, Severity::critical)));
    out += fmt::format("rmcp.probe_passed={}\n", bool_text(probe_passed_now(node)));
    return out;
}

}  // namespace rmcp
