#include "similar/message_causes.hpp"

#include "kb/kb.hpp"
#include "similar/threads.hpp"
#include "util/toml_read.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace rmcp::similar {

namespace tr = toml_read;

Result<MessageCauses> message_causes(const std::filesystem::path& threads_dir, const std::string& entry,
                                     const std::vector<std::string>& exclude) {
    const auto path = threads_dir / "message-causes.toml";
    const std::string file = path.string();
    auto text = read_data_file(path);
    if (!text) return text.error();
    auto doc = tr::parse_toml(*text, file, "reading message causes");
    if (!doc) return doc.error();
    MessageCauses out;
    out.entry = entry;
    const toml::node* list = doc->get("message");
    if (!list) return out;  // no thread answered by any entry
    if (!list->is_array_of_tables())
        return tr::data_error(file, tr::line_of(*list), "expected [[message]] records", "reading message causes");
    std::map<std::string, unsigned> tally;
    for (const auto& node : *list->as_array()) {
        const auto& t = *node.as_table();
        const unsigned line = tr::line_of(node);
        if (auto st = tr::check_keys(t, file, {"entry", "url", "category"}, "a [[message]] record"); !st)
            return st.error();
        auto id = tr::req_string(t, "entry", file, line);
        if (!id) return id.error();
        auto url = tr::req_string(t, "url", file, line);
        if (!url) return url.error();
        auto category = tr::req_string(t, "category", file, line);
        if (!category) return category.error();
        // One of the kb's categories, nothing else: the text prints it as it is.
        if (!kb::is_category(*category))
            return tr::data_error(file, line, fmt::format("unknown category \"{}\"", *category),
                                  "reading message causes");
        if (*id != entry || std::find(exclude.begin(), exclude.end(), *url) != exclude.end()) continue;
        ++tally[*category];
        ++out.threads;
    }
    for (const auto& [category, n] : tally) out.causes.push_back({category, n});
    std::stable_sort(out.causes.begin(), out.causes.end(),
                     [](const CauseCount& a, const CauseCount& b) { return a.threads > b.threads; });
    return out;
}

nlohmann::json message_causes_json(const MessageCauses& m) {
    nlohmann::json causes = nlohmann::json::array();
    for (const auto& c : m.causes) causes.push_back({{"category", c.category}, {"threads", c.threads}});
    return {{"entry", m.entry}, {"threads", m.threads}, {"causes", causes}};
}

std::string message_causes_text(const MessageCauses& m) {
    std::string out;
    for (const auto& c : m.causes) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", c.threads, c.category);
    return out;
}

}  // namespace rmcp::similar
