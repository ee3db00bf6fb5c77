// `rmcp scan`'s text output: each file's targets (with --verbose, each code object), or with no
// path each installation's libraries and the GPU coverage verdicts. The JSON form is
// scan::scan_report_json.
#pragma once

#include "util/style.hpp"
#include "scan/coverage.hpp"

#include <string>

namespace rmcp::render {

// "scanned N files, M with GPU code": the last line of a scan of named paths, and scan's
// summary line (-q).
std::string scan_totals(const scan::ScanReport& report);
std::string scan_text(const scan::ScanReport& report, bool installations, bool verbose, const Style& style);

}  // namespace rmcp::render
