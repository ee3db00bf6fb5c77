// `rmcp scan`'s text output: each file's targets (with --verbose, each code object), or with no
// path each installation's libraries and the GPU coverage verdicts. The JSON form is
// scan::scan_report_json.
#pragma once

#include "util/style.hpp"
#include "scan/coverage.hpp"

#include <string>

namespace rmcp::render {

std::string scan_text(const scan::ScanReport& report, bool installations, bool verbose, const Style& style);

}  // namespace rmcp::render
