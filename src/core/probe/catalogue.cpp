#include "probe/catalogue.hpp"

#include "util/toml_read.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

namespace rmcp::probe {

using toml_read::check_keys;
using toml_read::data_error;
using toml_read::line_of;
using toml_read::opt_string;
using toml_read::opt_string_array;
using toml_read::opt_string_table;
using toml_read::req_string;

namespace {

Result<std::vector<std::int64_t>> int_array(const toml::table& t, std::string_view key, const std::string& file,
                                            unsigned table_line, std::optional<std::vector<std::int64_t>> fallback) {
    const toml::node* n = t.get(key);
    if (!n) {
        if (fallback) return *fallback;
        return data_error(file, table_line, fmt::format("missing required array '{}'", key));
    }
    const auto* arr = n->as_array();
    if (!arr) return data_error(file, line_of(*n), fmt::format("'{}' must be an array of integers", key));
    std::vector<std::int64_t> out;
    for (const auto& item : *arr) {
        if (!item.is_integer() || item.as_integer()->get() < 0)
            return data_error(file, line_of(item), fmt::format("'{}' must contain non-negative integers", key));
        out.push_back(item.as_integer()->get());
    }
    return out;
}

Status check_members(const std::vector<std::string>& values, std::initializer_list<std::string_view> allowed,
                     std::string_view key, const std::string& file, unsigned line) {
    for (const auto& v : values) {
        bool ok = false;
        for (const auto a : allowed) ok = ok || v == a;
        if (!ok) return data_error(file, line, fmt::format("'{}' has unknown value '{}'", key, v));
    }
    return ok_status();
}

struct Selection {
    std::vector<std::int64_t> batch;
    std::vector<std::string> directions, dtypes;
};

Result<Selection> read_selection(const toml::table& t, const std::string& file, unsigned line) {
    Selection s;
    auto batch = int_array(t, "batch", file, line, std::nullopt);
    if (!batch) return batch.error();
    s.batch = *batch;
    auto directions = opt_string_array(t, "directions", file);
    if (!directions) return directions.error();
    s.directions = *directions;
    auto dtypes = opt_string_array(t, "dtypes", file);
    if (!dtypes) return dtypes.error();
    s.dtypes = *dtypes;
    if (s.directions.empty() || s.dtypes.empty() || s.batch.empty())
        return data_error(file, line, "'batch', 'directions' and 'dtypes' must not be empty");
    if (auto c = check_members(s.directions, {"forward", "backward_data", "backward_weight"}, "directions", file, line);
        !c)
        return c.error();
    if (auto c = check_members(s.dtypes, {"float32", "float16"}, "dtypes", file, line); !c) return c.error();
    return s;
}

Status read_family(const toml::table& t, const std::string& file, Catalogue& out) {
    const unsigned line = line_of(t);
    if (auto s = check_keys(t, file,
                            {"name", "why", "op", "input", "weight", "stride", "padding", "dilation", "groups", "batch",
                             "directions", "dtypes", "quick", "field"},
                            "a [[family]]");
        !s)
        return s;
    auto name = req_string(t, "name", file, line);
    if (!name) return name.error();
    auto op = req_string(t, "op", file, line);
    if (!op) return op.error();
    if (*op != "conv1d" && *op != "conv2d") return data_error(file, line, fmt::format("unknown op '{}'", *op));
    for (const char* key : {"why", "field"})
        if (auto v = opt_string(t, key, file); !v) return v.error();
    const std::size_t rank = *op == "conv1d" ? 1 : 2;
    auto input = int_array(t, "input", file, line, std::nullopt);
    if (!input) return input.error();
    auto weight = int_array(t, "weight", file, line, std::nullopt);
    if (!weight) return weight.error();
    if (input->size() != rank + 1 || weight->size() != rank + 2)
        return data_error(file, line,
                          fmt::format("{} needs input [C, {}] and weight [K, C/groups, {}]", *op,
                                      rank == 1 ? "L" : "H, W", rank == 1 ? "k" : "kh, kw"));
    auto stride = int_array(t, "stride", file, line, std::vector<std::int64_t>(rank, 1));
    auto padding = int_array(t, "padding", file, line, std::vector<std::int64_t>(rank, 0));
    auto dilation = int_array(t, "dilation", file, line, std::vector<std::int64_t>(rank, 1));
    for (auto* v : {&stride, &padding, &dilation}) {
        if (!*v) return v->error();
        if ((*v)->size() != rank)
            return data_error(file, line, fmt::format("stride, padding and dilation need {} values", rank));
    }
    std::int64_t groups = 1;
    if (const toml::node* g = t.get("groups")) {
        if (!g->is_integer() || g->as_integer()->get() < 1)
            return data_error(file, line_of(*g), "'groups' must be a positive integer");
        groups = g->as_integer()->get();
    }
    if ((*input)[0] % groups != 0 || (*weight)[0] % groups != 0 || (*weight)[1] * groups != (*input)[0])
        return data_error(file, line, "channels do not match groups: need C = weight[1] * groups, K % groups = 0");

    auto all = read_selection(t, file, line);
    if (!all) return all.error();
    Selection quick;
    if (const toml::node* q = t.get("quick")) {
        const auto* qt = q->as_table();
        if (!qt) return data_error(file, line_of(*q), "'quick' must be a table");
        if (auto s = check_keys(*qt, file, {"batch", "directions", "dtypes"}, "'quick'"); !s) return s;
        auto sel = read_selection(*qt, file, line_of(*q));
        if (!sel) return sel.error();
        quick = *sel;
    }
    const auto contains = [](const auto& v, const auto& x) { return std::find(v.begin(), v.end(), x) != v.end(); };
    for (const auto batch : all->batch)
        for (const auto& direction : all->directions)
            for (const auto& dtype : all->dtypes) {
                Scenario s;
                s.family = *name;
                s.id = fmt::format("{}-b{}-{}-{}", *name, batch, direction_tag(direction), dtype_tag(dtype));
                s.op = *op;
                s.direction = direction;
                s.dtype = dtype;
                s.input = {batch};
                s.input.insert(s.input.end(), input->begin(), input->end());
                s.weight = *weight;
                s.stride = *stride;
                s.padding = *padding;
                s.dilation = *dilation;
                s.groups = groups;
                s.quick = contains(quick.batch, batch) && contains(quick.directions, direction) &&
                          contains(quick.dtypes, dtype);
                out.scenarios.push_back(std::move(s));
            }
    return ok_status();
}

Status read_switch(const toml::table& t, const std::string& file, Catalogue& out) {
    const unsigned line = line_of(t);
    if (auto s = check_keys(t, file, {"id", "env", "alternatives", "profile", "cost", "source"}, "a [[switch]]"); !s)
        return s;
    Switch sw;
    auto id = req_string(t, "id", file, line);
    if (!id) return id.error();
    sw.id = *id;
    auto env = opt_string_table(t, "env", file);
    if (!env) return env.error();
    sw.env = *env;
    auto profile = opt_string(t, "profile", file);
    if (!profile) return profile.error();
    sw.profile = profile->value_or("");
    if (sw.env.empty() == sw.profile.empty())
        return data_error(file, line, fmt::format("switch '{}' needs exactly one of 'env' and 'profile'", sw.id));
    auto cost = req_string(t, "cost", file, line);
    if (!cost) return cost.error();
    sw.cost = *cost;
    auto source = opt_string(t, "source", file);
    if (!source) return source.error();
    sw.source = source->value_or("");
    if (const toml::node* alts = t.get("alternatives")) {
        const auto* arr = alts->as_array();
        if (!arr) return data_error(file, line_of(*alts), "'alternatives' must be an array of tables");
        for (const auto& item : *arr) {
            const auto* at = item.as_table();
            if (!at) return data_error(file, line_of(item), "'alternatives' must be an array of tables");
            EnvMap alt;
            for (const auto& [k, v] : *at) {
                if (!v.is_string()) return data_error(file, line_of(v), "alternative values must be strings");
                if (!sw.env.contains(std::string(k.str())))
                    return data_error(file, line_of(v),
                                      fmt::format("alternative sets '{}', which the switch does not set", k.str()));
                alt[std::string(k.str())] = v.as_string()->get();
            }
            sw.alternatives.push_back(std::move(alt));
        }
    }
    for (const auto& other : out.switches) {
        if (other.id == sw.id) return data_error(file, line, fmt::format("duplicate switch id '{}'", sw.id));
        for (const auto& [k, v] : sw.env)
            if (other.env.contains(k))
                return data_error(file, line, fmt::format("'{}' is already set by switch '{}'", k, other.id));
    }
    out.switches.push_back(std::move(sw));
    return ok_status();
}

}  // namespace

std::string direction_tag(std::string_view direction) {
    if (direction == "forward") return "fwd";
    if (direction == "backward_data") return "bwd-data";
    return "bwd-weight";
}

std::string dtype_tag(std::string_view dtype) { return dtype == "float16" ? "fp16" : "fp32"; }

Result<Catalogue> parse_catalogue(std::string_view text, const std::string& file) {
    auto parsed = toml_read::parse_toml(text, file);
    if (!parsed) return parsed.error();
    const toml::table& t = *parsed;
    if (auto s = check_keys(t, file, {"family", "switch", "import_time"}, "the catalogue"); !s) return s.error();
    Catalogue out;
    out.file = file;
    auto import_time = opt_string_array(t, "import_time", file);
    if (!import_time) return import_time.error();
    out.import_time = *import_time;
    for (const char* key : {"family", "switch"}) {
        const toml::node* n = t.get(key);
        if (!n) continue;
        const auto* arr = n->as_array();
        if (!arr)
            return data_error(file, line_of(*n), fmt::format("'{}' must be an array of tables ([[{}]])", key, key));
        for (const auto& item : *arr) {
            const auto* table = item.as_table();
            if (!table) return data_error(file, line_of(item), fmt::format("'{}' must be an array of tables", key));
            Status s =
                std::string_view(key) == "family" ? read_family(*table, file, out) : read_switch(*table, file, out);
            if (!s) return s.error();
        }
    }
    std::set<std::string> ids;
    for (const auto& s : out.scenarios)
        if (!ids.insert(s.id).second) return data_error(file, 1, fmt::format("duplicate scenario id '{}'", s.id));
    if (out.scenarios.empty()) return data_error(file, 1, "the catalogue has no [[family]]");
    return out;
}

Result<Catalogue> load_catalogue(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return Error{"reading probe catalogue", file.string(), "cannot open file", ExitCode::usage};
    std::ostringstream text;
    text << in.rdbuf();
    return parse_catalogue(text.str(), file.string());
}

Result<std::vector<Scenario>> select_scenarios(const Catalogue& catalogue, const std::vector<std::string>& names,
                                               bool quick) {
    std::vector<Scenario> out;
    std::set<std::string> taken;
    const auto take = [&](const Scenario& s) {
        if (taken.insert(s.id).second) out.push_back(s);
    };
    if (names.empty()) {
        for (const auto& s : catalogue.scenarios)
            if (!quick || s.quick) take(s);
        return out;
    }
    for (const auto& name : names) {
        bool found = false;
        for (const auto& s : catalogue.scenarios)
            if (s.id == name || (s.family == name && (!quick || s.quick))) {
                take(s);
                found = true;
            }
        if (!found)
            return Error{"selecting scenario", name, fmt::format("no such scenario or family in {}", catalogue.file),
                         ExitCode::usage};
    }
    return out;
}

nlohmann::json scenario_to_json(const Scenario& s) {
    return {{"id", s.id},         {"op", s.op},           {"direction", s.direction},
            {"dtype", s.dtype},   {"input", s.input},     {"weight", s.weight},
            {"stride", s.stride}, {"padding", s.padding}, {"dilation", s.dilation},
            {"groups", s.groups}};
}

}  // namespace rmcp::probe
