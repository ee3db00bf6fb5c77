#include "patch/profile.hpp"

#include "facts/facts.hpp"
#include "util/toml_read.hpp"
#include "root/root.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <set>
#include <sstream>

namespace rmcp::patch {

namespace detail = toml_read;
using detail::data_error;
using detail::line_of;

bool valid_env_name(std::string_view name) {
    if (name.empty() || (std::isdigit(static_cast<unsigned char>(name.front())) != 0)) return false;
    return std::all_of(name.begin(), name.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; });
}

Result<Profile> parse_profile(std::string_view text, const std::string& file) {
    auto parsed = detail::parse_toml(text, file);
    if (!parsed) return parsed.error();
    const toml::table& t = *parsed;
    if (auto s = detail::check_keys(t, file,
                                    {"name", "description", "cost", "rank", "extends", "hide_gpu", "set", "unset",
                                     "gfx_override", "gfx_kept"},
                                    "a profile");
        !s)
        return s.error();
    Profile p;
    p.file = file;
    auto name = detail::req_string(t, "name", file, 1);
    if (!name) return name.error();
    p.name = *name;
    // A profile name goes into commands printed for pasting (`eval "$(rmcp env --profile NAME)"`)
    // and into file names: the patch-id alphabet plus '.' and '_' (the shipped names use
    // [a-z-]), at most 64 bytes. A user's profile named "fix;touch X;" or "../../etc" is
    // refused here, naming the file (adversarial review 2026-11-28, D16).
    if (p.name.size() > 64 || !is_lower_name(p.name, "._-"))
        return data_error(file, line_of(*t.get("name")),
                          fmt::format("profile name '{}' must be 1 to 64 of [a-z0-9._-], starting with [a-z0-9]",
                                      p.name));
    auto description = detail::req_string(t, "description", file, 1);
    if (!description) return description.error();
    p.description = *description;
    auto cost = detail::req_string(t, "cost", file, 1);
    if (!cost) return cost.error();
    p.cost = *cost;
    const toml::node* rank = t.get("rank");
    if (!rank || !rank->is_integer()) return data_error(file, rank ? line_of(*rank) : 1, "'rank' must be an integer");
    p.rank = static_cast<int>(rank->as_integer()->get());
    auto extends = detail::opt_string(t, "extends", file);
    if (!extends) return extends.error();
    p.extends = extends->value_or("");
    auto hide = detail::opt_bool(t, "hide_gpu", file, false);
    if (!hide) return hide.error();
    p.hide_gpu = *hide;
    auto set = detail::opt_string_table(t, "set", file);
    if (!set) return set.error();
    p.set = *set;
    auto unset = detail::opt_string_array(t, "unset", file);
    if (!unset) return unset.error();
    p.unset = *unset;
    for (const auto& [k, v] : p.set)
        if (!valid_env_name(k))
            return data_error(file, line_of(*t.get("set")), fmt::format("'{}' is not a valid variable name", k));
    for (const auto& k : p.unset) {
        if (!valid_env_name(k))
            return data_error(file, line_of(*t.get("unset")), fmt::format("'{}' is not a valid variable name", k));
        if (p.set.count(k) != 0)
            return data_error(file, line_of(*t.get("unset")), fmt::format("'{}' is both set and unset", k));
    }
    for (const char* key : {"gfx_override", "gfx_kept"}) {
        const toml::node* go = t.get(key);
        if (!go) continue;
        auto& rules = std::string_view(key) == "gfx_override" ? p.gfx_override : p.gfx_kept;
        const auto* arr = go->as_array();
        if (!arr)
            return data_error(file, line_of(*go), fmt::format("'{}' must be an array of tables ([[{}]])", key, key));
        for (const auto& item : *arr) {
            const auto* rule = item.as_table();
            if (!rule) return data_error(file, line_of(item), fmt::format("each {} must be a table", key));
            if (auto s = detail::check_keys(*rule, file, {"targets", "value"}, key); !s) return s.error();
            GfxOverrideRule r;
            r.line = line_of(item);
            auto targets = detail::opt_string_array(*rule, "targets", file);
            if (!targets) return targets.error();
            r.targets = *targets;
            auto value = detail::req_string(*rule, "value", file, r.line);
            if (!value) return value.error();
            r.value = *value;
            if (r.targets.empty()) return data_error(file, r.line, fmt::format("{} needs a non-empty 'targets'", key));
            rules.push_back(std::move(r));
        }
    }
    return p;
}

