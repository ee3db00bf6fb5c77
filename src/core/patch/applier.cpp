#include "patch/applier.hpp"

#include "patch/profile.hpp"
#include "util/atomic_file.hpp"

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
#include <filesystem>
#include <regex>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rmcp::patch {

namespace fs = std::filesystem;

std::string_view txn_state_name(TxnState s) {
    switch (s) {
    case TxnState::applying: return "applying";
    case TxnState::applied: return "applied";
    case TxnState::rolled_back: return "rolled-back";
    }
    return "applying";
}

namespace {

constexpr int k_journal_schema = 1;

Error os_err(std::string doing, std::string path, int err, ExitCode code = ExitCode::environment) {
    return Error{std::move(doing), std::move(path), std::strerror(err), code, err};
}

std::string env_get(const std::map<std::string, std::string>& env, const char* key) {
    const auto it = env.find(key);
    return it == env.end() ? std::string() : it->second;
}

// ---- canonicalisation and the allowlist ------------------------------------------------

fs::path canonical_base(const Root& root) {
    std::error_code ec;
    auto base = fs::canonical(root.base(), ec);
    return ec ? root.base() : base;
}

// Canonical logical path of `logical` inside the root, or an error when a symlink leads
// outside the root.
Result<std::string> canonical_in_root(const Root& root, const std::string& logical) {
    const fs::path base = canonical_base(root);
    std::error_code ec;
    const fs::path resolved = fs::weakly_canonical(fs::path(root.host_path(logical)), ec);
    if (ec) return Error{"resolving", logical, ec.message(), ExitCode::environment, ec.value()};
    const std::string b = base.string();
    const std::string r = resolved.string();
    if (b == "/") return r;
    if (r == b) return std::string("/");
    if (r.size() <= b.size() || r.compare(0, b.size(), b) != 0 || r[b.size()] != '/')
        return Error{"refusing target", logical,
                     fmt::format("it resolves to {}, outside the root {} (a symlink points out of it)", r, b),
                     ExitCode::usage};
    return r.substr(b.size());
}

bool under(const std::string& path, const std::string& dir) {
    if (dir.empty()) return false;
    const std::string d = dir.back() == '/' ? dir : dir + "/";
    return path.size() > d.size() && path.compare(0, d.size(), d) == 0;
}

// The allowlist (SPEC.md "The patch manager"): the user's profile.env, rmcp's own modprobe
// files, and the start-up hook in a site-packages under $HOME or inside a virtual
// environment / conda prefix.
std::optional<std::string> allowlist_refusal(const Root& root, const std::string& p,
                                             const std::map<std::string, std::string>& env) {
    static const std::regex k_modprobe{"/etc/modprobe\\.d/rmcp-[a-z0-9][a-z0-9-]*\\.conf"};
    if (std::regex_match(p, k_modprobe)) return std::nullopt;
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

// ---- small file helpers (host paths) ---------------------------------------------------

Status fsync_dir(const std::string& host_dir) {
    const int fd = ::open(host_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return os_err("opening directory", host_dir, errno);
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (rc != 0) return os_err("syncing directory", host_dir, err);
    return ok_status();
}

Status mkdirs(const std::string& host_dir, mode_t mode) {
    std::error_code ec;
    fs::create_directories(host_dir, ec);
    if (ec) return os_err("creating directory", host_dir, ec.value());
    ::chmod(host_dir.c_str(), mode);
    return ok_status();
}

Result<std::string> read_host_file(const std::string& host) {
    const int fd = ::open(host.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return os_err("reading", host, errno);
    std::string out;
    char buf[65536];
    while (true) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            ::close(fd);
            return os_err("reading", host, err);
        }
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
}

std::string now_utc_iso() {
    const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string new_txn_id() {
    const auto now = std::chrono::system_clock::now();
    const auto t = std::chrono::system_clock::to_time_t(now);
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count() % 1000000000;
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%S", &tm);
    return fmt::format("{}.{:09d}", buf, ns);
}

// One lock file per journal base; held for the whole apply or rollback.
class Lock {
public:
    Lock() = default;
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;
    Lock(Lock&& o) noexcept : m_fd(std::exchange(o.m_fd, -1)) {}
    ~Lock() {
        if (m_fd >= 0) ::close(m_fd);
    }
    static Result<Lock> acquire(const std::string& host_dir) {
        if (auto s = mkdirs(host_dir, 0700); !s) return s.error();
        const std::string path = host_dir + "/lock";
        Lock lock;
        lock.m_fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
        if (lock.m_fd < 0) return os_err("opening lock", path, errno);
        if (::flock(lock.m_fd, LOCK_EX | LOCK_NB) != 0) {
            if (errno == EWOULDBLOCK)
                return Error{"locking", path, "another rmcp patch apply or rollback is running; try again when it ends",
                             ExitCode::environment, EWOULDBLOCK};
            return os_err("locking", path, errno);
        }
        return lock;
    }
    // Whether someone holds the lock now (without keeping it).
    static bool held(const std::string& host_dir) {
        const std::string path = host_dir + "/lock";
        const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) return false;
        const bool busy = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
        ::close(fd);
        return busy;
    }

private:
    int m_fd = -1;
};

// ---- the journal -----------------------------------------------------------------------

nlohmann::json to_json(const Transaction& t) {
    nlohmann::json targets = nlohmann::json::array();
    for (const auto& jt : t.targets)
        targets.push_back({{"path", jt.path}, {"existed", jt.existed}, {"mode", jt.mode}, {"backup", jt.backup}});
    return {{"schema_version", k_journal_schema},
            {"id", t.id},
            {"state", txn_state_name(t.state)},
            {"failed", t.failed},
            {"system", t.system},
            {"created", t.created},
            {"patches", t.patches},
            {"created_dirs", t.created_dirs},
            {"targets", targets}};
}

Result<Transaction> from_json(const nlohmann::json& j, const std::string& file) {
    try {
        Transaction t;
        t.id = j.at("id").get<std::string>();
        const auto state = j.at("state").get<std::string>();
        t.state = state == "applied" ? TxnState::applied : state == "rolled-back" ? TxnState::rolled_back : TxnState::applying;
        t.failed = j.value("failed", false);
        t.system = j.value("system", false);
        t.created = j.value("created", "");
        t.patches = j.at("patches").get<std::vector<std::string>>();
        t.created_dirs = j.at("created_dirs").get<std::vector<std::string>>();
        for (const auto& e : j.at("targets"))
            t.targets.push_back({e.at("path").get<std::string>(), e.at("existed").get<bool>(),
                                 e.at("mode").get<std::uint32_t>(), e.at("backup").get<std::string>()});
        return t;
    } catch (const nlohmann::json::exception& e) {
        return Error{"reading journal", file, e.what(), ExitCode::environment};
    }
}

Status write_journal(const Root& root, const Transaction& t) {
    return write_file_atomic(root.host_path(t.journal_dir + "/journal.json"), to_json(t).dump(2) + "\n", 0600);
}

std::string journal_base(const Transaction& t, const std::map<std::string, std::string>& env) {
    return t.system ? std::string(k_system_state_dir) : user_state_dir(env);
}

struct RestoreFailure {
    std::string path;
    std::string cause;
};

// Puts every target back as the journal recorded it; idempotent, so it can be re-run after
// a crash in the middle of it.
std::vector<RestoreFailure> restore_targets(const Root& root, const Transaction& t, const ApplyOptions& options) {
    std::vector<RestoreFailure> failures;
    for (auto it = t.targets.rbegin(); it != t.targets.rend(); ++it) {
        const JournalTarget& jt = *it;
        const std::string host = root.host_path(jt.path);
        if (options.fail_restore) {
            failures.push_back({jt.path, "injected restore failure (RMCP_TEST_FAIL_RESTORE, test-only)"});
            continue;
        }
        if (jt.existed) {
            auto content = read_host_file(root.host_path(t.journal_dir + "/" + jt.backup));
            if (!content) {
                failures.push_back({jt.path, "backup unreadable: " + content.error().message()});
                continue;
            }
            fs::create_directories(fs::path(host).parent_path());
            if (auto s = write_file_atomic(host, *content, jt.mode); !s) {
                failures.push_back({jt.path, s.error().message()});
                continue;
            }
        } else if (::unlink(host.c_str()) != 0 && errno != ENOENT) {
            failures.push_back({jt.path, std::strerror(errno)});
            continue;
        } else {
            static_cast<void>(fsync_dir(fs::path(host).parent_path().string()));  // best effort: the unlink itself succeeded
        }
        // A crash inside an atomic write can leave its temporary file next to the target.
        const fs::path dir = fs::path(host).parent_path();
        const std::string prefix = fs::path(host).filename().string() + ".rmcp-tmp-";
        std::error_code ec;
        for (fs::directory_iterator d(dir, ec), end; !ec && d != end; d.increment(ec))
            if (d->path().filename().string().rfind(prefix, 0) == 0) fs::remove(d->path(), ec);
    }
    if (!failures.empty()) return failures;
    for (auto it = t.created_dirs.rbegin(); it != t.created_dirs.rend(); ++it) {
        const std::string host = root.host_path(*it);
        if (::rmdir(host.c_str()) != 0 && errno != ENOENT)
            failures.push_back({*it, fmt::format("directory rmcp created is not empty ({}); remove it by hand if it "
                                                 "should go",
                                                 std::strerror(errno))});
        else
            static_cast<void>(fsync_dir(fs::path(host).parent_path().string()));  // best effort
    }
    return failures;
}

std::string incomplete_message(const Root& root, const Transaction& t, const std::vector<RestoreFailure>& failures) {
    std::string files;
    for (const auto& f : failures) files += fmt::format("\n  {}: {}", f.path, f.cause);
    const std::string root_opt = root.is_live() ? "" : fmt::format(" --root {}", root.base().string());
    return fmt::format("rollback is incomplete; these targets are not restored:{}\n"
                       "  the journal (prior contents and modes) is in {}\n"
                       "  fix the cause above, then run: rmcp{} patch rollback {}",
                       files, root.host_path(t.journal_dir), root_opt, t.id);
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
    struct stat st{};
    if (::lstat(root.host_path(*canon).c_str(), &st) == 0 && !S_ISREG(st.st_mode))
        return Error{"refusing target", path, "it exists and is not a regular file", ExitCode::usage};
    return *canon;
}

Result<ApplyOutcome> apply_plan(const Root& root, const Plan& plan, const ApplyOptions& options) {
    ApplyOutcome outcome;
    // Resolve and check every target before anything else happens.
    struct Write {
        const PlannedStep* step;
        std::string target;  // canonical
    };
    std::vector<Write> writes;
    bool system = false;
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
    if (writes.empty()) return outcome;

    Transaction t;
    t.system = system;
    t.patches = plan.patch_ids;
    t.created = now_utc_iso();
    const std::string user_base = user_state_dir(options.env);
    auto user_lock = Lock::acquire(root.host_path(user_base));
    if (!user_lock) return user_lock.error();
    std::optional<Lock> system_lock;
    if (system) {
        auto l = Lock::acquire(root.host_path(std::string(k_system_state_dir)));
        if (!l) return l.error();
        system_lock.emplace(std::move(*l));
    }
    const std::string base = journal_base(t, options.env);

    // Prior state of each target, read again under the lock: the plan must still hold.
    for (const auto& w : writes) {
        if (std::any_of(t.targets.begin(), t.targets.end(), [&](const JournalTarget& jt) { return jt.path == w.target; }))
            continue;
        const std::string host = root.host_path(w.target);
        struct stat st{};
        JournalTarget jt;
        jt.path = w.target;
        jt.existed = ::stat(host.c_str(), &st) == 0;
        jt.mode = jt.existed ? (st.st_mode & 07777) : 0;
        std::string content;
        if (jt.existed) {
            auto c = read_host_file(host);
            if (!c) return c.error();
            content = std::move(*c);
        }
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
        t.targets.push_back(jt);
    }

    // Journal first: backups, then journal.json (its presence makes the transaction real).
    t.id = new_txn_id();
    t.journal_dir = base + "/transactions/" + t.id;
    const std::string txn_host = root.host_path(t.journal_dir);
    if (auto s = mkdirs(txn_host, 0700); !s) return s.error();
    for (const auto& jt : t.targets) {
        if (!jt.existed) continue;
        auto content = read_host_file(root.host_path(jt.path));
        if (!content) return content.error();
        if (auto s = write_file_atomic(txn_host + "/" + jt.backup, *content, 0600); !s) return s.error();
    }
    if (auto s = write_journal(root, t); !s) return s.error();
    static_cast<void>(fsync_dir(fs::path(txn_host).parent_path().string()));  // the journal file itself is synced
    if (options.kill_after_step && *options.kill_after_step == 0) ::raise(SIGKILL);

    const auto fail_and_restore = [&](const Error& cause) -> Error {
        const auto failures = restore_targets(root, t, options);
        if (!failures.empty()) {
            Error e = cause;
            e.cause += "\n" + incomplete_message(root, t, failures);
            e.code = ExitCode::apply_incomplete;
            return e;
        }
        t.state = TxnState::rolled_back;
        t.failed = true;
        static_cast<void>(write_journal(root, t));  // targets are restored either way
        Error e = cause;
        e.cause += "; every change was rolled back (journal " + t.id + ")";
        e.code = ExitCode::apply_rolled_back;
        return e;
    };

    for (const auto& dir : t.created_dirs)
        if (::mkdir(root.host_path(dir).c_str(), 0755) != 0 && errno != EEXIST)
            return fail_and_restore(os_err("creating directory", dir, errno));
    unsigned k = 0;
    for (const auto& w : writes) {
        ++k;
        if (options.fail_step && *options.fail_step == k)
            return fail_and_restore(
                Error{"writing", w.target, "injected failure (RMCP_TEST_FAIL_STEP, test-only)", ExitCode::environment, EIO});
        if (auto s = write_file_atomic(root.host_path(w.target), w.step->new_content, w.step->new_mode); !s)
            return fail_and_restore(s.error());
        if (options.kill_after_step && *options.kill_after_step == k) ::raise(SIGKILL);
        if (std::find(outcome.written.begin(), outcome.written.end(), w.target) == outcome.written.end())
            outcome.written.push_back(w.target);
    }
    t.state = TxnState::applied;
    if (auto s = write_journal(root, t); !s) return fail_and_restore(s.error());
    outcome.txn_id = t.id;
    return outcome;
}

Result<std::vector<Transaction>> list_transactions(const Root& root, const std::map<std::string, std::string>& env) {
    std::vector<Transaction> out;
    for (const auto& [base, system] : {std::pair{user_state_dir(env), false},
                                       std::pair{std::string(k_system_state_dir), true}}) {
        auto names = root.list_dir(base + "/transactions");
        if (!names) continue;
        const bool busy = Lock::held(root.host_path(base));
        for (const auto& name : *names) {
            const std::string dir = base + "/transactions/" + name;
            auto text = root.read_file(dir + "/journal.json");
            if (!text) continue;  // killed before the journal existed: nothing was touched
            nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
            if (j.is_discarded())
                return Error{"reading journal", root.host_path(dir + "/journal.json"), "not valid JSON",
                             ExitCode::environment};
            auto t = from_json(j, root.host_path(dir + "/journal.json"));
            if (!t) return t.error();
            t->journal_dir = dir;
            t->system = system;
            t->in_progress = t->state == TxnState::applying && busy;
            out.push_back(std::move(*t));
        }
    }
    std::sort(out.begin(), out.end(), [](const Transaction& a, const Transaction& b) { return a.id < b.id; });
    return out;
}

Result<std::optional<Transaction>> rollback(const Root& root, const std::optional<std::string>& id,
                                            const ApplyOptions& options) {
    auto all = list_transactions(root, options.env);
    if (!all) return all.error();
    const auto active = [](const Transaction& t) { return t.state != TxnState::rolled_back; };
    const Transaction* chosen = nullptr;
    if (id) {
        for (const auto& t : *all)
            if (t.id == *id) chosen = &t;
        if (!chosen) return Error{"rolling back", *id, "no such transaction (see `rmcp patch status`)", ExitCode::usage};
        if (!active(*chosen)) return std::optional<Transaction>{};
    } else {
        for (const auto& t : *all)
            if (active(t)) chosen = &t;
        if (!chosen) return std::optional<Transaction>{};
    }
    Transaction t = *chosen;
    // Transactions form a stack per target: a newer one that touched the same file must go first.
    for (const auto& other : *all) {
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
            return Error{"rolling back", jt.path, fmt::format("it now resolves to {}; refusing", *canon), ExitCode::usage};
        if (auto p = check_privilege(jt.path, options, "restoring"); !p) return p.error();
    }
    auto user_lock = Lock::acquire(root.host_path(user_state_dir(options.env)));
    if (!user_lock) return user_lock.error();
    std::optional<Lock> system_lock;
    if (t.system) {
        auto l = Lock::acquire(root.host_path(std::string(k_system_state_dir)));
        if (!l) return l.error();
        system_lock.emplace(std::move(*l));
    }
    const auto failures = restore_targets(root, t, options);
    if (!failures.empty())
        return Error{"rolling back", t.id, incomplete_message(root, t, failures), ExitCode::apply_incomplete};
    t.state = TxnState::rolled_back;
    if (auto s = write_journal(root, t); !s) return s.error();
    return std::optional<Transaction>{t};
}

}  // namespace rmcp::patch
