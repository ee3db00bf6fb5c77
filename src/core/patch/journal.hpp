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
// The one way the patch machinery writes a file (a target, a backup, a journal): an atomic
// write (util/atomic_file.hpp) made while holding a shared flock on the directory `dirfd`,
// from before its temporary file exists until after the rename. That lock is what marks a
// temporary file as live: remove_temporaries() takes the directory's lock exclusively, so it
// can only ever remove the temporaries of a writer that is gone (killed), never those of a
// writer in another process, whatever journal locks either holds (docs/security.md, D10).
Status write_owned_at(int dirfd, std::string_view name, std::string_view content, std::uint32_t mode,
                      const std::string& shown);
// Removes what a killed writer left next to `name` in `dirfd`: only when no writer holds the
// directory's lock (else it leaves everything, a later call will clean).
void remove_temporaries(int dirfd, std::string_view name);

std::string now_utc_iso();
std::string new_txn_id();
bool is_txn_id(std::string_view id);

// One lock file per journal base; held for the whole apply or rollback, from before the
// transactions are listed until the journal's final record is written.
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
// The journal's final record, written before the change it records (while the disk still
// had room: a full disk then fails the whole command before any target is touched), and put
// in place by a rename once the change is done. Apply stages "failed, rolled back" before
// writing any target; rollback stages "rolled back" before restoring. A command that cannot
// write its final record therefore never leaves a journal that says less than it knows
// (docs/security.md, D14).
Status stage_journal(const Root& root, const Transaction& final_state);
Status commit_staged_journal(const Root& root, const Transaction& t);
void drop_staged_journal(const Root& root, const Transaction& t);
// The state directory whose transactions/ holds `t`.
std::string journal_base(const Transaction& t, const std::map<std::string, std::string>& env);
// Every transaction of both bases, oldest first; `locked` says which bases (user, system)
// the caller holds the lock of already (an `applying` journal of a base someone else holds
// is in progress, not interrupted). With `clean`, the temporary files a killed writer left
// go (remove_temporaries: never a live writer's).
std::vector<Transaction> collect_transactions(const Root& root, const std::map<std::string, std::string>& env,
                                              bool clean, const std::array<bool, 2>& locked);

}  // namespace rmcp::patch
