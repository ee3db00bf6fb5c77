// The applier: the allowlist, applying a plan under the journal, restoring, rollback.
#include "patch/applier.hpp"

#include "patch/journal.hpp"

#include "patch/profile.hpp"
#include "util/atomic_file.hpp"
#include "util/strings.hpp"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <array>
#include <filesystem>
#include <set>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rmcp::patch {

namespace fs = std::filesystem;

namespace {

std::string env_get(const std::map<std::string, std::string>& env, const char* key) {
    const auto it = env.find(key);
    return it == env.end() ? std::string() : it->second;
}

// ---- canonicalisation and the allowlist ------------------------------------------------

// Canonical path of `logical` inside the root: Root's resolver, the only one.
Result<std::string> canonical_in_root(const Root& root, const std::string& logical) {
    auto c = root.canonical(logical);
    if (!c) return Error{"resolving", logical, c.error().cause, ExitCode::environment, c.error().os_error};
    return c;
}

// The allowlist (docs/patches.md): the user's profile.env, rmcp's own modprobe
// files, and the start-up hook in a site-packages under $HOME or inside a virtual
// environment / conda prefix.
std::optional<std::string> allowlist_refusal(const Root& root, const std::string& p,
                                             const std::map<std::string, std::string>& env) {
    if (is_modprobe_target(p)) return std::nullopt;
    auto env_file = canonical_in_root(root, user_env_file_path(env));
    if (env_file && p == *env_file) return std::nullopt;
    const fs::path path(p);
    if (path.filename() == k_startup_hook_name) {
        const auto site = path.parent_path();
        if (site.filename() == "site-packages" || site.filename() == "dist-packages") {
            auto home = canonical_in_root(root, env_get(env, "HOME"));
            if (home && *home != "/" && under(p, *home)) return std::nullopt;
            // <prefix>/lib/pythonX.Y/site-packages of a venv (pyvenv.cfg) or conda (conda-meta).
            const auto prefix = site.parent_path().parent_path().parent_path();
            if (root.exists((prefix / "pyvenv.cfg").string()) || root.is_dir((prefix / "conda-meta").string()))
                return std::nullopt;
            return fmt::format("the start-up hook may go only into a site-packages under $HOME or in a virtual "
                               "environment; {} is neither",
                               site.string());
        }
    }
    return fmt::format("it is outside the allowlist (the user's profile.env, /etc/modprobe.d/rmcp-*.conf, "
                       "<site-packages>/{})",
                       k_startup_hook_name);
}

struct RestoreFailure {
    std::string path;
    std::string cause;
};

// Puts every target back as the journal recorded it; idempotent, so it can be re-run after
// a crash in the middle of it. A target already as it was before the apply is left alone:
// only a target that really differs can fail to be restored (exit 5 means exactly that).
std::vector<RestoreFailure> restore_targets(const Root& root, const Transaction& t, const ApplyOptions& options) {
    std::vector<RestoreFailure> failures;
    auto txn_dir = root.open_dir(t.journal_dir);
    for (auto it = t.targets.rbegin(); it != t.targets.rend(); ++it) {
        const JournalTarget& jt = *it;
        const std::string name = std::string(basename(jt.path));
        auto dir = target_dir(root, jt.path);
        if (!dir && dir.error().os_error == ENOENT) {
            if (!jt.existed) continue;  // absent, as it was
            dir = root.make_dirs(dirname(jt.path), 0755, LinkPolicy::refuse);
        }
        if (!dir) {
            failures.push_back({jt.path, dir.error().message()});
            continue;
        }
        auto current = read_at(dir->get(), name, jt.path);
        if (!current) {
            failures.push_back({jt.path, current.error().message()});
            continue;
        }
        if (jt.existed) {
            if (!txn_dir) {
                failures.push_back({jt.path, "backup unreadable: " + txn_dir.error().message()});
                continue;
            }
            auto backup = read_at(txn_dir->get(), jt.backup, root.host_path(t.journal_dir + "/" + jt.backup));
            if (!backup || !*backup) {
                failures.push_back({jt.path, "backup unreadable: " +
                                                 (backup ? std::string("it is missing") : backup.error().message())});
                continue;
            }
            const bool same = *current && (*current)->content == (*backup)->content && (*current)->mode == jt.mode;
            if (!same) {
                if (options.fail_restore) {
                    failures.push_back({jt.path, "injected restore failure (RMCP_TEST_FAIL_RESTORE, test-only)"});
                    continue;
                }
                if (auto s = write_owned_at(dir->get(), name, (*backup)->content, jt.mode, jt.path); !s) {
                    failures.push_back({jt.path, s.error().message()});
                    continue;
                }
            }
        } else if (*current) {
            if (options.fail_restore) {
                failures.push_back({jt.path, "injected restore failure (RMCP_TEST_FAIL_RESTORE, test-only)"});
                continue;
            }
            if (::unlinkat(dir->get(), name.c_str(), 0) != 0 && errno != ENOENT) {
                failures.push_back({jt.path, std::strerror(errno)});
                continue;
            }
            ::fsync(dir->get());  // best effort: the unlink itself succeeded
        }
        remove_temporaries(dir->get(), name);
    }
    if (!failures.empty()) return failures;
    for (auto it = t.created_dirs.rbegin(); it != t.created_dirs.rend(); ++it) {
        auto parent = root.open_dir(dirname(*it), LinkPolicy::refuse);
        if (!parent) {
            if (parent.error().os_error != ENOENT) failures.push_back({*it, parent.error().message()});
            continue;
        }
        if (::unlinkat(parent->get(), std::string(basename(*it)).c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
            failures.push_back({*it, fmt::format("directory rmcp created is not empty ({}); remove it by hand if it "
                                                 "should go",
                                                 std::strerror(errno))});
        else ::fsync(parent->get());  // best effort
    }
    return failures;
}

std::string incomplete_message(const Root& root, const Transaction& t, const std::vector<RestoreFailure>& failures) {
    std::string files;
    for (const auto& f : failures) files += fmt::format("\n  {}: {}", f.path, f.cause);
    const std::string root_opt = root.is_live() ? "" : " --root " + sh_word(root.base().string());
    return fmt::format("rollback is incomplete; these targets are not restored:{}\n"
                       "  the journal (prior contents and modes) is in {}\n"
                       "  fix the cause above, then run: rmcp{} patch rollback {}",
                       files, root.host_path(t.journal_dir), root_opt, sh_word(t.id));
}

bool is_system_path(const std::string& p) { return p.rfind("/etc/", 0) == 0; }

Status check_privilege(const std::string& target, const ApplyOptions& options, std::string_view doing) {
    if (is_system_path(target) && options.euid != 0)
        return Error{std::string(doing), target,
                     "needs root (files under /etc are system files): run it with sudo, or leave that patch out",
                     ExitCode::environment, EACCES};
    return ok_status();
}

}  // namespace

Result<std::string> resolve_target(const Root& root, const std::string& path,
                                   const std::map<std::string, std::string>& env) {
    const fs::path lexical = fs::path(path).lexically_normal();
    if (!lexical.is_absolute() || path.find("/../") != std::string::npos)
        return Error{"refusing target", path, "not an absolute, normalised path", ExitCode::usage};
    if (auto why = allowlist_refusal(root, lexical.string(), env))
        return Error{"refusing target", path, *why, ExitCode::usage};
    auto canon = canonical_in_root(root, lexical.string());
    if (!canon) return canon.error();
    if (*canon != lexical.string())
        if (auto why = allowlist_refusal(root, *canon, env))
            return Error{"refusing target", path, fmt::format("it resolves to {}: {}", *canon, *why), ExitCode::usage};
    if (auto fd = root.open_fd(*canon, O_PATH, LinkPolicy::keep_last)) {
        struct stat st {};
        if (::fstat(fd->get(), &st) == 0 && !S_ISREG(st.st_mode))
            return Error{"refusing target", path, "it exists and is not a regular file", ExitCode::usage};
    }
    return *canon;
}

namespace {

struct Write {
    const PlannedStep* step;
    std::string target;  // canonical
};

// Resolves and checks every target before anything else happens: the writes to make, in
// plan order; steps already in effect go to `outcome.skipped`.
Result<std::vector<Write>> check_targets(const Root& root, const Plan& plan, const ApplyOptions& options,
                                         ApplyOutcome& outcome, bool& system) {
    std::vector<Write> writes;
    for (const auto& s : plan.steps) {
        if (s.target.empty()) continue;
        auto canon = resolve_target(root, s.target, options.env);
        if (!canon) return canon.error();
        if (s.in_effect) {
            outcome.skipped.push_back(*canon);
            continue;
        }
        if (auto p = check_privilege(*canon, options, "writing"); !p) return p.error();
        system = system || is_system_path(*canon);
        writes.push_back({&s, *canon});
    }
    return writes;
}

// Reads the prior state of each target again, under the lock (the plan must still hold),
// into the journal's targets and the directories the writes will create; returns each
// target's prior content.
Result<std::vector<std::string>> record_prior_state(const Root& root, const std::vector<Write>& writes,
                                                    Transaction& t) {
    std::vector<std::string> backups;
    for (const auto& w : writes) {
        if (std::any_of(t.targets.begin(), t.targets.end(),
                        [&](const JournalTarget& jt) { return jt.path == w.target; }))
            continue;
        JournalTarget jt;
        jt.path = w.target;
        std::optional<FileState> prior;
        if (auto dir = target_dir(root, w.target)) {
            auto read = read_at(dir->get(), std::string(basename(w.target)), w.target);
            if (!read) return read.error();
            prior = std::move(*read);
        } else if (dir.error().os_error != ENOENT) {
            return dir.error();
        }
        jt.existed = prior.has_value();
        jt.mode = prior ? prior->mode : 0;
        const std::string content = prior ? prior->content : std::string();
        if (jt.existed != w.step->existed || content != w.step->old_content)
            return Error{"applying to", w.target, "it changed after the plan was made; run the command again",
                         ExitCode::environment};
        // Directories the write will create, shallowest first.
        std::vector<std::string> missing;
        for (fs::path dir = fs::path(w.target).parent_path(); dir != dir.root_path(); dir = dir.parent_path()) {
            if (root.is_dir(dir.string())) break;
            missing.push_back(dir.string());
        }
        for (auto it = missing.rbegin(); it != missing.rend(); ++it)
            if (std::find(t.created_dirs.begin(), t.created_dirs.end(), *it) == t.created_dirs.end())
                t.created_dirs.push_back(*it);
        if (jt.existed) jt.backup = fmt::format("{}.orig", t.targets.size());
        backups.push_back(content);
        t.targets.push_back(jt);
    }
    return backups;
}

// Removes what write_journal_first made of a transaction that never became real: nothing
// was touched, and nothing should say otherwise.
void discard_transaction_dir(const Root& root, const Transaction& t) {
    auto dir = root.open_dir(t.journal_dir);
    if (!dir) return;
    drop_staged_journal(root, t);
    ::unlinkat(dir->get(), "journal.json", 0);
    for (const auto& jt : t.targets)
        if (jt.existed) ::unlinkat(dir->get(), jt.backup.c_str(), 0);
    if (auto parent = root.open_dir(dirname(t.journal_dir)))
        ::unlinkat(parent->get(), std::string(basename(t.journal_dir)).c_str(), AT_REMOVEDIR);
}

// Journal first: backups, the staged final record of a failure, then journal.json (its
// presence makes the transaction real). Any of them failing (a full disk) fails the apply
// before a target is touched, and the transaction directory goes again.
Status write_journal_first(const Root& root, Transaction& t, const std::vector<std::string>& backups,
                           const std::string& base) {
    t.id = new_txn_id();
    t.journal_dir = base + "/transactions/" + t.id;
    auto txn_dir = root.make_dirs(t.journal_dir, 0700);
    if (!txn_dir) return txn_dir.error();
    const auto written = [&]() -> Status {
        for (std::size_t i = 0; i < t.targets.size(); ++i) {
            const auto& jt = t.targets[i];
            if (!jt.existed) continue;
            if (auto s = write_owned_at(txn_dir->get(), jt.backup, backups[i], 0600,
                                        root.host_path(t.journal_dir + "/" + jt.backup));
                !s)
                return s.error();
        }
        Transaction failed = t;
        failed.state = TxnState::rolled_back;
        failed.failed = true;
        if (auto s = stage_journal(root, failed); !s) return s.error();
        return write_journal(root, t);
    }();
    if (!written) {
        discard_transaction_dir(root, t);
        Error e = written.error();
        e.cause += "; nothing was changed";
        return e;
    }
    if (auto parent = root.open_dir(base + "/transactions"))
        ::fsync(parent->get());  // the journal file itself is synced
    return ok_status();
}

// After a failure once the journal exists: every target is restored, and `cause` says so
// (exit 4), or names what could not be restored (exit 5). The journal's final record was
// staged before any target was written; putting it in place is a rename.
Error restore_after_failure(const Root& root, Transaction& t, const ApplyOptions& options, const Error& cause) {
    const auto failures = restore_targets(root, t, options);
    if (!failures.empty()) {
        drop_staged_journal(root, t);
        Error e = cause;
        e.cause += "\n" + incomplete_message(root, t, failures);
        e.code = ExitCode::apply_incomplete;
        return e;
    }
    t.state = TxnState::rolled_back;
    t.failed = true;
    Error e = cause;
    e.cause += "; every change was rolled back (journal " + t.id + ")";
    if (auto s = commit_staged_journal(root, t); !s)
        e.cause += "; but the journal's final record could not be written (" + s.error().message() +
                   "): `patch status` shows it as interrupted, and a rollback of it only records that";
    e.code = ExitCode::apply_rolled_back;
    return e;
}

// Creates the missing directories, then writes every target atomically, in plan order.
Status write_targets(const Root& root, const Transaction& t, const std::vector<Write>& writes,
                     const ApplyOptions& options, ApplyOutcome& outcome) {
    for (const auto& dir : t.created_dirs) {
        auto parent = root.open_dir(dirname(dir), LinkPolicy::refuse);
        if (!parent) return parent.error();
        if (::mkdirat(parent->get(), std::string(basename(dir)).c_str(), 0755) != 0 && errno != EEXIST)
            return os_error("creating directory", dir, errno);
    }
    unsigned k = 0;
    for (const auto& w : writes) {
        ++k;
        if (options.fail_step && *options.fail_step == k)
            return Error{"writing", w.target, "injected failure (RMCP_TEST_FAIL_STEP, test-only)",
                         ExitCode::environment, EIO};
        auto dir = target_dir(root, w.target);
        if (!dir) return dir.error();
        if (auto s = write_owned_at(dir->get(), std::string(basename(w.target)), w.step->new_content, w.step->new_mode,
                                    w.target);
            !s)
            return s.error();
        if (options.kill_after_step && *options.kill_after_step == k) ::raise(SIGKILL);
        if (std::find(outcome.written.begin(), outcome.written.end(), w.target) == outcome.written.end())
            outcome.written.push_back(w.target);
    }
    return ok_status();
}

}  // namespace

Result<ApplyOutcome> apply_plan(const Root& root, const Plan& plan, const ApplyOptions& options) {
    ApplyOutcome outcome;
    bool system = false;
    auto writes = check_targets(root, plan, options, outcome, system);
    if (!writes) return writes.error();
    if (writes->empty()) return outcome;

    Transaction t;
    t.system = system;
    t.patches = plan.patch_ids;
    t.created = now_utc_iso();
    const std::string user_base = user_state_dir(options.env);
    auto user_lock = JournalLock::acquire(root, user_base);
    if (!user_lock) return user_lock.error();
    std::optional<JournalLock> system_lock;
    if (system) {
        auto l = JournalLock::acquire(root, std::string(k_system_state_dir));
        if (!l) return l.error();
        system_lock.emplace(std::move(*l));
    }
    // We hold the locks: whatever a killed apply left half-written goes now.
    static_cast<void>(collect_transactions(root, options.env, /*clean=*/true, {true, system}));

    auto backups = record_prior_state(root, *writes, t);
    if (!backups) return backups.error();
    if (auto s = write_journal_first(root, t, *backups, journal_base(t, options.env)); !s) return s.error();
    if (options.kill_after_step && *options.kill_after_step == 0) ::raise(SIGKILL);

    if (auto s = write_targets(root, t, *writes, options, outcome); !s)
        return restore_after_failure(root, t, options, s.error());
    t.state = TxnState::applied;
    Status recorded =
        options.fail_final_journal
            ? Status(Error{"writing", root.host_path(t.journal_dir + "/journal.json"),
                           "injected failure (RMCP_TEST_FAIL_FINAL_JOURNAL, test-only)", ExitCode::environment, ENOSPC})
            : write_journal(root, t);
    if (!recorded) return restore_after_failure(root, t, options, recorded.error());
    drop_staged_journal(root, t);
    outcome.txn_id = t.id;
    return outcome;
}

namespace {

// The transaction a rollback undoes, chosen and checked: called only while holding the user
// lock (every apply and rollback takes it) and, for a system transaction, the system lock,
// so that no apply or rollback can land between this choice and the restore (D2).
Result<std::optional<Transaction>> choose_for_rollback(const Root& root, const std::optional<std::string>& id,
                                                       const ApplyOptions& options, const std::array<bool, 2>& locked) {
    const auto all = collect_transactions(root, options.env, /*clean=*/true, locked);
    const auto active = [](const Transaction& t) { return t.corrupt.empty() && t.state != TxnState::rolled_back; };
    const Transaction* chosen = nullptr;
    if (id) {
        for (const auto& t : all)
            if (t.id == *id) chosen = &t;
        if (!chosen)
            return Error{"rolling back", *id, "no such transaction (see `rmcp patch status`)", ExitCode::usage};
        if (!chosen->corrupt.empty())
            return Error{"reading journal", root.host_path(chosen->journal_dir + "/journal.json"),
                         chosen->corrupt + "; nothing in it is trusted, so nothing was restored (the backups, if any, "
                                           "are in that directory)",
                         ExitCode::environment};
        if (!active(*chosen)) return std::optional<Transaction>{};
    } else {
        for (const auto& t : all)
            if (active(t)) chosen = &t;
        if (!chosen) {
            // Nothing trusted is left to undo, but a corrupt journal may stand for a change:
            // say so instead of "nothing to roll back".
            for (const auto& t : all)
                if (!t.corrupt.empty())
                    return Error{"rolling back", root.host_path(t.journal_dir + "/journal.json"),
                                 "the only transactions left have corrupt journals (" + t.corrupt +
                                     "); nothing in them is trusted, so nothing was restored",
                                 ExitCode::environment};
            return std::optional<Transaction>{};
        }
    }
    if (chosen->in_progress)
        return Error{"rolling back", chosen->id,
                     "another rmcp patch apply or rollback is running it; try again when it ends",
                     ExitCode::environment};
    const Transaction& t = *chosen;
    // Transactions form a stack per target: a newer one that touched the same file must go first.
    for (const auto& other : all) {
        if (other.id <= t.id || !active(other)) continue;
        for (const auto& a : other.targets)
            for (const auto& b : t.targets)
                if (a.path == b.path)
                    return Error{"rolling back", t.id,
                                 fmt::format("{} was changed again by the newer transaction {}: roll that back first",
                                             a.path, other.id),
                                 ExitCode::usage};
    }
    for (const auto& jt : t.targets) {
        // The journal is data on disk: check its targets as strictly as a plan's.
        auto canon = resolve_target(root, jt.path, options.env);
        if (!canon) return canon.error();
        if (*canon != jt.path)
            return Error{"rolling back", jt.path, fmt::format("it now resolves to {}; refusing", *canon),
                         ExitCode::usage};
        if (auto p = check_privilege(jt.path, options, "restoring"); !p) return p.error();
    }
    return std::optional<Transaction>{t};
}

}  // namespace

Result<std::optional<Transaction>> rollback(const Root& root, const std::optional<std::string>& id,
                                            const ApplyOptions& options) {
    // Locks first, then list, choose and check under them (docs/security.md, D2).
    auto user_lock = JournalLock::acquire(root, user_state_dir(options.env));
    if (!user_lock) return user_lock.error();
    auto chosen = choose_for_rollback(root, id, options, {true, false});
    if (!chosen || !*chosen) return chosen;
    std::optional<JournalLock> system_lock;
    if ((*chosen)->system) {
        auto l = JournalLock::acquire(root, std::string(k_system_state_dir));
        if (!l) return l.error();
        system_lock.emplace(std::move(*l));
        // The system base may have changed before we held its lock: choose again under both.
        chosen = choose_for_rollback(root, id, options, {true, true});
        if (!chosen || !*chosen) return chosen;
    }
    Transaction t = std::move(**chosen);
    // The final record first (a full disk fails here, before anything is restored); a rename
    // puts it in place once every target is restored (D14).
    Transaction done = t;
    done.state = TxnState::rolled_back;
    if (auto s = stage_journal(root, done); !s) {
        Error e = s.error();
        e.cause += "; nothing was restored";
        return e;
    }
    const auto failures = restore_targets(root, t, options);
    if (!failures.empty()) {
        drop_staged_journal(root, t);
        return Error{"rolling back", t.id, incomplete_message(root, t, failures), ExitCode::apply_incomplete};
    }
    if (auto s = commit_staged_journal(root, done); !s) {
        Error e = s.error();
        e.cause += "; every file was restored, but the journal still says " + std::string(txn_state_name(t.state)) +
                   ": run the rollback again to record it";
        return e;
    }
    return std::optional<Transaction>{done};
}

}  // namespace rmcp::patch
