// Which knowledge-base entry names a crash, from the dead process's output: the first entry
// whose log signature matches (explain's matcher, without context words). The probe uses it
// for children that crash; run's watcher (run/kb_watcher.hpp) streams the same signatures.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace rmcp::explain {

// Returns the entry id, or "" when nothing matched or the kb could not be used.
using CrashClassifier = std::function<std::string(std::string_view output)>;

// The knowledge base in kb_dir is loaded and compiled at the first call only (a run without
// a crash never pays for it); when that fails, on_unavailable is told why, once, and every
// call answers "".
CrashClassifier first_entry_classifier(std::filesystem::path kb_dir,
                                       std::function<void(const std::string&)> on_unavailable);

}  // namespace rmcp::explain
