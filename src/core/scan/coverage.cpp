#include "scan/coverage.hpp"

#include "detect/gfx.hpp"
#include "util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <set>

namespace rmcp::scan {

namespace {

using nlohmann::json;

std::string processor_of(std::string_view target) { return std::string(target.substr(0, target.find(':'))); }

// Debian installs ROCm into /usr/lib/<multiarch> among every other library: only these
// names are ROCm's (Debian package names: libamdhip64-5, librocrand1, libhsa-runtime64-1, ...).
constexpr std::string_view k_rocm_library_prefixes[] = {
    "libamdhip64", "libhsa-runtime64", "librocblas",   "libMIOpen",    "libhipblas",    "libhipblaslt",
    "librccl",     "librocfft",        "libhipfft",    "librocsparse", "libhipsparse",  "librocrand",
    "libhiprand",  "librocsolver",     "libhipsolver", "libmigraphx",  "librocalution", "libhiprtc",
};

bool is_shared_library(std::string_view name) {
    return name.starts_with("lib") && (name.ends_with(".so") || name.find(".so.") != std::string_view::npos);
}

// "libMIOpen.so.1.0" → "miopen", "libtorch_hip.so" → "torch_hip".
std::string library_name(std::string_view file) {
    if (file.starts_with("lib")) file.remove_prefix(3);
    return to_lower(file.substr(0, file.find(".so")));
}

using LibraryScanMap = std::map<std::string, LibraryScan>;

std::string tensile_library_name(std::string_view path) {
    if (path.find("/hipblaslt/") != std::string_view::npos) return "hipblaslt_tensile";
    if (path.find("/rocblas/") != std::string_view::npos) return "rocblas_tensile";
    return "tensile";
}

class InstallScanner {
public:
    InstallScanner(const Root& root, const ScanLimits& limits, ScanReport& report)
        : m_root(root), m_limits(limits), m_report(report) {}

    // Scans `path` (a Root path) once; returns the index in report.files. The file is
    // opened by the walk that resolves it, so the path shown is the file that was read.
    std::optional<std::size_t> scan(const std::string& path) {
        auto w = m_root.walk(path, O_RDONLY | O_NONBLOCK | O_NOCTTY, LinkPolicy::follow);
        if (w.error != 0) {
            m_report.problems.push_back(fmt::format("{}: {}", path, std::strerror(w.error)));
            return std::nullopt;
        }
        const std::string key = w.resolved;
        if (auto it = m_seen.find(key); it != m_seen.end()) return it->second;
        FileScan f = scan_fd(w.fd.get(), key, m_limits);
        if (f.unreadable) {
            m_report.problems.push_back(fmt::format("{}: {}", f.path, f.warnings.empty() ? "" : f.warnings[0].message));
            m_seen[key] = std::nullopt;
            return std::nullopt;
        }
        m_report.files.push_back(std::move(f));
        m_seen[key] = m_report.files.size() - 1;
        return m_report.files.size() - 1;
    }

    void add(LibraryScanMap& libs, const std::string& name, const std::string& path) {
        const auto index = scan(path);
        if (!index) return;
        auto& lib = libs[name];
        lib.name = name;
        const auto& f = m_report.files[*index];
        if (std::find(lib.files.begin(), lib.files.end(), f.path) == lib.files.end()) lib.files.push_back(f.path);
        for (const auto& t : f.targets())
            if (std::find(lib.targets.begin(), lib.targets.end(), t) == lib.targets.end()) lib.targets.push_back(t);
    }

    // Shared libraries in `dir` (not recursive); `filter` keeps only ROCm's names.
    void add_shared_libraries(LibraryScanMap& libs, const std::string& dir, bool rocm_names_only) {
        const auto names = m_root.list_dir(dir);
        if (!names) return;
        for (const auto& name : *names) {
            if (!is_shared_library(name)) continue;
            if (rocm_names_only && std::none_of(std::begin(k_rocm_library_prefixes), std::end(k_rocm_library_prefixes),
                                                [&](std::string_view p) { return name.starts_with(p); }))
                continue;
            const std::string path = dir + "/" + name;
            // Dangling links are normal in packaged trees (Debian's torch/lib has some).
            if (m_root.is_dir(path) || !m_root.exists(path)) continue;
            add(libs, library_name(name), path);
        }
    }

