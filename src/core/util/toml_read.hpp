// Strict reading of rmcp's own TOML data files (kb/, patches/, profiles/, probe/catalogue.toml):
// every error names file:line, unknown keys are errors (a typo must not silently disable a
// safeguard), and non-ASCII outside strings is refused before toml++ sees it (toml_guard.hpp).
#pragma once

#include "util/error.hpp"
#include "util/toml.hpp"
#include "util/toml_guard.hpp"

#include <fmt/format.h>

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp::toml_read {

inline unsigned line_of(const toml::node& n) { return static_cast<unsigned>(n.source().begin.line); }
inline unsigned line_of(const toml::key& k) { return static_cast<unsigned>(k.source().begin.line); }

// The TOML type of `n` in words, for "must be X, not Y" messages.
inline std::string_view type_name(const toml::node& n) {
    switch (n.type()) {
    case toml::node_type::string: return "string";
    case toml::node_type::integer: return "integer";
    case toml::node_type::floating_point: return "float";
    case toml::node_type::boolean: return "boolean";
    case toml::node_type::array: return "array";
    case toml::node_type::table: return "table";
    default: return "date/time";
    }
}

inline Error data_error(const std::string& file, unsigned line, std::string cause, std::string_view doing = "reading") {
    return Error{std::string(doing), fmt::format("{}:{}", file, line), std::move(cause), ExitCode::usage};
}

// `doing` begins the message of every error ("reading", "parsing knowledge-base file").
inline Result<toml::table> parse_toml(std::string_view text, const std::string& file,
                                      std::string_view doing = "reading") {
    if (const auto line = toml_non_ascii_outside_strings(text))
        return data_error(file, static_cast<unsigned>(*line), "non-ASCII character outside a string or comment", doing);
    try {
        return toml::parse(text, file);
    } catch (const toml::parse_error& e) {
        return data_error(file, static_cast<unsigned>(e.source().begin.line), std::string(e.description()), doing);
    }
}

// The first key of `t` outside `allowed`, or nullptr.
inline const toml::key* unknown_key(const toml::table& t, std::initializer_list<std::string_view> allowed) {
    for (const auto& [key, node] : t) {
        bool known = false;
        for (const auto a : allowed) known = known || key.str() == a;
        if (!known) return &key;
    }
    return nullptr;
}

// Fails on keys outside `allowed`.
inline Status check_keys(const toml::table& t, const std::string& file, std::initializer_list<std::string_view> allowed,
                         std::string_view where) {
    if (const toml::key* key = unknown_key(t, allowed))
        return data_error(file, line_of(*t.get(key->str())), fmt::format("unknown key '{}' in {}", key->str(), where));
    return ok_status();
}

inline Result<std::optional<std::string>> opt_string(const toml::table& t, std::string_view key,
                                                     const std::string& file) {
    const toml::node* n = t.get(key);
    if (!n) return std::optional<std::string>{};
    if (!n->is_string()) return data_error(file, line_of(*n), fmt::format("'{}' must be a string", key));
    return std::optional<std::string>{n->as_string()->get()};
}

inline Result<std::string> req_string(const toml::table& t, std::string_view key, const std::string& file,
                                      unsigned table_line) {
    auto v = opt_string(t, key, file);
    if (!v) return v.error();
    if (!*v || (*v)->empty()) return data_error(file, table_line, fmt::format("missing required string '{}'", key));
    return **v;
}

inline Result<std::vector<std::string>> opt_string_array(const toml::table& t, std::string_view key,
                                                         const std::string& file) {
    std::vector<std::string> out;
    const toml::node* n = t.get(key);
    if (!n) return out;
    const auto* arr = n->as_array();
    if (!arr) return data_error(file, line_of(*n), fmt::format("'{}' must be an array of strings", key));
    for (const auto& item : *arr) {
        if (!item.is_string())
            return data_error(file, line_of(item), fmt::format("'{}' must contain only strings", key));
        out.push_back(item.as_string()->get());
    }
    return out;
}

// A table of string → string (env variables to set, module parameters).
inline Result<std::map<std::string, std::string>> opt_string_table(const toml::table& t, std::string_view key,
                                                                   const std::string& file) {
    std::map<std::string, std::string> out;
    const toml::node* n = t.get(key);
    if (!n) return out;
    const auto* tab = n->as_table();
    if (!tab) return data_error(file, line_of(*n), fmt::format("'{}' must be a table of strings", key));
    for (const auto& [k, v] : *tab) {
        if (!v.is_string())
            return data_error(file, line_of(v), fmt::format("'{}.{}' must be a string (quote numbers)", key, k.str()));
        out.emplace(std::string(k.str()), v.as_string()->get());
    }
    return out;
}

inline Result<bool> opt_bool(const toml::table& t, std::string_view key, const std::string& file, bool fallback) {
    const toml::node* n = t.get(key);
    if (!n) return fallback;
    if (!n->is_boolean()) return data_error(file, line_of(*n), fmt::format("'{}' must be true or false", key));
    return n->as_boolean()->get();
}

}  // namespace rmcp::toml_read
