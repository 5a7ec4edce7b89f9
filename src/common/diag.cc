#include "common/diag.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace gf {

std::string format_diagnostic(const Diagnostic& d) {
  std::string out;
  if (!d.file.empty()) {
    out += d.file;
    if (d.line > 0) {
      out += ":" + std::to_string(d.line);
      if (d.column > 0) out += ":" + std::to_string(d.column);
    }
    out += ": ";
  }
  out += "error: ";
  if (!d.key.empty()) out += d.key + ": ";
  out += d.message;
  if (!d.hint.empty()) out += " (" + d.hint + ")";
  return out;
}

std::string format_diagnostics(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) out += format_diagnostic(d) + "\n";
  return out;
}

int edit_distance(const std::string& a, const std::string& b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int sub = prev[j - 1] + (std::tolower(a[i - 1]) == std::tolower(b[j - 1]) ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  // One edit away is the likeliest meaning ("spine1" -> "spine01"); then a candidate that starts
  // with what was typed ("h100" -> "h100-sxm").
  for (const auto& c : candidates)
    if (edit_distance(word, c) <= 1) return c;
  std::string prefixed;
  if (word.size() >= 3)
    for (const auto& c : candidates)
      if (c.size() > word.size() && c.compare(0, word.size(), word) == 0 &&
          (prefixed.empty() || c.size() < prefixed.size()))
        prefixed = c;
  if (!prefixed.empty()) return prefixed;
  std::string best;
  int best_d = 1 << 30;
  for (const auto& c : candidates) {
    const int d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  // A likely typo: at most a third of the word changed (and at least one edit allowed).
  const int limit = std::max<int>(2, static_cast<int>(word.size()) / 3);
  if (best.empty() || best_d > limit) {
    // Also accept a candidate that contains the word or the word that contains it ("h100" ->
    // "h100-sxm").
    for (const auto& c : candidates)
      if (word.size() >= 3 && (c.find(word) != std::string::npos)) return c;
    return "";
  }
  return best;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  // What was typed is itself a candidate: the name is right and the place is wrong (a node's
  // name where a switch's is wanted). Suggesting it back, or a neighbour one edit away, misleads.
  if (std::find(candidates.begin(), candidates.end(), word) != candidates.end())
    return "'" + word + "' is a known name, but not one this place takes";
  const std::string m = closest_match(word, candidates);
  return m.empty() ? "" : "did you mean '" + m + "'?";
}

}  // namespace gf
