#include "context.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <unistd.h>

#ifndef RMCP_DEFAULT_DATA_DIR
#define RMCP_DEFAULT_DATA_DIR "."
#endif

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
    return Root::open(dir);
}

Style Context::style() const { return Style(use_color(options.color, STDOUT_FILENO)); }

std::filesystem::path Context::data_dir() const {
    if (const char* env = std::getenv("RMCP_DATA_DIR"); env && *env) return env;
    return RMCP_DEFAULT_DATA_DIR;
}

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
    return static_cast<int>(error.code);
}

}  // namespace rmcp::cli
