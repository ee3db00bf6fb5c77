// `rmcp completions bash|zsh|fish`: shell completion scripts generated from the same CLI11
// definitions as --help and the manual page (ARCHITECTURE.md, principle 9: each flag is defined
// once). Each script is a table of the command tree (subcommands, options, which options
// take a value and what kind) plus one small walker that finds where on the command line
// the cursor is; nothing about a particular command is written by hand here.
#include "context.hpp"
#include "json_output.hpp"

#include "kb/kb.hpp"
#include "patch/patch.hpp"
#include "patch/profile.hpp"
#include "util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace rmcp::cli {

namespace {

// What a value (of an option or a positional argument) completes to.
enum class ValueKind { none, any, file, directory, command, subcommand, words, dynamic };

// Values that are a closed set the binary knows but the definitions do not (patch ids, kb
// ids, profile names, --format's names): completed from the data at TAB time through
// `rmcp __complete SOURCE` (dynamic), or listed here (words). `option` "" is the command's
// positional argument. tests/cli/test_completions.py checks each entry completes.
struct ValueSource {
    std::string_view path;
    std::string_view option;
    std::string_view source;  // for `rmcp __complete`; empty: words
    std::string_view words;
};
constexpr ValueSource k_value_sources[] = {
    {"patch show", "", "patches", ""},          {"patch plan", "", "patches", ""},
    {"patch apply", "", "patches", ""},         {"kb show", "", "kb", ""},
    {"env", "--profile", "profiles", ""},       {"run", "--profile", "profiles", ""},
    {"doctor", "--profile", "profiles", ""},    {"", "--format", "", "text json nfd prometheus markdown"},
    {"probe", "--device", "", "auto cpu cuda"},
};

// The kinds of `rmcp __complete KIND`.
constexpr const char* k_complete_kinds[] = {"patches", "kb", "profiles", "commands"};

struct OptionSpec {
    std::vector<std::string> names;  // "-y", "--yes"
    std::string description;
    bool takes_value = false;
    ValueKind kind = ValueKind::none;
    std::vector<std::string> values;  // kind == words
    std::string source;               // kind == dynamic: the argument of `rmcp __complete`
};

std::vector<std::string> completion_words(std::string_view text) {
    std::vector<std::string> words;
    std::string word;
    for (const char c : std::string(text) + " ") {
        if (c != ' ') word += c;
        else if (!word.empty()) words.push_back(std::exchange(word, {}));
    }
    return words;
}

void apply_value_source(const std::string& path, OptionSpec& o) {
    for (const auto& v : k_value_sources) {
        if (v.path != path) continue;
        const bool match =
            v.option.empty() ? o.names.empty() : std::find(o.names.begin(), o.names.end(), v.option) != o.names.end();
        if (!match) continue;
        if (!v.source.empty()) {
            o.kind = ValueKind::dynamic;
            o.source = std::string(v.source);
        } else {
            o.kind = ValueKind::words;
            o.values = completion_words(v.words);
        }
    }
}

struct CommandSpec {
    std::string path;  // "" for rmcp itself, "patch apply" for a nested command
    std::string name;
    std::string description;
    std::vector<OptionSpec> options;
    std::vector<CommandSpec> subcommands;
    OptionSpec positional;  // kind none: takes no positional arguments
};

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// The value kind from the type name the definition gives for help ("DIR", "FILE", "PY" ...).
ValueKind kind_of_type(const std::string& type) {
    if (type.find("DIR") != std::string::npos) return ValueKind::directory;
    if (type.find("FILE") != std::string::npos || type.find("PATH") != std::string::npos || type.starts_with("PY"))
        return ValueKind::file;
    if (type.starts_with("CMD")) return ValueKind::command;
    return ValueKind::any;
}

CommandSpec describe(CLI::App& app, const std::string& path) {
    CommandSpec spec;
    spec.path = path;
    spec.name = app.get_name();
    spec.description = first_line(app.get_description());
    for (CLI::Option* opt : app.get_options()) {
        if (opt->get_group().empty()) continue;  // hidden
        // --help is rmcp's own, defined once for the completion (it is offered everywhere).
        if (!path.empty() && opt->get_lnames() == std::vector<std::string>{"help"}) continue;
        OptionSpec o;
        for (const auto& s : opt->get_snames()) o.names.push_back("-" + s);
        for (const auto& l : opt->get_lnames()) o.names.push_back("--" + l);
        o.description = first_line(opt->get_description());
        o.takes_value = opt->get_expected_max() != 0 || opt->get_positional();  // flags expect 0 values
        if (o.takes_value) {
            o.values = option_values(*opt);
            o.kind = o.values.empty() ? kind_of_type(opt->get_type_name()) : ValueKind::words;
            apply_value_source(path, o);
        }
        if (opt->get_positional()) spec.positional = std::move(o);
        else spec.options.push_back(std::move(o));
    }
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
        if (is_hidden_command(*sub)) continue;
        spec.subcommands.push_back(describe(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name()));
    }
    // `rmcp help COMMAND...` names commands.
    if (path == "help") spec.positional.kind = ValueKind::subcommand;
    return spec;
}

