#include "kb/libraries.hpp"

#include <set>
#include <string>

namespace rmcp::kb {

using nlohmann::json;

void merge_libraries(json& facts, json libraries) {
    const json no_rows = json::array();
    const json* rows = &no_rows;
    if (libraries.is_object())
        if (const auto it = libraries.find("coverage"); it != libraries.end() && it->is_array()) rows = &*it;

    if (const auto gpus = facts.find("gpus"); gpus != facts.end() && gpus->is_array()) {
        for (auto& gpu : *gpus) {
            if (!gpu.is_object()) continue;
            const auto node = gpu.find("node");
            // scan assesses visible GPUs with a KFD node only; a GPU without one has no rows.
            if (node == gpu.end() || !node->is_number_integer()) continue;  // unsigned ones included
            json per_library = json::object();
            std::set<std::string> missing;
            for (const auto& row : *rows) {
                if (!row.is_object() || row.value("node", json()) != *node) continue;
                const auto library = row.value("library", std::string());
                if (library.empty()) continue;
                per_library[library].push_back(row);
                if (!row.value("covered", true)) missing.insert(library);
            }
            if (per_library.empty()) continue;
            gpu["coverage"] = std::move(per_library);
            gpu["coverage_missing"] = std::vector<std::string>(missing.begin(), missing.end());
        }
    }
    facts["libraries"] = std::move(libraries);
}

}  // namespace rmcp::kb
