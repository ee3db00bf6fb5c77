// Installations and coverage: which targets each library of each ROCm and PyTorch
// installation carries, and whether each GPU's effective target is among them.
// libraries_facts() is the `libraries` object doctor merges into facts (docs/scan.md).
#pragma once

#include "facts/facts.hpp"
#include "root/root.hpp"
#include "scan/scan.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp::scan {

struct LibraryScan {
    std::string name;                  // "torch_hip", "rocblas", "rocblas_tensile", "miopen_kdb", ...
    std::vector<std::string> files;    // paths as seen through the Root
    std::vector<std::string> targets;  // sorted, de-duplicated target ids
};

struct InstallationScan {
    std::string kind;  // "rocm" or "torch"
    std::string path;  // as in facts (rocm[].path, torch[].path)
    std::vector<LibraryScan> libraries;
};

struct Coverage {
    std::optional<unsigned> node;
    std::string gpu_target;        // the chip (KFD)
    std::string effective_target;  // what the runtime asks for, after overrides
    std::string installation;
    std::string library;
    bool covered = false;
    std::string covered_by;                     // the target id that covers it (maybe a generic target)
    std::optional<std::string> nearest;         // covered target of the chip's ISA family
    std::optional<std::string> override_value;  // HSA_OVERRIDE_GFX_VERSION value selecting `nearest`
    bool remove_override = false;               // covered natively once the current override is removed
    // The chip itself, whatever the override says: is there code for its own processor (or
    // its generic target)? And if not, the override value of the closest covered target of
    // its ISA family. Knowledge-base rules use these to decide whether an override is needed
    // by this library (an override the installed library needs must never be removed).
    bool chip_covered = false;
    std::optional<std::string> chip_override;
    std::string reason;  // one sentence for people
};

// The verdict for one target against one library's targets (pure; unit-tested).
// `chip` is the physical target: an override is only proposed within its ISA family.
Coverage assess(std::string_view chip, std::string_view effective, const std::vector<std::string>& library_targets);

// HSA_OVERRIDE_GFX_VERSION value that selects `target`: gfx1030 → "10.3.0", gfx90a → "9.0.10".
std::optional<std::string> override_value_for(std::string_view target);

struct ScanReport {
    std::vector<FileScan> files;
    std::vector<InstallationScan> installations;
    std::vector<Coverage> coverage;
    std::vector<std::string> problems;  // paths that could not be read at all
};

// Scans the ROCm and PyTorch installations in `facts` (through `root`) and assesses every
// visible GPU against every library that carries device code.
ScanReport scan_installations(const Root& root, const Facts& facts, const ScanLimits& limits = {});

// Scans files and directories named by the user: paths inside `root` (the CLI passes the
// live root "/": paths on this machine, absolute).
ScanReport scan_paths(const Root& root, const std::vector<std::string>& paths, const ScanLimits& limits = {});

inline constexpr int k_scan_schema_version = 1;

// `rmcp scan --format json`.
nlohmann::json scan_report_json(const ScanReport& report);
// The `libraries` facts object (documented in docs/scan.md).
nlohmann::json libraries_json(const ScanReport& report);
// What doctor calls: scan_installations + libraries_json with headers_only_limits().
nlohmann::json libraries_facts(const Root& root, const Facts& facts);
// Limits for doctor: headers, section tables and .hip_fatbin, never a data-section sweep.
ScanLimits headers_only_limits();

}  // namespace rmcp::scan
