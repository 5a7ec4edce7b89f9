#include "common/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace gf {

namespace {

// The length of the well-formed UTF-8 character at s[i], or 0 when none starts there.
std::size_t utf8_char_bytes(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t extra = 0;
  unsigned long cp = 0;
  if (c < 0x80) {
    return 1;
  } else if ((c & 0xE0) == 0xC0) {
    extra = 1, cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    extra = 2, cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    extra = 3, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + extra >= s.size()) return 0;  // cut short at the end
  for (std::size_t k = 1; k <= extra; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  // Overlong forms, UTF-16 surrogates and values past U+10FFFF are not UTF-8 (RFC 3629 §3).
  static const unsigned long kMinForLength[] = {0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLength[extra] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
  return extra + 1;
}

}  // namespace

std::optional<std::size_t> utf8_length(std::string_view s) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < s.size(); ++chars) {
    const std::size_t n = utf8_char_bytes(s, i);
    if (n == 0) return std::nullopt;
    i += n;
  }
  return chars;
}

std::string utf8_or_replacement(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_char_bytes(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

std::string display_name_problem(std::string_view s, std::size_t max_chars) {
  const auto n = utf8_length(s);
  if (!n) return "is not valid UTF-8 text";
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
      return "holds a control character (a newline or tab?); a name is one line of text";
  if (*n > max_chars) return fmt::format("is {} characters long; at most {}", *n, max_chars);
  return "";
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string quoted_excerpt(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return utf8_or_replacement(s);
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // a whole char
  return utf8_or_replacement(s.substr(0, cut)) + "...";
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t from = 0;
  for (size_t at; (at = s.find(sep, from)) != std::string_view::npos; from = at + 1)
    out.emplace_back(s.substr(from, at - from));
  out.emplace_back(s.substr(from));
  return out;
}

}  // namespace gf
