// Loading and validating kb/*.toml (docs/kb-format.md). Every error names file:line.
#include "kb/kb.hpp"
#include "kb/predicate.hpp"
#include "util/strings.hpp"
#include "util/toml.hpp"
#include "util/toml_read.hpp"

#include <fmt/format.h>
#include <hs/hs.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace rmcp::kb {

namespace {

// A validation failure: where (line) and why; the caller adds the file.
struct Problem {
    unsigned line = 0;
    std::string cause;
};

using toml_read::line_of;
using toml_read::type_name;

constexpr std::string_view k_doing = "parsing knowledge-base file";

Problem wrong_type(std::string_view key, std::string_view want, const toml::node& n) {
    return {line_of(n), fmt::format("\"{}\" must be {}, not {}", key, want, type_name(n))};
}

// Rejects keys the format does not define: a typo must not silently disable a rule.
std::optional<Problem> check_keys(const toml::table& t, std::initializer_list<std::string_view> allowed,
                                  std::string_view where) {
    const toml::key* k = toml_read::unknown_key(t, allowed);
    if (!k) return std::nullopt;
    const std::string names = join(std::vector<std::string_view>(allowed), ", ");
    return Problem{line_of(*k), fmt::format("unknown key \"{}\" in {} (allowed: {})", k->str(), where, names)};
}

Result<std::string> get_string(const toml::table& t, std::string_view key, unsigned table_line, bool required,
                               std::vector<Problem>& problems) {
    const toml::node* n = t.get(key);
    if (!n) {
        if (required) problems.push_back({table_line, fmt::format("missing required key \"{}\"", key)});
        return std::string{};
    }
    if (!n->is_string()) {
        problems.push_back(wrong_type(key, "a string", *n));
        return std::string{};
    }
    auto s = n->value<std::string>().value_or("");
    if (required && s.empty()) problems.push_back({line_of(*n), fmt::format("\"{}\" must not be empty", key)});
    return s;
}

bool valid_path_segment(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
}

std::optional<std::string> check_fact_path(std::string_view path, Scope scope) {
    if (path.empty()) return "empty fact path";
    std::string_view rest = path;
    std::string_view first = rest.substr(0, rest.find('.'));
    if (!is_known_fact_root(first))
        return fmt::format("fact path \"{}\" does not start with a facts key (gpus, driver, user, kfd, "
                           "render_nodes, rocm, torch, env, unreadable, libraries; gpu in gpu scope)",
                           path);
    if (first == "gpu" && scope != Scope::gpu)
        return fmt::format("fact path \"{}\" uses \"gpu.\" but the entry's scope is not \"gpu\"", path);
    while (true) {
        const auto dot = rest.find('.');
        if (!valid_path_segment(rest.substr(0, dot)))
            return fmt::format("fact path \"{}\" has an empty or invalid segment", path);
        if (dot == std::string_view::npos) break;
        rest.remove_prefix(dot + 1);
    }
    return std::nullopt;
}

bool is_scalar(const toml::node& n) {
    return n.is_string() || n.is_integer() || n.is_floating_point() || n.is_boolean();
}

nlohmann::json to_json(const toml::node& n) {
    if (auto s = n.as_string()) return s->get();
    if (auto i = n.as_integer()) return i->get();
    if (auto f = n.as_floating_point()) return f->get();
    if (auto b = n.as_boolean()) return b->get();
    if (auto a = n.as_array()) {
        auto out = nlohmann::json::array();
        for (const auto& e : *a) out.push_back(to_json(e));
        return out;
    }
    return nullptr;
}

std::optional<Problem> parse_predicate(const toml::node& node, Scope scope, Predicate& out, int depth);

std::optional<Problem> parse_leaf(const toml::table& t, Scope scope, Predicate& out) {
    out.kind = Predicate::Kind::leaf;
    Leaf& leaf = out.leaf;
    leaf.line = line_of(t);
    const toml::node* fact = t.get("fact");
    if (!fact->is_string()) return wrong_type("fact", "a string", *fact);
    leaf.path = fact->value<std::string>().value_or("");
    if (auto bad = check_fact_path(leaf.path, scope)) return Problem{line_of(*fact), *bad};

    const toml::key* op_key = nullptr;
    const toml::node* operand = nullptr;
    for (const auto& [k, v] : t) {
        if (k.str() == "fact") continue;
        if (!parse_leaf_op(k.str()))
            return Problem{line_of(k),
                           fmt::format("unknown key \"{}\" in a fact test (operators: equals, not_equals, in, "
                                       "not_in, matches, version, exists, gt, ge, lt, le, count, distinct, "
                                       "bits_set, major_minor_differs)",
                                       k.str())};
        if (op_key)
            return Problem{line_of(k), fmt::format("a fact test has one operator; found \"{}\" and \"{}\"",
                                                   op_key->str(), k.str())};
        op_key = &k;
        operand = &v;
    }
    if (!op_key) return Problem{leaf.line, fmt::format("fact test on \"{}\" has no operator", leaf.path)};
    leaf.op = *parse_leaf_op(op_key->str());
    leaf.value = to_json(*operand);
    const std::string key(op_key->str());
    const unsigned line = line_of(*operand);
    switch (leaf.op) {
    case LeafOp::equals:
    case LeafOp::not_equals:
        if (!is_scalar(*operand)) return wrong_type(key, "a string, number or boolean", *operand);
        break;
    case LeafOp::in:
    case LeafOp::not_in: {
        const auto* arr = operand->as_array();
        if (!arr) return wrong_type(key, "an array", *operand);
        if (arr->empty()) return Problem{line, fmt::format("\"{}\" needs at least one value", key)};
        for (const auto& e : *arr)
            if (!is_scalar(e)) return wrong_type(key + " element", "a string, number or boolean", e);
        break;
    }
    case LeafOp::matches: {
        if (!operand->is_string()) return wrong_type(key, "a string (a regular expression)", *operand);
        auto regex = FactRegex::compile(leaf.value.get<std::string>());
        if (!regex)
            return Problem{line, fmt::format("invalid regular expression \"{}\": {}", leaf.value.get<std::string>(),
                                             regex.error().cause)};
        leaf.regex = std::move(*regex);
        break;
    }
    case LeafOp::version: {
        if (!operand->is_string()) return wrong_type(key, "a string (a version range)", *operand);
        auto range = VersionRange::parse(leaf.value.get<std::string>());
        if (!range) return Problem{line, range.error().cause};
        leaf.range = std::move(*range);
        break;
    }
    case LeafOp::exists:
        if (!operand->is_boolean()) return wrong_type(key, "true or false", *operand);
        break;
    case LeafOp::gt:
    case LeafOp::ge:
    case LeafOp::lt:
    case LeafOp::le:
        if (!operand->is_integer() && !operand->is_floating_point()) return wrong_type(key, "a number", *operand);
        break;
    case LeafOp::count:
    case LeafOp::distinct: {
        if (operand->is_integer()) {
            if (operand->value<long long>().value_or(-1) < 0)
                return Problem{line, fmt::format("\"{}\" must not be negative", key)};
            leaf.count = CountTest{VersionOp::eq, static_cast<unsigned long>(*operand->value<long long>())};
            break;
        }
        if (!operand->is_string()) return wrong_type(key, "a comparison such as \">=2\"", *operand);
        leaf.count = parse_count_test(leaf.value.get<std::string>());
        if (!leaf.count)
            return Problem{line, fmt::format("\"{}\" = \"{}\": expected a comparison such as \">=2\"", key,
                                             leaf.value.get<std::string>())};
        break;
    }
    case LeafOp::bits_set:
        if (!operand->is_integer() || operand->value<long long>().value_or(-1) <= 0)
            return Problem{line, fmt::format("\"{}\" must be a positive integer mask (e.g. 0x4000)", key)};
        break;
    case LeafOp::major_minor_differs:
        if (!operand->is_string()) return wrong_type(key, "a fact path", *operand);
        if (auto bad = check_fact_path(leaf.value.get<std::string>(), scope)) return Problem{line, *bad};
        break;
    }
    return std::nullopt;
}

std::optional<Problem> parse_predicate(const toml::node& node, Scope scope, Predicate& out, int depth) {
    const auto* t = node.as_table();
    if (!t) return wrong_type("applies", "a table", node);
    if (depth > 32) return Problem{line_of(node), "predicate nested too deeply"};
    const bool has_fact = t->contains("fact");
    const int combinators = int(t->contains("all")) + int(t->contains("any")) + int(t->contains("not"));
    if (has_fact && combinators == 0) return parse_leaf(*t, scope, out);
    if (has_fact || combinators > 1)
        return Problem{line_of(node), "a predicate is exactly one of: all = [...], any = [...], not = {...}, "
                                      "or a fact test {fact = \"...\", <operator> = ...}"};
    if (combinators == 0) return Problem{line_of(node), "empty predicate: expected all, any, not or fact"};
    if (auto bad = check_keys(*t, {"all", "any", "not"}, "a predicate")) return bad;
    if (const auto* n = t->get("not")) {
        out.kind = Predicate::Kind::negation;
        out.children.resize(1);
        return parse_predicate(*n, scope, out.children.front(), depth + 1);
    }
    const bool is_all = t->contains("all");
    const auto* list = t->get(is_all ? "all" : "any");
    out.kind = is_all ? Predicate::Kind::all : Predicate::Kind::any;
    const auto* arr = list->as_array();
    if (!arr) return wrong_type(is_all ? "all" : "any", "an array of predicates", *list);
    if (arr->empty())
        return Problem{line_of(*list), fmt::format("\"{}\" needs at least one predicate", is_all ? "all" : "any")};
    for (const auto& e : *arr) {
        out.children.emplace_back();
        if (auto bad = parse_predicate(e, scope, out.children.back(), depth + 1)) return bad;
    }
    return std::nullopt;
}

// Patterns must be valid in the engine explain uses: Hyperscan's PCRE subset. Its parser
// and analysis (hs_expression_info) say so in a tenth of a full compile per pattern, which
// kept 10,000 signatures from taking 10 s just to load (docs/PERFORMANCE.md, "Large knowledge
// bases"); what only a full compile finds (resource limits) the set's compile reports, with
// the entry's file:line.
std::optional<std::string> check_hyperscan(const std::string& pattern) {
    hs_expr_info_t* info = nullptr;
    hs_compile_error_t* err = nullptr;
    const hs_error_t rc = hs_expression_info(pattern.c_str(), HS_FLAG_SINGLEMATCH, &info, &err);
    std::optional<std::string> out;
    if (rc != HS_SUCCESS) out = err && err->message ? err->message : "Hyperscan cannot compile it";
    // hs_compile refuses what can match nothing at all; the analysis only reports it.
    else if (info && info->min_width == 0) out = "Pattern matches empty buffer (Hyperscan refuses it)";
    if (err) hs_free_compile_error(err);
    std::free(info);  // allocated with the misc allocator (malloc by default)
    return out;
}

bool valid_patch_id(std::string_view id) {
    return !id.empty() && id.front() >= 'a' && id.front() <= 'z' && std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    });
}

