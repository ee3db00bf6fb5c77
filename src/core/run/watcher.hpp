// The seam between the supervisor and the log matcher: the supervisor feeds every byte
// the child writes, in the order it arrives per stream, and collects what was recognised.
// The knowledge-base implementation lives in run/kb_watcher.cpp; tests may supply their own.
#pragma once

#include "util/error.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp::run {

enum class StreamId { out, err };

std::string_view stream_name(StreamId s);

struct WatchMatch {
    std::string entry_id;
    std::string category;  // one of kb::k_categories
    std::string title;
    std::string severity;
    std::string basis;  // explain::basis_name: "signature" (a specific entry) or "family"
    // A family entry (kb::is_family): it names a message family, not a cause, and ranks after
    // every specific entry in what run says (the same ranking as explain: issue 30).
    bool family = false;
    StreamId stream = StreamId::out;
    std::uint64_t end_offset = 0;  // byte offset just past the match, within its stream
    std::string line;              // the line around the match (filled by the supervisor)
};

class OutputWatcher {
public:
    virtual ~OutputWatcher() = default;
    // Scans the next bytes of one stream; returns matches that ended inside them.
    virtual std::vector<WatchMatch> feed(StreamId stream, std::string_view bytes) = 0;
    // End of both streams: returns matches that needed the end of data to be decided.
    virtual std::vector<WatchMatch> finish() = 0;
};

// Built lazily, on the first byte of output: a child that prints nothing costs no
// knowledge-base load (start-up overhead goal, docs/PERFORMANCE.md).
using WatcherFactory = std::function<Result<std::unique_ptr<OutputWatcher>>()>;

// Categories whose failures a stricter profile can plausibly avoid: the GPU itself faulted
// or hung, or the runtime/library under it failed. Others (a Python error, a missing code
// object, out of memory) are returned as they are: retrying under another MIOpen or
// allocator setting does not change them (docs/domain.md, "Crash signatures users see").
bool is_gpu_failure_category(std::string_view category);

}  // namespace rmcp::run
