// The man page is rendered from the same CLI11 definitions as --help (ARCHITECTURE.md, principle
// 9): `rmcp help --man > docs/rmcp.1`; a CLI test keeps the committed page in sync. The
// sections that are not about options (ENVIRONMENT, FILES, EXAMPLES) are written here.
#include "context.hpp"
#include "version.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace rmcp::cli {

namespace {
constexpr const char* k_environment = R"(.SH ENVIRONMENT
.TP
.B RMCP_ROOT
Read the system from this directory instead of /, like \-\-root.
.TP
.B RMCP_DATA_DIR
Where kb/, patches/, profiles/, probe/ and python/ are, for an rmcp that is not installed
(an installed rmcp uses ../share/rmcp beside its binary; a build uses its checkout).
.TP
.B NO_COLOR
When set, no colour (unless \-\-color always).
.TP
.B RMCP_PYTHON, VIRTUAL_ENV
The interpreter probe uses when \-\-python is not given.
.TP
.B RMCP_PROBE_INLINE_REFERENCE
When 1, each probe child computes its float64 reference itself, before the timed calls,
instead of sharing it with a helper process that runs beside them (for CPU timings with
nothing else running; docs/probe.md).
.TP
.B RMCP_PRELOAD_LIB
The allocation tracer run \-\-trace\-alloc preloads (default: beside the binary, else the
installed lib/<multiarch>/rmcp/librmcp_preload.so).
.TP
.B XDG_STATE_HOME, XDG_CONFIG_HOME
Base directories of patch journals and incident reports, and of the user's profile
environment file (defaults ~/.local/state and ~/.config).
)";

constexpr const char* k_files = R"(.SH FILES
.TP
.I /usr/share/rmcp/kb/*.toml
The knowledge base, one file per known problem (docs/kb\-format.md); \-\-kb DIR reads another.
.TP
.I /usr/share/rmcp/patches/, /usr/share/rmcp/profiles/
Fixes as typed operations, and the escalation ladder of environment profiles (docs/patches.md).
.TP
.I /usr/share/rmcp/probe/catalogue.toml
The probe's scenarios and workaround switches.
.TP
.I /usr/lib/<multiarch>/rmcp/librmcp_preload.so
The HIP allocation tracer (docs/preload.md).
.TP
.I $XDG_CONFIG_HOME/rmcp/profile.env
The user's profile environment, written by env patches.
.TP
.I $XDG_STATE_HOME/rmcp/transactions/, /var/lib/rmcp/transactions/
Patch journals, for rollback.
.TP
.I $XDG_STATE_HOME/rmcp/incidents/
Incident reports of rmcp run.
)";

constexpr const char* k_examples = R"(.SH EXAMPLES
What is on this machine, and what is wrong with it:
.PP
.RS
.nf
rmcp detect
rmcp doctor
.fi
.RE
.PP
Explain a crash log; watch a training run as it goes (its output passes through unchanged,
each problem is named on standard error when its line appears, the report follows at the end):
.PP
.RS
.nf
rmcp explain train.log
python train.py 2>&1 | rmcp explain \-
.fi
.RE
.PP
See what a fix does, apply it, undo it:
.PP
.RS
.nf
rmcp patch plan env\-override\-gfx1030
rmcp patch apply env\-override\-gfx1030
rmcp patch rollback
.fi
.RE
.PP
Train under supervision, retrying one profile stricter after a GPU fault:
.PP
.RS
.nf
rmcp run \-\-profile auto \-\-retries 2 \-\- python train.py
.fi
.RE
.PP
Shell completion for the current bash session:
.PP
.RS
.nf
source <(rmcp completions bash)
.fi
.RE
)";

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

// A footer is prose wrapped by hand, with lines of their own among it (examples, one
// command a line: env's sh and fish lines). roff fills prose; a line that ends short of the
// hand-wrapped width (64 columns) is taken as a line of its own and ends with a break.
std::string roff_lines(std::string_view text) {
    std::string out;
    std::size_t start = 0;
    while (start <= text.size()) {
        const auto nl = text.find('\n', start);
        const auto line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
        out += roff(line);
        if (nl == std::string_view::npos) break;
        out += line.size() < 64 ? "\n.br\n" : "\n";
        start = nl + 1;
    }
    return out;
}

// The page's date: SOURCE_DATE_EPOCH when set (reproducible builds,
// https://reproducible-builds.org/specs/source-date-epoch/), else today, as YYYY-MM-DD (UTC).
std::string page_date() {
    std::time_t when = std::time(nullptr);
    if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH"); epoch && *epoch) {
        long long v = 0;
        const auto [p, ec] = std::from_chars(epoch, epoch + std::strlen(epoch), v);
        if (ec == std::errc() && *p == '\0') when = static_cast<std::time_t>(v);
    }
    std::tm tm{};
    ::gmtime_r(&when, &tm);
    char buf[16];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
    return buf;
}

void options_section(std::string& out, const CLI::App& app) {
    for (const CLI::Option* opt : app.get_options()) {
        if (opt->get_group().empty()) continue;  // hidden
        const auto names = opt->get_name(false, true);
        if (names == "--help,-h" || names == "-h,--help") continue;
        auto type = option_type_name(*opt);
        if (opt->get_type_size() == 0) type.clear();
        out += fmt::format(".TP\n.B {}{}\n{}\n", roff(opt->get_positional() ? opt->get_name() : names),
                           type.empty() || opt->get_positional() ? "" : " " + roff(type), roff(opt->get_description()));
    }
}
}  // namespace

std::string render_manpage(const CLI::App& app) {
    std::string out = fmt::format(".TH RMCP 1 \"{}\" \"rmcp {}\" \"User Commands\"\n.SH NAME\nrmcp \\- ", page_date(),
                                  rmcp_version());
    std::string summary = app.get_description();
    if (const auto dash = summary.find(" — "); dash != std::string::npos) summary.erase(0, dash + 5);
    out += roff(summary) + "\n";
    out += ".SH SYNOPSIS\n.B rmcp\n[\\fIGLOBAL OPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]\n";
    out += ".SH GLOBAL OPTIONS\n";
    options_section(out, app);
    out += ".SH COMMANDS\n";
    for (const CLI::App* sub : app.get_subcommands({})) {
        if (is_hidden_command(*sub)) continue;
        out += fmt::format(".SS {}\n{}\n", roff(sub->get_name()), roff(sub->get_description()));
        options_section(out, *sub);
        for (const CLI::App* nested : sub->get_subcommands({})) {
            out += fmt::format(".TP\n.B {} {}\n{}\n", roff(sub->get_name()), roff(nested->get_name()),
                               roff(nested->get_description()));
            std::string nested_options;
            options_section(nested_options, *nested);
            if (!nested_options.empty()) out += ".RS\n" + nested_options + ".RE\n";
        }
        if (!sub->get_footer().empty()) out += ".PP\n" + roff_lines(sub->get_footer()) + "\n";
    }
    out += ".SH EXIT STATUS\n.nf\n" + roff(app.get_footer()) + "\n.fi\n";
    out += k_environment;
    out += k_files;
    out += k_examples;
    out += ".SH SEE ALSO\nREADME.md, ARCHITECTURE.md and docs/ in the rmcp source tree, installed under "
           "/usr/share/doc/rmcp/ with the package.\n";
    return out;
}

}  // namespace rmcp::cli