template <class F>
void for_each_command(const CommandSpec& spec, F&& f) {
    f(spec);
    for (const auto& sub : spec.subcommands) for_each_command(sub, f);
}

std::string value_word(const OptionSpec& o) {
    switch (o.kind) {
    case ValueKind::file: return "@file";
    case ValueKind::directory: return "@dir";
    case ValueKind::command: return "@command";
    case ValueKind::subcommand: return "@subcommand";
    case ValueKind::words: return fmt::format("{}", fmt::join(o.values, " "));
    case ValueKind::dynamic: return "@dynamic:" + o.source;
    case ValueKind::any:
    case ValueKind::none: break;
    }
    return "@any";
}

std::vector<std::string> subcommand_names(const CommandSpec& spec) {
    std::vector<std::string> names;
    for (const auto& sub : spec.subcommands) names.push_back(sub.name);
    return names;
}

std::vector<std::string> option_names(const CommandSpec& spec) {
    std::vector<std::string> names;
    for (const auto& o : spec.options) names.insert(names.end(), o.names.begin(), o.names.end());
    return names;
}

// The tables shared by the bash and zsh walkers: shell functions with one case per command.
// `quote` quotes a case pattern or a word.
std::string sh_tables(const CommandSpec& root, bool zsh) {
    std::string subs, opts, values, positional;
    for_each_command(root, [&](const CommandSpec& c) {
        const std::string pattern = sh_quote(c.path);
        if (!c.subcommands.empty()) {
            if (zsh) {
                std::vector<std::string> described;
                for (const auto& s : c.subcommands) described.push_back(sh_quote(s.name + ":" + s.description));
                subs += fmt::format("    ({}) reply=({}) ;;\n", pattern, fmt::join(described, " "));
            } else {
                subs += fmt::format("    {}) echo {} ;;\n", pattern,
                                    sh_quote(fmt::format("{}", fmt::join(subcommand_names(c), " "))));
            }
        }
        if (!c.options.empty()) {
            if (zsh) {
                std::vector<std::string> described;
                for (const auto& o : c.options)
                    for (const auto& n : o.names) described.push_back(sh_quote(n + ":" + o.description));
                opts += fmt::format("    ({}) reply=({}) ;;\n", pattern, fmt::join(described, " "));
            } else {
                opts += fmt::format("    {}) echo {} ;;\n", pattern,
                                    sh_quote(fmt::format("{}", fmt::join(option_names(c), " "))));
            }
        }
        for (const auto& o : c.options) {
            if (!o.takes_value) continue;
            for (const auto& n : o.names)
                values += fmt::format(fmt::runtime(zsh ? "    ({}) REPLY={} ;;\n" : "    {}) echo {} ;;\n"),
                                      sh_quote(c.path + " " + n), sh_quote(value_word(o)));
        }
        if (c.positional.kind != ValueKind::none)
            positional += fmt::format(fmt::runtime(zsh ? "    ({}) REPLY={} ;;\n" : "    {}) echo {} ;;\n"), pattern,
                                      sh_quote(value_word(c.positional)));
    });
    const char* reset_reply = zsh ? "    (*) reply=() ;;\n" : "";
    const char* reset_word = zsh ? "    (*) REPLY='' ;;\n" : "";
    std::string out;
    out += "# Subcommands of a command path (\"\" is rmcp itself).\n";
    out += fmt::format("_rmcp_subcommands() {{\n  case \"$1\" in\n{}{}  esac\n}}\n", subs, reset_reply);
    out += "# Options defined on a command path (global options are those of \"\").\n";
    out += fmt::format("_rmcp_options() {{\n  case \"$1\" in\n{}{}  esac\n}}\n", opts, reset_reply);
    out += "# What the value of \"PATH OPTION\" completes to: words, @file, @dir, @command or @any;\n"
           "# nothing for an option that takes no value.\n";
    out += fmt::format("_rmcp_option_value() {{\n  case \"$1 $2\" in\n{}{}  esac\n}}\n", values, reset_word);
    out += "# What a command's positional arguments complete to.\n";
    out += fmt::format("_rmcp_positional() {{\n  case \"$1\" in\n{}{}  esac\n}}\n", positional, reset_word);
    return out;
}

