// The Applier: the one narrow door for writes (ARCHITECTURE.md, principles 6 and 7). It
// canonicalises every target against an allowlist, journals the prior state of every
// target before touching anything, writes atomically, and can roll any transaction back
// byte-for-byte (content and mode, or absence). Journals live under
// $XDG_STATE_HOME/rmcp/transactions/<id>/ (user targets only) or
// /var/lib/rmcp/transactions/<id>/ (any /etc target) — all paths inside the Root, and every
// file is opened through it (docs/security.md).
//
// A journal is data from an untrusted place: every field is checked when it is read
// (docs/patches.md, "Journal"); one that fails is reported as corrupt, never trusted, and
// never keeps the other transactions from being listed or rolled back.
#pragma once

#include "patch/patch.hpp"
#include "root/root.hpp"
#include "util/error.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rmcp::patch {

struct ApplyOptions {
    std::map<std::string, std::string> env;  // HOME, XDG_* (state and config dirs)
    unsigned euid = 0;                       // effective uid (RMCP_ASSUME_UID in tests)
    // Test-only fault injection (the CLI honours the RMCP_TEST_* variables only under a
    // --root other than "/"; docs/patches.md): SIGKILL the process after step k (0: right
    // after the journal is written), make step k's write fail, make restores fail.
    std::optional<unsigned> kill_after_step;
    std::optional<unsigned> fail_step;
    bool fail_restore = false;
    // Test-only: the journal's final record ("applied") fails to be written, as on a disk
    // that filled during the apply (RMCP_TEST_FAIL_FINAL_JOURNAL).
    bool fail_final_journal = false;
};

struct JournalTarget {
    std::string path;  // canonical logical path
    bool existed = false;
    std::uint32_t mode = 0;
    std::string backup;  // file name inside the transaction dir (when existed)
};

enum class TxnState { applying, applied, rolled_back };

struct Transaction {
    std::string id;
    TxnState state = TxnState::applying;
    bool failed = false;       // apply failed and was rolled back automatically
    bool in_progress = false;  // applying, and its lock is held right now
    std::vector<std::string> patches;
    std::vector<JournalTarget> targets;
    std::vector<std::string> created_dirs;  // logical, shallowest first
    std::string journal_dir;                // logical path of the transaction dir
    bool system = false;
    std::string created;  // UTC time, ISO 8601
    std::string corrupt;  // why the journal cannot be trusted; empty when valid
    [[nodiscard]] bool interrupted() const { return corrupt.empty() && state == TxnState::applying && !in_progress; }
};

std::string_view txn_state_name(TxnState s);

struct ApplyOutcome {
    std::string txn_id;                // empty when nothing had to be done
    std::vector<std::string> written;  // targets written
    std::vector<std::string> skipped;  // steps already in effect (targets)
};

// Canonicalises `path` inside the root and checks it against the allowlist; returns the
// canonical logical path. Refusals are ExitCode::usage errors that say why.
Result<std::string> resolve_target(const Root& root, const std::string& path,
                                   const std::map<std::string, std::string>& env);

// Applies a plan. Failure after the journal exists: every target is restored and the
// error has ExitCode::apply_rolled_back, or ExitCode::apply_incomplete when restoring
// failed too (the message names the files, the journal and the command to retry).
Result<ApplyOutcome> apply_plan(const Root& root, const Plan& plan, const ApplyOptions& options);

// All transactions, oldest first (user and system journals); corrupt journals are listed
// with Transaction::corrupt set. When no apply or rollback holds a journal's lock, the
// temporary files a killed apply left (next to targets, in transaction directories) are
// removed on the way.
Result<std::vector<Transaction>> list_transactions(const Root& root, const std::map<std::string, std::string>& env);

// Reads journal.json text of the transaction directory `dir_name` and checks every field
// (exposed for unit tests); errors say which field and why.
Result<Transaction> parse_journal(std::string_view text, std::string_view dir_name);

// Rolls back `id`, or the newest transaction not yet rolled back. Takes the journal locks
// first and chooses and checks the transaction under them. Returns it; nullopt when there
// was nothing to roll back.
Result<std::optional<Transaction>> rollback(const Root& root, const std::optional<std::string>& id,
                                            const ApplyOptions& options);

}  // namespace rmcp::patch
