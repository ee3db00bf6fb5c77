// Parsers for the text formats detect reads. Each is tolerant of real-world noise and
// reports what it skipped instead of failing the whole detection; each has a fuzz target.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp {

// KFD topology `properties`: "key value" per line, values unsigned decimal.
struct KfdProperties {
    std::map<std::string, std::uint64_t, std::less<>> values;
    std::vector<unsigned> bad_lines;  // 1-based line numbers that did not parse
    // Keys whose (last) value is not an unsigned decimal that fits 64 bits: garbage, a
    // negative or a huge number. Key → 1-based line. Such a key is not in `values`.
    std::map<std::string, unsigned, std::less<>> bad_values;
    [[nodiscard]] std::optional<std::uint64_t> get(std::string_view key) const;
    [[nodiscard]] std::optional<unsigned> bad_line_of(std::string_view key) const;
};
KfdProperties parse_kfd_properties(std::string_view text);

// libdrm amdgpu.ids: "DEVICE,\tREVISION,\tName" keyed by (device, revision).
struct AmdgpuIds {
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> names;
    std::string version;  // the file's version line, e.g. "1.0.0"
    std::vector<unsigned> bad_lines;
    [[nodiscard]] std::optional<std::string> lookup(std::uint32_t device, std::uint32_t revision) const;
};
AmdgpuIds parse_amdgpu_ids(std::string_view text);

// os-release(5): KEY=value with optional shell quoting.
std::map<std::string, std::string> parse_os_release(std::string_view text);

// /proc/<pid>/status: the fields detect uses.
struct ProcStatus {
    std::optional<std::uint64_t> uid;  // real uid
    std::optional<std::uint64_t> gid;
    std::vector<std::uint64_t> groups;
};
ProcStatus parse_proc_status(std::string_view text);

// /etc/group and /etc/passwd: name → id, and for groups the member lists.
struct GroupEntry {
    std::string name;
    std::uint64_t gid = 0;
    std::vector<std::string> members;
};
std::vector<GroupEntry> parse_group_file(std::string_view text);
// uid → user name from /etc/passwd.
std::optional<std::string> passwd_name_for(std::string_view passwd, std::uint64_t uid);
std::optional<std::string> passwd_home_for(std::string_view passwd, std::uint64_t uid);

// /proc/<pid>/environ: NUL-separated KEY=value.
std::map<std::string, std::string> parse_environ(std::string_view text);

// torch/version.py: `__version__ = '1.13.1+rocm5.2'`, `hip = '5.2.21151-afdc89f8'`, `cuda = None`.
std::map<std::string, std::optional<std::string>> parse_python_assignments(std::string_view text);

// C header `#define NAME value` lines (hip_version.h, rocm_version.h).
std::map<std::string, std::string> parse_c_defines(std::string_view text);

// dpkg status file: Version of an installed package.
std::optional<std::string> dpkg_installed_version(std::string_view status, std::string_view package);

}  // namespace rmcp
