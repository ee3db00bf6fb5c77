// Loading patches/*.toml (docs/patches.md) into typed operations; every error names file:line.
#include "patch/patch.hpp"

#include "patch/profile.hpp"
#include "util/strings.hpp"
#include "util/toml_read.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace rmcp::patch {

using toml_read::data_error;
using toml_read::line_of;

std::string_view op_kind_name(OpKind k) {
    switch (k) {
    case OpKind::env: return "env";
    case OpKind::modprobe: return "modprobe";
    case OpKind::python_hook: return "python-hook";
    case OpKind::advisory: return "advisory";
    }
    return "advisory";
}

bool Patch::fully_reversible() const {
    return std::none_of(operations.begin(), operations.end(),
                        [](const Operation& op) { return op.kind == OpKind::advisory; });
}

const Patch* PatchSet::find(std::string_view id) const {
    for (const auto& p : patches)
        if (p.id == id) return &p;
    return nullptr;
}

// ---- loading ---------------------------------------------------------------------------

namespace {
Result<Operation> parse_operation(const toml::table& t, const std::string& file, unsigned line) {
    Operation op;
    op.line = line;
    auto kind = toml_read::req_string(t, "kind", file, line);
    if (!kind) return kind.error();
    auto note = toml_read::opt_string(t, "note", file);
    if (!note) return note.error();
    op.note = note->value_or("");
    if (*kind == "env") {
        op.kind = OpKind::env;
        if (auto s = toml_read::check_keys(t, file, {"kind", "set", "unset", "remove", "derived", "note"},
                                           "an env operation");
            !s)
            return s.error();
        auto derived = toml_read::opt_string(t, "derived", file);
        if (!derived) return derived.error();
        op.derived = derived->value_or("");
        if (!op.derived.empty() && op.derived != "per-node-override" && op.derived != "same-family-override")
            return data_error(file, line,
                              fmt::format("unknown derived set '{}' (per-node-override, same-family-override)",
                                          op.derived));
        auto unset = toml_read::opt_string_array(t, "unset", file);
        if (!unset) return unset.error();
        op.unset = *unset;
        auto set = toml_read::opt_string_table(t, "set", file);
        if (!set) return set.error();
        op.set = *set;
        auto remove = toml_read::opt_string_array(t, "remove", file);
        if (!remove) return remove.error();
        op.remove = *remove;
        if (op.set.empty() && op.remove.empty() && op.unset.empty() && op.derived.empty())
            return data_error(file, line, "an env operation needs 'set', 'unset' or 'remove'");
        for (const auto& k : op.unset)
            if (!valid_env_name(k) || op.set.count(k) != 0)
                return data_error(file, line, fmt::format("'{}' cannot be unset here (bad name, or also set)", k));
        for (const auto& [k, v] : op.set)
            if (!valid_env_name(k)) return data_error(file, line, fmt::format("'{}' is not a valid variable name", k));
        for (const auto& k : op.remove)
            if (!valid_env_name(k)) return data_error(file, line, fmt::format("'{}' is not a valid variable name", k));
        for (const auto& [k, v] : op.set)
            if (v.find('\n') != std::string::npos || v.find('\0') != std::string::npos)
                return data_error(file, line, fmt::format("the value of '{}' must be one line", k));
    } else if (*kind == "modprobe") {
        op.kind = OpKind::modprobe;
        if (auto s = toml_read::check_keys(t, file, {"kind", "params", "file", "note"}, "a modprobe operation"); !s)
            return s.error();
        auto mfile = toml_read::opt_string(t, "file", file);
        if (!mfile) return mfile.error();
        op.file = mfile->value_or("");
        const std::string_view name(op.file);
        if (!op.file.empty() && !(name.starts_with("rmcp-") && name.ends_with(".conf") && name.size() > 10 &&
                                  is_lower_name(name.substr(5, name.size() - 10))))
            return data_error(file, line_of(*t.get("file")), "'file' must be named rmcp-<name>.conf");
        auto params = toml_read::opt_string_table(t, "params", file);
        if (!params) return params.error();
        op.params = *params;
        if (op.params.empty()) return data_error(file, line, "a modprobe operation needs 'params'");
        const toml::node* pnode = t.get("params");
        for (const auto& [k, v] : op.params) {
            const toml::node* value_node = pnode->as_table()->get(k);
            if (auto why = check_amdgpu_parameter(k, v)) return data_error(file, line_of(*value_node), *why);
        }
    } else if (*kind == "python-hook") {
        op.kind = OpKind::python_hook;
        if (auto s = toml_read::check_keys(t, file, {"kind", "note"}, "a python-hook operation"); !s) return s.error();
    } else if (*kind == "advisory") {
        op.kind = OpKind::advisory;
        if (auto s =
                toml_read::check_keys(t, file, {"kind", "command", "distro", "gpu", "note"}, "an advisory operation");
            !s)
            return s.error();
        auto command = toml_read::opt_string(t, "command", file);
        if (!command) return command.error();
        op.command = command->value_or("");
        if (const toml::node* d = t.get("distro")) {
            const auto* arr = d->as_array();
            if (!arr)
                return data_error(file, line_of(*d), "'distro' must be an array of tables ([[operation.distro]])");
            for (const auto& item : *arr) {
                const auto* dt = item.as_table();
                if (!dt) return data_error(file, line_of(item), "each distro entry must be a table");
                if (auto s = toml_read::check_keys(*dt, file, {"ids", "command"}, "a distro entry"); !s)
                    return s.error();
                DistroCommand dc;
                auto ids = toml_read::opt_string_array(*dt, "ids", file);
                if (!ids) return ids.error();
                dc.ids = *ids;
                auto cmd = toml_read::req_string(*dt, "command", file, line_of(item));
                if (!cmd) return cmd.error();
                dc.command = *cmd;
                if (dc.ids.empty()) return data_error(file, line_of(item), "a distro entry needs 'ids'");
                op.by_distro.push_back(std::move(dc));
            }
        }
        if (const toml::node* g = t.get("gpu")) {
            const auto* arr = g->as_array();
            if (!arr) return data_error(file, line_of(*g), "'gpu' must be an array of tables ([[operation.gpu]])");
            for (const auto& item : *arr) {
                const auto* gt = item.as_table();
                if (!gt) return data_error(file, line_of(item), "each gpu entry must be a table");
                if (auto s = toml_read::check_keys(*gt, file, {"targets", "command"}, "a gpu entry"); !s)
                    return s.error();
                GpuCommand gc;
                auto targets = toml_read::opt_string_array(*gt, "targets", file);
                if (!targets) return targets.error();
                gc.targets = *targets;
                auto cmd = toml_read::req_string(*gt, "command", file, line_of(item));
                if (!cmd) return cmd.error();
                gc.command = *cmd;
                if (gc.targets.empty()) return data_error(file, line_of(item), "a gpu entry needs 'targets'");
                op.by_gpu.push_back(std::move(gc));
            }
            if (op.command.empty())
                return data_error(file, line,
                                  "an advisory operation with [[operation.gpu]] needs 'command' for "
                                  "machines none of its entries matches");
        }
        if (op.command.empty() && op.by_distro.empty())
            return data_error(file, line, "an advisory operation needs 'command' or [[operation.distro]]");
    } else {
        return data_error(file, line,
                          fmt::format("unknown operation kind '{}' (env, modprobe, python-hook, advisory)", *kind));
    }
    return op;
}
}  // namespace

