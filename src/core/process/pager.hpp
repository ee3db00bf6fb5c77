// A long text page through a pager, as git and man do (issue 30, item 1): only when standard
// output is a terminal and the text has more lines than the terminal has rows. The pager is
// $PAGER (its words split at blanks, run without a shell, found on PATH), else
// `less -FRX` (-F: quit at once when the text fits after all, -R: show the colour
// sequences, -X: leave the text on the screen). An empty $PAGER, or "cat", means no pager;
// a pager that cannot be started means the text is written directly.
#pragma once

#include "util/standard_output.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp::process {

// The pager's argv for the value of $PAGER (nullopt: unset); empty: write directly.
std::vector<std::string> pager_command(const std::optional<std::string>& pager_env);

// Whether text of `lines` lines goes through a pager on a terminal of `rows` rows.
bool wants_pager(bool stdout_is_terminal, std::size_t lines, int rows);

// Writes `text` to `out`: through the pager when wants_pager() says so for out's descriptor,
// else directly (also when the pager cannot be started). Waits for the pager to end.
void page_or_write(StandardOutput& out, std::string_view text);

}  // namespace rmcp::process