    // rocBLAS/hipBLASLt Tensile directories and MIOpen kernel databases, recursively.
    void add_data_dir(LibraryScanMap& libs, const std::string& dir, int depth = 0) {
        if (depth > 4) return;
        const auto names = m_root.list_dir(dir);
        if (!names) return;
        for (const auto& name : *names) {
            const std::string path = dir + "/" + name;
            if (m_root.is_dir(path)) {
                add_data_dir(libs, path, depth + 1);
                continue;
            }
            const auto kind = name_only_kind(name);
            if (kind == FileKind::miopen_kdb) add(libs, "miopen_kdb", path);
            else if (kind == FileKind::tensile_data || name.ends_with(".co") || name.ends_with(".hsaco"))
                add(libs, tensile_library_name(path), path);
        }
    }

private:
    const Root& m_root;
    const ScanLimits& m_limits;
    ScanReport& m_report;
    std::map<std::string, std::optional<std::size_t>> m_seen;
};

void finish(InstallationScan& inst, LibraryScanMap& libs) {
    for (auto& [name, lib] : libs) {
        std::sort(lib.targets.begin(), lib.targets.end(),
                  [](const auto& x, const auto& y) { return target_order_less(x, y); });
        inst.libraries.push_back(std::move(lib));
    }
}

}  // namespace

std::optional<std::string> override_value_for(std::string_view target) {
    const auto v = encode_gfx_target(processor_of(target));
    if (!v) return std::nullopt;
    return fmt::format("{}.{}.{}", *v / 10000, (*v / 100) % 100, *v % 100);
}

namespace {

// The target id in `library_targets` that runs code for processor `want` (itself, or its
// LLVM generic target); empty when none.
std::string covering_target(std::string_view want, const std::vector<std::string>& library_targets) {
    std::string found;
    for (const auto& t : library_targets)
        if (processor_of(t) == want && (found.empty() || t.find(':') == std::string::npos)) found = t;
    if (found.empty())
        if (const auto generic = gfx_generic_target(want))
            for (const auto& t : library_targets)
                if (processor_of(t) == *generic) found = t;
    return found;
}

// The covered target of the chip's own ISA family closest to it (docs/domain.md: an override
// across families runs code for a different instruction set).
std::optional<std::string> nearest_in_family(const std::string& chip_proc,
                                             const std::vector<std::string>& library_targets) {
    const auto chip_value = encode_gfx_target(chip_proc);
    std::optional<std::string> best;
    std::uint32_t best_distance = UINT32_MAX;
    for (const auto& t : library_targets) {
        const auto p = processor_of(t);
        const auto v = encode_gfx_target(p);
        if (!v || !chip_value || !same_isa_family(chip_proc, p)) continue;
        const auto distance = *v > *chip_value ? *v - *chip_value : *chip_value - *v;
        if (distance < best_distance || (distance == best_distance && best && p < *best)) {
            best = p;
            best_distance = distance;
        }
    }
    return best;
}

}  // namespace

Coverage assess(std::string_view chip, std::string_view effective, const std::vector<std::string>& library_targets) {
    Coverage c;
    c.gpu_target = std::string(chip);
    c.effective_target = std::string(effective);
    const auto chip_proc = processor_of(chip);
    c.chip_covered = !covering_target(chip_proc, library_targets).empty();
    if (!c.chip_covered)
        if (const auto near = nearest_in_family(chip_proc, library_targets))
            c.chip_override = override_value_for(*near);
    const auto want = processor_of(effective);
    c.covered_by = covering_target(want, library_targets);
    if (!c.covered_by.empty()) {
        c.covered = true;
        c.reason = c.covered_by == want || processor_of(c.covered_by) == want
                       ? fmt::format("has code for {}", c.covered_by)
                       : fmt::format("has code for {}, which runs on {}", c.covered_by, want);
        return c;
    }

    // Not covered. Propose only targets of the chip's own ISA family (docs/domain.md): an
    // override across families runs code for a different instruction set.
    const auto best = nearest_in_family(chip_proc, library_targets);
    if (best && *best == chip_proc) {
        c.nearest = best;
        c.remove_override = true;
        c.reason =
            fmt::format("no code for {}, but native code for the chip ({}): remove the override", want, chip_proc);
        return c;
    }
    if (best) {
        c.nearest = best;
        c.override_value = override_value_for(*best);
        c.reason = fmt::format("no code for {}; {} is the same ISA family ({})", want, *best,
                               gfx_generic_target(chip_proc).value_or("identical ISA"));
        return c;
    }
    const auto family = gfx_family(chip_proc);
    c.reason = fmt::format("no code for {} nor for any target of its ISA family ({}): no override is safe; "
                           "build or install native code",
                           want, family.value_or("unknown family"));
    return c;
}

ScanReport scan_installations(const Root& root, const Facts& facts, const ScanLimits& limits) {
    ScanReport report;
    InstallScanner scanner(root, limits, report);
    for (const auto& r : facts.rocm) {
        InstallationScan inst{"rocm", r.path, {}};
        LibraryScanMap libs;
        if (r.kind == "debian") {
            for (const auto* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64"})
                if (root.is_dir(dir)) {
                    scanner.add_shared_libraries(libs, dir, true);
                    scanner.add_data_dir(libs, std::string(dir) + "/rocblas");
                    scanner.add_data_dir(libs, std::string(dir) + "/hipblaslt");
                }
            scanner.add_data_dir(libs, "/usr/share/miopen/db");
        } else {
            for (const auto& lib : {r.path + "/lib", r.path + "/lib64"}) {
                scanner.add_shared_libraries(libs, lib, false);
                scanner.add_data_dir(libs, lib + "/rocblas");
                scanner.add_data_dir(libs, lib + "/hipblaslt");
            }
            scanner.add_data_dir(libs, r.path + "/share/miopen/db");
        }
        finish(inst, libs);
        report.installations.push_back(std::move(inst));
    }
    for (const auto& t : facts.torch) {
        InstallationScan inst{"torch", t.path, {}};
        LibraryScanMap libs;
        scanner.add_shared_libraries(libs, t.path + "/lib", false);
        scanner.add_data_dir(libs, t.path + "/lib/rocblas");
        scanner.add_data_dir(libs, t.path + "/lib/hipblaslt");
        scanner.add_data_dir(libs, t.path + "/share/miopen/db");
        finish(inst, libs);
        report.installations.push_back(std::move(inst));
    }
    for (const auto& g : facts.gpus) {
        if (!g.visible || !g.gfx_target) continue;
        const std::string effective = g.effective_gfx_target.value_or(*g.gfx_target);
        for (const auto& inst : report.installations)
            for (const auto& lib : inst.libraries) {
                if (lib.targets.empty()) continue;  // no device code: nothing to run, nothing to miss
                Coverage c = assess(*g.gfx_target, effective, lib.targets);
                c.node = g.node;
                c.installation = inst.path;
                c.library = lib.name;
                report.coverage.push_back(std::move(c));
            }
    }
    return report;
}

ScanReport scan_paths(const Root& root, const std::vector<std::string>& paths, const ScanLimits& limits) {
    ScanReport report;
    std::set<std::string> done;
    for (const auto& p : paths) {
        std::vector<std::string> problems;
        const auto files = collect_files(root, p, problems);
        report.problems.insert(report.problems.end(), problems.begin(), problems.end());
        for (const auto& f : files) {
            if (!done.insert(f).second) continue;
            // `f` is canonical: a link appearing in it now is refused, not followed.
            auto fd = root.open_fd(f, O_RDONLY | O_NONBLOCK | O_NOCTTY, LinkPolicy::refuse);
            FileScan s = fd ? scan_fd(fd->get(), f, limits) : FileScan{};
            if (!fd) {
                s.path = f;
                s.unreadable = true;
                s.warnings.push_back({0, fd.error().cause});
            }
            if (s.unreadable) {
                report.problems.push_back(fmt::format("{}: {}", f, s.warnings.empty() ? "" : s.warnings[0].message));
                continue;
            }
            report.files.push_back(std::move(s));
        }
    }
    return report;
}

json scan_report_json(const ScanReport& report) {
    json files = json::array();
    for (const auto& f : report.files) {
        json code = json::array();
        for (const auto& c : f.code) {
            json e = {{"container", c.container}, {"id", c.id},     {"target", c.target},
                      {"offset", c.offset},       {"size", c.size}, {"compression", compression_name(c.compression)}};
            e["bundle_offset"] = c.bundle_offset ? json(*c.bundle_offset) : json(nullptr);
            e["code_object_version"] = c.code_object_version ? json(c.code_object_version) : json(nullptr);
            code.push_back(std::move(e));
        }
        json warnings = json::array();
        for (const auto& w : f.warnings) warnings.push_back({{"offset", w.offset}, {"message", w.message}});
        files.push_back({{"path", f.path},
                         {"kind", file_kind_name(f.kind)},
                         {"size", f.size},
                         {"bundles", f.bundles},
                         {"targets", f.targets()},
                         {"entries", std::move(code)},
                         {"warnings", std::move(warnings)}});
    }
    json out = {{"schema_version", k_scan_schema_version}, {"files", std::move(files)}};
    out["libraries"] = libraries_json(report);
    out["problems"] = report.problems;
    return out;
}

namespace {
// A set of targets as listed everywhere: in target order (scan.hpp, target_order_less).
std::vector<std::string> in_target_order(const std::set<std::string>& targets) {
    std::vector<std::string> out(targets.begin(), targets.end());
    std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return target_order_less(x, y); });
    return out;
}
}  // namespace

