// Small string helpers shared by the parsers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp {

std::string_view trim(std::string_view s);
std::vector<std::string_view> split_lines(std::string_view text);
bool starts_with_ci(std::string_view s, std::string_view prefix);
std::string to_lower(std::string_view s);
// Unsigned decimal; nullopt on anything else (sign, garbage, overflow).
std::optional<std::uint64_t> parse_u64(std::string_view s);
// Hex with or without 0x prefix.
std::optional<std::uint64_t> parse_hex(std::string_view s);
// Decimal, or hex with 0x prefix, optional leading '-' (module parameters use -1).
std::optional<std::int64_t> parse_i64(std::string_view s);
// How many bytes of `s` equal `c`: the line counter of the log scanner, which sees every
// byte a supervised run prints, so it is vectorised (16 bytes per step, ~10x std::count).
std::size_t count_byte(std::string_view s, char c);

// A name in rmcp's conservative alphabet: not empty, the first byte in [a-z0-9], every other
// in [a-z0-9] or in `also`. Patch ids, profile names, transaction parts: names that end up in
// file names and in commands printed for pasting, so nothing a shell or a path treats specially.
bool is_lower_name(std::string_view s, std::string_view also = "-");
// Not empty, and every byte in [0-9].
bool all_digits(std::string_view s);

// The pieces of `s` between the separators, empty ones included ("a,,b" -> a, "", b);
// views into `s`.
std::vector<std::string_view> split(std::string_view s, char sep);
// The pieces with `sep` between each two.
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::string join(const std::vector<std::string_view>& parts, std::string_view sep);
// Paths as text, no file-system access: what is before / after the last '/'. dirname:
// "." without a slash, "/" for a name directly under the root. basename: the whole path
// without a slash. Trailing slashes are not special. Views into `path` (or a literal).
std::string_view dirname(std::string_view path);
std::string_view basename(std::string_view path);
// One shell word, single-quoted. sh (POSIX "Shell Command Language" 2.2.2: nothing is special
// inside single quotes, so ' is written '\''); fish (inside single quotes only \\ and \' are
// escapes: https://fishshell.com/docs/current/language.html#quotes).
std::string sh_quote(std::string_view word);
// One word of a command printed for the user to paste (the one helper for them: docs/security.md,
// "Commands for pasting"): as it is when every byte is one no POSIX shell treats specially
// ([A-Za-z0-9] and / . _ + - = : , @) and it is not empty, else sh_quote()d.
std::string sh_word(std::string_view word);
std::string fish_quote(std::string_view word);

}  // namespace rmcp
