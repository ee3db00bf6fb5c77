#include "kb/predicate.hpp"

#include "util/hyperscan.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <set>

namespace rmcp::kb {

Result<FactRegex> FactRegex::compile(const std::string& pattern) {
    hs_database_t* db = nullptr;
    hs_compile_error_t* error = nullptr;
    // SINGLEMATCH: one match answers the question; ALLOWEMPTY: "" and "x*" match every value,
    // as they did with std::regex_search.
    if (hs_compile(pattern.c_str(), HS_FLAG_SINGLEMATCH | HS_FLAG_ALLOWEMPTY, HS_MODE_BLOCK, nullptr, &db, &error) !=
        HS_SUCCESS) {
        std::string cause = error && error->message ? error->message : "Hyperscan refused it";
        hs_free_compile_error(error);
        return Error{"compiling regular expression", pattern, cause, ExitCode::usage};
    }
    FactRegex r;
    r.m_db = std::shared_ptr<const hs_database>(db, [](const hs_database* d) {
        hs_free_database(const_cast<hs_database_t*>(d));  // NOLINT(cppcoreguidelines-pro-type-const-cast)
    });
    return r;
}

bool FactRegex::search(std::string_view text) const {
    if (!m_db) return false;
    thread_local hyperscan::Scratch scratch;
    if (hyperscan::alloc_scratch(m_db.get(), scratch) != HS_SUCCESS) return false;
    // Hyperscan may read up to k_overread bytes past the buffer it is given (hyperscan.hpp):
    // the value is scanned from a copy that has them.
    std::string padded;
    padded.reserve(text.size() + hyperscan::k_overread);
    padded.append(text);
    padded.append(hyperscan::k_overread, '\0');
    const auto on_match = [](unsigned, unsigned long long, unsigned long long, unsigned, void*) -> int { return 1; };
    return hs_scan(m_db.get(), padded.data(), static_cast<unsigned>(text.size()), 0, scratch.get(), on_match,
                   nullptr) == HS_SCAN_TERMINATED;
}

namespace {
using nlohmann::json;

constexpr std::array<std::pair<std::string_view, LeafOp>, 15> k_ops{{
    {"equals", LeafOp::equals},
    {"not_equals", LeafOp::not_equals},
    {"in", LeafOp::in},
    {"not_in", LeafOp::not_in},
    {"matches", LeafOp::matches},
    {"version", LeafOp::version},
    {"exists", LeafOp::exists},
    {"gt", LeafOp::gt},
    {"ge", LeafOp::ge},
    {"lt", LeafOp::lt},
    {"le", LeafOp::le},
    {"count", LeafOp::count},
    {"distinct", LeafOp::distinct},
    {"bits_set", LeafOp::bits_set},
    {"major_minor_differs", LeafOp::major_minor_differs},
}};

// Facts top-level keys (facts_json.cpp) plus those later producers add (scan: libraries).
constexpr std::array<std::string_view, 11> k_fact_roots{"gpus",         "driver",    "user",  "kfd",
                                                        "render_nodes", "rocm",      "torch", "env",
                                                        "unreadable",   "libraries", "gpu"};

struct Value {
    std::string path;  // concrete: gpus[1].gfx_target
    const json* node;
};

std::vector<std::string_view> split_path(std::string_view path) {
    std::vector<std::string_view> out;
    while (true) {
        const auto dot = path.find('.');
        out.push_back(path.substr(0, dot));
        if (dot == std::string_view::npos) break;
        path.remove_prefix(dot + 1);
    }
    return out;
}

// Every non-null value a path reaches; arrays on the way (and at the end) fan out.
std::vector<Value> resolve(const json& facts, std::string_view path, std::optional<std::size_t> gpu_index) {
    const auto segments = split_path(path);
    std::vector<Value> current;
    std::size_t first = 0;
    if (segments.front() == "gpu") {
        if (!gpu_index) return {};
        const auto gpus = facts.find("gpus");
        if (gpus == facts.end() || !gpus->is_array() || *gpu_index >= gpus->size()) return {};
        current.push_back({fmt::format("gpus[{}]", *gpu_index), &(*gpus)[*gpu_index]});
        first = 1;
    } else {
        current.push_back({"", &facts});
    }
    const auto fan_out = [](std::vector<Value>& values) {
        std::vector<Value> out;
        for (auto& v : values) {
            if (v.node->is_array()) {
                for (std::size_t i = 0; i < v.node->size(); ++i)
                    out.push_back({fmt::format("{}[{}]", v.path, i), &(*v.node)[i]});
            } else {
                out.push_back(v);
            }
        }
        values = std::move(out);
    };
    for (std::size_t s = first; s < segments.size(); ++s) {
        fan_out(current);
        std::vector<Value> next;
        for (const auto& v : current) {
            if (!v.node->is_object()) continue;
            const auto it = v.node->find(std::string(segments[s]));
            if (it == v.node->end() || it->is_null()) continue;
            next.push_back({v.path.empty() ? std::string(segments[s]) : v.path + "." + std::string(segments[s]), &*it});
        }
        current = std::move(next);
    }
    fan_out(current);
    std::erase_if(current, [](const Value& v) { return v.node->is_null(); });
    return current;
}

std::optional<double> as_number(const json& j) {
    if (j.is_number()) return j.get<double>();
    if (j.is_boolean()) return j.get<bool>() ? 1.0 : 0.0;
    if (!j.is_string()) return std::nullopt;
    // Module parameters are strings: "1", "-1", "0xfff7bfff".
    const auto& s = j.get_ref<const std::string&>();
    std::string_view t = s;
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.remove_suffix(1);
    if (t.empty()) return std::nullopt;
    bool negative = false;
    if (t.front() == '-') negative = true, t.remove_prefix(1);
    int base = 10;
    if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) base = 16, t.remove_prefix(2);
    unsigned long long v = 0;
    const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v, base);
    if (ec != std::errc{} || ptr != t.data() + t.size()) return std::nullopt;
    const auto d = static_cast<double>(v);
    return negative ? -d : d;
}

