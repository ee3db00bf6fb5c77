#include "explain/crash_classifier.hpp"

#include "explain/matcher.hpp"
#include "kb/kb.hpp"

#include <memory>
#include <optional>

namespace rmcp::explain {

CrashClassifier first_entry_classifier(std::filesystem::path kb_dir,
                                       std::function<void(const std::string&)> on_unavailable) {
    // nullopt: not compiled yet; a null set: the kb could not be used.
    auto compiled = std::make_shared<std::optional<std::shared_ptr<const SignatureSet>>>();
    return [kb_dir = std::move(kb_dir), on_unavailable = std::move(on_unavailable),
            compiled](std::string_view text) -> std::string {
        if (!*compiled) {
            *compiled = std::shared_ptr<const SignatureSet>{};
            auto kb = kb::load(kb_dir);
            if (!kb) {
                if (on_unavailable) on_unavailable(kb.error().message());
                return "";
            }
            auto set = SignatureSet::compile(kb->entries, Reporting::first_only, ContextWords::skip);
            if (!set) {
                if (on_unavailable) on_unavailable(set.error().message());
                return "";
            }
            *compiled = *set;
        }
        const auto& set = **compiled;
        if (!set) return "";
        std::string entry;
        LogScanner scanner(set, [&](const Match& m) {
            if (entry.empty()) entry = set->signatures()[m.signature].entry_id;
        });
        if (scanner.feed(text)) static_cast<void>(scanner.finish());
        return entry;
    };
}

}  // namespace rmcp::explain