template <class Enum>
std::optional<Enum> parse_enum(std::string_view s, std::initializer_list<std::pair<std::string_view, Enum>> names) {
    for (const auto& [n, e] : names)
        if (n == s) return e;
    return std::nullopt;
}

// The top-level strings and the enumerations they name.
std::optional<Problem> parse_header(const toml::table& root, const std::string& stem, Entry& e) {
    std::vector<Problem> problems;
    e.id = get_string(root, "id", 1, true, problems).value();
    e.title = get_string(root, "title", 1, true, problems).value();
    e.category = get_string(root, "category", 1, true, problems).value();
    const auto severity = get_string(root, "severity", 1, true, problems).value();
    const auto confidence = get_string(root, "confidence", 1, true, problems).value();
    const auto scope = get_string(root, "scope", 1, false, problems).value();
    e.summary = get_string(root, "summary", 1, true, problems).value();
    e.next_step = get_string(root, "next_step", 1, false, problems).value();
    e.causes = get_string(root, "causes", 1, false, problems).value();
    e.notes = get_string(root, "notes", 1, false, problems).value();
    if (!problems.empty()) return problems.front();
    if (const auto* varies = root.get("cause_varies")) {
        const auto flag = varies->value<bool>();
        if (!flag || !varies->is_boolean()) return Problem{line_of(*varies), "cause_varies must be true or false"};
        e.cause_varies = *flag;
    }

    if (e.id != stem)
        return Problem{line_of(*root.get("id")),
                       fmt::format("id \"{}\" must equal the file name stem \"{}\"", e.id, stem)};
    if (!is_category(e.category))
        return Problem{line_of(*root.get("category")),
                       fmt::format("unknown category \"{}\" (see docs/kb-format.md for the fixed list)", e.category)};
    if (auto s = parse_severity(severity)) e.severity = *s;
    else
        return Problem{line_of(*root.get("severity")),
                       fmt::format("severity \"{}\" is not info, warning or critical", severity)};
    if (auto c = parse_enum<Confidence>(confidence, {{"vendor-confirmed", Confidence::vendor_confirmed},
                                                     {"user-confirmed", Confidence::user_confirmed},
                                                     {"reported", Confidence::reported},
                                                     {"hypothesis", Confidence::hypothesis},
                                                     {"generic", Confidence::generic}}))
        e.confidence = *c;
    else
        return Problem{
            line_of(*root.get("confidence")),
            fmt::format("confidence \"{}\" is not vendor-confirmed, user-confirmed, reported, hypothesis or generic",
                        confidence)};
    if (scope.empty() || scope == "system") e.scope = Scope::system;
    else if (scope == "gpu") e.scope = Scope::gpu;
    else return Problem{line_of(*root.get("scope")), fmt::format("scope \"{}\" is not system or gpu", scope)};
    return std::nullopt;
}