std::optional<unsigned long long> as_unsigned(const json& j) {
    if (j.is_number_unsigned()) return j.get<unsigned long long>();
    if (j.is_number_integer() && j.get<long long>() >= 0) return static_cast<unsigned long long>(j.get<long long>());
    if (!j.is_string()) return std::nullopt;
    std::string_view t = j.get_ref<const std::string&>();
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.remove_suffix(1);
    int base = 10;
    if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) base = 16, t.remove_prefix(2);
    unsigned long long v = 0;
    const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v, base);
    if (t.empty() || ec != std::errc{} || ptr != t.data() + t.size()) return std::nullopt;
    return v;
}

// Equality across the types facts and TOML use: numbers compare numerically, and a
// numeric string (a module parameter) equals the number it spells.
bool scalar_equals(const json& fact, const json& want) {
    if (fact.is_string() && want.is_string())
        return fact.get_ref<const std::string&>() == want.get_ref<const std::string&>();
    if (fact.is_boolean() && want.is_boolean()) return fact.get<bool>() == want.get<bool>();
    if (want.is_number() && (fact.is_number() || fact.is_string())) {
        const auto a = as_number(fact);
        return a && *a == want.get<double>();
    }
    if (fact.is_number() && want.is_number()) return fact.get<double>() == want.get<double>();
    return false;
}

std::string value_text(const json& j) { return j.is_string() ? j.get<std::string>() : json_text(j); }

std::string test_text(const Leaf& leaf) { return fmt::format("{} {}", leaf_op_name(leaf.op), value_text(leaf.value)); }

