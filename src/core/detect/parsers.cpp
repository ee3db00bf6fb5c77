#include "detect/parsers.hpp"

#include "util/strings.hpp"

namespace rmcp {

namespace {
std::string unquote(std::string_view v) {
    v = trim(v);
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
        const char q = v.front();
        v = v.substr(1, v.size() - 2);
        std::string out;
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (q == '"' && v[i] == '\\' && i + 1 < v.size()) ++i;
            out += v[i];
        }
        return out;
    }
    return std::string(v);
}
}  // namespace

std::optional<std::uint64_t> KfdProperties::get(std::string_view key) const {
    const auto it = values.find(key);
    if (it == values.end()) return std::nullopt;
    return it->second;
}

std::optional<unsigned> KfdProperties::bad_line_of(std::string_view key) const {
    const auto it = bad_values.find(key);
    if (it == bad_values.end()) return std::nullopt;
    return it->second;
}

KfdProperties parse_kfd_properties(std::string_view text) {
    KfdProperties props;
    unsigned line_no = 0;
    for (auto line : split_lines(text)) {
        ++line_no;
        line = trim(line);
        if (line.empty()) continue;
        const auto sp = line.find_first_of(" \t");
        // "key value"; a key with no value, or a value that is not a u64, marks the key bad.
        const std::string key(line.substr(0, sp));
        const auto value = sp == std::string_view::npos ? std::nullopt : parse_u64(line.substr(sp + 1));
        if (!value) {
            props.bad_lines.push_back(line_no);
            props.values.erase(key);
            props.bad_values.insert_or_assign(key, line_no);
            continue;
        }
        props.bad_values.erase(key);
        props.values.insert_or_assign(key, *value);
    }
    return props;
}

std::optional<std::string> AmdgpuIds::lookup(std::uint32_t device, std::uint32_t revision) const {
    const auto it = names.find({device, revision});
    if (it == names.end()) return std::nullopt;
    return it->second;
}

AmdgpuIds parse_amdgpu_ids(std::string_view text) {
    AmdgpuIds ids;
    unsigned line_no = 0;
    for (auto line : split_lines(text)) {
        ++line_no;
        line = trim(line);
        if (line.empty() || line.front() == '#') continue;
        const auto fields = split(line, ',');
        if (fields.size() == 1 && ids.version.empty() && ids.names.empty()) {
            ids.version = std::string(line);
            continue;
        }
        if (fields.size() < 3) {
            ids.bad_lines.push_back(line_no);
            continue;
        }
        const auto device = parse_hex(fields[0]);
        const auto revision = parse_hex(fields[1]);
        // The name itself may contain commas ("AMD Radeon Pro W5700, ...").
        const auto name_start = static_cast<std::size_t>(fields[2].data() - line.data());
        const auto name = trim(line.substr(name_start));
        if (!device || !revision || name.empty() || *device > 0xffff || *revision > 0xff) {
            ids.bad_lines.push_back(line_no);
            continue;
        }
        ids.names.insert_or_assign({static_cast<std::uint32_t>(*device), static_cast<std::uint32_t>(*revision)},
                                   std::string(name));
    }
    return ids;
}

std::map<std::string, std::string> parse_os_release(std::string_view text) {
    std::map<std::string, std::string> out;
    for (auto line : split_lines(text)) {
        line = trim(line);
        if (line.empty() || line.front() == '#') continue;
        const auto eq = line.find('=');
        if (eq == std::string_view::npos || eq == 0) continue;
        out.insert_or_assign(std::string(trim(line.substr(0, eq))), unquote(line.substr(eq + 1)));
    }
    return out;
}

ProcStatus parse_proc_status(std::string_view text) {
    ProcStatus st;
    const auto first_number = [](std::string_view rest) -> std::optional<std::uint64_t> {
        rest = trim(rest);
        return parse_u64(rest.substr(0, rest.find_first_of(" \t")));
    };
    for (auto line : split_lines(text)) {
        if (line.starts_with("Uid:")) st.uid = first_number(line.substr(4));
        else if (line.starts_with("Gid:")) st.gid = first_number(line.substr(4));
        else if (line.starts_with("Groups:")) {
            auto rest = trim(line.substr(7));
            while (!rest.empty()) {
                const auto sp = rest.find_first_of(" \t");
                if (const auto g = parse_u64(rest.substr(0, sp))) st.groups.push_back(*g);
                if (sp == std::string_view::npos) break;
                rest = trim(rest.substr(sp));
            }
        }
    }
    return st;
}