Result<ProfileSet> load_profiles(const std::filesystem::path& dir) {
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".toml") files.push_back(it->path());
    if (ec) return Error{"reading profile directory", dir.string(), ec.message(), ExitCode::environment, ec.value()};
    std::sort(files.begin(), files.end());
    ProfileSet set;
    std::map<std::string, std::string> seen;
    for (const auto& path : files) {
        std::ifstream in(path, std::ios::binary);
        if (!in) return Error{"reading profile", path.string(), "cannot open", ExitCode::environment};
        std::stringstream buf;
        buf << in.rdbuf();
        auto p = parse_profile(buf.str(), path.string());
        if (!p) return p.error();
        if (auto [it, fresh] = seen.emplace(p->name, path.string()); !fresh)
            return data_error(path.string(), 1, fmt::format("profile '{}' is also defined in {}", p->name, it->second));
        set.add(std::move(*p));
    }
    if (auto s = check_extends(set); !s) return s.error();
    return set;
}

Status check_extends(const ProfileSet& set) {
    // Every `extends` must name a profile, without loops.
    for (const auto& p : set.all()) {
        std::set<std::string> chain{p.name};
        const Profile* cur = &p;
        while (!cur->extends.empty()) {
            const Profile* parent = set.find(cur->extends);
            if (!parent) return data_error(cur->file, 1, fmt::format("'extends' names no profile: '{}'", cur->extends));
            if (!chain.insert(parent->name).second)
                return data_error(cur->file, 1, fmt::format("'extends' loops back to '{}'", parent->name));
            cur = parent;
        }
    }
    return ok_status();
}

std::string user_profiles_dir(const std::map<std::string, std::string>& process_env) {
    const auto env_file = user_env_file_path(process_env);
    return env_file.substr(0, env_file.rfind('/')) + "/profiles";
}

Result<ProfileSet> load_profiles_with_user(const std::filesystem::path& shipped_dir, const Root& root,
                                           const std::map<std::string, std::string>& process_env,
                                           std::vector<std::string>& notes) {
    auto set = load_profiles(shipped_dir);
    if (!set) return set;
    const std::string dir = user_profiles_dir(process_env);
    auto names = root.list_dir(dir);
    if (!names) {
        if (names.error().os_error == ENOENT || names.error().os_error == ENOTDIR) return set;
        return names.error();
    }
    std::sort(names->begin(), names->end());
    std::map<std::string, std::string> seen;
    for (const auto& name : *names) {
        if (name.size() <= 5 || name.substr(name.size() - 5) != ".toml") continue;
        const std::string logical = dir + "/" + name;
        const std::string shown = root.host_path(logical);
        auto text = root.read_file(logical);
        if (!text) return text.error();
        auto p = parse_profile(*text, shown);
        if (!p) return p.error();
        if (auto [it, fresh] = seen.emplace(p->name, shown); !fresh)
            return data_error(shown, 1, fmt::format("profile '{}' is also defined in {}", p->name, it->second));
        if (set->replace(*p))
            notes.push_back(fmt::format("profile {}: yours ({}) is used instead of the shipped one", p->name, shown));
        else set->add(std::move(*p));
    }
    if (auto s = check_extends(*set); !s) return s.error();
    return set;
}

std::vector<const Profile*> ProfileSet::ladder() const {
    std::vector<const Profile*> out;
    for (const auto& p : m_profiles) out.push_back(&p);
    std::sort(out.begin(), out.end(), [](const Profile* a, const Profile* b) {
        return std::tie(a->rank, a->name) < std::tie(b->rank, b->name);
    });
    return out;
}

const Profile* ProfileSet::find(std::string_view name) const {
    for (const auto& p : m_profiles)
        if (p.name == name) return &p;
    return nullptr;
}