bool test_one(const Leaf& leaf, const json& v, const json& facts, std::optional<std::size_t> gpu_index) {
    switch (leaf.op) {
    case LeafOp::equals: return scalar_equals(v, leaf.value);
    case LeafOp::not_equals: return !scalar_equals(v, leaf.value);
    case LeafOp::in:
        return std::any_of(leaf.value.begin(), leaf.value.end(), [&](const json& w) { return scalar_equals(v, w); });
    case LeafOp::not_in:
        return std::none_of(leaf.value.begin(), leaf.value.end(), [&](const json& w) { return scalar_equals(v, w); });
    case LeafOp::matches: {
        const std::string text = value_text(v);
        return leaf.regex && leaf.regex->search(text);
    }
    case LeafOp::version: return v.is_string() && leaf.range && leaf.range->contains(v.get_ref<const std::string&>());
    case LeafOp::gt:
    case LeafOp::ge:
    case LeafOp::lt:
    case LeafOp::le: {
        const auto a = as_number(v);
        if (!a) return false;
        const double b = leaf.value.get<double>();
        switch (leaf.op) {
        case LeafOp::gt: return *a > b;
        case LeafOp::ge: return *a >= b;
        case LeafOp::lt: return *a < b;
        default: return *a <= b;
        }
    }
    case LeafOp::bits_set: {
        const auto a = as_unsigned(v);
        const auto mask = as_unsigned(leaf.value);
        return a && mask && (*a & *mask) == *mask;
    }
    case LeafOp::major_minor_differs: {
        if (!v.is_string()) return false;
        const auto mine = parse_version(v.get_ref<const std::string&>());
        if (!mine) return false;
        for (const auto& other : resolve(facts, leaf.value.get_ref<const std::string&>(), gpu_index)) {
            if (!other.node->is_string()) continue;
            const auto theirs = parse_version(other.node->get_ref<const std::string&>());
            if (!theirs) continue;
            auto a = *mine, b = *theirs;
            a.resize(2, 0), b.resize(2, 0);
            if (a != b) return true;
        }
        return false;
    }
    case LeafOp::exists:
    case LeafOp::count:
    case LeafOp::distinct: break;  // handled on the whole value set
    }
    return false;
}

EvalResult evaluate_leaf(const Leaf& leaf, const json& facts, std::optional<std::size_t> gpu_index) {
    const auto values = resolve(facts, leaf.path, gpu_index);
    const std::string shown_path = leaf.path.starts_with("gpu.") && gpu_index
                                       ? fmt::format("gpus[{}]{}", *gpu_index, leaf.path.substr(3))
                                       : leaf.path;
    EvalResult r;
    if (leaf.op == LeafOp::exists) {
        r.holds = values.empty() != leaf.value.get<bool>();
        if (values.empty()) r.evidence.push_back({shown_path, nullptr, test_text(leaf)});
        else r.evidence.push_back({values.front().path, *values.front().node, test_text(leaf)});
        return r;
    }
    if (leaf.op == LeafOp::count || leaf.op == LeafOp::distinct) {
        unsigned long n = values.size();
        if (leaf.op == LeafOp::distinct) {
            std::set<std::string> seen;
            for (const auto& v : values) seen.insert(v.node->dump());
            n = seen.size();
        }
        r.holds = leaf.count && leaf.count->holds(n);
        r.evidence.push_back({shown_path, json(n), test_text(leaf)});
        return r;
    }
    if (values.empty()) {
        r.evidence.push_back({shown_path, nullptr, test_text(leaf)});
        return r;
    }
    for (const auto& v : values) {
        if (test_one(leaf, *v.node, facts, gpu_index)) {
            r.holds = true;
            r.evidence = {{v.path, *v.node, test_text(leaf)}};
            return r;
        }
        // Keep what was seen, so a negated leaf can show the values it rejected.
        if (r.evidence.size() < 4) r.evidence.push_back({v.path, *v.node, test_text(leaf)});
    }
    return r;
}
}  // namespace

std::optional<LeafOp> parse_leaf_op(std::string_view key) {
    for (const auto& [name, op] : k_ops)
        if (name == key) return op;
    return std::nullopt;
}

std::string_view leaf_op_name(LeafOp op) {
    for (const auto& [name, o] : k_ops)
        if (o == op) return name;
    return "?";
}

