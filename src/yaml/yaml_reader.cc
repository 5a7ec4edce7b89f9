#include "yaml/yaml_reader.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "common/file.h"
#include "common/text.h"
#include "units/units.h"

namespace gf {
namespace {

// yaml-cpp recurses once per nesting level; deeper documents than this are rejected before
// parsing so that hostile input cannot exhaust the stack. No spec or catalog nests past ~6.
constexpr int kMaxFlowNesting = 64;

// Deepest [ / { nesting outside quotes and comments, a cheap guard against stack exhaustion.
int flow_depth(const std::string& text) {
  int depth = 0, max_depth = 0;
  char quote = 0;
  bool comment = false;
  for (char c : text) {
    if (comment) {
      if (c == '\n') comment = false;
      continue;
    }
    if (quote) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"')
      quote = c;
    else if (c == '#')
      comment = true;
    else if (c == '[' || c == '{')
      max_depth = std::max(max_depth, ++depth);
    else if ((c == ']' || c == '}') && depth > 0)
      --depth;
  }
  return max_depth;
}

// Where each document of a stream starts, without building the documents.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> marks;
  void OnDocumentStart(const YAML::Mark& mark) override { marks.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

std::string describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "'" + quoted_excerpt(n.Scalar()) + "'";  // a whole file read as one scalar too
    default:
      return "nothing";
  }
}

}  // namespace

YAML::Node child(const YAML::Node& map, const std::string& key) {
  if (!map.IsDefined() || !map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node n = map[key];
  if (!n.IsDefined()) return YAML::Node(YAML::NodeType::Undefined);
  return n;
}

namespace {
// Nodes under `n`, aliases expanded, each distinct node (its place in the text) counted once:
// memo holds the finished ones, -1 the ones being counted (a cycle).
double count_expanded(const YAML::Node& n, double cap, std::map<size_t, double>& memo) {
  if (!n.IsSequence() && !n.IsMap()) return 1;
  const size_t at = static_cast<size_t>(n.Mark().pos);
  if (const auto it = memo.find(at); it != memo.end()) return it->second < 0 ? cap + 1 : it->second;
  memo[at] = -1;
  double total = 1;
  for (const auto& item : n) {
    total +=
        n.IsMap() ? 1 + count_expanded(item.second, cap, memo) : count_expanded(item, cap, memo);
    if (total > cap) break;
  }
  total = std::min(total, cap + 1);
  memo[at] = total;
  return total;
}
}  // namespace

double expanded_nodes(const YAML::Node& n, double cap) {
  std::map<size_t, double> memo;
  return count_expanded(n, cap, memo);
}

YAML::Node YamlReader::parse(const std::string& text) {
  if (text.size() > kMaxSpecBytes) {
    diags_.push_back(
        Diagnostic::in_file(file_, "",
                            fmt::format("file is {}; at most {} is read", human_bytes(text.size()),
                                        human_bytes(kMaxSpecBytes))));
    return YAML::Node();
  }
  if (flow_depth(text) > kMaxFlowNesting) {
    diags_.push_back(Diagnostic::in_file(
        file_, "", fmt::format("nesting deeper than {} levels", kMaxFlowNesting)));
    return YAML::Node();
  }
  try {
    // The documents are counted first, and a document that starts where the one before it
    // started is a token no YAML rule takes (a ',' outside [ ] or { }): yaml-cpp 0.7 would
    // read an empty document there again and again, and YAML::LoadAll never return
    // (jbeder/yaml-cpp#1040).
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentStarts starts;
    while (parser.HandleNextDocument(starts)) {
      const auto& m = starts.marks;
      if (m.size() >= 2 && m[m.size() - 1].pos == m[m.size() - 2].pos) {
        error_at(m.back(), "", "YAML syntax error: no value can start here",
                 "a ',' outside [ ] or { }? check indentation, colons and quotes");
        return YAML::Node();
      }
    }
    if (starts.marks.empty()) return YAML::Node();
    if (starts.marks.size() > 1) {
      // A second document is a pasted second spec, a stray '---', or a key less indented than
      // the document's first (which YAML starts a new document at): its keys would be ignored.
      const bool separator = text.find("---") != std::string::npos;
      error_at(
          starts.marks[1], "",
          fmt::format("{} YAML documents{}; one expected", starts.marks.size(),
                      separator ? " ('---' separators)"
                                : ": a key here is less indented than the first one"),
          separator ? "keep one spec per file" : "start every top-level key in the same column");
      return YAML::Node();
    }
    YAML::Node doc = YAML::Load(text);
    if (expanded_nodes(doc) > kMaxExpandedNodes) {
      diags_.push_back(Diagnostic::in_file(
          file_, "",
          fmt::format("its aliases (*name) expand the document to more than {:.0f} values, or "
                      "one refers to its own anchor",
                      kMaxExpandedNodes),
          "use an alias for a block that is used as it is (a job's workload), not nested in "
          "itself or repeated level by level"));
      return YAML::Node();
    }
    std::set<int> visited;
    check_duplicate_keys(doc, "", visited);
    return doc;
  } catch (const YAML::Exception& e) {
    diags_.push_back(Diagnostic::at(file_, e.mark.line + 1, e.mark.column + 1, "",
                                    "YAML syntax error: " + e.msg,
                                    "check indentation, colons and quotes"));
    return YAML::Node();
  }
}

void YamlReader::check_duplicate_keys(const YAML::Node& node, const std::string& path,
                                      std::set<int>& visited) {
  if (!node.IsSequence() && !node.IsMap()) return;
  // An alias is its anchor's node again (same place in the text): each collection is checked
  // once, so an alias inside its own anchor (a cycle) or aliases of aliases (exponentially many
  // paths) cost one visit each.
  if (!visited.insert(node.Mark().pos).second) return;
  if (node.IsSequence()) {
    int i = 0;
    for (const auto& item : node)
      check_duplicate_keys(item, fmt::format("{}[{}]", path, i++), visited);
    return;
  }
  // yaml-cpp keeps every pair of a map and its operator[] returns the first, so a repeated key
  // would silently lose its second value: report it where it repeats.
  std::set<std::string> seen;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) continue;
    const std::string key = kv.first.Scalar();
    if (!seen.insert(key).second)
      error(kv.first, join(path, key), "key given twice in the same map", "keep one of them");
    check_duplicate_keys(kv.second, join(path, key), visited);
  }
}

