#include "context.hpp"

#include "util/test_delay.hpp"

#include "util/atomic_file.hpp"
#include "util/strings.hpp"

#include "install_paths.hpp"
#include "json_output.hpp"
#include "process/pager.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <unistd.h>

namespace rmcp::cli {

namespace {
std::string_view format_name(OutputFormat f) {
    switch (f) {
    case OutputFormat::text: return "text";
    case OutputFormat::json: return "json";
    case OutputFormat::nfd: return "nfd";
    case OutputFormat::prometheus: return "prometheus";
    case OutputFormat::sh: return "sh";
    case OutputFormat::fish: return "fish";
    case OutputFormat::dotenv: return "dotenv";
    case OutputFormat::markdown: return "markdown";
    }
    return "text";
}
}  // namespace

Result<Root> Context::open_root() const {
    std::string dir = options.root;
    if (dir.empty())
        if (const char* env = std::getenv("RMCP_ROOT"); env && *env) dir = env;
    if (dir.empty()) dir = "/";
    auto root = open_root_at(dir);
    if (root && !m_root_checked) {
        m_root_checked = true;
        if (!root->is_dir("/sys") && !root->is_dir("/proc") && !root->exists("/etc/os-release"))
            diag.warning(fmt::format("{} has no sys/, proc/ or etc/os-release: it does not look like a system tree "
                                     "(an unpacked snapshot is the directory that holds .rmcp-meta)",
                                     dir));
    }
    return root;
}

Result<Root> Context::open_root_at(const std::string& dir) const {
    // Test-only: RMCP_TEST_RESOLVER=walk makes the CLI resolve with the user-space walk even
    // where the kernel has openat2, so the hostile suite checks both (docs/security.md). Either
    // is confined: the switch weakens nothing.
    const char* resolver = std::getenv("RMCP_TEST_RESOLVER");
    auto root =
        Root::open(dir, resolver && std::string_view(resolver) == "walk" ? Resolver::walk : Resolver::automatic);
    // Test-only: the delays at locks and renames (RMCP_TEST_DELAY_AT=lock,rename:MS,
    // util/test_delay.hpp) for every command that writes, only under a --root other than "/":
    // they can never fire on a live system.
    if (root && !root->is_live())
        if (const char* spec = std::getenv("RMCP_TEST_DELAY_AT")) test_hooks::set_delays(spec);
    return root;
}

Style Context::style() const {
    // Once per run, after parsing: the locale and the window size do not change while a
    // command runs.
    if (!m_style) m_style = terminal_style(options.color, STDOUT_FILENO);
    return *m_style;
}

void Context::summary(std::string_view line) const {
    if (!quiet() || options.format != "text" || line.empty()) return;
    std::string text = shown_text(*this, line);
    if (const auto nl = text.find('\n'); nl != std::string::npos) text.resize(nl);  // one line, by definition
    out.write_always(text + "\n");
}

void Context::document_output() const { out.set_held(false); }

void Context::page(std::string_view text) const {
    if (out.held()) return;
    process::page_or_write(out, text);
}

namespace {
std::set<const CLI::App*>& documents() {
    static std::set<const CLI::App*> set;
    return set;
}
}  // namespace

void mark_document(CLI::App* cmd) { documents().insert(cmd); }
bool is_document(const CLI::App* cmd) { return documents().contains(cmd); }

std::filesystem::path Context::data_dir() const { return shipped_data_dir(); }

std::filesystem::path Context::kb_dir() const {
    if (!options.kb_dir.empty()) return options.kb_dir;
    return data_dir() / "kb";
}

Result<OutputFormat> Context::format(std::initializer_list<OutputFormat> allowed) const {
    std::string names;
    for (const auto f : allowed) {
        if (format_name(f) == options.format) return f;
        names += names.empty() ? "" : "|";
        names += format_name(f);
    }
    return Error{"choosing output format", options.format, fmt::format("this command supports --format {}", names),
                 ExitCode::usage};
}

int fail(Context& ctx, const Error& error) {
    ctx.diag.error(error);
    print_error_json(ctx, error);
    return static_cast<int>(error.code);
}

void print_error_json(Context& ctx, const Error& error) {
    if (ctx.options.format == "json") {
        // Not when stdout itself is what failed: nothing would read it.
        if (ctx.out.error() == 0) ctx.out.write_always(json_output(ctx, nlohmann::json{{"error", error_json(error)}}));
    }
}

Status write_output(Context& ctx, const std::string& path, std::string_view content) {
    if (path.empty() || path == "-") {
        ctx.out.write(content);
        return ok_status();
    }
    return write_file_atomic(path, content);
}

nlohmann::json error_json(const Error& error) {
    return {{"doing", error.doing},
            {"path", error.path},
            {"cause", error.cause},
            {"exit_code", static_cast<int>(error.code)}};
}

}  // namespace rmcp::cli

namespace rmcp::cli {

std::string command_prefix(const Context& ctx) {
    const std::string& dir = ctx.options.root;
    if (dir.empty() || dir == "/") return "rmcp";
    return "rmcp --root " + sh_word(dir);
}

std::string shown_text(const Context& ctx, std::string_view text) {
    const Style style = ctx.style();
    std::string safe = terminal_safe(text, style.color() ? Shown::styled_lines : Shown::lines);
    // Under a locale that is not UTF-8 the glyphs are spelt in ASCII, whichever renderer wrote
    // them (util/terminal.hpp): one place, so no renderer can forget.
    return style.unicode() ? safe : ascii_glyphs(safe);
}

std::string shown_path(const Root& root, std::string_view logical) { return root.host_path(logical); }

}  // namespace rmcp::cli