bool CountTest::holds(unsigned long value) const {
    switch (op) {
    case VersionOp::lt: return value < n;
    case VersionOp::le: return value <= n;
    case VersionOp::gt: return value > n;
    case VersionOp::ge: return value >= n;
    case VersionOp::eq: return value == n;
    case VersionOp::ne: return value != n;
    }
    return false;
}

std::optional<CountTest> parse_count_test(std::string_view text) {
    CountTest t;
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    if (text.starts_with(">=")) t.op = VersionOp::ge, text.remove_prefix(2);
    else if (text.starts_with("<=")) t.op = VersionOp::le, text.remove_prefix(2);
    else if (text.starts_with("==")) t.op = VersionOp::eq, text.remove_prefix(2);
    else if (text.starts_with("!=")) t.op = VersionOp::ne, text.remove_prefix(2);
    else if (text.starts_with(">")) t.op = VersionOp::gt, text.remove_prefix(1);
    else if (text.starts_with("<")) t.op = VersionOp::lt, text.remove_prefix(1);
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), t.n);
    if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size()) return std::nullopt;
    return t;
}

bool is_known_fact_root(std::string_view first_segment) {
    return std::find(k_fact_roots.begin(), k_fact_roots.end(), first_segment) != k_fact_roots.end();
}

EvalResult evaluate_predicate(const Predicate& p, const json& facts, std::optional<std::size_t> gpu_index) {
    switch (p.kind) {
    case Predicate::Kind::leaf: return evaluate_leaf(p.leaf, facts, gpu_index);
    case Predicate::Kind::negation: {
        auto r = evaluate_predicate(p.children.front(), facts, gpu_index);
        r.holds = !r.holds;
        for (auto& e : r.evidence) e.test = "not " + e.test;
        return r;
    }
    case Predicate::Kind::all: {
        // True: every child's evidence; false: the first child that failed.
        EvalResult r{true, {}};
        for (const auto& c : p.children) {
            auto cr = evaluate_predicate(c, facts, gpu_index);
            if (!cr.holds) return {false, std::move(cr.evidence)};
            r.evidence.insert(r.evidence.end(), cr.evidence.begin(), cr.evidence.end());
        }
        return r;
    }
    case Predicate::Kind::any: {
        // True: the first child that held; false: every child's evidence.
        EvalResult r{false, {}};
        for (const auto& c : p.children) {
            auto cr = evaluate_predicate(c, facts, gpu_index);
            if (cr.holds) return {true, std::move(cr.evidence)};
            r.evidence.insert(r.evidence.end(), cr.evidence.begin(), cr.evidence.end());
        }
        return r;
    }
    }
    return {};
}

std::vector<Finding> evaluate(const nlohmann::json& facts, const Entry& entry) {
    std::vector<Finding> out;
    if (!entry.applies) return out;
    if (entry.scope == Scope::system) {
        auto r = evaluate_predicate(*entry.applies, facts, std::nullopt);
        if (r.holds) {
            Finding f;
            f.entry = &entry;
            f.evidence = std::move(r.evidence);
            out.push_back(std::move(f));
        }
        return out;
    }
    const auto gpus = facts.find("gpus");
    if (gpus == facts.end() || !gpus->is_array()) return out;
    for (std::size_t i = 0; i < gpus->size(); ++i) {
        auto r = evaluate_predicate(*entry.applies, facts, i);
        if (!r.holds) continue;
        Finding f;
        f.entry = &entry;
        f.gpu_index = i;
        f.evidence = std::move(r.evidence);
        const auto& g = (*gpus)[i];
        if (g.is_object()) {
            if (const auto node = g.find("node"); node != g.end() && node->is_number_unsigned())
                f.gpu_node = node->get<unsigned>();
            if (const auto index = g.find("rocm_index"); index != g.end() && index->is_number_unsigned())
                f.gpu_rocm_index = index->get<unsigned>();
        }
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace rmcp::kb