void YamlReader::error(const YAML::Node& at, const std::string& key, const std::string& message,
                       const std::string& hint) {
  error_at(at.IsDefined() ? at.Mark() : last_mark_, key, message, hint);
}

void YamlReader::error_at(const YAML::Mark& mark, const std::string& key,
                          const std::string& message, const std::string& hint) {
  const bool known = mark.line >= 0 && !mark.is_null();
  diags_.push_back(Diagnostic::at(file_, known ? mark.line + 1 : 0, known ? mark.column + 1 : 0,
                                  key, message, hint));
}

bool YamlReader::expect_map(const YAML::Node& node, const std::string& path) {
  if (node.IsMap()) {
    last_mark_ = node.Mark();
    return true;
  }
  error(node, path, "expected a map of keys, found " + describe(node));
  return false;
}

void YamlReader::check_keys(const YAML::Node& map, const std::string& path,
                            const std::vector<std::string>& allowed) {
  if (!map.IsMap()) return;
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) {
      error(kv.first, path, "keys must be plain names");
      continue;
    }
    const std::string k = kv.first.Scalar();
    bool found = false;
    for (const auto& a : allowed) found = found || a == k;
    if (!found) {
      std::string hint = did_you_mean(k, allowed);
      if (hint.empty()) {
        hint = "known keys:";
        for (const auto& a : allowed) hint += " " + a;
      }
      error(kv.first, join(path, k), "unknown key", hint);
    }
  }
}

const YAML::Node YamlReader::scalar(const YAML::Node& map, const std::string& key,
                                    const std::string& path, bool required) {
  const YAML::Node n = child(map, key);
  if (!n.IsDefined() || n.IsNull()) {
    if (required) error(map, join(path, key), "missing required key");
    return YAML::Node(YAML::NodeType::Undefined);
  }
  if (!n.IsScalar()) {
    error(n, join(path, key), "expected a single value, found " + describe(n));
    return YAML::Node(YAML::NodeType::Undefined);
  }
  return n;
}

