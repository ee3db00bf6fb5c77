#include "util/style.hpp"

namespace rmcp {

Style terminal_style(ColorMode mode, int fd) { return Style(use_color(mode, fd), locale_is_utf8(), output_width(fd)); }

}  // namespace rmcp