bool ProfileSet::override_applies(const Profile& p, const std::vector<std::string>& gpu_targets) {
    if (p.gfx_override.empty() || gpu_targets.empty()) return false;
    std::optional<std::string> value;
    for (const auto& target : gpu_targets) {
        const GfxOverrideRule* match = nullptr;
        for (const auto& rule : p.gfx_override)
            if (std::find(rule.targets.begin(), rule.targets.end(), target) != rule.targets.end()) match = &rule;
        if (!match) return false;
        // One process-wide variable: GPUs that would need different values cannot share it.
        if (value && *value != match->value) return false;
        value = match->value;
    }
    return true;
}

const Profile* ProfileSet::next_stricter(std::string_view name, const std::vector<std::string>& gpu_targets) const {
    const auto rungs = ladder();
    auto it = std::find_if(rungs.begin(), rungs.end(), [&](const Profile* p) { return p->name == name; });
    if (it == rungs.end()) return nullptr;
    for (++it; it != rungs.end(); ++it) {
        const Profile& p = **it;
        const bool own_env = !p.set.empty() || !p.unset.empty() || p.hide_gpu;
        if (own_env || override_applies(p, gpu_targets)) return &p;
    }
    return nullptr;
}

Result<ProfileEnv> ProfileSet::resolve(std::string_view name, const std::vector<std::string>& gpu_targets) const {
    const Profile* p = find(name);
    if (!p) {
        std::string names;
        for (const auto* r : ladder()) names += (names.empty() ? "" : ", ") + r->name;
        return Error{"resolving profile", std::string(name), fmt::format("no such profile (known: {})", names),
                     ExitCode::usage};
    }
    std::vector<const Profile*> chain;
    for (const Profile* cur = p; cur; cur = cur->extends.empty() ? nullptr : find(cur->extends)) chain.push_back(cur);
    ProfileEnv env;
    env.name = p->name;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        const Profile& rung = **it;
        for (const auto& k : rung.unset) {
            env.set.erase(k);
            if (std::find(env.unset.begin(), env.unset.end(), k) == env.unset.end()) env.unset.push_back(k);
        }
        for (const auto& [k, v] : rung.set) {
            env.set[k] = v;
            env.unset.erase(std::remove(env.unset.begin(), env.unset.end(), k), env.unset.end());
        }
        env.hide_gpu = env.hide_gpu || rung.hide_gpu;
        if (!rung.gfx_override.empty()) {
            if (override_applies(rung, gpu_targets)) {
                for (const auto& rule : rung.gfx_override)
                    if (std::find(rule.targets.begin(), rule.targets.end(), gpu_targets.front()) != rule.targets.end())
                        env.set["HSA_OVERRIDE_GFX_VERSION"] = rule.value;
            } else {
                std::string targets;
                for (const auto& t : gpu_targets) targets += (targets.empty() ? "" : ", ") + t;
                env.notes.push_back(fmt::format("profile '{}': no ISA-compatible override for {}; "
                                                "HSA_OVERRIDE_GFX_VERSION left as it is",
                                                rung.name, targets.empty() ? "no GPU" : targets));
            }
        }
    }
    return env;
}

void apply_profile_env(std::map<std::string, std::string>& env, const ProfileEnv& profile) {
    for (const auto& k : profile.unset) env.erase(k);
    for (const auto& [k, v] : profile.set) env[k] = v;
}

std::vector<std::string> gpu_targets(const Facts& facts) {
    std::vector<std::string> out;
    for (const auto& gpu : facts.gpus)
        if (gpu.gfx_target) out.push_back(*gpu.gfx_target);
    return out;
}

std::string user_env_file_path(const std::map<std::string, std::string>& process_env) {
    const auto get = [&](const char* k) -> std::string {
        const auto it = process_env.find(k);
        return it == process_env.end() ? std::string() : it->second;
    };
    std::string config = get("XDG_CONFIG_HOME");
    // The XDG base-directory spec says relative values are invalid and must be ignored.
    if (config.empty() || config.front() != '/') config = get("HOME") + "/.config";
    return config + "/rmcp/profile.env";
}

