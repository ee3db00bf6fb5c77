// Every JSON document rmcp prints or writes is one envelope: "schema_version" (the
// document's, 1 when its renderer set none), "rmcp_version" (rmcp --version) and
// "kb_version" (the kb's content hash, null when the kb directory cannot be read). Each
// command hands its document to print_json() (stdout) or json_output() (a file), the only
// ways src/cli/ makes JSON text (tests/unit/source_bans_check.py, "envelope").
#pragma once

#include "context.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace rmcp::cli {

// Adds rmcp_version and kb_version to an object (anything else is left as it is).
void stamp_versions(const Context& ctx, nlohmann::json& doc);

// The stamped document as text: two-space indent, invalid UTF-8 replaced, trailing newline.
std::string json_output(const Context& ctx, nlohmann::json doc);
// The stamped document on stdout.
void print_json(const Context& ctx, const nlohmann::json& doc);

}  // namespace rmcp::cli
