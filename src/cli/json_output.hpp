// Every JSON document rmcp prints or writes says which rmcp and which knowledge base made it:
// "rmcp_version" (rmcp --version) and "kb_version" (the kb's content hash, null when the kb
// directory cannot be read). Each renderer hands its document to json_output() and prints
// or writes the text it returns.
#pragma once

#include "context.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace rmcp::cli {

// Adds rmcp_version and kb_version to an object (anything else is left as it is).
void stamp_versions(const Context& ctx, nlohmann::json& doc);

// The stamped document as text: two-space indent, invalid UTF-8 replaced, trailing newline.
std::string json_output(const Context& ctx, nlohmann::json doc);

}  // namespace rmcp::cli