namespace {
// profile.env in the sh syntax people write by hand (POSIX "Shell Command Language",
// https://pubs.opengroup.org/onlinepubs/9699919799/utilities/V3_chap02.html, 2.2 Quoting
// and 2.9.1 Simple Commands): `NAME=value`, `export NAME=value ...`, `unset NAME ...`,
// comments, `;` between commands, single quotes, double quotes with their four escapes,
// backslash escapes. Anything whose value only a shell could compute (parameter expansion,
// command substitution, globs, redirections, other commands) is refused: rmcp reads the
// file without running a shell, and a guessed value would be a silent wrong environment.
class EnvFileParser {
public:
    EnvFileParser(std::string_view text, const std::string& file) : m_text(text), m_file(file) {}

    Result<UserEnv> parse() {
        UserEnv out;
        for (;;) {
            skip_blanks_and_comments();
            if (m_pos >= m_text.size()) break;
            const unsigned line = m_line;
            std::vector<Word> words;
            while (true) {
                skip_spaces();
                if (m_pos >= m_text.size() || at('\n') || at(';')) break;
                if (at('#')) {  // a comment after a command
                    while (m_pos < m_text.size() && !at('\n')) ++m_pos;
                    break;
                }
                auto w = word();
                if (!w) return w.error();
                words.push_back(std::move(*w));
            }
            if (m_pos < m_text.size()) {
                if (at('\n')) ++m_line;
                ++m_pos;
            }
            if (words.empty()) continue;
            if (auto s = command(words, line, out); !s) return s.error();
        }
        std::sort(out.unset.begin(), out.unset.end());
        return out;
    }

private:
    struct Word {
        std::string text;
        bool quoted_any = false;             // some part was quoted or escaped: not a keyword
        std::size_t eq = std::string::npos;  // the first unquoted '=' in text
    };

    [[nodiscard]] bool at(char c) const { return m_pos < m_text.size() && m_text[m_pos] == c; }

    Error error(unsigned line, std::string cause) const { return data_error(m_file, line, std::move(cause)); }

    void skip_spaces() {
        while (m_pos < m_text.size()) {
            if (at(' ') || at('\t') || at('\r')) {
                ++m_pos;
            } else if (at('\\') && m_pos + 1 < m_text.size() && m_text[m_pos + 1] == '\n') {
                m_pos += 2;  // line continuation
                ++m_line;
            } else {
                break;
            }
        }
    }

    void skip_blanks_and_comments() {
        for (;;) {
            skip_spaces();
            if (at('\n') || at(';')) {
                if (at('\n')) ++m_line;
                ++m_pos;
            } else if (at('#')) {
                while (m_pos < m_text.size() && !at('\n')) ++m_pos;
            } else {
                return;
            }
        }
    }

    static std::string refusal(char c) {
        switch (c) {
        case '$': return "'$' (parameter expansion or command substitution) needs a shell";
        case '`': return "'`' (command substitution) needs a shell";
        case '*':
        case '?':
        case '[': return fmt::format("'{}' (a pattern) needs a shell", c);
        case '~': return "'~' (tilde expansion) needs a shell";
        default: return fmt::format("'{}' needs a shell", c);
        }
    }

    Result<Word> word() {
        Word w;
        const unsigned line = m_line;
        while (m_pos < m_text.size()) {
            const char c = m_text[m_pos];
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';') break;
            if (c == '\'') {
                const auto end = m_text.find('\'', m_pos + 1);
                if (end == std::string_view::npos) return error(line, "unterminated single quote");
                const auto piece = m_text.substr(m_pos + 1, end - m_pos - 1);
                m_line += static_cast<unsigned>(std::count(piece.begin(), piece.end(), '\n'));
                w.text.append(piece);
                w.quoted_any = true;
                m_pos = end + 1;
            } else if (c == '"') {
                ++m_pos;
                w.quoted_any = true;
                bool closed = false;
                while (m_pos < m_text.size()) {
                    const char d = m_text[m_pos];
                    if (d == '"') {
                        closed = true;
                        ++m_pos;
                        break;
                    }
                    if (d == '$' || d == '`')
                        return error(m_line, refusal(d) + " (write the value itself, or single-quote it)");
                    if (d == '\\' && m_pos + 1 < m_text.size()) {
                        const char e = m_text[m_pos + 1];
                        // Inside double quotes a backslash escapes only $ ` " \ and newline (2.2.3).
                        if (e == '\n') {
                            ++m_line;
                            m_pos += 2;
                            continue;
                        }
                        if (e == '$' || e == '`' || e == '"' || e == '\\') {
                            w.text += e;
                            m_pos += 2;
                            continue;
                        }
                    }
                    if (d == '\n') ++m_line;
                    w.text += d;
                    ++m_pos;
                }
                if (!closed) return error(line, "unterminated double quote");
            } else if (c == '\\') {
                if (m_pos + 1 >= m_text.size()) return error(line, "a backslash at the end of the file");
                if (m_text[m_pos + 1] == '\n') {
                    ++m_line;
                } else {
                    w.text += m_text[m_pos + 1];
                    w.quoted_any = true;
                }
                m_pos += 2;
            } else if (c == '$' || c == '`' || c == '*' || c == '?' || c == '[' || c == '|' || c == '&' || c == '<' ||
                       c == '>' || c == '(' || c == ')' || (c == '~' && w.text.empty() && !w.quoted_any) ||
                       (c == '~' && w.eq != std::string::npos && w.eq + 1 == w.text.size())) {
                return error(m_line, refusal(c));
            } else {
                if (c == '=' && w.eq == std::string::npos && !w.quoted_any) w.eq = w.text.size();
                w.text += c;
                ++m_pos;
            }
        }
        return w;
    }

