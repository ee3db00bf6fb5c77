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
#include <array>
#include <filesystem>
#include <regex>
#include <set>
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
constexpr std::size_t k_journal_limit = std::size_t{1} << 20;
constexpr std::size_t k_target_limit = std::size_t{16} << 20;

Error os_err(std::string doing, std::string path, int err, ExitCode code = ExitCode::environment) {
    return Error{std::move(doing), std::move(path), std::strerror(err), code, err};
}

std::string env_get(const std::map<std::string, std::string>& env, const char* key) {
    const auto it = env.find(key);
    return it == env.end() ? std::string() : it->second;
}

std::string parent_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string name_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// ---- canonicalisation and the allowlist ------------------------------------------------

// Canonical path of `logical` inside the root: Root's resolver, the only one.
Result<std::string> canonical_in_root(const Root& root, const std::string& logical) {
    auto c = root.canonical(logical);
    if (!c) return Error{"resolving", logical, c.error().cause, ExitCode::environment, c.error().os_error};
    return c;
}

bool under(const std::string& path, const std::string& dir) {
    if (dir.empty()) return false;
    const std::string d = dir.back() == '/' ? dir : dir + "/";
    return path.size() > d.size() && path.compare(0, d.size(), d) == 0;
}

const std::regex& modprobe_pattern() {
    static const std::regex k_modprobe{"/etc/modprobe\\.d/rmcp-[a-z0-9][a-z0-9-]*\\.conf"};
    return k_modprobe;
}

// The allowlist (SPEC.md "The patch manager"): the user's profile.env, rmcp's own modprobe
// files, and the start-up hook in a site-packages under $HOME or inside a virtual
// environment / conda prefix.
std::optional<std::string> allowlist_refusal(const Root& root, const std::string& p,
                                             const std::map<std::string, std::string>& env) {
    if (std::regex_match(p, modprobe_pattern())) return std::nullopt;
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

// The kinds of file rmcp writes, by shape alone (no environment needed): what a journal
// may name at all. Rollback checks the full allowlist as well.
bool has_target_shape(const std::string& p) {
    if (std::regex_match(p, modprobe_pattern())) return true;
    if (p.ends_with("/rmcp/profile.env")) return true;
    const fs::path path(p);
    const auto site = path.parent_path().filename();
    return path.filename() == k_startup_hook_name && (site == "site-packages" || site == "dist-packages");
}

// ---- files inside the root, through descriptors ----------------------------------------

struct FileState {
    std::string content;
    std::uint32_t mode = 0;
};

// The file `name` in the directory `dirfd`: nullopt when absent; an error when it is not a
// regular file (a link included: targets are canonical) or cannot be read.
Result<std::optional<FileState>> read_at(int dirfd, const std::string& name, const std::string& shown) {
    UniqueFd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT) return std::optional<FileState>{};
        return os_err("reading", shown, errno);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return os_err("inspecting", shown, errno);
    if (!S_ISREG(st.st_mode)) return Error{"reading", shown, "not a regular file", ExitCode::environment, EINVAL};
    FileState f;
    f.mode = st.st_mode & 07777;
    if (const int err = read_fd(fd.get(), k_target_limit, f.content); err != 0) return os_err("reading", shown, err);
    return std::optional<FileState>{std::move(f)};
}

// The directory holding a canonical target: no link is followed on the way (a link that
// appeared since the target was checked is refused, not followed).
Result<UniqueFd> target_dir(const Root& root, const std::string& target) {
    return root.open_dir(parent_of(target), LinkPolicy::refuse);
}