json libraries_json(const ScanReport& report) {
    json out = {{"scanned", true}};
    json rocm = json::array();
    json torch = json::array();
    std::map<std::string, std::pair<std::set<std::string>, std::vector<std::string>>> by_name;
    for (const auto& inst : report.installations) {
        json libs = json::object();
        std::set<std::string> all;
        for (const auto& lib : inst.libraries) {
            libs[lib.name] = {{"targets", lib.targets}, {"files", lib.files}};
            all.insert(lib.targets.begin(), lib.targets.end());
            if (inst.kind == "rocm") {
                auto& [targets, paths] = by_name[lib.name];
                targets.insert(lib.targets.begin(), lib.targets.end());
                paths.insert(paths.end(), lib.files.begin(), lib.files.end());
            }
        }
        json entry = {{"path", inst.path}, {"targets", in_target_order(all)}, {"libraries", std::move(libs)}};
        (inst.kind == "torch" ? torch : rocm).push_back(std::move(entry));
    }
    out["rocm"] = std::move(rocm);
    out["torch"] = std::move(torch);
    // ROCm libraries by name, over every ROCm installation: libraries.rocblas.targets.
    for (const auto& [name, value] : by_name) {
        if (out.contains(name)) continue;  // never shadow the fixed keys
        out[name] = {{"targets", in_target_order(value.first)}, {"files", value.second}};
    }
    json coverage = json::array();
    for (const auto& c : report.coverage) {
        json o = nullptr;
        if (c.override_value) o = {{"variable", "HSA_OVERRIDE_GFX_VERSION"}, {"value", *c.override_value}};
        coverage.push_back({{"node", c.node ? json(*c.node) : json(nullptr)},
                            {"gpu_target", c.gpu_target},
                            {"effective_target", c.effective_target},
                            {"installation", c.installation},
                            {"library", c.library},
                            {"covered", c.covered},
                            {"covered_by", c.covered_by.empty() ? json(nullptr) : json(c.covered_by)},
                            {"nearest", c.nearest ? json(*c.nearest) : json(nullptr)},
                            {"override", std::move(o)},
                            {"remove_override", c.remove_override},
                            {"chip_covered", c.chip_covered},
                            {"chip_override", c.chip_override ? json(*c.chip_override) : json(nullptr)},
                            {"reason", c.reason}});
    }
    out["coverage"] = std::move(coverage);
    return out;
}

ScanLimits headers_only_limits() {
    ScanLimits limits;
    limits.sweep_data_sections = false;
    return limits;
}

json libraries_facts(const Root& root, const Facts& facts) {
    return libraries_json(scan_installations(root, facts, headers_only_limits()));
}

}  // namespace rmcp::scan