std::optional<Problem> parse_references(const toml::table& root, Entry& e) {
    const auto* refs = root.get("references");
    if (!refs) return Problem{1, "missing required key \"references\""};
    const auto* ref_arr = refs->as_array();
    if (!ref_arr) return wrong_type("references", "an array of URLs", *refs);
    if (ref_arr->empty()) return Problem{line_of(*refs), "\"references\" needs at least one URL"};
    for (const auto& r : *ref_arr) {
        const auto url = r.value<std::string>();
        if (!url) return wrong_type("references element", "a string", r);
        if (!url->starts_with("https://") && !url->starts_with("http://"))
            return Problem{line_of(r), fmt::format("reference \"{}\" is not an http(s) URL", *url)};
        e.references.push_back(*url);
    }
    return std::nullopt;
}

std::optional<Problem> parse_signatures(const toml::node& sigs, Entry& e) {
    std::vector<Problem> problems;
    const auto* arr = sigs.as_array();
    if (!arr) return wrong_type("signatures", "an array of tables ([[signatures]])", sigs);
    for (const auto& s : *arr) {
        const auto* t = s.as_table();
        if (!t) return wrong_type("signatures element", "a table", s);
        if (auto bad = check_keys(*t, {"pattern", "context", "window"}, "[[signatures]]")) return bad;
        Signature sig;
        sig.line = line_of(s);
        sig.pattern = get_string(*t, "pattern", sig.line, true, problems).value();
        if (!problems.empty()) return problems.front();
        const auto pattern_line = line_of(*t->get("pattern"));
        if (auto bad = check_hyperscan(sig.pattern))
            return Problem{pattern_line,
                           fmt::format("pattern \"{}\" is not in Hyperscan's PCRE subset: {}", sig.pattern, *bad)};
        if (const auto* ctx = t->get("context")) {
            const auto* carr = ctx->as_array();
            if (!carr) return wrong_type("context", "an array of strings", *ctx);
            for (const auto& w : *carr) {
                const auto word = w.value<std::string>();
                if (!word) return wrong_type("context element", "a string", w);
                if (word->empty()) return Problem{line_of(w), "a context word must not be empty"};
                sig.context.push_back(*word);
            }
        }
        if (const auto* win = t->get("window")) {
            const auto v = win->value<long long>();
            if (!win->is_integer() || !v || *v < 0 || *v > 10000)
                return Problem{line_of(*win), "\"window\" must be an integer from 0 to 10000 (lines)"};
            sig.window = static_cast<unsigned>(*v);
        }
        e.signatures.push_back(std::move(sig));
    }
    return std::nullopt;
}