// Removes what a kill inside an atomic write leaves next to `name` in `dirfd`.
void remove_temporaries(int dirfd, std::string_view name) {
    const int copy = ::fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    if (copy < 0) return;
    DIR* dir = ::fdopendir(copy);
    if (!dir) {
        ::close(copy);
        return;
    }
    const std::string prefix = std::string(name) + std::string(k_temp_infix);
    std::vector<std::string> stale;
    while (const dirent* ent = ::readdir(dir))
        if (std::string_view(ent->d_name).starts_with(prefix)) stale.emplace_back(ent->d_name);
    ::closedir(dir);
    for (const auto& n : stale) ::unlinkat(dirfd, n.c_str(), 0);
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

bool is_txn_id(std::string_view id) {
    static const std::regex k_id{"[0-9]{8}T[0-9]{6}\\.[0-9]{9}"};
    return std::regex_match(id.begin(), id.end(), k_id);
}

// One lock file per journal base; held for the whole apply or rollback.
class Lock {
public:
    Lock() = default;
    static Result<Lock> acquire(const Root& root, const std::string& base) {
        auto dir = root.make_dirs(base, 0700);
        if (!dir) return dir.error();
        Lock lock;
        lock.m_fd.reset(::openat(dir->get(), "lock", O_CREAT | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0600));
        const std::string shown = root.host_path(base + "/lock");
        if (!lock.m_fd) return os_err("opening lock", shown, errno);
        if (::flock(lock.m_fd.get(), LOCK_EX | LOCK_NB) != 0) {
            if (errno == EWOULDBLOCK)
                return Error{"locking", shown, "another rmcp patch apply or rollback is running; try again when it ends",
                             ExitCode::environment, EWOULDBLOCK};
            return os_err("locking", shown, errno);
        }
        return lock;
    }
    // The lock of an existing base, if nobody holds it (creates nothing).
    static std::optional<Lock> try_existing(const Root& root, const std::string& base) {
        auto dir = root.open_dir(base);
        if (!dir) return Lock{};  // no journals there at all
        Lock lock;
        lock.m_fd.reset(::openat(dir->get(), "lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC));
        // No lock file: no apply ever ran there. One we may not open (another user's system
        // journal): nobody can be told apart, and nothing we could clean is ours to remove.
        if (!lock.m_fd) return Lock{};
        if (::flock(lock.m_fd.get(), LOCK_EX | LOCK_NB) != 0) return std::nullopt;
        return lock;
    }

private:
    UniqueFd m_fd;
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

Status write_journal(const Root& root, const Transaction& t) {
    auto dir = root.open_dir(t.journal_dir);
    if (!dir) return dir.error();
    return write_file_atomic_at(dir->get(), "journal.json", to_json(t).dump(2) + "\n", 0600,
                                root.host_path(t.journal_dir + "/journal.json"));
}

std::string journal_base(const Transaction& t, const std::map<std::string, std::string>& env) {
    return t.system ? std::string(k_system_state_dir) : user_state_dir(env);
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
        const std::string name = name_of(jt.path);
        auto dir = target_dir(root, jt.path);
        if (!dir && dir.error().os_error == ENOENT) {
            if (!jt.existed) continue;  // absent, as it was
            dir = root.make_dirs(parent_of(jt.path), 0755, LinkPolicy::refuse);
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
                failures.push_back({jt.path, "backup unreadable: " + (backup ? std::string("it is missing")
                                                                               : backup.error().message())});
                continue;
            }
            const bool same = *current && (*current)->content == (*backup)->content && (*current)->mode == jt.mode;
            if (!same) {
                if (options.fail_restore) {
                    failures.push_back({jt.path, "injected restore failure (RMCP_TEST_FAIL_RESTORE, test-only)"});
                    continue;
                }
                if (auto s = write_file_atomic_at(dir->get(), name, (*backup)->content, jt.mode, jt.path); !s) {
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
        auto parent = root.open_dir(parent_of(*it), LinkPolicy::refuse);
        if (!parent) {
            if (parent.error().os_error != ENOENT) failures.push_back({*it, parent.error().message()});
            continue;
        }
        if (::unlinkat(parent->get(), name_of(*it).c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
            failures.push_back({*it, fmt::format("directory rmcp created is not empty ({}); remove it by hand if it "
                                                 "should go",
                                                 std::strerror(errno))});
        else
            ::fsync(parent->get());  // best effort
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

// The transaction directories of one journal base, each read and checked.
std::vector<Transaction> read_base(const Root& root, const std::string& base, bool system) {
    std::vector<Transaction> out;
    auto names = root.list_dir(base + "/transactions");
    if (!names) return out;
    for (const auto& name : *names) {
        const std::string dir = base + "/transactions/" + name;
        if (!root.is_dir(dir)) continue;
        Transaction t;
        t.id = name;
        t.journal_dir = dir;
        t.system = system;
        auto text = root.read_file(dir + "/journal.json", k_journal_limit + 1);
        if (!text) {
            if (text.error().os_error == ENOENT) continue;  // killed before the journal existed: nothing was touched
            t.corrupt = text.error().cause;
        } else if (text->size() > k_journal_limit) {
            t.corrupt = "larger than any journal rmcp writes";
        } else if (auto parsed = parse_journal(*text, name); !parsed) {
            t.corrupt = parsed.error().cause;
        } else {
            t = std::move(*parsed);
            t.journal_dir = dir;
            t.system = system;
        }
        out.push_back(std::move(t));
    }
    return out;
}

// Temporary files of a killed apply: next to each target of a trusted journal, and in every
// transaction directory. Only while nobody holds the base's lock.
void remove_stale_temporaries(const Root& root, const std::vector<Transaction>& txns, bool system) {
    for (const auto& t : txns) {
        if (t.system != system) continue;
        if (auto dir = root.open_dir(t.journal_dir)) remove_temporaries(dir->get(), "journal.json");
        if (auto dir = root.open_dir(t.journal_dir))
            for (std::size_t i = 0; i < t.targets.size(); ++i) remove_temporaries(dir->get(), fmt::format("{}.orig", i));
        if (!t.corrupt.empty()) continue;
        for (const auto& jt : t.targets)
            if (auto dir = target_dir(root, jt.path)) remove_temporaries(dir->get(), name_of(jt.path));
    }
}

std::vector<Transaction> collect(const Root& root, const std::map<std::string, std::string>& env, bool clean,
                                 const std::array<bool, 2>& locked) {
    std::vector<Transaction> out;
    const std::array<std::pair<std::string, bool>, 2> bases{
        {{user_state_dir(env), false}, {std::string(k_system_state_dir), true}}};
    for (std::size_t i = 0; i < bases.size(); ++i) {
        const auto& [base, system] = bases[i];
        auto txns = read_base(root, base, system);
        std::optional<Lock> lock;
        const bool busy = !locked[i] && !(lock = Lock::try_existing(root, base));
        for (auto& t : txns) t.in_progress = t.corrupt.empty() && t.state == TxnState::applying && busy;
        if (clean && !busy) remove_stale_temporaries(root, txns, system);
        out.insert(out.end(), std::make_move_iterator(txns.begin()), std::make_move_iterator(txns.end()));
    }
    std::sort(out.begin(), out.end(), [](const Transaction& a, const Transaction& b) { return a.id < b.id; });
    return out;
}

}  // namespace

Result<Transaction> parse_journal(std::string_view text, std::string_view dir_name) {
    using nlohmann::json;
    const json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    const auto bad = [](std::string why) { return Error{"reading journal", "", std::move(why), ExitCode::environment}; };
    if (j.is_discarded()) return bad("not valid JSON");
    if (!j.is_object()) return bad("not a JSON object");
    for (const auto& [key, _] : j.items())
        if (key != "schema_version" && key != "id" && key != "state" && key != "failed" && key != "system" &&
            key != "created" && key != "patches" && key != "created_dirs" && key != "targets")
            return bad(fmt::format("unknown field \"{}\"", key));
    const auto string_field = [&](const char* key) -> Result<std::string> {
        if (!j.contains(key) || !j.at(key).is_string()) return bad(fmt::format("\"{}\" must be a string", key));
        return j.at(key).get<std::string>();
    };
    const auto bool_field = [&](const char* key) -> Result<bool> {
        if (!j.contains(key) || !j.at(key).is_boolean()) return bad(fmt::format("\"{}\" must be true or false", key));
        return j.at(key).get<bool>();
    };
    if (!j.contains("schema_version") || !j.at("schema_version").is_number_integer() ||
        j.at("schema_version").get<long long>() != k_journal_schema)
        return bad(fmt::format("\"schema_version\" must be {}", k_journal_schema));
    Transaction t;
    auto id = string_field("id");
    if (!id) return id.error();
    if (!is_txn_id(*id) || *id != dir_name)
        return bad(fmt::format("\"id\" {} is not a transaction id or not its directory's name", json(*id).dump()));
    t.id = *id;
    auto state = string_field("state");
    if (!state) return state.error();
    if (*state == "applying") t.state = TxnState::applying;
    else if (*state == "applied") t.state = TxnState::applied;
    else if (*state == "rolled-back") t.state = TxnState::rolled_back;
    else return bad(fmt::format("unknown \"state\" {}", json(*state).dump()));
    auto failed = bool_field("failed");
    if (!failed) return failed.error();
    t.failed = *failed;
    auto system = bool_field("system");
    if (!system) return system.error();
    t.system = *system;
    auto created = string_field("created");
    if (!created) return created.error();
    if (created->size() > 64) return bad("\"created\" is too long");
    t.created = *created;

    const auto string_list = [&](const char* key) -> Result<std::vector<std::string>> {
        if (!j.contains(key) || !j.at(key).is_array()) return bad(fmt::format("\"{}\" must be a list", key));
        std::vector<std::string> out;
        for (const auto& e : j.at(key)) {
            if (!e.is_string()) return bad(fmt::format("\"{}\" must hold strings", key));
            out.push_back(e.get<std::string>());
        }
        return out;
    };
    auto patches = string_list("patches");
    if (!patches) return patches.error();
    static const std::regex k_patch_id{"[a-z0-9][a-z0-9-]{0,63}"};
    for (const auto& p : *patches)
        if (!std::regex_match(p, k_patch_id)) return bad(fmt::format("patch id {} is not one", json(p).dump()));
    t.patches = *patches;

    // A path a journal may name: absolute, normalised (no "." or ".." or "//"), no NUL.
    const auto plain_path = [](const std::string& p) {
        return !p.empty() && p.front() == '/' && p.size() < 4096 && p.find('\0') == std::string::npos &&
               normalise_path(p) == p && p != "/";
    };
    if (!j.contains("targets") || !j.at("targets").is_array()) return bad("\"targets\" must be a list");
    if (j.at("targets").size() > 256) return bad("more targets than any patch set writes");
    std::set<std::string> seen;
    for (const auto& e : j.at("targets")) {
        const std::size_t index = t.targets.size();
        if (!e.is_object() || e.size() != 4 || !e.contains("path") || !e.contains("existed") || !e.contains("mode") ||
            !e.contains("backup"))
            return bad(fmt::format("target {} must have exactly path, existed, mode and backup", index));
        if (!e.at("path").is_string() || !e.at("existed").is_boolean() || !e.at("backup").is_string() ||
            !e.at("mode").is_number_unsigned())
            return bad(fmt::format("target {} has a field of the wrong type", index));
        JournalTarget jt;
        jt.path = e.at("path").get<std::string>();
        jt.existed = e.at("existed").get<bool>();
        const auto mode = e.at("mode").get<std::uint64_t>();
        jt.backup = e.at("backup").get<std::string>();
        if (!plain_path(jt.path)) return bad(fmt::format("target path {} is not absolute and normalised", json(jt.path).dump()));
        if (!has_target_shape(jt.path))
            return bad(fmt::format("target path {} is not a file rmcp writes", json(jt.path).dump()));
        if (!seen.insert(jt.path).second) return bad(fmt::format("target {} appears twice", jt.path));
        if (mode > 07777) return bad(fmt::format("mode of {} is not a permission mode (0 to 07777)", jt.path));
        jt.mode = static_cast<std::uint32_t>(mode);
        // The backup is a file of this transaction's own directory, named by its index.
        const std::string expected = jt.existed ? fmt::format("{}.orig", index) : std::string();
        if (jt.backup != expected)
            return bad(fmt::format("backup of {} must be {}", jt.path, expected.empty() ? "empty" : json(expected).dump()));
        t.targets.push_back(std::move(jt));
    }
    auto dirs = string_list("created_dirs");
    if (!dirs) return dirs.error();
    for (const auto& d : *dirs) {
        const bool above_a_target = std::any_of(t.targets.begin(), t.targets.end(),
                                                [&](const JournalTarget& jt) { return under(jt.path, d); });
        if (!plain_path(d) || !above_a_target)
            return bad(fmt::format("created directory {} is not a normalised directory above a target", json(d).dump()));
    }
    t.created_dirs = *dirs;
    return t;
}

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
    auto user_lock = Lock::acquire(root, user_base);
    if (!user_lock) return user_lock.error();
    std::optional<Lock> system_lock;
    if (system) {
        auto l = Lock::acquire(root, std::string(k_system_state_dir));
        if (!l) return l.error();
        system_lock.emplace(std::move(*l));
    }
    // We hold the locks: whatever a killed apply left half-written goes now.
    static_cast<void>(collect(root, options.env, /*clean=*/true, {true, system}));
    const std::string base = journal_base(t, options.env);

    // Prior state of each target, read again under the lock: the plan must still hold.
    std::vector<std::string> backups;
    for (const auto& w : writes) {
        if (std::any_of(t.targets.begin(), t.targets.end(), [&](const JournalTarget& jt) { return jt.path == w.target; }))
            continue;
        JournalTarget jt;
        jt.path = w.target;
        std::optional<FileState> prior;
        if (auto dir = target_dir(root, w.target)) {
            auto read = read_at(dir->get(), name_of(w.target), w.target);
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

    // Journal first: backups, then journal.json (its presence makes the transaction real).
    t.id = new_txn_id();
    t.journal_dir = base + "/transactions/" + t.id;
    auto txn_dir = root.make_dirs(t.journal_dir, 0700);
    if (!txn_dir) return txn_dir.error();
    for (std::size_t i = 0; i < t.targets.size(); ++i) {
        const auto& jt = t.targets[i];
        if (!jt.existed) continue;
        if (auto s = write_file_atomic_at(txn_dir->get(), jt.backup, backups[i], 0600,
                                          root.host_path(t.journal_dir + "/" + jt.backup));
            !s)
            return s.error();
    }
    if (auto s = write_journal(root, t); !s) return s.error();
    if (auto parent = root.open_dir(base + "/transactions")) ::fsync(parent->get());  // the journal file itself is synced
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

    for (const auto& dir : t.created_dirs) {
        auto parent = root.open_dir(parent_of(dir), LinkPolicy::refuse);
        if (!parent) return fail_and_restore(parent.error());
        if (::mkdirat(parent->get(), name_of(dir).c_str(), 0755) != 0 && errno != EEXIST)
            return fail_and_restore(os_err("creating directory", dir, errno));
    }
    unsigned k = 0;
    for (const auto& w : writes) {
        ++k;
        if (options.fail_step && *options.fail_step == k)
            return fail_and_restore(
                Error{"writing", w.target, "injected failure (RMCP_TEST_FAIL_STEP, test-only)", ExitCode::environment, EIO});
        auto dir = target_dir(root, w.target);
        if (!dir) return fail_and_restore(dir.error());
        if (auto s = write_file_atomic_at(dir->get(), name_of(w.target), w.step->new_content, w.step->new_mode,
                                          w.target);
            !s)
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
    return collect(root, env, /*clean=*/true, {false, false});
}

Result<std::optional<Transaction>> rollback(const Root& root, const std::optional<std::string>& id,
                                            const ApplyOptions& options) {
    auto all = list_transactions(root, options.env);
    if (!all) return all.error();
    const auto active = [](const Transaction& t) { return t.corrupt.empty() && t.state != TxnState::rolled_back; };
    const Transaction* chosen = nullptr;
    if (id) {
        for (const auto& t : *all)
            if (t.id == *id) chosen = &t;
        if (!chosen) return Error{"rolling back", *id, "no such transaction (see `rmcp patch status`)", ExitCode::usage};
        if (!chosen->corrupt.empty())
            return Error{"reading journal", root.host_path(chosen->journal_dir + "/journal.json"),
                         chosen->corrupt + "; nothing in it is trusted, so nothing was restored (the backups, if any, "
                                           "are in that directory)",
                         ExitCode::environment};
        if (!active(*chosen)) return std::optional<Transaction>{};
    } else {
        for (const auto& t : *all)
            if (active(t)) chosen = &t;
        if (!chosen) {
            // Nothing trusted is left to undo, but a corrupt journal may stand for a change:
            // say so instead of "nothing to roll back".
            for (const auto& t : *all)
                if (!t.corrupt.empty())
                    return Error{"rolling back", root.host_path(t.journal_dir + "/journal.json"),
                                 "the only transactions left have corrupt journals (" + t.corrupt +
                                     "); nothing in them is trusted, so nothing was restored",
                                 ExitCode::environment};
            return std::optional<Transaction>{};
        }
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
    auto user_lock = Lock::acquire(root, user_state_dir(options.env));
    if (!user_lock) return user_lock.error();
    std::optional<Lock> system_lock;
    if (t.system) {
        auto l = Lock::acquire(root, std::string(k_system_state_dir));
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
