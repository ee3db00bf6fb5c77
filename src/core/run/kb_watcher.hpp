// The supervisor's watcher over the knowledge base: explain's LogScanner, one per stream,
// over every signature in kb/.
#pragma once

#include "run/watcher.hpp"

#include <filesystem>

namespace rmcp::run {

// The knowledge base is loaded and compiled on the first call only (the first byte of
// output), then shared by the watchers of every attempt.
WatcherFactory kb_watcher_factory(std::filesystem::path kb_dir);

}  // namespace rmcp::run