std::optional<Problem> parse_fixes(const toml::node& fixes, Entry& e) {
    std::vector<Problem> problems;
    const auto* arr = fixes.as_array();
    if (!arr) return wrong_type("fixes", "an array of tables ([[fixes]])", fixes);
    for (const auto& f : *arr) {
        const auto* t = f.as_table();
        if (!t) return wrong_type("fixes element", "a table", f);
        if (auto bad = check_keys(*t, {"patch", "cost"}, "[[fixes]]")) return bad;
        FixRef fix;
        fix.patch = get_string(*t, "patch", line_of(f), true, problems).value();
        fix.cost = get_string(*t, "cost", line_of(f), true, problems).value();
        if (!problems.empty()) return problems.front();
        if (!valid_patch_id(fix.patch))
            return Problem{line_of(*t->get("patch")),
                           fmt::format("patch id \"{}\" must be lower-case letters, digits and '-'", fix.patch)};
        e.fixes.push_back(std::move(fix));
    }
    return std::nullopt;
}

// What the entry as a whole must have, beyond its parts being valid.
std::optional<Problem> check_entry_shape(const toml::table& root, const Entry& e) {
    if (!e.applies && e.signatures.empty())
        return Problem{1, "an entry needs [applies] or [[signatures]] (otherwise it can never fire)"};
    // A family entry answers for a message family in logs; it states no cause a machine
    // could be checked for, and must say how to learn more.
    if (e.confidence == Confidence::generic) {
        if (e.applies) return Problem{line_of(*root.get("applies")), "a generic (family) entry cannot have [applies]"};
        if (e.signatures.empty()) return Problem{1, "a generic (family) entry needs [[signatures]]"};
        if (e.next_step.empty()) return Problem{1, "a generic (family) entry needs \"next_step\""};
    }
    return std::nullopt;
}

