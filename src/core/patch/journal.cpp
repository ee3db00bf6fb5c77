// Journals: format, reading and checking, listing, the lock of a journal base.
#include "patch/journal.hpp"

#include "patch/profile.hpp"
#include "util/atomic_file.hpp"
#include "util/strings.hpp"
#include "util/test_delay.hpp"
#include "util/text.hpp"

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

constexpr int k_journal_schema = 1;
constexpr std::size_t k_journal_limit = std::size_t{1} << 20;
// The final record staged next to journal.json (stage_journal); never read as a journal.
constexpr const char* k_staged_journal = "journal.next.json";

// The kinds of file rmcp writes, by shape alone (no environment needed): what a journal
// may name at all. Rollback checks the full allowlist as well.
bool has_target_shape(const std::string& p) {
    if (is_modprobe_target(p)) return true;
    if (p.ends_with("/rmcp/profile.env")) return true;
    const fs::path path(p);
    const auto site = path.parent_path().filename();
    return path.filename() == k_startup_hook_name && (site == "site-packages" || site == "dist-packages");
}

// ---- the journal -----------------------------------------------------------------------

nlohmann::json journal_json(const Transaction& t) {
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

// Temporary files of a killed writer: next to each target of a trusted journal, and in every
// transaction directory. remove_temporaries() leaves a live writer's alone.
void remove_stale_temporaries(const Root& root, const std::vector<Transaction>& txns) {
    for (const auto& t : txns) {
        if (auto dir = root.open_dir(t.journal_dir)) {
            remove_temporaries(dir->get(), "journal.json");
            remove_temporaries(dir->get(), k_staged_journal);
            for (std::size_t i = 0; i < t.targets.size(); ++i)
                remove_temporaries(dir->get(), fmt::format("{}.orig", i));
        }
        if (!t.corrupt.empty()) continue;
        for (const auto& jt : t.targets)
            if (auto dir = target_dir(root, jt.path)) remove_temporaries(dir->get(), basename(jt.path));
    }
}

// A new open file description of the directory `dirfd`: flock locks belong to descriptions,
// so each holder needs its own.
UniqueFd reopen_dir(int dirfd) { return UniqueFd(::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)); }

}  // namespace

std::string_view txn_state_name(TxnState s) {
    switch (s) {
    case TxnState::applying: return "applying";
    case TxnState::applied: return "applied";
    case TxnState::rolled_back: return "rolled-back";
    }
    return "applying";
}

const std::size_t k_target_limit = std::size_t{16} << 20;

bool under(const std::string& path, const std::string& dir) {
    if (dir.empty()) return false;
    const std::string d = dir.back() == '/' ? dir : dir + "/";
    return path.size() > d.size() && path.compare(0, d.size(), d) == 0;
}

bool is_modprobe_target(std::string_view path) {
    constexpr std::string_view k_prefix = "/etc/modprobe.d/rmcp-";
    constexpr std::string_view k_suffix = ".conf";
    if (!path.starts_with(k_prefix) || !path.ends_with(k_suffix) || path.size() <= k_prefix.size() + k_suffix.size())
        return false;
    return is_lower_name(path.substr(k_prefix.size(), path.size() - k_prefix.size() - k_suffix.size()));
}

// ---- files inside the root, through descriptors ----------------------------------------

Result<std::optional<FileState>> read_at(int dirfd, const std::string& name, const std::string& shown) {
    UniqueFd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT) return std::optional<FileState>{};
        return os_error("reading", shown, errno);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return os_error("inspecting", shown, errno);
    if (!S_ISREG(st.st_mode)) return Error{"reading", shown, "not a regular file", ExitCode::environment, EINVAL};
    FileState f;
    f.mode = st.st_mode & 07777;
    if (const int err = read_fd(fd.get(), k_target_limit, f.content); err != 0) return os_error("reading", shown, err);
    return std::optional<FileState>{std::move(f)};
}

Result<UniqueFd> target_dir(const Root& root, const std::string& target) {
    return root.open_dir(dirname(target), LinkPolicy::refuse);
}