std::optional<std::string> YamlReader::text(const YAML::Node& map, const std::string& key,
                                            const std::string& path, bool required) {
  const YAML::Node n = scalar(map, key, path, required);
  if (!n.IsDefined()) return std::nullopt;
  return n.Scalar();
}

std::optional<double> YamlReader::quantity(
    const YAML::Node& map, const std::string& key, const std::string& path,
    const std::function<Result<double>(std::string_view)>& parse, bool required) {
  const YAML::Node n = scalar(map, key, path, required);
  if (!n.IsDefined()) return std::nullopt;
  const auto r = parse(n.Scalar());
  if (!r) {
    const auto& d = r.errors().front();
    error(n, join(path, key), d.message, d.hint);
    return std::nullopt;
  }
  return *r;
}

std::optional<double> YamlReader::number(const YAML::Node& map, const std::string& key,
                                         const std::string& path, bool required) {
  const YAML::Node n = scalar(map, key, path, required);
  if (!n.IsDefined()) return std::nullopt;
  const auto r = units::parse_count(n.Scalar());
  if (!r) {
    error(n, join(path, key), "expected a number, found " + describe(n));
    return std::nullopt;
  }
  return *r;
}

std::optional<long long> YamlReader::positive_int(const YAML::Node& map, const std::string& key,
                                                  const std::string& path, bool required) {
  const YAML::Node n = scalar(map, key, path, required);
  if (!n.IsDefined()) return std::nullopt;
  const std::string& text = n.Scalar();
  // A leading zero is octal to YAML 1.1 readers (010 is 8 to PyYAML) and decimal to YAML 1.2's:
  // such a count means different clusters to different tools, so it is refused.
  if (text.size() > 1 && text[0] == '0' && std::isdigit(static_cast<unsigned char>(text[1]))) {
    error(n, join(path, key),
          "a number with a leading zero (" + describe(n) + "): octal to YAML 1.1 tools",
          "write it without the leading zero");
    return std::nullopt;
  }
  const auto r = units::parse_count(text);
  if (!r || *r < 1 || *r > 1e12 || std::floor(*r) != *r) {
    error(n, join(path, key), "expected a positive whole number, found " + describe(n));
    return std::nullopt;
  }
  return static_cast<long long>(*r);
}

std::optional<int> YamlReader::small_positive_int(const YAML::Node& map, const std::string& key,
                                                  const std::string& path, bool required) {
  const auto v = positive_int(map, key, path, required);
  if (!v) return std::nullopt;
  if (*v > kMaxSmallInt) {
    error(child(map, key), join(path, key),
          fmt::format("{} is too large: at most {}", *v, kMaxSmallInt));
    return std::nullopt;
  }
  return static_cast<int>(*v);
}

std::optional<bool> YamlReader::boolean(const YAML::Node& map, const std::string& key,
                                        const std::string& path, bool required) {
  const YAML::Node n = scalar(map, key, path, required);
  if (!n.IsDefined()) return std::nullopt;
  const std::string s = n.Scalar();
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  error(n, join(path, key), "expected true or false, found " + describe(n));
  return std::nullopt;
}

std::optional<std::string> YamlReader::choice(const YAML::Node& map, const std::string& key,
                                              const std::string& path,
                                              const std::vector<std::string>& choices,
                                              bool required) {
  const YAML::Node n = scalar(map, key, path, required);
  if (!n.IsDefined()) return std::nullopt;
  const std::string s = n.Scalar();
  for (const auto& c : choices)
    if (c == s) return s;
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : " | ") + c;
  // A number one character from another is no typo of it (zero: 4 is not "did you mean 0").
  error(n, join(path, key), fmt::format("'{}' is not one of {}", s, list),
        all_digits(s) ? "" : did_you_mean(s, choices));
  return std::nullopt;
}

}  // namespace gf
