#include "util/terminal.hpp"

#include "util/strings.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <string>

namespace rmcp {

int output_width(int fd) {
    winsize ws{};
    if (::isatty(fd) == 1 && ::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    if (const char* c = std::getenv("COLUMNS"))
        if (const auto n = parse_u64(c); n && *n > 0 && *n < 10000) return static_cast<int>(*n);
    return 80;
}

namespace {
bool locale_is_utf8_in(const std::map<std::string, std::string>& env) {
    for (const char* name : {"LC_ALL", "LC_CTYPE", "LANG"}) {
        const auto it = env.find(name);
        if (it == env.end() || it->second.empty()) continue;
        std::string v = it->second;
        std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
        return v.find("utf-8") != std::string::npos || v.find("utf8") != std::string::npos;
    }
    return false;
}
}  // namespace

bool locale_is_utf8() {
    std::map<std::string, std::string> env;
    for (const char* name : {"LC_ALL", "LC_CTYPE", "LANG"})
        if (const char* v = std::getenv(name)) env[name] = v;
    return locale_is_utf8_in(env);
}

}  // namespace rmcp