std::vector<GroupEntry> parse_group_file(std::string_view text) {
    std::vector<GroupEntry> out;
    for (auto line : split_lines(text)) {
        line = trim(line);
        if (line.empty() || line.front() == '#') continue;
        const auto f = split(line, ':');
        if (f.size() < 3) continue;
        const auto gid = parse_u64(f[2]);
        if (!gid || f[0].empty()) continue;
        GroupEntry g{std::string(f[0]), *gid, {}};
        if (f.size() >= 4 && !trim(f[3]).empty())
            for (auto m : split(trim(f[3]), ','))
                if (!trim(m).empty()) g.members.emplace_back(trim(m));
        out.push_back(std::move(g));
    }
    return out;
}

namespace {
std::optional<std::vector<std::string_view>> passwd_fields_for(std::string_view passwd, std::uint64_t uid) {
    for (auto line : split_lines(passwd)) {
        const auto f = split(line, ':');
        if (f.size() >= 6 && parse_u64(f[2]) == uid) return f;
    }
    return std::nullopt;
}
}  // namespace

std::optional<std::string> passwd_name_for(std::string_view passwd, std::uint64_t uid) {
    if (const auto f = passwd_fields_for(passwd, uid)) return std::string((*f)[0]);
    return std::nullopt;
}

std::optional<std::string> passwd_home_for(std::string_view passwd, std::uint64_t uid) {
    if (const auto f = passwd_fields_for(passwd, uid)) return std::string((*f)[5]);
    return std::nullopt;
}

std::map<std::string, std::string> parse_environ(std::string_view text) {
    std::map<std::string, std::string> out;
    for (auto entry : split(text, '\0')) {
        const auto eq = entry.find('=');
        if (eq == std::string_view::npos || eq == 0) continue;
        out.insert_or_assign(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
    }
    return out;
}

std::map<std::string, std::optional<std::string>> parse_python_assignments(std::string_view text) {
    std::map<std::string, std::optional<std::string>> out;
    for (auto line : split_lines(text)) {
        line = trim(line);
        if (line.empty() || line.front() == '#') continue;
        const auto eq = line.find('=');
        if (eq == std::string_view::npos) continue;
        auto name = trim(line.substr(0, eq));
        // `__version__: str = '...'` (type-annotated form in newer torch)
        if (const auto colon = name.find(':'); colon != std::string_view::npos) name = trim(name.substr(0, colon));
        auto value = trim(line.substr(eq + 1));
        if (name.empty() || name.find_first_of(" ()[]") != std::string_view::npos) continue;
        if (value == "None") out.insert_or_assign(std::string(name), std::nullopt);
        else if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') && value.back() == value.front())
            out.insert_or_assign(std::string(name), unquote(value));
    }
    return out;
}

std::map<std::string, std::string> parse_c_defines(std::string_view text) {
    std::map<std::string, std::string> out;
    for (auto line : split_lines(text)) {
        line = trim(line);
        if (!line.starts_with("#")) continue;
        line = trim(line.substr(1));
        if (!line.starts_with("define")) continue;
        line = trim(line.substr(6));
        const auto sp = line.find_first_of(" \t");
        if (sp == std::string_view::npos) continue;
        auto value = trim(line.substr(sp));
        if (const auto c = value.find("//"); c != std::string_view::npos) value = trim(value.substr(0, c));
        out.insert_or_assign(std::string(line.substr(0, sp)), unquote(value));
    }
    return out;
}

std::optional<std::string> dpkg_installed_version(std::string_view status, std::string_view package) {
    // Stanzas are separated by blank lines.
    bool in_package = false;
    bool installed = false;
    std::optional<std::string> version;
    for (auto line : split_lines(status)) {
        if (trim(line).empty()) {
            if (in_package && installed && version) return version;
            in_package = installed = false;
            version.reset();
            continue;
        }
        if (line.starts_with("Package:")) {
            const auto name = trim(line.substr(8));
            in_package = name == package;
        } else if (in_package && line.starts_with("Status:")) {
            installed = line.find("install ok installed") != std::string_view::npos;
        } else if (in_package && line.starts_with("Version:")) {
            version = std::string(trim(line.substr(8)));
        }
    }
    if (in_package && installed && version) return version;
    return std::nullopt;
}

}  // namespace rmcp
