#include "render/probe_view.hpp"

#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

namespace rmcp::probe {

namespace {

// A saved result is read defensively: a missing or mistyped field becomes one error that
// names it ("configurations[2].results[0].outcome: expected a string").
struct BadResult {
    std::string where;
    std::string why;
};

const nlohmann::json& member(const nlohmann::json& j, std::string_view key, const std::string& where) {
    if (!j.is_object()) throw BadResult{where, "expected an object"};
    const auto it = j.find(key);
    if (it == j.end()) throw BadResult{where.empty() ? std::string(key) : where + "." + std::string(key), "missing"};
    return *it;
}

std::string text_of(const nlohmann::json& j, std::string_view key, const std::string& where, bool required = true) {
    if (!j.is_object() || !j.contains(key) || j[std::string(key)].is_null()) {
        if (required) throw BadResult{where + "." + std::string(key), "missing"};
        return "";
    }
    const auto& v = j[std::string(key)];
    if (!v.is_string()) throw BadResult{where + "." + std::string(key), "expected a string"};
    return v.get<std::string>();
}

std::optional<double> number_of(const nlohmann::json& j, std::string_view key) {
    if (!j.is_object() || !j.contains(key) || !j[std::string(key)].is_number()) return std::nullopt;
    return j[std::string(key)].get<double>();
}

const nlohmann::json& array_of(const nlohmann::json& j, std::string_view key, const std::string& where) {
    const auto& v = member(j, key, where);
    if (!v.is_array())
        throw BadResult{where.empty() ? std::string(key) : where + "." + std::string(key), "expected an array"};
    return v;
}

std::string html_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (const char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default:
            // Control characters (other than tab/newline) have no place in a page.
            if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') out += ' ';
            else out += c;
        }
    }
    return out;
}

// A string field, or "" when absent or of another type (for optional, display-only fields).
std::string opt_text(const nlohmann::json& j, std::string_view key) {
    if (!j.is_object()) return "";
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool opt_bool(const nlohmann::json& j, std::string_view key) {
    if (!j.is_object()) return false;
    const auto it = j.find(key);
    return it != j.end() && it->is_boolean() && it->get<bool>();
}

std::string scalar_text(const nlohmann::json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_null()) return "-";
    return json_text(v);
}

CellClass class_of(std::string_view outcome) {
    if (outcome == "ok") return CellClass::pass;
    if (outcome == "wrong") return CellClass::wrong;
    if (outcome == "crash") return CellClass::crash;
    if (outcome == "hang") return CellClass::hang;
    return CellClass::skipped;  // unsupported
}

std::string seconds_text(double s) { return s < 10 ? fmt::format("{:.2f} s", s) : fmt::format("{:.0f} s", s); }

GridCell cell_from(const nlohmann::json& r, const std::string& scenario, const std::string& config,
                   const std::string& where) {
    GridCell c;
    c.ran = true;
    const std::string outcome = text_of(r, "outcome", where);
    if (outcome != "ok" && outcome != "unsupported" && outcome != "wrong" && outcome != "crash" && outcome != "hang")
        throw BadResult{where + ".outcome", fmt::format("unknown outcome '{}'", outcome)};
    c.cls = class_of(outcome);
    const std::string detail = text_of(r, "detail", where, false);
    const std::string message = text_of(r, "message", where, false);
    const std::string kb = text_of(r, "kb_entry", where, false);
    const auto median = number_of(r, "median_ms");
    const auto min = number_of(r, "min_ms");
    const auto wall = number_of(r, "wall_s");
    std::string title = fmt::format("{} under {}: ", scenario, config);
    if (c.cls == CellClass::pass) {
        c.text = median ? fmt::format("{:.3g} ms", *median) : "ok";
        title += median ? fmt::format("pass, median {:.3g} ms", *median) : "pass";
        if (min) title += fmt::format(" (min {:.3g} ms)", *min);
    } else if (outcome == "unsupported") {
        c.text = "n/a";
        title += "skipped: unsupported on this device";
    } else {
        c.text = outcome;
        title += outcome;
        if (!detail.empty()) title += " (" + detail + ")";
        if (!kb.empty()) title += " [" + kb + "]";
        if (!message.empty() && outcome != "wrong") title += ": " + message.substr(0, 300);
    }
    if (wall) title += fmt::format("; child {}", seconds_text(*wall));
    c.title = std::move(title);
    return c;
}

