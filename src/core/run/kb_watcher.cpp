#include "run/kb_watcher.hpp"

#include "explain/crash_classifier.hpp"
#include "explain/diagnose.hpp"
#include "explain/matcher.hpp"
#include "kb/kb.hpp"

#include <array>
#include <utility>

namespace rmcp::run {

namespace {

using Compiled = explain::FirstMatchSignatures;

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
        // How sure (docs/explain.md, "Basis"): run sees log lines only, never a report's facts.
        out.basis = std::string(explain::basis_name(explain::entry_basis(entry)));
        out.family = kb::is_family(entry);
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
    return [load = explain::first_match_signatures(std::move(kb_dir))]() -> Result<std::unique_ptr<OutputWatcher>> {
        auto compiled = load();
        if (!compiled) return compiled.error();
        return std::unique_ptr<OutputWatcher>(std::make_unique<KbWatcher>(*compiled));
    };
}

}  // namespace rmcp::run
