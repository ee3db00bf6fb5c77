#include "util/style.hpp"

#include <cstdlib>
#include <unistd.h>

namespace rmcp {

bool use_color(ColorMode mode, int fd) {
    switch (mode) {
    case ColorMode::always: return true;
    case ColorMode::never: return false;
    case ColorMode::automatic: {
        const char* no_color = std::getenv("NO_COLOR");
        if (no_color && *no_color) return false;
        return ::isatty(fd) == 1;
    }
    }
    return false;
}

}  // namespace rmcp
