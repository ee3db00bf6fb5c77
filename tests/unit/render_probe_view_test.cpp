// The probe result's pictures: the grid model read from a result's JSON, the HTML page and
// the terminal grid.
#include "render/probe_view.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace rmcp::probe {
namespace {

nlohmann::json sample() {
    return nlohmann::json::parse(R"json({
      "device": "AMD <Radeon> & co", "torch_device": "cuda", "gfx_target": "gfx1030", "torch_version": "2.3.0",
      "python": "/usr/bin/python3", "passed": true, "child_runs": 4,
      "scenarios": [{"id": "a"}, {"id": "b"}],
      "configurations": [
        {"name": "default", "switches": [], "env": {},
         "results": [{"scenario": "a", "outcome": "ok", "median_ms": 1.5, "min_ms": 1.25, "wall_s": 0.2},
                     {"scenario": "b", "outcome": "crash", "detail": "SIGABRT", "kb_entry": "memory-access-fault",
                      "message": "Memory access fault <script>alert(1)</script>", "wall_s": 0.5}]},
        {"name": "no-gemm", "switches": ["no-gemm"], "env": {"MIOPEN_DEBUG_CONV_GEMM": "0"},
         "results": [{"scenario": "b", "outcome": "ok", "median_ms": 2.0}]}],
      "bisect": {"found": true, "minimal": ["no-gemm"], "fastest": ["no-gemm"], "search_runs": 1, "verify_runs": 1,
                 "fastest_runs": 0, "steps": [{"phase": "search", "configuration": "no-gemm", "scenario": "b",
                                               "outcome": "ok"}]},
      "profile": {"configuration": "no-gemm", "env": {"MIOPEN_DEBUG_CONV_GEMM": "0"}, "cost": "c"},
      "machine": {"kernel": "6.8", "gpus": ["AMD Radeon RX 6700 XT gfx1031 (runs as gfx1030)"]}
    })json");
}

TEST(ProbeView, GridHasEveryScenarioAndConfiguration) {
    auto grid = grid_from_json(sample());
    ASSERT_TRUE(grid.ok()) << grid.error().message();
    EXPECT_EQ(grid->scenarios, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(grid->configurations, (std::vector<std::string>{"default", "no-gemm"}));
    EXPECT_EQ(grid->cells[0][0].cls, CellClass::pass);
    EXPECT_EQ(grid->cells[0][0].text, "1.5 ms");
    EXPECT_EQ(grid->cells[0][0].title, "a under default: pass, median 1.5 ms (min 1.25 ms); child 0.20 s");
    EXPECT_EQ(grid->cells[1][0].cls, CellClass::crash);
    EXPECT_NE(grid->cells[1][0].title.find("crash (SIGABRT) [memory-access-fault]: Memory access fault"),
              std::string::npos);
    EXPECT_EQ(grid->cells[0][1].cls, CellClass::skipped);  // not run under no-gemm
    EXPECT_FALSE(grid->cells[0][1].ran);
    EXPECT_EQ(grid->cells[1][1].cls, CellClass::pass);
}

TEST(ProbeView, MalformedResultsNameTheField) {
    auto result = sample();
    result["configurations"][1]["results"][0]["outcome"] = "exploded";
    auto bad = grid_from_json(result);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().path, "configurations[1].results[0].outcome");
    EXPECT_EQ(bad.error().cause, "unknown outcome 'exploded'");
    EXPECT_EQ(bad.error().code, ExitCode::usage);
    result = sample();
    result["configurations"][0]["results"][0]["scenario"] = "zz";
    EXPECT_EQ(grid_from_json(result).error().cause, "unknown scenario 'zz'");
    result = sample();
    result.erase("scenarios");
    EXPECT_EQ(grid_from_json(result).error().path, "scenarios");
    EXPECT_FALSE(grid_from_json(nlohmann::json::array()).ok());
}

// Found by tests/fuzz/fuzz_probe_result (issue 29's session): valid JSON syntax whose number
// is past double's range made nlohmann throw out_of_range, which load_result did not catch.
TEST(ProbeView, AResultWithANumberPastDoubleRangeIsAnError) {
    testing_support::ScratchDir dir("probe-view");
    const auto file = dir.path() / "result.json";
    std::ofstream(file) << R"({"schema_version": 1, "x": 0.86e39129991934169})";
    const auto r = load_result(file.string());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::usage);
}

TEST(ProbeView, HtmlIsSelfContainedAndEscaped) {
    auto page = render_html(sample(), "r.json");
    ASSERT_TRUE(page.ok()) << page.error().message();
    const std::string& html = *page;
    EXPECT_NE(html.find("content=\"default-src 'none'; style-src 'unsafe-inline'"), std::string::npos);
    for (const char* banned : {"<script", "src=", "href=", "http://", "https://", "@import", "url("})
        EXPECT_EQ(html.find(banned), std::string::npos) << banned;
    EXPECT_NE(html.find("AMD &lt;Radeon&gt; &amp; co"), std::string::npos);
    EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
    EXPECT_NE(html.find("class=\"cell o-crash\" data-scenario=\"b\" data-configuration=\"default\" "
                        "data-outcome=\"crash\""),
              std::string::npos);
    EXPECT_NE(html.find("class=\"cell o-skipped not-run\" data-scenario=\"a\" data-configuration=\"no-gemm\""),
              std::string::npos);
    EXPECT_NE(html.find("<pre>MIOPEN_DEBUG_CONV_GEMM=0\n</pre>"), std::string::npos);
    EXPECT_NE(html.find("runs as gfx1030"), std::string::npos);
}

TEST(ProbeView, TerminalGridHasColumnsAndLegend) {
    auto grid = grid_from_json(sample());
    ASSERT_TRUE(grid.ok());
    const std::string text = render_grid_text(*grid, Style(false));
    EXPECT_NE(text.find("scenario          C1          C2\n"), std::string::npos) << text;
    EXPECT_NE(text.find("b              CRASH        2 ms\n"), std::string::npos) << text;
    EXPECT_NE(text.find("  C2 no-gemm  (MIOPEN_DEBUG_CONV_GEMM=0)\n"), std::string::npos) << text;
    const std::string coloured = render_grid_text(*grid, Style(true));
    EXPECT_NE(coloured.find("\x1b[31m       CRASH\x1b[0m"), std::string::npos);
}

}  // namespace
}  // namespace rmcp::probe
