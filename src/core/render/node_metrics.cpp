#include "render/node_metrics.hpp"

#include "render/probe_view.hpp"

#include <fmt/format.h>

#include <sys/stat.h>

#include <cerrno>
#include <set>

namespace rmcp {

namespace {

// A probe result holds every scenario's times and messages; an incident report the last 60
// lines of output and up to 400 kernel-log lines: both stay well under these.
constexpr std::size_t k_probe_result_limit = std::size_t{16} << 20;
constexpr std::size_t k_incident_limit = std::size_t{16} << 20;

std::string string_at(const nlohmann::json& j, std::initializer_list<const char*> path) {
    const nlohmann::json* at = &j;
    for (const char* key : path) {
        if (!at->is_object() || !at->contains(key)) return "";
        at = &(*at)[key];
    }
    return at->is_string() ? at->get<std::string>() : "";
}

std::string current_rocm(const Facts& facts) {
    return !facts.rocm.empty() && facts.rocm.front().version ? *facts.rocm.front().version : "";
}

bool torch_installed(const Facts& facts, const std::string& version) {
    for (const auto& t : facts.torch)
        if (t.version && *t.version == version) return true;
    return false;
}

double modification_time(const Root& root, const std::string& path) {
    auto fd = root.open_read(path);
    if (!fd) return 0;
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0) return 0;
    return static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) / 1e9;
}

void count_incidents(const Root& root, const std::string& dir, NodeMetrics& out) {
    auto names = root.list_dir(dir);
    if (!names) {
        if (names.error().os_error != ENOENT) out.warnings.push_back(names.error().message());
        return;
    }
    for (const auto& name : *names) {
        // `rmcp run` names its reports <UTC time>-<pid>.json; its temporary files (atomic_file)
        // and anything else in the directory are not reports.
        if (name.size() < 6 || name.compare(name.size() - 5, 5, ".json") != 0 || name.front() == '.') continue;
        const std::string path = dir + "/" + name;
        auto text = root.read_file(path, k_incident_limit);
        if (!text) {
            if (text.error().os_error == ENOENT) continue;  // removed since the listing
            ++out.incidents.unreadable;
            out.warnings.push_back(text.error().message());
            continue;
        }
        const auto doc = nlohmann::json::parse(*text, nullptr, false);
        if (doc.is_discarded() || !doc.is_object() || string_at(doc, {"kind"}) != "rmcp-run-incident") {
            ++out.incidents.unreadable;
            out.warnings.push_back(fmt::format("reading incident report {}: not an rmcp run incident report "
                                               "(docs/run.md, \"Incident report\")",
                                               root.host_path(path)));
            continue;
        }
        const auto classification = string_at(doc, {"classification"});
        ++out.incidents.by_classification[classification.empty() ? "unknown" : classification];
        std::set<std::string> categories;
        if (doc.contains("attempts") && doc["attempts"].is_array())
            for (const auto& a : doc["attempts"])
                if (a.is_object() && a.contains("matches") && a["matches"].is_array())
                    for (const auto& m : a["matches"]) {
                        const auto c = string_at(m, {"category"});
                        if (!c.empty()) categories.insert(c);
                    }
        for (const auto& c : categories) ++out.incidents.by_category[c];
    }
}

}  // namespace

std::optional<ProbeSummary> summarize_probe_result(const nlohmann::json& doc, const Facts& facts, std::string& error) {
    // The one check of a saved result's shape, the one `probe report` uses.
    if (auto grid = probe::grid_from_json(doc); !grid) {
        error = grid.error().cause.empty() ? grid.error().message() : grid.error().cause;
        return std::nullopt;
    }
    ProbeSummary s;
    s.passed = doc.contains("passed") && doc["passed"].is_boolean() && doc["passed"].get<bool>();
    // The default configuration is the first one the probe ran (docs/probe.md).
    const auto& configs = doc["configurations"];
    if (configs.is_array() && !configs.empty() && configs[0].contains("results") && configs[0]["results"].is_array())
        for (const auto& r : configs[0]["results"]) {
            const auto outcome = string_at(r, {"outcome"});
            ++s.by_outcome[outcome.empty() ? "unknown" : outcome];
        }
    if (doc.contains("profile") && doc["profile"].is_object()) {
        const auto& chosen = doc["profile"]["configuration"];
        if (chosen.is_string()) s.profile = chosen.get<std::string>();
        else if (chosen.is_array()) {
            for (const auto& c : chosen)
                if (c.is_string()) s.profile += (s.profile.empty() ? "" : "+") + c.get<std::string>();
            if (s.profile.empty()) s.profile = "default";
        }
    }
    s.gfx_target = string_at(doc, {"gfx_target"});
    s.torch_version = string_at(doc, {"torch_version"});
    s.kernel = string_at(doc, {"machine", "kernel"});
    if (doc.contains("machine") && doc["machine"].is_object() && doc["machine"].contains("rocm") &&
        doc["machine"]["rocm"].is_array() && !doc["machine"]["rocm"].empty() && doc["machine"]["rocm"][0].is_string()) {
        // probe::machine_summary writes "<version> at <path>".
        const auto first = doc["machine"]["rocm"][0].get<std::string>();
        s.rocm_version = first.substr(0, first.find(" at "));
    }
    // Outdated only when both sides are known and differ: an unknown is not a change.
    if (!s.kernel.empty() && facts.driver.kernel_release && *facts.driver.kernel_release != s.kernel)
        s.outdated_by.emplace_back("kernel");
    if (const auto now = current_rocm(facts); !s.rocm_version.empty() && !now.empty() && now != s.rocm_version)
        s.outdated_by.emplace_back("rocm");
    if (!s.torch_version.empty() && !facts.torch.empty() && !torch_installed(facts, s.torch_version))
        s.outdated_by.emplace_back("torch");
    return s;
}

NodeMetrics collect_node_metrics(const Root& root, const Facts& facts, const NodeSources& sources) {
    NodeMetrics out;
    out.facts = facts;
    out.probe_result_path = sources.probe_result;
    out.incident_dir = sources.incident_dir;
    if (!sources.probe_result.empty()) {
        if (auto text = root.read_file(sources.probe_result, k_probe_result_limit)) {
            const auto doc = nlohmann::json::parse(*text, nullptr, false);
            std::string error = "not JSON";
            std::optional<ProbeSummary> s;
            if (!doc.is_discarded()) s = summarize_probe_result(doc, facts, error);
            if (s) {
                s->saved_unix_s = modification_time(root, sources.probe_result);
                out.probe = std::move(*s);
            } else {
                out.warnings.push_back(fmt::format("reading probe result {}: {} (docs/probe.md)",
                                                   root.host_path(sources.probe_result), error));
            }
        } else if (text.error().os_error != ENOENT) {
            out.warnings.push_back(text.error().message());
        }
    }
    if (!sources.incident_dir.empty()) count_incidents(root, sources.incident_dir, out);
    return out;
}

}  // namespace rmcp
