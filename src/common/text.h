// Checks on free text a user gives (names shown in reports, JSON and configuration comments).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gf {

/// The number of characters (code points) of `s` when it is well-formed UTF-8, else nullopt.
/// JSON output requires well-formed UTF-8, so every user string that reaches it is checked.
std::optional<std::size_t> utf8_length(std::string_view s);

/// `s` with each byte that does not start a well-formed UTF-8 character replaced by U+FFFD, for
/// text quoted from a tool's output or a file name, which JSON output cannot hold as bytes.
std::string utf8_or_replacement(std::string_view s);

/// What is wrong with `s` as a one-line display name of at most `max_chars` characters
/// (malformed UTF-8, a control character such as a newline, too long), or "" when it is fine.
std::string display_name_problem(std::string_view s, std::size_t max_chars);

/// `s` with its ASCII letters in lower case (names NCCL and nccl-tests read in any case).
std::string ascii_lower(std::string_view s);

/// `s` as an error message quotes a bad value: its first `max_bytes` bytes and "..." when it is
/// longer, malformed UTF-8 replaced (a cell of a megabyte is named, not repeated).
std::string quoted_excerpt(std::string_view s, std::size_t max_bytes = 40);

/// Whether `s` is one or more ASCII digits: a whole number written out, no sign, no unit.
bool all_digits(std::string_view s);

/// The pieces of `s` between each `sep`, empty ones kept ("a,,b" is a, "", b; "" is one empty
/// piece), so that a list with an item missing can be told from one without.
std::vector<std::string> split(std::string_view s, char sep);

}  // namespace gf