Status write_owned_at(int dirfd, std::string_view name, std::string_view content, std::uint32_t mode,
                      const std::string& shown) {
    UniqueFd guard = reopen_dir(dirfd);
    if (!guard) return os_error("opening the directory of", shown, errno);
    test_hooks::delay_at("lock");
    // Shared: writers of different files of one directory do not wait for each other; only a
    // cleaner (exclusive, never waiting) is kept out. Released when `guard` closes, after
    // the rename.
    while (::flock(guard.get(), LOCK_SH) != 0)
        if (errno != EINTR) return os_error("locking the directory of", shown, errno);
    return write_file_atomic_at(dirfd, name, content, static_cast<mode_t>(mode), shown);
}

void remove_temporaries(int dirfd, std::string_view name) {
    UniqueFd guard = reopen_dir(dirfd);
    if (!guard) return;
    test_hooks::delay_at("lock");
    // Held by a writer: its temporary file is live (or about to be). Not waiting keeps
    // status and listing from ever blocking on a writer.
    if (::flock(guard.get(), LOCK_EX | LOCK_NB) != 0) return;
    UniqueFd copy(::fcntl(guard.get(), F_DUPFD_CLOEXEC, 0));
    if (!copy) return;
    DIR* dir = ::fdopendir(copy.get());
    if (!dir) return;
    copy.release();  // the DIR owns it now; `guard` keeps the lock until the unlinks are done
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
    // [0-9]{8}T[0-9]{6}.[0-9]{9}, as new_txn_id() writes it
    return id.size() == 25 && all_digits(id.substr(0, 8)) && id[8] == 'T' && all_digits(id.substr(9, 6)) &&
           id[15] == '.' && all_digits(id.substr(16, 9));
}

Result<JournalLock> JournalLock::acquire(const Root& root, const std::string& base) {
    auto dir = root.make_dirs(base, 0700);
    if (!dir) return dir.error();
    JournalLock lock;
    lock.m_fd.reset(::openat(dir->get(), "lock", O_CREAT | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0600));
    const std::string shown = root.host_path(base + "/lock");
    if (!lock.m_fd) return os_error("opening lock", shown, errno);
    test_hooks::delay_at("lock");
    // A `status` or listing holds a base's lock for an instant (to tell an apply in progress
    // from an interrupted one): wait a little for it rather than fail; a real apply or
    // rollback holding it longer is reported.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (::flock(lock.m_fd.get(), LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR) continue;
        if (errno != EWOULDBLOCK) return os_error("locking", shown, errno);
        if (std::chrono::steady_clock::now() >= give_up)
            return Error{"locking", shown, "another rmcp patch apply or rollback is running; try again when it ends",
                         ExitCode::environment, EWOULDBLOCK};
        ::usleep(10000);
    }
    return lock;
}