std::optional<Problem> parse_entry(const toml::table& root, const std::string& stem, Entry& e) {
    if (auto bad = check_keys(root,
                              {"id", "title", "category", "severity", "confidence", "scope", "summary", "next_step",
                               "causes", "cause_varies", "notes", "references", "applies", "signatures", "fixes"},
                              "an entry"))
        return bad;
    if (auto bad = parse_header(root, stem, e)) return bad;
    if (auto bad = parse_references(root, e)) return bad;
    if (const auto* applies = root.get("applies")) {
        auto p = std::make_shared<Predicate>();
        if (auto bad = parse_predicate(*applies, e.scope, *p, 0)) return bad;
        e.applies = std::move(p);
    }
    if (const auto* sigs = root.get("signatures"))
        if (auto bad = parse_signatures(*sigs, e)) return bad;
    if (const auto* fixes = root.get("fixes"))
        if (auto bad = parse_fixes(*fixes, e)) return bad;
    return check_entry_shape(root, e);
}

}  // namespace

Result<Entry> load_entry(std::string_view text, const std::string& path) {
    const auto stem = std::filesystem::path(path).stem().string();
    auto root = toml_read::parse_toml(text, path, k_doing);
    if (!root) return root.error();
    Entry e;
    e.file = path;
    if (auto bad = parse_entry(*root, stem, e)) return toml_read::data_error(path, bad->line, bad->cause, k_doing);
    return e;
}

