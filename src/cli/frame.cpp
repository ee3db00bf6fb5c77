// The command-line frame every command shares (issue 30, item 4; docs/ux.md): how help shows
// an option (no CLI11 artefacts), the command list's summary lines, and what a mistyped
// command line is told ("did you mean", which command's help to read).
#include "context.hpp"

#include "util/terminal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace rmcp::cli {

std::vector<std::string> option_values(const CLI::Option& opt) {
    // Allowed values come from a CLI::IsMember check, whose description is "{a,b,c}".
    std::vector<std::string> values;
    auto& mutable_opt = const_cast<CLI::Option&>(opt);  // get_validator is not const in CLI11 2.1
    for (int i = 0;; ++i) {
        CLI::Validator* v = nullptr;
        try {
            v = mutable_opt.get_validator(i);
        } catch (const CLI::OptionNotFound&) {
            break;
        }
        const std::string desc = v->get_description();
        if (desc.size() < 2 || desc.front() != '{' || desc.back() != '}') continue;
        std::string item;
        for (const char c : desc.substr(1, desc.size() - 2) + ",") {
            if (c != ',') {
                item += c;
                continue;
            }
            const bool plain = !item.empty() && std::all_of(item.begin(), item.end(), [](char ch) {
                return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.' || ch == '+';
            });
            if (plain) values.push_back(item);
            item.clear();
        }
    }
    return values;
}

std::string option_type_name(const CLI::Option& opt) {
    // CLI11 appends each validator's description to the type name (":{none,cpu}",
    // ":INT in [1 - 1000]"); help shows the name the definition gave, or the allowed values.
    if (const auto values = option_values(opt); !values.empty()) return fmt::format("{}", fmt::join(values, "|"));
    std::string type = opt.get_type_name();
    if (const auto colon = type.find(':'); colon != std::string::npos) type.resize(colon);
    return type;
}

std::string command_summary(const CLI::App& cmd) {
    // A command's summary in a list: its description up to the first ';' (the rest is
    // for its own help page), so that `rmcp --help` stays within 80 columns.
    std::string text = cmd.get_description();
    if (const auto semi = text.find(';'); semi != std::string::npos) text.resize(semi);
    return text;
}

bool is_hidden_command(const CLI::App& cmd) { return cmd.get_group().empty(); }

namespace {

// rmcp's help layout on CLI11's formatter.
class HelpFormatter : public CLI::Formatter {
public:
    std::string make_option_opts(const CLI::Option* opt) const override {
        if (opt->get_type_size() == 0) return {};
        std::string out = " " + option_type_name(*opt);
        if (opt->get_expected_max() == CLI::detail::expected_max_vector_size && !out.ends_with("...")) out += " ...";
        if (opt->get_required() && !opt->get_positional()) out += " (required)";
        return out;
    }
    // "  --name VALUE   description", the description wrapped to 80 columns.
    std::string make_option(const CLI::Option* opt, bool is_positional) const override {
        return aligned("  " + make_option_name(opt, is_positional) + make_option_opts(opt), make_option_desc(opt),
                       column_width_);
    }
    // A command's description at the top of its help, wrapped to 80 columns.
    std::string make_description(const CLI::App* app) const override {
        return wrap_text(CLI::Formatter::make_description(app), 80);
    }
    // A command's footer, its lines wrapped to 80 columns.
    std::string make_footer(const CLI::App* app) const override {
        const std::string footer = app->get_footer();
        return footer.empty() ? std::string{} : wrap_text(footer, 80) + "\n";
    }
    // "  name      summary", the summary wrapped so that the list fits 80 columns.
    std::string make_subcommand(const CLI::App* sub) const override {
        return aligned("  " + sub->get_display_name(true), command_summary(*sub), 16);
    }

private:
    // `left`, then `text` from `column` on, wrapped to 80 columns; continuation lines indented.
    static std::string aligned(std::string left, const std::string& text, std::size_t column) {
        std::string out = std::move(left);
        if (text.empty()) return out + "\n";
        out += out.size() < column ? std::string(column - out.size(), ' ') : "\n" + std::string(column, ' ');
        for (const char c : wrap_text(text, static_cast<int>(80 - column))) {
            out += c;
            if (c == '\n') out += std::string(column, ' ');
        }
        return out + "\n";
    }
};

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbours (a typo's usual kinds), each 1.
std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

// The options a word can be at this point of the command line: the innermost command's
// and its parents' (global options may follow the command).
const CLI::Option* find_option(const std::vector<const CLI::App*>& chain, std::string_view name) {
    for (auto it = chain.rbegin(); it != chain.rend(); ++it)
        for (const CLI::Option* opt : (*it)->get_options()) {
            if (opt->get_positional()) continue;
            for (const auto& l : opt->get_lnames())
                if (name == "--" + l) return opt;
            for (const auto& s : opt->get_snames())
                if (name == "-" + s) return opt;
        }
    return nullptr;
}

std::vector<std::string> chain_option_names(const std::vector<const CLI::App*>& chain) {
    std::vector<std::string> names;
    for (const CLI::App* app : chain)
        for (const CLI::Option* opt : app->get_options()) {
            if (opt->get_positional()) continue;
            for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
        }
    return names;
}

std::vector<std::string> visible_subcommands(const CLI::App& app) {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({}))
        if (!is_hidden_command(*sub)) names.push_back(sub->get_name());
    return names;
}

bool has_positionals(const CLI::App& app) {
    for (const CLI::Option* opt : app.get_options())
        if (opt->get_positional()) return true;
    return false;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
    const auto best = suggestion(word, candidates);
    return best ? fmt::format(" (did you mean {}?)", *best) : std::string{};
}

}  // namespace

