#include "run/kb_watcher.hpp"

#include "explain/matcher.hpp"
#include "kb/kb.hpp"

#include <array>
#include <optional>
#include <utility>

namespace rmcp::run {

namespace {

struct Compiled {
    kb::KnowledgeBase kb;
    std::shared_ptr<const explain::SignatureSet> set;
};

class KbWatcher final : public OutputWatcher {
public:
    explicit KbWatcher(std::shared_ptr<const Compiled> compiled) : m_compiled(std::move(compiled)) {
        for (std::size_t s = 0; s < 2; ++s)
            m_scanners[s] = std::make_unique<explain::LogScanner>(m_compiled->set, [this, s](const explain::Match& m) {
                on_match(static_cast<StreamId>(s), m);
            });
    }

    std::vector<WatchMatch> feed(StreamId stream, std::string_view bytes) override {
        // Feeding fails only when Hyperscan runs out of memory; the relay goes on regardless.
        (void)m_scanners[static_cast<std::size_t>(stream)]->feed(bytes);
        return std::exchange(m_found, {});
    }

    std::vector<WatchMatch> finish() override {
        for (auto& scanner : m_scanners) (void)scanner->finish();
        return std::exchange(m_found, {});
    }

private:
    void on_match(StreamId stream, const explain::Match& m) {
        const auto& sig = m_compiled->set->signatures()[m.signature];
        const kb::Entry& entry = m_compiled->kb.entries[sig.entry];
        WatchMatch out;
        out.entry_id = entry.id;
        out.category = entry.category;
        out.title = entry.title;
        out.severity = std::string(kb::severity_name(entry.severity));
        out.stream = stream;
        out.end_offset = m.end_offset;
        for (const auto& line : m.excerpt)
            if (line.match_end != std::string::npos) out.line = line.text;
        m_found.push_back(std::move(out));
    }

    std::shared_ptr<const Compiled> m_compiled;
    std::array<std::unique_ptr<explain::LogScanner>, 2> m_scanners;
    std::vector<WatchMatch> m_found;
};

}  // namespace

WatcherFactory kb_watcher_factory(std::filesystem::path kb_dir) {
    struct Cache {
        std::filesystem::path dir;
        std::optional<Result<std::shared_ptr<const Compiled>>> compiled;
    };
    auto cache = std::make_shared<Cache>();
    cache->dir = std::move(kb_dir);
    return [cache]() -> Result<std::unique_ptr<OutputWatcher>> {
        if (!cache->compiled) {
            auto loaded = kb::load(cache->dir);
            if (!loaded) {
                cache->compiled = Result<std::shared_ptr<const Compiled>>(loaded.error());
            } else {
                auto compiled = std::make_shared<Compiled>();
                compiled->kb = std::move(*loaded);
                // First match per signature and stream: the report needs which entries fired
                // and where, and SINGLEMATCH keeps the scan cheap on chatty output. Context
                // words rank causes for explain; the supervisor classifies by entry.
                auto set = explain::SignatureSet::compile(compiled->kb.entries, explain::Reporting::first_only,
                                                          explain::ContextWords::skip);
                if (!set) {
                    cache->compiled = Result<std::shared_ptr<const Compiled>>(set.error());
                } else {
                    compiled->set = std::move(*set);
                    cache->compiled =
                        Result<std::shared_ptr<const Compiled>>(std::shared_ptr<const Compiled>(compiled));
                }
            }
        }
        if (!*cache->compiled) return cache->compiled->error();
        return std::unique_ptr<OutputWatcher>(std::make_unique<KbWatcher>(cache->compiled->value()));
    };
}

}  // namespace rmcp::run
