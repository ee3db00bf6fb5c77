// What the public threads established behind a message (issue 31). For every thread whose failing
// log `rmcp explain` answers first with a kb entry, threads/message-causes.toml holds the entry and
// the category the thread established. It is generated from the threads by
// `bench/explain_accuracy.py --update-message-causes`, and a sweep test keeps it in step with
// the kb (tests/cli/test_explain_real.py).
//
// Where the first answer names a message and not its cause (basis `family`: a family entry, or
// an entry marked cause_varies), explain shows the tally: "public threads with this message:
// 17 gpu-memory-fault, 2 config-risk, ..." — the message says what failed, the threads say what
// it turned out to be, the way a person reads the threads where someone had the same error.
#pragma once

#include "util/error.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace rmcp::similar {

struct CauseCount {
    std::string category;
    unsigned threads = 0;
};

struct MessageCauses {
    std::string entry;               // the kb entry that answered first
    unsigned threads = 0;            // the threads it answered first, excluded ones left out
    std::vector<CauseCount> causes;  // most threads first, then by category name
};

// The tally for `entry` from threads_dir/message-causes.toml, leaving out the threads whose URL
// is in `exclude` (`--exclude-thread`); `threads` is 0 when no thread is left. A malformed file
// is an Error naming file:line.
Result<MessageCauses> message_causes(const std::filesystem::path& threads_dir, const std::string& entry,
                                     const std::vector<std::string>& exclude);

// {"entry", "threads", "causes": [{"category", "threads"}]}
nlohmann::json message_causes_json(const MessageCauses& m);

// "17 gpu-memory-fault, 2 config-risk, 2 kernel-driver-fault"
std::string message_causes_text(const MessageCauses& m);

}  // namespace rmcp::similar
