// Pictures of a probe result: the scenario x configuration grid as one self-contained HTML
// page and as text for a terminal. Both read the result's JSON (what `rmcp probe --format
// json` prints, docs/probe.md), so a saved result renders exactly like a live one.
#pragma once

#include "util/style.hpp"
#include "util/error.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace rmcp::probe {

// The five colours of the grid.
enum class CellClass { pass, wrong, crash, hang, skipped };
std::string_view cell_class_name(CellClass c);  // "pass", "wrong", "crash", "hang", "skipped"

struct GridCell {
    CellClass cls = CellClass::skipped;
    bool ran = false;   // false: not run under this configuration (the search stops early)
    std::string text;   // "0.46 ms", "crash", "n/a", "-"
    std::string title;  // the hover text: outcome, detail, times, message
};

struct Grid {
    std::vector<std::string> scenarios;              // rows, in catalogue order
    std::vector<std::string> configurations;         // columns: default first, then in the order run
    std::vector<std::vector<std::string>> switches;  // per configuration
    std::vector<nlohmann::json> envs;                // per configuration
    std::vector<std::vector<GridCell>> cells;        // [scenario][configuration]
};

// From a probe result. A malformed result (a saved file is input like any other) is a usage
// error that names the field.
Result<Grid> grid_from_json(const nlohmann::json& result);

// One HTML page: no script, no network (a Content-Security-Policy of default-src 'none'
// with inline styles only), hover titles for times. `source` names where the result came
// from (a file, or "this run").
Result<std::string> render_html(const nlohmann::json& result, const std::string& source);

// The grid for a terminal: columns C1..Cn with a legend, cells coloured when `style` says so.
std::string render_grid_text(const Grid& grid, const Style& style);

// The text summary: device, the default configuration as a list (TextLayout::list, for
// pipes and files) or every configuration as the grid (TextLayout::grid, for a terminal),
// the bisect outcome and the child count.
enum class TextLayout { list, grid };
Result<std::string> render_summary_text(const nlohmann::json& result, const Style& style, TextLayout layout);

// Reads a saved result (`rmcp probe --format json > FILE`); errors name the file.
Result<nlohmann::json> load_result(const std::string& path);

}  // namespace rmcp::probe