    static bool keyword(const Word& w, std::string_view k) { return !w.quoted_any && w.text == k; }

    Status assign(const Word& w, unsigned line, UserEnv& out) {
        const std::string name = w.text.substr(0, w.eq);
        if (!valid_env_name(name)) return error(line, fmt::format("'{}' is not a variable name", name));
        out.unset.erase(std::remove(out.unset.begin(), out.unset.end(), name), out.unset.end());
        out.set[name] = w.text.substr(w.eq + 1);
        return ok_status();
    }

    Status command(const std::vector<Word>& words, unsigned line, UserEnv& out) {
        if (keyword(words.front(), "unset")) {
            for (std::size_t i = 1; i < words.size(); ++i) {
                if (keyword(words[i], "-v")) continue;
                const std::string& name = words[i].text;
                if (!valid_env_name(name) || words[i].quoted_any)
                    return error(line, fmt::format("'{}' is not a variable name", name));
                out.set.erase(name);
                if (std::find(out.unset.begin(), out.unset.end(), name) == out.unset.end()) out.unset.push_back(name);
            }
            return ok_status();
        }
        const bool exported = keyword(words.front(), "export");
        for (std::size_t i = exported ? 1 : 0; i < words.size(); ++i) {
            const Word& w = words[i];
            if (w.eq == std::string::npos) {
                // `export NAME` marks a variable the file does not change; a bare word is a command.
                if (exported && valid_env_name(w.text) && !w.quoted_any) continue;
                return error(line, fmt::format("expected NAME=value, export NAME=value or unset NAME, not '{}' "
                                               "(rmcp reads this file without a shell)",
                                               w.text));
            }
            if (auto s = assign(w, line, out); !s) return s;
        }
        return ok_status();
    }

    std::string_view m_text;
    const std::string& m_file;
    std::size_t m_pos = 0;
    unsigned m_line = 1;
};
}  // namespace

Result<UserEnv> parse_user_env(std::string_view text, const std::string& file) {
    return EnvFileParser(text, file).parse();
}

Result<std::map<std::string, std::string>> parse_env_file(std::string_view text, const std::string& file) {
    auto env = parse_user_env(text, file);
    if (!env) return env.error();
    return env->set;
}

std::string render_env_file(const UserEnv& env) {
    std::string out = "# rmcp profile environment, written by `rmcp patch apply` (undo: `rmcp patch rollback`).\n"
                      "# `rmcp env` and `rmcp run` apply it; sh users may also source it.\n";
    for (const auto& k : env.unset) out += fmt::format("unset {}\n", k);
    for (const auto& [k, v] : env.set) out += fmt::format("export {}={}\n", k, sh_quote(v));
    return out;
}

void apply_user_env(std::map<std::string, std::string>& env, const UserEnv& user) {
    for (const auto& k : user.unset) env.erase(k);
    for (const auto& [k, v] : user.set) env[k] = v;
}

}  // namespace rmcp::patch