std::string bash_script(const CommandSpec& root) {
    std::string out = R"SH(# bash completion for rmcp                                  -*- shell-script -*-
# Generated by `rmcp completions bash` from rmcp's command-line definitions; do not edit.
# Installed as share/bash-completion/completions/rmcp; or: source <(rmcp completions bash)

)SH";
    out += sh_tables(root, false);
    out += R"SH(
# The value kind of OPTION as seen from the command chain (innermost first: global options
# may follow a command); fails when OPTION takes no value.
_rmcp_lookup_value() {
  local i v
  for ((i = ${#_rmcp_chain[@]} - 1; i >= 0; i--)); do
    v=$(_rmcp_option_value "${_rmcp_chain[i]}" "$1")
    if [[ -n $v ]]; then
      echo "$v"
      return 0
    fi
  done
  return 1
}

_rmcp_complete_kind() {  # KIND CUR
  case "$1" in
    @file) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$2")) ;;
    @dir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$2")) ;;
    @command) COMPREPLY=($(compgen -c -- "$2")) ;;
    @dynamic:*) COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" __complete "${1#@dynamic:}" 2>/dev/null)" -- "$2")) ;;
    @any | '') COMPREPLY=() ;;
    *) COMPREPLY=($(compgen -W "$1" -- "$2")) ;;
  esac
}

_rmcp() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
  local path="" topic="" word i opt="" kind
  local -a _rmcp_chain=("")
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="${COMP_WORDS[i]}"
    if [[ $word == -- ]]; then
      # `rmcp run -- CMD ARGS...`: the rest is another program's command line.
      if ((i + 1 == COMP_CWORD)); then COMPREPLY=($(compgen -c -- "$cur")); else
        compopt -o default 2>/dev/null; COMPREPLY=(); fi
      return 0
    fi
    if [[ $word == = ]]; then ((i++)); continue; fi  # --option=value, split by COMP_WORDBREAKS
    if [[ $word == -* ]]; then
      if [[ $word != *=* && ${COMP_WORDS[i+1]} != = ]] && _rmcp_lookup_value "$word" >/dev/null; then ((i++)); fi
      continue
    fi
    if [[ " $(_rmcp_subcommands "$path") " == *" $word "* ]]; then
      path="${path:+$path }$word"
      _rmcp_chain+=("$path")
    elif [[ $(_rmcp_positional "$path") == @subcommand && " $(_rmcp_subcommands "$topic") " == *" $word "* ]]; then
      topic="${topic:+$topic }$word"
    fi
  done

  if [[ $cur == = ]]; then cur=""; opt=$prev
  elif [[ $prev == = ]]; then opt="${COMP_WORDS[COMP_CWORD-2]}"
  elif [[ $prev == -* ]]; then opt=$prev; fi
  if [[ -n $opt ]] && kind=$(_rmcp_lookup_value "$opt"); then
    _rmcp_complete_kind "$kind" "$cur"
    return 0
  fi
  if [[ $cur == -* ]]; then
    local p opts=""
    for p in "${_rmcp_chain[@]}"; do opts+=" $(_rmcp_options "$p")"; done
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    return 0
  fi
  local subs
  subs=$(_rmcp_subcommands "$path")
  if [[ -n $subs ]]; then
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
    return 0
  fi
  kind=$(_rmcp_positional "$path")
  if [[ $kind == @subcommand ]]; then kind=$(_rmcp_subcommands "$topic"); fi
  _rmcp_complete_kind "$kind" "$cur"
}
complete -F _rmcp rmcp
)SH";
    return out;
}