Result<KnowledgeBase> load(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        return Error{"loading knowledge base", dir.string(), "not a directory", ExitCode::usage};
    std::vector<std::filesystem::path> files;
    for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
         it.increment(ec))
        if (it->path().extension() == ".toml" && it->is_regular_file(ec)) files.push_back(it->path());
    if (ec) return Error{"loading knowledge base", dir.string(), ec.message(), ExitCode::environment, ec.value()};
    if (files.empty()) return Error{"loading knowledge base", dir.string(), "no *.toml entries", ExitCode::usage};
    std::sort(files.begin(), files.end());

    KnowledgeBase kb;
    for (const auto& file : files) {
        std::ifstream in(file, std::ios::binary);
        if (!in) return Error{"reading knowledge-base file", file.string(), "cannot open", ExitCode::environment};
        std::ostringstream text;
        text << in.rdbuf();
        auto entry = load_entry(text.str(), file.string());
        if (!entry) return entry.error();
        kb.entries.push_back(std::move(*entry));
    }
    std::sort(kb.entries.begin(), kb.entries.end(), [](const Entry& a, const Entry& b) { return a.id < b.id; });
    return kb;
}

const Entry* KnowledgeBase::find(std::string_view id) const {
    const auto it = std::lower_bound(entries.begin(), entries.end(), id,
                                     [](const Entry& e, std::string_view v) { return e.id < v; });
    return it != entries.end() && it->id == id ? &*it : nullptr;
}

std::string_view severity_label(Severity s) {
    switch (s) {
    case Severity::info: return "INFO";
    case Severity::warning: return "WARNING";
    case Severity::critical: return "CRITICAL";
    }
    return "INFO";
}

std::string_view severity_name(Severity s) {
    switch (s) {
    case Severity::info: return "info";
    case Severity::warning: return "warning";
    case Severity::critical: return "critical";
    }
    return "info";
}

std::optional<Severity> parse_severity(std::string_view name) {
    if (name == "info") return Severity::info;
    if (name == "warning") return Severity::warning;
    if (name == "critical") return Severity::critical;
    return std::nullopt;
}

std::string_view confidence_name(Confidence c) {
    switch (c) {
    case Confidence::vendor_confirmed: return "vendor-confirmed";
    case Confidence::user_confirmed: return "user-confirmed";
    case Confidence::reported: return "reported";
    case Confidence::hypothesis: return "hypothesis";
    case Confidence::generic: return "generic";
    }
    return "hypothesis";
}

std::string summary_line(std::string_view summary) {
    // Collapse whitespace, then cut at the first sentence end that is outside brackets and
    // quotes and does not follow an abbreviation ("e.g.", "i.e.", "etc.", "vs.").
    std::string flat;
    for (char c : summary) {
        if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
            if (!flat.empty() && flat.back() != ' ') flat += ' ';
        } else {
            flat += c;
        }
    }
    while (!flat.empty() && flat.back() == ' ') flat.pop_back();
    static constexpr std::string_view k_abbreviations[] = {"e.g", "i.e", "etc", "vs", "cf", "approx"};
    int depth = 0;
    bool quoted = false;
    for (std::size_t i = 0; i < flat.size(); ++i) {
        const char c = flat[i];
        if (c == '(' || c == '[') {
            ++depth;
        } else if ((c == ')' || c == ']') && depth > 0) {
            --depth;
        } else if (c == '\'') {
            // An opening quote follows a space or bracket; an apostrophe ("doesn't") does not.
            if (quoted) quoted = false;
            else if (i == 0 || flat[i - 1] == ' ' || flat[i - 1] == '(') quoted = true;
        } else if ((c == '.' || c == '!' || c == '?') && depth == 0 && !quoted && i + 1 < flat.size() &&
                   flat[i + 1] == ' ') {
            const auto word_start = flat.rfind(' ', i);
            const std::string_view word =
                std::string_view(flat).substr(word_start == std::string::npos ? 0 : word_start + 1,
                                              i - (word_start == std::string::npos ? 0 : word_start + 1));
            const bool ellipsis = c == '.' && i > 0 && flat[i - 1] == '.';
            const bool abbreviation = ellipsis || std::find(std::begin(k_abbreviations), std::end(k_abbreviations),
                                                            word) != std::end(k_abbreviations);
            if (!abbreviation) return flat.substr(0, i + 1);
        }
    }
    return flat;
}

std::string_view scope_name(Scope s) { return s == Scope::gpu ? "gpu" : "system"; }

bool is_category(std::string_view name) {
    return std::any_of(std::begin(k_categories), std::end(k_categories), [&](const char* c) { return name == c; });
}

}  // namespace rmcp::kb