void use_rmcp_help_format(CLI::App& app) { app.formatter(std::make_shared<HelpFormatter>()); }

std::optional<std::string> suggestion(std::string_view word, const std::vector<std::string>& candidates) {
    std::optional<std::string> best;
    std::size_t best_distance = 0;
    // Close enough to be the same word mistyped: at most 2 edits, and fewer than half of it.
    const std::size_t limit = std::min<std::size_t>(2, std::max<std::size_t>(1, word.size() / 2));
    for (const auto& c : candidates) {
        const std::size_t d = edit_distance(word, c);
        if (d <= limit && (!best || d < best_distance)) {
            best = c;
            best_distance = d;
        }
    }
    // `--verb` for `--verbose`: a clear prefix is as good as a typo.
    if (!best && word.size() >= 4)
        for (const auto& c : candidates)
            if (c.starts_with(word)) return c;
    return best;
}

ArgumentDiagnosis diagnose_arguments(const CLI::App& app, const std::vector<std::string>& args) {
    ArgumentDiagnosis out;
    std::vector<const CLI::App*> chain{&app};
    out.command = app.get_name();
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--") break;
        const CLI::App& current = *chain.back();
        if (a.size() > 1 && a[0] == '-') {
            const bool long_name = a.starts_with("--");
            const std::string name = long_name ? a.substr(0, a.find('=')) : a.substr(0, 2);
            const CLI::Option* opt = find_option(chain, name);
            if (!opt) {
                if (out.problem.empty())
                    out.problem = fmt::format("unknown option {} for `{}`{}", name, out.command,
                                              did_you_mean(name, chain_option_names(chain)));
                continue;
            }
            // A value in the next word: an option that takes one, written without "=" (or,
            // short, without the value glued on).
            const bool glued = long_name ? a.find('=') != std::string::npos : a.size() > 2;
            if (opt->get_type_size() != 0 && !glued && opt->get_expected_min() > 0) ++i;
            continue;
        }
        const CLI::App* sub = nullptr;
        for (const CLI::App* s : current.get_subcommands({}))
            if (s->get_name() == a) sub = s;
        if (sub) {
            chain.push_back(sub);
            out.command += " " + a;
            continue;
        }
        if (has_positionals(current)) continue;  // an argument of the command
        if (out.problem.empty()) {
            const auto subs = visible_subcommands(current);
            if (!subs.empty())
                out.problem = fmt::format("`{}` is not a command of `{}`{}; its commands: {}", a, out.command,
                                          did_you_mean(a, subs), fmt::join(subs, ", "));
            else out.problem = fmt::format("`{}` takes no argument `{}`", out.command, a);
        }
    }
    const CLI::App& last = *chain.back();
    if (out.problem.empty() && last.get_require_subcommand_min() > 0)
        out.missing_subcommand =
            fmt::format("`{}` needs a command: {}", out.command, fmt::join(visible_subcommands(last), ", "));
    return out;
}

std::string short_usage(const CLI::App& app) {
    return fmt::format("usage: rmcp [OPTIONS] COMMAND [ARGS]\ncommands: {}\nRun 'rmcp --help' for more, or 'rmcp help "
                       "COMMAND' for one command.\n",
                       fmt::join(visible_subcommands(app), ", "));
}

}  // namespace rmcp::cli
