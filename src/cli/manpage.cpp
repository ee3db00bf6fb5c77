// The man page is rendered from the same CLI11 definitions as --help (STYLE.md, principle
// 9): `rmcp help --man > docs/rmcp.1`; a CLI test keeps the committed page in sync.
#include "context.hpp"

#include <fmt/format.h>

namespace rmcp::cli {

namespace {
// roff needs backslashes and leading dots/quotes escaped.
std::string roff(std::string_view text) {
    std::string out;
    bool line_start = true;
    for (const char c : text) {
        if (line_start && (c == '.' || c == '\'')) out += "\\&";
        if (c == '\\') out += "\\e";
        else if (c == '-') out += "\\-";
        else out += c;
        line_start = c == '\n';
    }
    return out;
}

void options_section(std::string& out, const CLI::App& app) {
    for (const CLI::Option* opt : app.get_options()) {
        if (opt->get_group().empty()) continue;  // hidden
        const auto names = opt->get_name(false, true);
        if (names == "--help,-h" || names == "-h,--help") continue;
        auto type = opt->get_type_name();
        if (opt->get_type_size() == 0) type.clear();
        out += fmt::format(".TP\n.B {}{}\n{}\n", roff(opt->get_positional() ? opt->get_name() : names),
                           type.empty() || opt->get_positional() ? "" : " " + roff(type),
                           roff(opt->get_description()));
    }
}
}  // namespace

std::string render_manpage(const CLI::App& app) {
    std::string out = ".TH RMCP 1 \"\" \"rmcp\" \"User Commands\"\n.SH NAME\nrmcp \\- ";
    std::string summary = app.get_description();
    if (const auto dash = summary.find(" — "); dash != std::string::npos) summary.erase(0, dash + 5);
    out += roff(summary) + "\n";
    out += ".SH SYNOPSIS\n.B rmcp\n[\\fIGLOBAL OPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]\n";
    out += ".SH GLOBAL OPTIONS\n";
    options_section(out, app);
    out += ".SH COMMANDS\n";
    for (const CLI::App* sub : app.get_subcommands({})) {
        out += fmt::format(".SS {}\n{}\n", roff(sub->get_name()), roff(sub->get_description()));
        options_section(out, *sub);
        for (const CLI::App* nested : sub->get_subcommands({})) {
            out += fmt::format(".TP\n.B {} {}\n{}\n", roff(sub->get_name()), roff(nested->get_name()),
                               roff(nested->get_description()));
        }
        if (!sub->get_footer().empty()) out += ".PP\n" + roff(sub->get_footer()) + "\n";
    }
    out += ".SH EXIT STATUS\n.nf\n" + roff(app.get_footer()) + "\n.fi\n";
    out += ".SH SEE ALSO\nREADME.md, ARCHITECTURE.md and docs/ in the rmcp source tree.\n";
    return out;
}

}  // namespace rmcp::cli
