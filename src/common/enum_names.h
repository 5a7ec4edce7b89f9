// Closed sets as enums with one table of names: the parse, the printing, the "did you mean" and
// the help text of each set all come from that table (LevelDB's CompressionType is the model:
// an enum at the core, names only at the edge).
//
//   enum class Colour { kRed, kBlue };
//   inline constexpr EnumName<Colour> kColourNames[] = {{Colour::kRed, "red"}, ...};
//   name_of(kColourNames, Colour::kRed) == "red"; parse_name(kColourNames, "blue") == kBlue.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gf {

/// One member of a closed set and the name users write for it.
template <typename E>
struct EnumName {
  E value;
  const char* name;
};

/// The name of `value` in `table`; "?" for a value the table lacks (a programming error the
/// tests of each table rule out).
template <typename E, std::size_t N>
constexpr const char* name_of(const EnumName<E> (&table)[N], E value) {
  for (const auto& e : table)
    if (e.value == value) return e.name;
  return "?";
}

/// The member named `text`, exactly; nullopt for any other text.
template <typename E, std::size_t N>
std::optional<E> parse_name(const EnumName<E> (&table)[N], std::string_view text) {
  for (const auto& e : table)
    if (text == e.name) return e.value;
  return std::nullopt;
}

/// Every name in table order, for "did you mean" and for choices in a spec.
template <typename E, std::size_t N>
std::vector<std::string> names_of(const EnumName<E> (&table)[N]) {
  std::vector<std::string> out;
  out.reserve(N);
  for (const auto& e : table) out.emplace_back(e.name);
  return out;
}

/// The names joined for help text: "a | b | c".
template <typename E, std::size_t N>
std::string names_joined(const EnumName<E> (&table)[N], std::string_view sep = " | ") {
  std::string out;
  for (const auto& e : table) {
    if (!out.empty()) out += sep;
    out += e.name;
  }
  return out;
}

}  // namespace gf
