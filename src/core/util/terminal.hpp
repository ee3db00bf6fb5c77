// What the terminal rmcp writes to can show: its width and whether the locale is UTF-8.
// Read from the environment and the descriptor, never from the C locale (setlocale would
// change how every parser in the process classifies characters).
#pragma once

#include <cstddef>
#include <map>
#include <string>

namespace rmcp {

// The width of the terminal at `fd`; else $COLUMNS when it is a number; else 80.
int output_width(int fd);

// True when the locale's character set is UTF-8: the first of LC_ALL, LC_CTYPE, LANG that is
// set and not empty names it ("en_US.UTF-8", "C.utf8"); "C", "POSIX" or nothing is ASCII.
bool locale_is_utf8();

}  // namespace rmcp