std::string env_text(const nlohmann::json& env) {
    std::string out;
    if (!env.is_object()) return out;
    for (const auto& [k, v] : env.items()) out += (out.empty() ? "" : " ") + k + "=" + scalar_text(v);
    return out;
}

constexpr std::string_view k_css = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#1b1b1b;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.verdict{font-size:16px;margin:6px 0 0}.verdict.good{color:#1b5e20}.verdict.bad{color:#b71c1c}.verdict.cpu{color:#8a4b00;font-weight:bold}.stamp{color:#555;margin:0}
table{border-collapse:collapse}th,td{padding:3px 7px;text-align:left;vertical-align:top}
table.facts th{color:#555;font-weight:600;padding-right:14px}
table.grid th.cfg{text-align:center;font-weight:600;white-space:nowrap}table.grid th.cfg small{font-weight:normal;color:#666}
table.configs{margin-top:12px;font-size:12px}table.configs td{word-break:break-all}
table.grid th.row{font-family:ui-monospace,Menlo,Consolas,monospace;font-weight:normal;white-space:nowrap}
table.grid td.cell{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;text-align:center;min-width:64px;border:1px solid #fff;cursor:default}
td.cell:hover{outline:2px solid #000}
.o-pass{background:#c8e6c9;color:#1b5e20}.o-wrong{background:#ffe082;color:#6d4c00}.o-crash{background:#ef9a9a;color:#7f0000}
.o-hang{background:#ce93d8;color:#4a148c}.o-skipped{background:#eeeeee;color:#757575}
td.cell.not-run{background:repeating-linear-gradient(45deg,#f5f5f5,#f5f5f5 4px,#e8e8e8 4px,#e8e8e8 8px)}
.legend span{display:inline-block;padding:1px 8px;margin-right:6px;border-radius:3px}
ol.steps{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;padding-left:28px}ol.steps li{margin:1px 0;padding:0 6px}
code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}pre{background:#f6f6f6;padding:8px;overflow:auto}
footer{margin-top:32px;color:#777;font-size:12px}
)";

}  // namespace

std::string_view cell_class_name(CellClass c) {
    switch (c) {
    case CellClass::pass: return "pass";
    case CellClass::wrong: return "wrong";
    case CellClass::crash: return "crash";
    case CellClass::hang: return "hang";
    case CellClass::skipped: return "skipped";
    }
    return "skipped";
}

Result<Grid> grid_from_json(const nlohmann::json& result) {
    try {
        Grid g;
        std::map<std::string, std::size_t> row;
        const auto& scenarios = array_of(result, "scenarios", "");
        for (std::size_t i = 0; i < scenarios.size(); ++i) {
            const std::string id = text_of(scenarios[i], "id", fmt::format("scenarios[{}]", i));
            if (!row.emplace(id, g.scenarios.size()).second)
                throw BadResult{fmt::format("scenarios[{}].id", i), fmt::format("duplicate scenario '{}'", id)};
            g.scenarios.push_back(id);
        }
        const auto& configs = array_of(result, "configurations", "");
        for (std::size_t c = 0; c < configs.size(); ++c) {
            const std::string where = fmt::format("configurations[{}]", c);
            const std::string name = text_of(configs[c], "name", where);
            g.configurations.push_back(name);
            std::vector<std::string> switches;
            if (configs[c].contains("switches") && configs[c]["switches"].is_array())
                for (const auto& s : configs[c]["switches"])
                    if (s.is_string()) switches.push_back(s.get<std::string>());
            g.switches.push_back(std::move(switches));
            g.envs.push_back(configs[c].contains("env") ? configs[c]["env"] : nlohmann::json::object());
        }
        g.cells.assign(g.scenarios.size(), std::vector<GridCell>(g.configurations.size()));
        for (std::size_t s = 0; s < g.scenarios.size(); ++s)
            for (std::size_t c = 0; c < g.configurations.size(); ++c) {
                GridCell& cell = g.cells[s][c];
                cell.text = "-";
                cell.title = fmt::format("{} under {}: skipped: not run under this configuration (the search "
                                         "stops a configuration at its first failure)",
                                         g.scenarios[s], g.configurations[c]);
            }
        for (std::size_t c = 0; c < configs.size(); ++c) {
            const std::string where = fmt::format("configurations[{}]", c);
            const auto& results = array_of(configs[c], "results", where);
            for (std::size_t i = 0; i < results.size(); ++i) {
                const std::string rwhere = fmt::format("{}.results[{}]", where, i);
                const std::string id = text_of(results[i], "scenario", rwhere);
                const auto it = row.find(id);
                if (it == row.end()) throw BadResult{rwhere + ".scenario", fmt::format("unknown scenario '{}'", id)};
                g.cells[it->second][c] = cell_from(results[i], id, g.configurations[c], rwhere);
            }
        }
        return g;
    } catch (const BadResult& bad) {
        return Error{"reading probe result field", bad.where, bad.why, ExitCode::usage};
    }
}

Result<nlohmann::json> load_result(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return os_error("reading probe result", path, errno, ExitCode::usage);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    try {
        auto j = nlohmann::json::parse(s);
        if (!j.is_object()) return Error{"reading probe result", path, "expected a JSON object", ExitCode::usage};
        return j;
    } catch (const nlohmann::json::parse_error& e) {
        // byte is 1-based; say which line, as for every other input file.
        std::size_t line = 1;
        for (std::size_t i = 0; i + 1 < e.byte && i < s.size(); ++i)
            if (s[i] == '\n') ++line;
        return Error{"reading probe result", fmt::format("{}:{}", path, line),
                     "not valid JSON (as written by "
                     "`rmcp probe --format json`)",
                     ExitCode::usage};
    } catch (const nlohmann::json::exception& e) {
        // Valid syntax nlohmann cannot hold (a number past double's range: out_of_range 406),
        // found by tests/fuzz/fuzz_probe_result.
        return Error{"reading probe result", path, fmt::format("not a probe result: {}", e.what()), ExitCode::usage};
    }
}

std::string render_grid_text(const Grid& grid, const Style& style) {
    std::size_t width = 8;
    for (const auto& s : grid.scenarios) width = std::max(width, s.size());
    constexpr std::size_t k_cell = 10;
    std::string out = fmt::format("{:<{}}", "scenario", width);
    for (std::size_t c = 0; c < grid.configurations.size(); ++c)
        out += fmt::format("  {:>{}}", fmt::format("C{}", c + 1), k_cell);
    out += "\n";
    for (std::size_t s = 0; s < grid.scenarios.size(); ++s) {
        out += fmt::format("{:<{}}", grid.scenarios[s], width);
        for (const auto& cell : grid.cells[s]) {
            std::string text = cell.text.size() > k_cell ? cell.text.substr(0, k_cell) : cell.text;
            if (cell.cls == CellClass::crash || cell.cls == CellClass::hang || cell.cls == CellClass::wrong)
                for (auto& ch : text) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
            const std::string padded = fmt::format("  {:>{}}", text, k_cell);
            switch (cell.cls) {
            case CellClass::pass: out += style.green(padded); break;
            case CellClass::wrong: out += style.yellow(padded); break;
            case CellClass::crash:
            case CellClass::hang: out += style.red(padded); break;
            case CellClass::skipped: out += style.dim(padded); break;
            }
        }
        out += "\n";
    }
    for (std::size_t c = 0; c < grid.configurations.size(); ++c) {
        out += fmt::format("  C{} {}", c + 1, grid.configurations[c]);
        const std::string env = env_text(grid.envs[c]);
        if (!env.empty()) out += "  (" + env + ")";
        out += "\n";
    }
    out += "  ok: median time; CRASH, HANG, WRONG: failures; n/a: unsupported on this device; -: not run\n";
    return out;
}

namespace {

// A probe on the CPU says nothing about the GPU (newcomer review, finding 5): its headline says
// so first, in text and on the page, whatever passed.
constexpr std::string_view k_cpu_headline = "Probed the CPU; this says nothing about your GPU";
bool probed_cpu(const nlohmann::json& result) { return opt_text(result, "torch_device") == "cpu"; }

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
}

// "all 10 pass", "1 of 10 fail": how many scenarios of the default configuration fail.
std::string failures_text(int failures, std::size_t scenarios) {
    if (failures == 0)
        return scenarios == 1 ? "the 1 scenario passes" : fmt::format("all {} scenarios pass", scenarios);
    return fmt::format("{} of {} fail", failures, plural(scenarios, "scenario", "scenarios"));
}

// The configuration bisect chose, as the page and the text name it ("" when none).
std::string chosen_configuration(const nlohmann::json& result) {
    if (!result.contains("profile") || !result["profile"].is_object()) return {};
    const auto& p = result["profile"];
    if (!p.contains("configuration") || !p["configuration"].is_string()) return {};
    return p["configuration"].get<std::string>();
}

}  // namespace

Result<std::string> render_summary_text(const nlohmann::json& result, const Style& style, TextLayout layout) {
    auto grid = grid_from_json(result);
    if (!grid) return grid.error();
    const Grid& g = *grid;
    const auto str = [&](std::string_view key) { return opt_text(result, key); };
    std::string out = probed_cpu(result) ? std::string(k_cpu_headline) + "\n" : std::string();
    out += fmt::format("device: {}{}  torch {}  python {}\n", str("device"),
                       str("gfx_target").empty() ? "" : " (" + str("gfx_target") + ")", str("torch_version"),
                       str("python"));
    int failures = 0;
    for (const auto& row : g.cells)
        if (!row.empty() && row[0].ran &&
            (row[0].cls == CellClass::crash || row[0].cls == CellClass::hang || row[0].cls == CellClass::wrong))
            ++failures;
    if (layout == TextLayout::grid && !g.configurations.empty()) {
        out += "\n" + render_grid_text(g, style);
    } else if (!g.configurations.empty()) {
        std::size_t width = 8;
        for (const auto& sid : g.scenarios) width = std::max(width, sid.size());
        out += fmt::format("\n{} configuration:\n", g.configurations[0]);
        const auto& results = result["configurations"][0]["results"];
        std::map<std::string, const nlohmann::json*> by_id;
        for (const auto& r : results) by_id[opt_text(r, "scenario")] = &r;
        for (const auto& sid : g.scenarios) {
            const auto it = by_id.find(sid);
            if (it == by_id.end()) continue;
            const nlohmann::json& r = *it->second;
            const std::string outcome = opt_text(r, "outcome");
            std::string text = outcome;
            if (outcome == "ok") {
                const auto median = number_of(r, "median_ms");
                text = median ? fmt::format("ok {:.3g} ms", *median) : "ok";
            } else {
                if (!opt_text(r, "detail").empty()) text += " (" + opt_text(r, "detail") + ")";
                if (!opt_text(r, "kb_entry").empty()) text += " [" + opt_text(r, "kb_entry") + "]";
                if (!opt_text(r, "message").empty() && outcome != "unsupported" && outcome != "wrong")
                    text += ": " + opt_text(r, "message").substr(0, 160);
            }
            out += fmt::format("  {:<{}}  {}\n", sid, width, text);
        }
    }
    out += fmt::format("  {}\n", failures_text(failures, g.scenarios.size()));
    if (result.contains("bisect") && result["bisect"].is_object()) {
        const auto& b = result["bisect"];
        const auto joined = [&](std::string_view key, std::string_view sep) {
            std::string j;
            if (b.contains(key) && b[std::string(key)].is_array())
                for (const auto& x : b[std::string(key)]) j += (j.empty() ? "" : std::string(sep)) + scalar_text(x);
            return j;
        };
        out += "\nbisect:\n";
        if (opt_bool(b, "found")) {
            const std::string minimal = joined("minimal", " + ");
            out += fmt::format("  smallest passing set: {}\n", minimal.empty() ? "(none needed)" : minimal);
            if (b.contains("fastest") && b["fastest"].is_array()) {
                const std::string key = joined("fastest", "+");
                out += fmt::format("  fastest passing configuration: {}", key.empty() ? "default" : key);
                if (const auto total = number_of(b, "fastest_total_ms"))
                    out += fmt::format(" ({:.3g} ms over all scenarios)", *total);
                out += "\n";
                if (b.contains("fastest_env") && b["fastest_env"].is_object())
                    for (const auto& [k, v] : b["fastest_env"].items())
                        out += fmt::format("    {}={}\n", k, scalar_text(v));
            }
            // What to do with it (finding 23): save it as a profile, then run under it.
            const std::string saved = result.contains("profile") && result["profile"].is_object() &&
                                              result["profile"].contains("saved_to") &&
                                              result["profile"]["saved_to"].is_string()
                                          ? result["profile"]["saved_to"].get<std::string>()
                                          : std::string();
            if (!saved.empty())
                out += fmt::format("  next: rmcp run --profile {} -- python train.py\n",
                                   std::filesystem::path(saved).stem().string());
            else if (!probed_cpu(result))
                out += "  next: rmcp probe --bisect --save, then rmcp run --profile probed -- python train.py\n";
        } else {
            out += "  no passing configuration found\n";
        }
        if (!opt_text(b, "note").empty()) out += fmt::format("  note: {}\n", opt_text(b, "note"));
        const auto count = [&](std::string_view key) { return static_cast<long long>(number_of(b, key).value_or(0)); };
        out += fmt::format("  child runs: {} search + {} verify + {} timing = {}\n", count("search_runs"),
                           count("verify_runs"), count("fastest_runs"),
                           count("search_runs") + count("verify_runs") + count("fastest_runs"));
    }
    out += fmt::format("\n{} child runs in all\n", static_cast<long long>(number_of(result, "child_runs").value_or(0)));
    return out;
}

Result<std::string> render_html(const nlohmann::json& result, const std::string& source) {
    auto grid = grid_from_json(result);
    if (!grid) return grid.error();
    const Grid& g = *grid;
    const auto str = [&](std::string_view key) { return opt_text(result, key); };
    const bool passed = opt_bool(result, "passed");
    const bool bisected = result.contains("bisect") && result["bisect"].is_object();
    std::string out;
    out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    // Nothing may be fetched: no script runs, no font, image or style comes from elsewhere.
    out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
           "base-uri 'none'; form-action 'none'\">\n";
    out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    out +=
        fmt::format("<title>rmcp probe: {}</title>\n", html_escape(str("device").empty() ? "result" : str("device")));
    out += "<style>" + std::string(k_css) + "</style>\n</head>\n<body>\n";
    out += "<h1>rmcp probe</h1>\n";
    // Which rmcp measured it, and when (finding 5); a result saved by an older rmcp has neither.
    if (!str("rmcp_version").empty() || !str("generated_at").empty())
        out += fmt::format("<p class=\"stamp\">rmcp {}{}</p>\n", html_escape(str("rmcp_version")),
                           str("generated_at").empty() ? "" : ", " + html_escape(str("generated_at")));
    int failures = 0, total_cells = 0;
    for (std::size_t s = 0; s < g.scenarios.size(); ++s)
        if (!g.cells[s].empty()) {
            const auto& c = g.cells[s][0];
            failures += (c.cls == CellClass::crash || c.cls == CellClass::hang || c.cls == CellClass::wrong) ? 1 : 0;
        }
    for (const auto& row : g.cells) total_cells += static_cast<int>(row.size());
    std::string verdict;
    const std::string chosen = chosen_configuration(result);
    if (bisected)
        verdict = passed ? fmt::format("--bisect found a configuration under which every scenario passes: {}",
                                       chosen.empty() ? "default" : chosen)
                         : "no configuration of the switches makes every scenario pass";
    else
        verdict = passed
                      ? "every scenario passes under the default configuration"
                      : fmt::format("{} under the default configuration", failures_text(failures, g.scenarios.size()));
    // On the CPU nothing here is good news about the GPU: the headline says that, never green.
    const bool cpu = probed_cpu(result);
    if (cpu) verdict = std::string(k_cpu_headline) + " (" + verdict + ")";
    out += fmt::format("<p class=\"verdict {}\" id=\"verdict\">{}</p>\n",
                       cpu      ? "cpu"
                       : passed ? "good"
                                : "bad",
                       html_escape(verdict));

    // The machine's facts.
    out += "<section id=\"machine\">\n<h2>Machine</h2>\n<table class=\"facts\">\n";
    const auto fact = [&](std::string_view name, const std::string& value) {
        if (!value.empty())
            out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", html_escape(name), html_escape(value));
    };
    fact("device probed", str("device") + (str("gfx_target").empty() ? "" : " (" + str("gfx_target") + ")") +
                              (str("torch_device").empty() ? "" : ", torch device " + str("torch_device")));
    fact("python", str("python") + (str("python_version").empty() ? "" : " (Python " + str("python_version") + ")"));
    fact("torch", str("torch_version") + (str("torch_build").empty() ? "" : ", " + str("torch_build") + " build"));
    if (result.contains("machine") && result["machine"].is_object()) {
        const auto& m = result["machine"];
        for (const auto& [k, v] : m.items()) {
            if (v.is_array()) {
                std::string joined;
                for (const auto& item : v) joined += (joined.empty() ? "" : "; ") + scalar_text(item);
                fact(k, joined.empty() ? "none" : joined);
            } else if (v.is_object()) {
                fact(k, env_text(v).empty() ? "none" : env_text(v));
            } else {
                fact(k, scalar_text(v));
            }
        }
    }
    out += "</table>\n</section>\n";

    // The grid.
    out += fmt::format("<section id=\"grid\">\n<h2>Scenarios &times; configurations</h2>\n"
                       "<p>{}, {}, {}; hover a cell for its times.</p>\n",
                       plural(g.scenarios.size(), "scenario", "scenarios"),
                       plural(g.configurations.size(), "configuration", "configurations"),
                       plural(static_cast<std::size_t>(total_cells), "cell", "cells"));
    out += "<p class=\"legend\"><span class=\"o-pass\">pass</span><span class=\"o-wrong\">wrong result</span>"
           "<span class=\"o-crash\">crash</span><span class=\"o-hang\">hang</span>"
           "<span class=\"o-skipped\">skipped (unsupported or not run)</span></p>\n";
    out += "<table class=\"grid\">\n<thead><tr><th>scenario</th>";
    for (std::size_t c = 0; c < g.configurations.size(); ++c) {
        const std::string env = env_text(g.envs[c]);
        out += fmt::format("<th class=\"cfg\" title=\"{}: {}\">C{}<br><small>{}</small></th>",
                           html_escape(g.configurations[c]),
                           html_escape(env.empty() ? "the inherited environment" : env), c + 1,
                           g.switches[c].empty() ? "default"
                                                 : fmt::format("{} switch{}", g.switches[c].size(),
                                                               g.switches[c].size() == 1 ? "" : "es"));
    }
    out += "</tr></thead>\n<tbody>\n";
    for (std::size_t s = 0; s < g.scenarios.size(); ++s) {
        out += fmt::format("<tr><th class=\"row\">{}</th>", html_escape(g.scenarios[s]));
        for (std::size_t c = 0; c < g.configurations.size(); ++c) {
            const GridCell& cell = g.cells[s][c];
            const auto cls = cell_class_name(cell.cls);
            out += fmt::format("<td class=\"cell o-{}{}\" data-scenario=\"{}\" data-configuration=\"{}\" "
                               "data-outcome=\"{}\" title=\"{}\">{}</td>",
                               cls, cell.ran ? "" : " not-run", html_escape(g.scenarios[s]),
                               html_escape(g.configurations[c]), cls, html_escape(cell.title), html_escape(cell.text));
        }
        out += "</tr>\n";
    }
    out += "</tbody>\n</table>\n<table class=\"facts configs\">\n";
    for (std::size_t c = 0; c < g.configurations.size(); ++c) {
        const std::string env = env_text(g.envs[c]);
        out +=
            fmt::format("<tr><th>C{}</th><td>{}</td><td><code>{}</code></td></tr>\n", c + 1,
                        html_escape(g.configurations[c]), html_escape(env.empty() ? "(inherited environment)" : env));
    }
    out += "</table>\n</section>\n";

    // The bisect path.
    out += "<section id=\"bisect\">\n<h2>Bisect path</h2>\n";
    if (!bisected) {
        out += "<p>Not run (<code>rmcp probe --bisect</code> searches the workaround switches).</p>\n";
    } else {
        const auto& b = result["bisect"];
        const auto list = [&](std::string_view key) {
            std::string joined;
            if (b.contains(key) && b[std::string(key)].is_array())
                for (const auto& x : b[std::string(key)]) joined += (joined.empty() ? "" : " + ") + scalar_text(x);
            return joined.empty() ? std::string("(none needed)") : joined;
        };
        out += "<table class=\"facts\">\n";
        fact("smallest passing set", opt_bool(b, "found") ? list("minimal") : "none found");
        if (b.contains("fastest") && b["fastest"].is_array()) fact("fastest passing configuration", list("fastest"));
        if (b.contains("note") && b["note"].is_string()) fact("note", b["note"].get<std::string>());
        const auto runs = [&](std::string_view key) {
            return b.contains(key) && b[std::string(key)].is_number() ? json_text(b[std::string(key)])
                                                                      : std::string("?");
        };
        fact("child runs", fmt::format("{} search + {} verify + {} timing", runs("search_runs"), runs("verify_runs"),
                                       runs("fastest_runs")));
        out += "</table>\n<ol class=\"steps\">\n";
        if (b.contains("steps") && b["steps"].is_array())
            for (const auto& step : b["steps"]) {
                if (!step.is_object()) continue;
                const std::string outcome = opt_text(step, "outcome");
                const auto cls = cell_class_name(class_of(outcome));
                out += fmt::format("<li class=\"o-{}\">{} &middot; {{{}}} &middot; {} &rarr; {}</li>\n", cls,
                                   html_escape(opt_text(step, "phase")), html_escape(opt_text(step, "configuration")),
                                   html_escape(opt_text(step, "scenario")), html_escape(outcome));
            }
        out += "</ol>\n";
    }
    out += "</section>\n";

    // The chosen profile.
    out += "<section id=\"profile\">\n<h2>Chosen profile</h2>\n";
    const auto& p = result.contains("profile") ? result["profile"] : nlohmann::json();
    if (!p.is_object() || !p.contains("configuration") || !p["configuration"].is_string()) {
        out += "<p>None: no configuration passed every scenario, so none is recommended.</p>\n";
    } else {
        out += "<table class=\"facts\">\n";
        fact("configuration", p["configuration"].get<std::string>());
        if (p.contains("cost") && p["cost"].is_string()) fact("cost", p["cost"].get<std::string>());
        fact("saved to", p.contains("saved_to") && p["saved_to"].is_string() ? p["saved_to"].get<std::string>()
                                                                             : "not saved (rmcp probe --save FILE)");
        out += "</table>\n";
        std::string env;
        if (p.contains("env") && p["env"].is_object())
            for (const auto& [k, v] : p["env"].items()) env += fmt::format("{}={}\n", k, scalar_text(v));
        out += fmt::format("<pre>{}</pre>\n",
                           html_escape(env.empty() ? "(no variables: the default configuration)\n" : env));
    }
    out += "</section>\n";
    out +=
        fmt::format("<footer>Written by rmcp probe from {}. {} child runs.</footer>\n</body>\n</html>\n",
                    html_escape(source),
                    result.contains("child_runs") && result["child_runs"].is_number() ? json_text(result["child_runs"])
                                                                                      : std::string("?"));
    return out;
}

}  // namespace rmcp::probe