std::optional<JournalLock> JournalLock::try_existing(const Root& root, const std::string& base) {
    auto dir = root.open_dir(base);
    if (!dir) return JournalLock{};  // no journals there at all
    JournalLock lock;
    lock.m_fd.reset(::openat(dir->get(), "lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC));
    // No lock file: no apply ever ran there. One we may not open (another user's system
    // journal): nobody can be told apart, and nothing we could clean is ours to remove.
    if (!lock.m_fd) return JournalLock{};
    test_hooks::delay_at("lock");
    if (::flock(lock.m_fd.get(), LOCK_EX | LOCK_NB) != 0) return std::nullopt;
    return lock;
}

Status write_journal(const Root& root, const Transaction& t) {
    auto dir = root.open_dir(t.journal_dir);
    if (!dir) return dir.error();
    return write_owned_at(dir->get(), "journal.json", json_text(journal_json(t), 2) + "\n", 0600,
                          root.host_path(t.journal_dir + "/journal.json"));
}

Status stage_journal(const Root& root, const Transaction& final_state) {
    auto dir = root.open_dir(final_state.journal_dir);
    if (!dir) return dir.error();
    return write_owned_at(dir->get(), k_staged_journal, json_text(journal_json(final_state), 2) + "\n", 0600,
                          root.host_path(final_state.journal_dir + "/" + k_staged_journal));
}

Status commit_staged_journal(const Root& root, const Transaction& t) {
    auto dir = root.open_dir(t.journal_dir);
    if (!dir) return dir.error();
    test_hooks::delay_at("rename");
    // A rename needs no new data blocks: it succeeds on the disk that is now full.
    if (::renameat(dir->get(), k_staged_journal, dir->get(), "journal.json") != 0)
        return os_error("recording the final state in", root.host_path(t.journal_dir + "/journal.json"), errno);
    ::fsync(dir->get());  // best effort: the rename itself succeeded
    return ok_status();
}

void drop_staged_journal(const Root& root, const Transaction& t) {
    if (auto dir = root.open_dir(t.journal_dir)) ::unlinkat(dir->get(), k_staged_journal, 0);
}

std::string journal_base(const Transaction& t, const std::map<std::string, std::string>& env) {
    return t.system ? std::string(k_system_state_dir) : user_state_dir(env);
}

std::vector<Transaction> collect_transactions(const Root& root, const std::map<std::string, std::string>& env,
                                              bool clean, const std::array<bool, 2>& locked) {
    std::vector<Transaction> out;
    const std::array<std::pair<std::string, bool>, 2> bases{
        {{user_state_dir(env), false}, {std::string(k_system_state_dir), true}}};
    for (std::size_t i = 0; i < bases.size(); ++i) {
        const auto& [base, system] = bases[i];
        auto txns = read_base(root, base, system);
        // Held only for this test, not while cleaning: the temporaries carry their own locks.
        const bool busy = !locked[i] && !JournalLock::try_existing(root, base);
        for (auto& t : txns) t.in_progress = t.corrupt.empty() && t.state == TxnState::applying && busy;
        if (clean) remove_stale_temporaries(root, txns);
        out.insert(out.end(), std::make_move_iterator(txns.begin()), std::make_move_iterator(txns.end()));
    }
    std::sort(out.begin(), out.end(), [](const Transaction& a, const Transaction& b) { return a.id < b.id; });
    return out;
}

Result<Transaction> parse_journal(std::string_view text, std::string_view dir_name) {
    using nlohmann::json;
    const json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    const auto bad = [](std::string why) {
        return Error{"reading journal", "", std::move(why), ExitCode::environment};
    };
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
        return bad(fmt::format("\"id\" {} is not a transaction id or not its directory's name", json_text(*id)));
    t.id = *id;
    auto state = string_field("state");
    if (!state) return state.error();
    if (*state == "applying") t.state = TxnState::applying;
    else if (*state == "applied") t.state = TxnState::applied;
    else if (*state == "rolled-back") t.state = TxnState::rolled_back;
    else return bad(fmt::format("unknown \"state\" {}", json_text(*state)));
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
    for (const auto& p : *patches)
        if (p.size() > 64 || !is_lower_name(p)) return bad(fmt::format("patch id {} is not one", json_text(p)));
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
        if (!plain_path(jt.path))
            return bad(fmt::format("target path {} is not absolute and normalised", json_text(jt.path)));
        if (!has_target_shape(jt.path))
            return bad(fmt::format("target path {} is not a file rmcp writes", json_text(jt.path)));
        if (!seen.insert(jt.path).second) return bad(fmt::format("target {} appears twice", jt.path));
        if (mode > 07777) return bad(fmt::format("mode of {} is not a permission mode (0 to 07777)", jt.path));
        jt.mode = static_cast<std::uint32_t>(mode);
        // The backup is a file of this transaction's own directory, named by its index.
        const std::string expected = jt.existed ? fmt::format("{}.orig", index) : std::string();
        if (jt.backup != expected)
            return bad(
                fmt::format("backup of {} must be {}", jt.path, expected.empty() ? "empty" : json_text(expected)));
        t.targets.push_back(std::move(jt));
    }
    auto dirs = string_list("created_dirs");
    if (!dirs) return dirs.error();
    for (const auto& d : *dirs) {
        const bool above_a_target =
            std::any_of(t.targets.begin(), t.targets.end(), [&](const JournalTarget& jt) { return under(jt.path, d); });
        if (!plain_path(d) || !above_a_target)
            return bad(fmt::format("created directory {} is not a normalised directory above a target", json_text(d)));
    }
    t.created_dirs = *dirs;
    return t;
}

Result<std::vector<Transaction>> list_transactions(const Root& root, const std::map<std::string, std::string>& env) {
    return collect_transactions(root, env, /*clean=*/true, {false, false});
}

}  // namespace rmcp::patch