std::string zsh_script(const CommandSpec& root) {
    std::string out = R"SH(#compdef rmcp
# zsh completion for rmcp. Generated by `rmcp completions zsh` from rmcp's command-line
# definitions; do not edit. Installed as share/zsh/vendor-completions/_rmcp; or, after
# compinit: source <(rmcp completions zsh)

)SH";
    out += sh_tables(root, true);
    out += R"SH(
# The value kind of OPTION as seen from the command chain, in REPLY; fails when OPTION
# takes no value.
_rmcp_lookup_value() {
  local i
  for (( i = ${#_rmcp_chain}; i >= 1; i-- )); do
    _rmcp_option_value "${_rmcp_chain[i]}" "$1"
    [[ -n $REPLY ]] && return 0
  done
  return 1
}

_rmcp_complete_kind() {
  case $1 in
    (@file) _files ;;
    (@dir) _files -/ ;;
    (@command) _command_names -e ;;
    (@dynamic:*) compadd -- ${(f)"$(${words[1]} __complete ${1#@dynamic:} 2>/dev/null)"} ;;
    (@any|'') _message 'value' ;;
    (*) compadd -- ${=1} ;;
  esac
}

_rmcp() {
  local path='' topic='' word i REPLY
  local -a reply opts _rmcp_chain
  _rmcp_chain=('')
  for (( i = 2; i < CURRENT; i++ )); do
    word=${words[i]}
    if [[ $word == -- ]]; then
      # `rmcp run -- CMD ARGS...`: the rest is another program's command line.
      words=("${(@)words[i+1,-1]}")
      (( CURRENT -= i ))
      _normal
      return
    fi
    if [[ $word == -* ]]; then
      if [[ $word != *=* ]] && _rmcp_lookup_value $word; then (( i++ )); fi
      continue
    fi
    _rmcp_subcommands $path
    if [[ -n ${(M)reply:#${(b)word}:*} ]]; then
      path=${path:+$path }$word
      _rmcp_chain+=("$path")
      continue
    fi
    _rmcp_positional $path
    if [[ $REPLY == @subcommand ]]; then
      _rmcp_subcommands $topic
      [[ -n ${(M)reply:#${(b)word}:*} ]] && topic=${topic:+$topic }$word
    fi
  done

  local cur=${words[CURRENT]} prev=${words[CURRENT-1]}
  if [[ $prev == -* && $prev != *=* ]] && _rmcp_lookup_value $prev; then
    _rmcp_complete_kind $REPLY
    return
  fi
  if [[ $cur == -* ]]; then
    local p
    for p in "${_rmcp_chain[@]}"; do
      _rmcp_options $p
      opts+=("${reply[@]}")
    done
    _describe -t options 'rmcp option' opts
    return
  fi
  _rmcp_subcommands $path
  if (( ${#reply} )); then
    _describe -t commands 'rmcp command' reply
    return
  fi
  _rmcp_positional $path
  if [[ $REPLY == @subcommand ]]; then
    _rmcp_subcommands $topic
    (( ${#reply} )) && _describe -t commands 'rmcp command' reply
    return
  fi
  [[ -n $REPLY ]] && _rmcp_complete_kind $REPLY
}

if [[ $funcstack[1] == _rmcp ]]; then
  _rmcp "$@"
else
  compdef _rmcp rmcp
fi
)SH";
    return out;
}

std::string fish_script(const CommandSpec& root) {
    std::string out = R"SH(# fish completion for rmcp. Generated by `rmcp completions fish` from rmcp's command-line
# definitions; do not edit. Installed as share/fish/vendor_completions.d/rmcp.fish; or:
# rmcp completions fish | source

# Prints the command path on the command line so far ("" for rmcp itself): subcommand words,
# skipping options and the values of options that take one.
function __rmcp_path
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l path ''
    set -l skip 0
    for token in $tokens
        if test $skip -eq 1
            set skip 0
            continue
        end
        switch $token
            case '--'
                break
            case '-*'
                if not string match -q -- '*=*' $token; and contains -- $token $__rmcp_valued
                    set skip 1
                end
            case '*'
                set -l candidate (string trim -- "$path $token")
                if contains -- $candidate $__rmcp_paths
                    set path $candidate
                end
        end
    end
    echo $path
end

# True when the command path is exactly PATH.
function __rmcp_at
    test (__rmcp_path) = "$argv[1]"
end

# True when the command path is PATH or below it (options of PATH apply there too).
function __rmcp_within
    set -l path (__rmcp_path)
    test -z "$argv[1]"; or test "$path" = "$argv[1]"; or string match -q -- "$argv[1] *" "$path"
end

# The ids and names the binary knows (patch ids, kb ids, profiles): `rmcp __complete KIND`.
function __rmcp_dynamic
    set -l cmd (commandline -opc)[1]
    $cmd __complete $argv[1] 2>/dev/null
end

complete -c rmcp -f
)SH";
    std::vector<std::string> paths, valued;
    for_each_command(root, [&](const CommandSpec& c) {
        if (!c.path.empty()) paths.push_back(fish_quote(c.path));
        for (const auto& o : c.options)
            if (o.takes_value)
                for (const auto& n : o.names) valued.push_back(fish_quote(n));
    });
    std::sort(valued.begin(), valued.end());
    valued.erase(std::unique(valued.begin(), valued.end()), valued.end());
    out += fmt::format("set -g __rmcp_paths {}\n", fmt::join(paths, " "));
    out += fmt::format("set -g __rmcp_valued {}\n\n", fmt::join(valued, " "));

    for_each_command(root, [&](const CommandSpec& c) {
        const std::string at = fish_quote("__rmcp_at " + fish_quote(c.path));
        const std::string within = fish_quote("__rmcp_within " + fish_quote(c.path));
        out += fmt::format("# {}\n", c.path.empty() ? "rmcp" : "rmcp " + c.path);
        for (const auto& sub : c.subcommands)
            out += fmt::format("complete -c rmcp -n {} -a {} -d {}\n", at, fish_quote(sub.name),
                               fish_quote(sub.description));
        for (const auto& o : c.options) {
            std::string names;
            for (const auto& n : o.names)
                names += n.starts_with("--") ? " -l " + fish_quote(n.substr(2)) : " -s " + fish_quote(n.substr(1));
            std::string value;
            if (o.takes_value) {
                switch (o.kind) {
                case ValueKind::file: value = " -r -F"; break;
                case ValueKind::directory: value = " -r -a '(__fish_complete_directories)'"; break;
                case ValueKind::command: value = " -r -a '(__fish_complete_command)'"; break;
                case ValueKind::words:
                    value = " -x -a " + fish_quote(fmt::format("{}", fmt::join(o.values, " ")));
                    break;
                case ValueKind::dynamic: value = " -x -a " + fish_quote("(__rmcp_dynamic " + o.source + ")"); break;
                default: value = " -x"; break;
                }
            }
            out += fmt::format("complete -c rmcp -n {}{}{} -d {}\n", within, names, value, fish_quote(o.description));
        }
        switch (c.positional.kind) {
        case ValueKind::words:
            out += fmt::format("complete -c rmcp -n {} -a {}\n", at,
                               fish_quote(fmt::format("{}", fmt::join(c.positional.values, " "))));
            break;
        case ValueKind::dynamic:
            out += fmt::format("complete -c rmcp -n {} -a {}\n", at,
                               fish_quote("(__rmcp_dynamic " + c.positional.source + ")"));
            break;
        case ValueKind::file: out += fmt::format("complete -c rmcp -n {} -F\n", at); break;
        case ValueKind::directory:
            out += fmt::format("complete -c rmcp -n {} -a '(__fish_complete_directories)'\n", at);
            break;
        case ValueKind::command:
            out += fmt::format("complete -c rmcp -n {} -a '(__fish_complete_command)'\n", at);
            break;
        case ValueKind::subcommand:
            for (const auto& sub : root.subcommands)
                if (sub.name != "help")
                    out += fmt::format("complete -c rmcp -n {} -a {} -d {}\n", at, fish_quote(sub.name),
                                       fish_quote(sub.description));
            break;
        default: break;
        }
        out += "\n";
    });
    return out;
}

}  // namespace

std::string render_completions(CLI::App& app, std::string_view shell) {
    const CommandSpec root = describe(app, "");
    if (shell == "bash") return bash_script(root);
    if (shell == "zsh") return zsh_script(root);
    return fish_script(root);
}

namespace {

// Every command path ("patch apply"), with what its stdout is under -q: "document" (the
// data asked for) or "report" (held; the summary line only). Hidden commands are left out.
void list_commands(const CLI::App& app, const std::string& path, std::string& out) {
    for (const CLI::App* sub : app.get_subcommands({})) {
        if (is_hidden_command(*sub)) continue;
        const std::string here = path.empty() ? sub->get_name() : path + " " + sub->get_name();
        if (sub->get_subcommands({}).empty() || sub->get_require_subcommand_min() == 0)
            out += fmt::format("{}\t{}\n", here, is_document(sub) ? "document" : "report");
        list_commands(*sub, here, out);
    }
}

// `rmcp __complete KIND`: the words a completion script offers, one a line. Errors print
// nothing (a completion must not write into the user's command line) and exit 3.
int complete_values(const CLI::App& app, Context& ctx, const std::string& kind) {
    const auto format = ctx.format({OutputFormat::text});
    if (!format) return fail(ctx, format.error());
    std::string out;
    if (kind == "patches") {
        const auto set = patch::load_patches(ctx.data_dir() / "patches");
        if (!set) return fail(ctx, set.error());
        for (const auto& p : set->patches) out += p.id + "\n";
    } else if (kind == "kb") {
        const auto kb = kb::load(ctx.kb_dir());
        if (!kb) return fail(ctx, kb.error());
        for (const auto& e : kb->entries) out += e.id + "\n";
    } else if (kind == "profiles") {
        const auto set = patch::load_profiles(ctx.data_dir() / "profiles");
        if (!set) return fail(ctx, set.error());
        for (const auto* p : set->ladder()) out += p->name + "\n";
        out += "auto\n";
    } else {
        list_commands(app, "", out);
    }
    ctx.out.write(out);
    return 0;
}

}  // namespace

void add_completions_command(CLI::App& app, Context& ctx, Action& action) {
    static std::string kind;
    auto* complete = app.add_subcommand("__complete", "Words for shell completion: patches, kb, profiles, commands");
    complete->group("");  // hidden: called by the completion scripts, not by people
    std::vector<std::string> kinds(std::begin(k_complete_kinds), std::end(k_complete_kinds));
    complete->add_option("kind", kind, "What to list")->required()->check(CLI::IsMember(kinds));
    mark_document(complete);
    complete->callback([&app, &ctx, &action] { action = [&app, &ctx] { return complete_values(app, ctx, kind); }; });

    static std::string shell;
    auto* cmd = app.add_subcommand("completions", "Print the shell completion script for bash, zsh or fish");
    cmd->add_option("shell", shell, "bash, zsh or fish")
        ->required()
        ->check(CLI::IsMember({"bash", "zsh", "fish"}))
        ->type_name("SHELL");
    mark_document(cmd);
    cmd->footer("Installed packages put them where the shells look; by hand: source <(rmcp completions bash),\n"
                "source <(rmcp completions zsh) after compinit, or rmcp completions fish | source.");
    cmd->callback([&app, &ctx, &action] {
        action = [&app, &ctx] {
            const auto format = ctx.format({OutputFormat::text, OutputFormat::json});
            if (!format) return fail(ctx, format.error());
            if (*format == OutputFormat::json)
                ctx.out.print("{}", json_output(ctx, nlohmann::json{{"schema_version", 1},
                                                                    {"shell", shell},
                                                                    {"script", render_completions(app, shell)}}));
            else ctx.out.print("{}", render_completions(app, shell));
            return 0;
        };
    });
}

}  // namespace rmcp::cli
