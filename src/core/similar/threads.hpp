// The public threads rmcp ships (threads/threads.toml, threads/README.md): one record per
// thread with its excerpt (threads/excerpts/), what the thread established as the cause and
// what fixed it. Read strictly (file:line errors, unknown keys refused) when the index is
// (re)built; lookups read the records back from the index (index.hpp).
#pragma once

#include "util/error.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace rmcp::similar {

struct ThreadRecord {
    std::string url, split, date, gpu, gfx_target, rocm, torch, framework;
    std::vector<std::string> overrides;  // the failing run's environment, "NAME=value", as the thread states it
    std::string kernel;                  // the Linux kernel release the thread states, "" when none
    std::string category;                // kb category the thread established ("" for a clean run)
    std::string kb_entry;                // the kb entry it established, "" when none fits
    std::string cause;                   // in our words
    std::string fixed;                   // what fixed it, one line in our words ("unresolved")
    std::string error_line;
    std::string excerpt;  // file name under threads/excerpts/
    bool clean = false;   // a run that worked
};

// The whole of one of the threads' files (records, excerpts, message causes); "cannot open" names
// the path. The one reader of the module's data.
Result<std::string> read_data_file(const std::filesystem::path& path);

// threads.toml under `threads_dir`; an excerpt name with a '/' or that is missing is an error.
Result<std::vector<ThreadRecord>> load_threads(const std::filesystem::path& threads_dir);

// What a lookup shows of a record (stored as the document's data in the index).
nlohmann::json record_json(const ThreadRecord& r);

}  // namespace rmcp::similar
