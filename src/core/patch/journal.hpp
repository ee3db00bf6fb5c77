// The journal of a transaction (docs/patches.md, "Journal"): its format, reading and
// checking it, the transactions under the state directories, their lock, and reading the
// files of a transaction through descriptors. Shared by journal.cpp and applier.cpp; the
// public API is applier.hpp.
#pragma once

#include "patch/applier.hpp"
#include "root/root.hpp"
#include "util/error.hpp"
#include "util/unique_fd.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp::patch {

// The largest target rmcp reads back.
extern const std::size_t k_target_limit;

// `path` is strictly below `dir`.
bool under(const std::string& path, const std::string& dir);
// /etc/modprobe.d/rmcp-<name>.conf, <name> as patch.cpp allows it ([a-z0-9][a-z0-9-]*).
bool is_modprobe_target(std::string_view path);

struct FileState {
    std::string content;
    std::uint32_t mode = 0;
};

// The file `name` in the directory `dirfd`: nullopt when absent; an error when it is not a
// regular file (a link included: targets are canonical) or cannot be read.
Result<std::optional<FileState>> read_at(int dirfd, const std::string& name, const std::string& shown);
// The directory holding a canonical target: no link is followed on the way (a link that
// appeared since the target was checked is refused, not followed).
Result<UniqueFd> target_dir(const Root& root, const std::string& target);
// Removes what a kill inside an atomic write leaves next to `name` in `dirfd`.
void remove_temporaries(int dirfd, std::string_view name);

std::string now_utc_iso();
std::string new_txn_id();
bool is_txn_id(std::string_view id);

// One lock file per journal base; held for the whole apply or rollback.
class JournalLock {
public:
    JournalLock() = default;
    static Result<JournalLock> acquire(const Root& root, const std::string& base);
    // The lock of an existing base, if nobody holds it (creates nothing).
    static std::optional<JournalLock> try_existing(const Root& root, const std::string& base);

private:
    UniqueFd m_fd;
};

Status write_journal(const Root& root, const Transaction& t);
// The state directory whose transactions/ holds `t`.
std::string journal_base(const Transaction& t, const std::map<std::string, std::string>& env);
// Every transaction of both bases, oldest first; `locked` says which bases (user, system)
// the caller holds the lock of already. With `clean`, a base nobody holds loses the
// temporary files a killed apply left.
std::vector<Transaction> collect_transactions(const Root& root, const std::map<std::string, std::string>& env,
                                              bool clean, const std::array<bool, 2>& locked);

}  // namespace rmcp::patch
