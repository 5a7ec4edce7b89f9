// Diagnostics: what is wrong with an input, where, and what to do about it.
#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace gf {

/// One problem in a user's input, located as precisely as the input allows. Made by the named
/// constructors below, which say what kind of place the problem is at (a positional
/// {file, line, column, key, message, hint} does not compile: it was too easy to misplace).
struct Diagnostic {
  std::string file;     ///< path as the user gave it; empty for command-line input
  int line = 0;         ///< 1-based; 0 when unknown
  int column = 0;       ///< 1-based; 0 when unknown
  std::string key;      ///< key path such as "cluster.nic"; empty when not applicable
  std::string message;  ///< what is wrong and what was expected
  std::string hint;     ///< "did you mean ..." or what to do; may be empty

  Diagnostic() = default;

  /// A problem at a place in a file: `line` and `column` 1-based, 0 when unknown.
  static Diagnostic at(std::string file, int line, int column, std::string key, std::string message,
                       std::string hint = {}) {
    return {std::move(file), line, column, std::move(key), std::move(message), std::move(hint)};
  }
  /// A problem with a file as a whole (it cannot be read, it is too large, ...), or with one
  /// of its keys where no line is known.
  static Diagnostic in_file(std::string file, std::string key, std::string message,
                            std::string hint = {}) {
    return {std::move(file), 0, 0, std::move(key), std::move(message), std::move(hint)};
  }
  /// A problem with a spec key where neither the file nor the line is at hand (a model found
  /// it after the spec was read); `key` is the dotted path, "fabric.technology".
  static Diagnostic at_key(std::string key, std::string message, std::string hint = {}) {
    return {{}, 0, 0, std::move(key), std::move(message), std::move(hint)};
  }
  /// A problem with a command-line flag or argument, named as the user typed it ("--op").
  static Diagnostic flag(std::string name, std::string message, std::string hint = {}) {
    return {{}, 0, 0, std::move(name), std::move(message), std::move(hint)};
  }
  /// A problem with no place to point at (a model that cannot run on this input).
  static Diagnostic error(std::string message, std::string hint = {}) {
    return {{}, 0, 0, {}, std::move(message), std::move(hint)};
  }

 private:
  Diagnostic(std::string f, int l, int c, std::string k, std::string m, std::string h)
      : file(std::move(f)),
        line(l),
        column(c),
        key(std::move(k)),
        message(std::move(m)),
        hint(std::move(h)) {}
};

/// "file:line:col: error: key: message (hint)", the form compilers use.
std::string format_diagnostic(const Diagnostic& d);
/// All diagnostics, one per line.
std::string format_diagnostics(const std::vector<Diagnostic>& ds);

/// A value, or the diagnostics that explain why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Diagnostic d) : v_(std::vector<Diagnostic>{std::move(d)}) {}  // NOLINT
  Result(std::vector<Diagnostic> ds) : v_(std::move(ds)) {}            // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<T>(v_); }
  const T& value() const { return std::get<T>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const std::vector<Diagnostic>& errors() const { return std::get<std::vector<Diagnostic>>(v_); }

 private:
  std::variant<T, std::vector<Diagnostic>> v_;
};

/// Levenshtein distance, for "did you mean" suggestions.
int edit_distance(const std::string& a, const std::string& b);
/// The candidate closest to `word` if it is close enough to be a likely typo, else "".
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);
/// "did you mean 'x'?" hint text, or "" when nothing is close; never `word` itself.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace gf
