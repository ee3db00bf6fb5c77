// libFuzzer target: a saved probe result (`rmcp probe report RESULT.json`), through
// load_result on a temporary file, then every renderer that reads it.
#include "render/probe_view.hpp"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {
const std::filesystem::path& scratch() {
    static const std::filesystem::path dir = [] {
        std::string templ = (std::filesystem::temp_directory_path() / "rmcp-fuzz-probe-XXXXXX").string();
        if (!::mkdtemp(templ.data())) std::abort();
        return std::filesystem::path(templ);
    }();
    return dir;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto file = scratch() / "result.json";
    {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    auto result = rmcp::probe::load_result(file.string());
    if (!result) {
        // A rejected file is a usage error naming the file (and the line for bad JSON).
        if (result.error().code != rmcp::ExitCode::usage) std::abort();
        return 0;
    }
    auto grid = rmcp::probe::grid_from_json(*result);
    auto page = rmcp::probe::render_html(*result, "fuzz");
    if (grid.ok() != page.ok()) std::abort();  // the page renders exactly what the grid accepts
    if (grid) {
        (void)rmcp::probe::render_grid_text(*grid, rmcp::Style(true));
        if (!rmcp::probe::render_summary_text(*result, rmcp::Style(false), rmcp::probe::TextLayout::list)) std::abort();
        if (!rmcp::probe::render_summary_text(*result, rmcp::Style(false), rmcp::probe::TextLayout::grid)) std::abort();
        // Whatever the file held, no markup of it reaches the page unescaped.
        if (page->find("<script") != std::string::npos) std::abort();
    }
    return 0;
}
