#include "json_output.hpp"

#include "kb/content_hash.hpp"
#include "version.hpp"
#include "util/text.hpp"

#include <map>

namespace rmcp::cli {

void stamp_versions(const Context& ctx, nlohmann::json& doc) {
    if (!doc.is_object()) return;
    // One hash per kb directory per process: `run` and `probe` stamp more than one document.
    static std::map<std::filesystem::path, nlohmann::json> hashes;
    const auto dir = ctx.kb_dir();
    auto it = hashes.find(dir);
    if (it == hashes.end()) {
        auto hash = kb::content_hash(dir);
        it = hashes.emplace(dir, hash ? nlohmann::json(*hash) : nlohmann::json(nullptr)).first;
    }
    doc["rmcp_version"] = std::string(rmcp_version());
    doc["kb_version"] = it->second;
}

std::string json_output(const Context& ctx, nlohmann::json doc) {
    // The envelope: every document says its own schema (1 where its renderer has not
    // versioned it yet) and which rmcp and kb made it.
    if (doc.is_object() && !doc.contains("schema_version")) doc["schema_version"] = 1;
    stamp_versions(ctx, doc);
    return json_text(doc, 2) + "\n";
}

void print_json(const Context& ctx, const nlohmann::json& doc) { ctx.out.write(json_output(ctx, doc)); }

}  // namespace rmcp::cli
