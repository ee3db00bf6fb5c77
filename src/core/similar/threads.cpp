#include "similar/threads.hpp"

#include "util/toml_read.hpp"

#include <fstream>
#include <sstream>

namespace rmcp::similar {

namespace tr = toml_read;

Result<std::string> read_data_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error{"reading", path.string(), "cannot open", ExitCode::environment};
    std::stringstream buf;
    buf << in.rdbuf();
    return buf.str();
}

Result<std::vector<ThreadRecord>> load_threads(const std::filesystem::path& threads_dir) {
    const auto path = threads_dir / "threads.toml";
    auto text = read_data_file(path);
    if (!text) return text.error();
    const std::string file = path.string();
    auto doc = tr::parse_toml(*text, file, "reading public threads");
    if (!doc) return doc.error();
    const toml::node* list = doc->get("thread");
    if (!list || !list->is_array_of_tables())
        return tr::data_error(file, 1, "expected [[thread]] records", "reading public threads");
    std::vector<ThreadRecord> out;
    for (const auto& node : *list->as_array()) {
        const auto& t = *node.as_table();
        const unsigned line = tr::line_of(node);
        if (auto st = tr::check_keys(t, file,
                                     {"url", "split", "date", "gpu", "gfx_target", "rocm", "torch", "overrides",
                                      "kernel", "framework", "category", "kb_entry", "cause", "fixed", "error_line",
                                      "clean", "excerpt"},
                                     "a [[thread]] record");
            !st)
            return st.error();
        ThreadRecord r;
        struct Field {
            const char* key;
            std::string* to;
            bool required;
        };
        for (const Field& f :
             {Field{"url", &r.url, true}, Field{"split", &r.split, true}, Field{"date", &r.date, false},
              Field{"gpu", &r.gpu, false}, Field{"gfx_target", &r.gfx_target, false}, Field{"rocm", &r.rocm, false},
              Field{"torch", &r.torch, false}, Field{"kernel", &r.kernel, false},
              Field{"framework", &r.framework, false}, Field{"category", &r.category, false},
              Field{"kb_entry", &r.kb_entry, false}, Field{"cause", &r.cause, true}, Field{"fixed", &r.fixed, false},
              Field{"error_line", &r.error_line, false}, Field{"excerpt", &r.excerpt, true}}) {
            if (f.required) {
                auto v = tr::req_string(t, f.key, file, line);
                if (!v) return v.error();
                *f.to = std::move(*v);
            } else {
                auto v = tr::opt_string(t, f.key, file);
                if (!v) return v.error();
                *f.to = v->value_or("");
            }
        }
        auto overrides = tr::opt_string_array(t, "overrides", file);
        if (!overrides) return overrides.error();
        for (const auto& o : *overrides)
            if (o.find('=') == std::string::npos || o.front() == '=')
                return tr::data_error(file, tr::line_of(*t.get("overrides")),
                                      "'overrides' holds \"NAME=value\" strings, not '" + o + "'",
                                      "reading public threads");
        r.overrides = std::move(*overrides);
        auto clean = tr::opt_bool(t, "clean", file, false);
        if (!clean) return clean.error();
        r.clean = *clean;
        if (r.excerpt.find('/') != std::string::npos || r.excerpt.starts_with('.'))
            return tr::data_error(file, line, "'excerpt' must be a file name under excerpts/",
                                  "reading public threads");
        out.push_back(std::move(r));
    }
    return out;
}

nlohmann::json record_json(const ThreadRecord& r) {
    return {{"url", r.url},
            {"date", r.date},
            {"gpu", r.gpu},
            {"gfx_target", r.gfx_target},
            {"rocm", r.rocm},
            {"torch", r.torch},
            {"overrides", r.overrides},
            {"kernel", r.kernel},
            {"framework", r.framework},
            {"category", r.category},
            {"kb_entry", r.kb_entry},
            {"cause", r.cause},
            {"fixed", r.fixed},
            {"clean", r.clean}};
}

}  // namespace rmcp::similar
