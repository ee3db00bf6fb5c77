// The one way rmcp includes toml++ (Debian 12: toml++ 3.3, header-only).
//
// toml++ asserts on some malformed input instead of reporting it: `[!]`, a table header
// whose key starts with a character that cannot start a key, fails
// `is_bare_key_character(*cp) || is_string_delimiter(*cp)` in parser::parse_key (found by
// tests/fuzz/fuzz_kb_loader). With NDEBUG toml++ compiles its asserts out and the same input
// gets the parse error that names the line, which is what a user of a release build sees.
// Defining TOML_ASSERT here gives every build type, the Debug and sanitizer builds included,
// that behaviour. (A -D on the compiler command line cannot do this: CMake drops
// function-style definitions.)
#pragma once

#ifndef TOML_ASSERT
#define TOML_ASSERT(expr) static_assert(true)
#endif

#include <toml++/toml.h>
