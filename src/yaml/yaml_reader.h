// Typed, checked access to a YAML document that collects every error with its position.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/diag.h"
#include "common/enum_names.h"

namespace gf {

/// `map[key]`, or an undefined node when `map` is not a map or lacks the key. yaml-cpp's own
/// operator[] returns an invalid node for a missing key whose every query throws; this one is
/// safe to query.
YAML::Node child(const YAML::Node& map, const std::string& key);

/// The most nodes a document may hold once its aliases are expanded (each alias counted as
/// its anchor's whole subtree again). gpufabric's bound: a spec at the 4 MiB limit without
/// aliases holds well under it (a 131,072-node placement list is 131k), while a few lines of
/// nested aliases ("billion laughs") would expand to billions and exhaust memory in every
/// walk of the tree.
inline constexpr double kMaxExpandedNodes = 1'000'000;

/// The nodes `n` holds with every alias expanded, counted once per distinct node (so in time
/// linear in the text); capped at `cap` + 1, and a cycle (an alias inside its own anchor)
/// counts as more than any cap.
double expanded_nodes(const YAML::Node& n, double cap = kMaxExpandedNodes);

/// Reads values out of a YAML tree, recording a positioned Diagnostic for each problem
/// instead of stopping at the first; callers check `errors()` at the end.
class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  /// Parses `text`; a syntax error becomes a diagnostic and the result is a null node.
  YAML::Node parse(const std::string& text);

  const std::string& file() const { return file_; }
  const std::vector<Diagnostic>& errors() const { return diags_; }
  bool ok() const { return diags_.empty(); }

  void error(const YAML::Node& at, const std::string& key, const std::string& message,
             const std::string& hint = "");
  void error_at(const YAML::Mark& mark, const std::string& key, const std::string& message,
                const std::string& hint = "");

  /// True when `node` is a map; otherwise records "expected a map".
  bool expect_map(const YAML::Node& node, const std::string& path);
  /// Records an error for every key of `map` not in `allowed`, with a "did you mean".
  void check_keys(const YAML::Node& map, const std::string& path,
                  const std::vector<std::string>& allowed);

  /// A scalar as text; nullopt (and an error when `required`) when absent or not a scalar.
  std::optional<std::string> text(const YAML::Node& map, const std::string& key,
                                  const std::string& path, bool required = false);
  /// A scalar converted by `parse` (one of the units parsers); errors carry position and key.
  std::optional<double> quantity(const YAML::Node& map, const std::string& key,
                                 const std::string& path,
                                 const std::function<Result<double>(std::string_view)>& parse,
                                 bool required = false);
  /// A plain number (no unit).
  std::optional<double> number(const YAML::Node& map, const std::string& key,
                               const std::string& path, bool required = false);
  /// A positive integer.
  std::optional<long long> positive_int(const YAML::Node& map, const std::string& key,
                                        const std::string& path, bool required = false);
  /// A positive integer up to kMaxSmallInt, for the fields held as int (counts of nodes per
  /// unit, ports, ...): larger values are errors, not wrapped around.
  static constexpr int kMaxSmallInt = 100'000'000;
  std::optional<int> small_positive_int(const YAML::Node& map, const std::string& key,
                                        const std::string& path, bool required = false);
  std::optional<bool> boolean(const YAML::Node& map, const std::string& key,
                              const std::string& path, bool required = false);
  /// A scalar that must be one of `choices`.
  std::optional<std::string> choice(const YAML::Node& map, const std::string& key,
                                    const std::string& path,
                                    const std::vector<std::string>& choices, bool required = false);
  /// A scalar that must name a member of a closed set (common/enum_names.h): the member.
  template <typename E, std::size_t N>
  std::optional<E> choice_of(const YAML::Node& map, const std::string& key, const std::string& path,
                             const EnumName<E> (&table)[N], bool required = false) {
    const auto v = choice(map, key, path, names_of(table), required);
    if (!v) return std::nullopt;
    return parse_name(table, *v);
  }
  /// The same with "auto" accepted besides the members: nullopt for auto, the member otherwise,
  /// `current` when the key is absent or wrong (the error is recorded).
  template <typename E, std::size_t N>
  std::optional<E> choice_or_auto(const YAML::Node& map, const std::string& key,
                                  const std::string& path, const EnumName<E> (&table)[N],
                                  std::optional<E> current) {
    std::vector<std::string> choices{"auto"};
    for (const auto& n : names_of(table)) choices.push_back(n);
    const auto v = choice(map, key, path, choices, false);
    if (!v) return current;
    return *v == "auto" ? std::nullopt : parse_name(table, *v);
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

 private:
  /// Records an error for every key that appears twice in one map, anywhere under `node`.
  void check_duplicate_keys(const YAML::Node& node, const std::string& path,
                            std::set<int>& visited);
  const YAML::Node scalar(const YAML::Node& map, const std::string& key, const std::string& path,
                          bool required);
  std::string file_;
  std::vector<Diagnostic> diags_;
  YAML::Mark last_mark_;
};

}  // namespace gf
