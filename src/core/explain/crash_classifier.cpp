#include "explain/crash_classifier.hpp"

#include <optional>

namespace rmcp::explain {

FirstMatchSignaturesLoader first_match_signatures(std::filesystem::path kb_dir) {
    using Loaded = Result<std::shared_ptr<const FirstMatchSignatures>>;
    struct Cache {
        std::filesystem::path dir;
        std::optional<Loaded> loaded;  // nullopt: not loaded yet
    };
    auto cache = std::make_shared<Cache>();
    cache->dir = std::move(kb_dir);
    return [cache]() -> Loaded {
        if (cache->loaded) return *cache->loaded;
        auto kb = kb::load(cache->dir);
        if (!kb) return *(cache->loaded = Loaded(kb.error()));
        auto set = SignatureSet::compile(kb->entries, Reporting::first_only, ContextWords::skip);
        if (!set) return *(cache->loaded = Loaded(set.error()));
        auto compiled = std::make_shared<FirstMatchSignatures>();
        compiled->kb = std::move(*kb);
        compiled->set = std::move(*set);
        return *(cache->loaded = Loaded(std::shared_ptr<const FirstMatchSignatures>(std::move(compiled))));
    };
}

CrashClassifier first_entry_classifier(std::filesystem::path kb_dir,
                                       std::function<void(const std::string&)> on_unavailable) {
    auto told = std::make_shared<bool>(false);
    return [load = first_match_signatures(std::move(kb_dir)), on_unavailable = std::move(on_unavailable),
            told](std::string_view text) -> std::string {
        const auto compiled = load();
        if (!compiled) {
            if (on_unavailable && !*told) on_unavailable(compiled.error().message());
            *told = true;
            return "";
        }
        const auto& set = (*compiled)->set;
        std::string entry;
        LogScanner scanner(set, [&](const Match& m) {
            if (entry.empty()) entry = set->signatures()[m.signature].entry_id;
        });
        if (scanner.feed(text)) static_cast<void>(scanner.finish());
        return entry;
    };
}

}  // namespace rmcp::explain
