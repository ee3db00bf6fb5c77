#include "context.hpp"

#include "util/test_delay.hpp"

#include "util/atomic_file.hpp"
#include "util/strings.hpp"

#include "install_paths.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
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
    return open_root_at(dir);
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

Style Context::style() const { return Style(use_color(options.color, STDOUT_FILENO)); }

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
        if (ctx.out.error() == 0) ctx.out.print("{}\n", json_text(nlohmann::json{{"error", error_json(error)}}, 2));
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
    return terminal_safe(text, ctx.style().color() ? Shown::styled_lines : Shown::lines);
}

std::string shown_path(const Root& root, std::string_view logical) { return root.host_path(logical); }

}  // namespace rmcp::cli
