// A cache of compiled Hyperscan databases (docs/PERFORMANCE.md, "Large knowledge bases").
//
// Compiling the signature set is linear in its size: 10,000 signatures take seconds. The
// serialized database (hs_serialize_database) is kept under $XDG_CACHE_HOME/rmcp/ (default
// ~/.cache/rmcp/), named by a hash of exactly what was compiled (every expression, flag and
// id, the mode and the Hyperscan version): a different knowledge base gives a different
// name. A file is used only if it is the user's own, not writable by others, its header,
// size, checksum and stored inputs all match and Hyperscan deserializes it; on any mismatch
// the set is compiled as if there were no cache, and the file rewritten.
#pragma once

#include "util/hyperscan.hpp"

#include <hs/hs.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp::explain::db_cache {

// Sets that take longer than this to compile are stored. The shipped kb with explain's report
// probes takes about 50 ms to compile: with it stored, explain starts in about 13 ms instead
// of 85 ms (docs/PERFORMANCE.md, "rmcp explain").
inline constexpr double k_store_after_s = 0.03;

// What a database is compiled from, serialized: the cache key and the check on load.
std::string inputs_blob(const std::vector<const char*>& expressions, const std::vector<unsigned>& flags,
                        const std::vector<unsigned>& ids, unsigned mode);
// $XDG_CACHE_HOME/rmcp, else $HOME/.cache/rmcp; empty when neither is set. store() creates it
// (0700) only when the directory above its base exists.
std::filesystem::path directory();
// The cache file for `inputs` (in directory()).
std::filesystem::path file_for(std::string_view inputs);
// A database compiled from exactly `inputs`, or nullptr (absent, foreign, corrupt, stale).
hyperscan::Database load(std::string_view inputs);
// Stores `db` for `inputs`; failures are silent (the cache is only a cache).
void store(std::string_view inputs, const hs_database_t* db);

}  // namespace rmcp::explain::db_cache