Result<Patch> parse_patch(std::string_view text, const std::string& file) {
    auto parsed = toml_read::parse_toml(text, file);
    if (!parsed) return parsed.error();
    const toml::table& t = *parsed;
    if (auto s = toml_read::check_keys(
            t, file, {"id", "title", "why", "cost", "evidence", "references", "takes_effect", "operation"}, "a patch");
        !s)
        return s.error();
    Patch p;
    p.file = file;
    for (auto [key, field] : {std::pair{"id", &p.id}, std::pair{"title", &p.title}, std::pair{"why", &p.why},
                              std::pair{"cost", &p.cost}, std::pair{"evidence", &p.evidence}}) {
        auto v = toml_read::req_string(t, key, file, 1);
        if (!v) return v.error();
        *field = *v;
    }
    // [a-z0-9][a-z0-9-]*[a-z0-9]
    if (p.id.size() < 2 || !is_lower_name(p.id) || p.id.back() == '-')
        return data_error(file, line_of(*t.get("id")),
                          fmt::format("patch id '{}' must be lower-case words joined by '-'", p.id));
    static const std::set<std::string> k_evidence{"vendor-confirmed", "user-confirmed", "reported", "hypothesis"};
    if (k_evidence.count(p.evidence) == 0)
        return data_error(file, line_of(*t.get("evidence")),
                          "'evidence' must be vendor-confirmed, user-confirmed, reported or hypothesis");
    auto refs = toml_read::opt_string_array(t, "references", file);
    if (!refs) return refs.error();
    p.references = *refs;
    auto takes_effect = toml_read::opt_string(t, "takes_effect", file);
    if (!takes_effect) return takes_effect.error();
    if (*takes_effect) {
        if (**takes_effect == "re-login") p.takes_effect = TakesEffect::relogin;
        else if (**takes_effect != "at-once")
            return data_error(file, line_of(*t.get("takes_effect")), "'takes_effect' must be at-once or re-login");
    }
    const toml::node* ops = t.get("operation");
    if (!ops || !ops->is_array_of_tables())
        return data_error(file, ops ? line_of(*ops) : 1, "a patch needs at least one [[operation]]");
    for (const auto& item : *ops->as_array()) {
        auto op = parse_operation(*item.as_table(), file, line_of(item));
        if (!op) return op.error();
        p.operations.push_back(std::move(*op));
    }
    const auto modprobe_ops = std::count_if(p.operations.begin(), p.operations.end(),
                                            [](const Operation& o) { return o.kind == OpKind::modprobe; });
    if (modprobe_ops > 1) return data_error(file, 1, "a patch writes one modprobe file: merge its modprobe operations");
    return p;
}

Result<PatchSet> load_patches(const std::filesystem::path& dir) {
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".toml") files.push_back(it->path());
    if (ec) return Error{"reading patch directory", dir.string(), ec.message(), ExitCode::environment, ec.value()};
    std::sort(files.begin(), files.end());
    PatchSet set;
    for (const auto& path : files) {
        std::ifstream in(path, std::ios::binary);
        if (!in) return Error{"reading patch", path.string(), "cannot open", ExitCode::environment};
        std::stringstream buf;
        buf << in.rdbuf();
        auto p = parse_patch(buf.str(), path.string());
        if (!p) return p.error();
        if (const Patch* other = set.find(p->id))
            return data_error(path.string(), 1, fmt::format("patch id '{}' is also defined in {}", p->id, other->file));
        set.patches.push_back(std::move(*p));
    }
    std::sort(set.patches.begin(), set.patches.end(), [](const Patch& a, const Patch& b) { return a.id < b.id; });
    return set;
}

}  // namespace rmcp::patch
