#include "units/units.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace gf::units {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "1.5 GB" into 1.5 and "GB". Fails on an empty or non-numeric head.
bool split_number(std::string_view text, double& number, std::string& suffix) {
  text = trim(text);
  if (text.empty()) return false;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (*begin == '+') ++begin;
  const auto res = std::from_chars(begin, end, number);
  if (res.ec != std::errc() || !std::isfinite(number)) return false;
  suffix = std::string(trim(std::string_view(res.ptr, static_cast<size_t>(end - res.ptr))));
  return true;
}

Diagnostic bad(std::string_view text, const std::string& expected) {
  return Diagnostic::error(fmt::format("'{}' is not {}", text, expected));
}

struct Suffix {
  const char* name;
  double factor;
};

Result<double> lookup(std::string_view text, const std::vector<Suffix>& table,
                      const std::string& expected, bool unitless_ok) {
  double n = 0;
  std::string suffix;
  if (!split_number(text, n, suffix)) return bad(text, expected);
  if (suffix.empty()) {
    if (unitless_ok) return n;
    Diagnostic d = bad(text, expected);
    d.message = fmt::format("'{}' has no unit; expected {}", text, expected);
    return d;
  }
  for (const auto& s : table)
    if (suffix == s.name) return n * s.factor;
  // A quantity of no unit ("3-1" for a ratio): the form it takes, not an empty list of units.
  if (table.empty()) return bad(text, expected);
  std::vector<std::string> names;
  for (const auto& s : table) names.emplace_back(s.name);
  Diagnostic d = bad(text, expected);
  d.message = fmt::format("unknown unit '{}' in '{}'; expected {}", suffix, text, expected);
  // One letter is as near to many units as to any: list them rather than guess one.
  d.hint = suffix.size() > 1 ? did_you_mean(suffix, names) : "";
  if (d.hint.empty()) d.hint = "units: " + fmt::format("{}", fmt::join(names, ", "));
  return d;
}

constexpr double kKi = 1024.0;

}  // namespace

Result<double> parse_bytes(std::string_view text, SizeStyle style) {
  const bool nccl = style == SizeStyle::kNccl;
  std::vector<Suffix> table = {
      {"B", 1},
      // nccl-tests reads the letter after the number and ignores the rest (parsesize,
      // src/common.cu: sscanf "%zu%1c"): its 1GB is 1 GiB.
      {"KB", nccl ? kKi : 1e3},
      {"MB", nccl ? kKi * kKi : 1e6},
      {"GB", nccl ? kKi * kKi * kKi : 1e9},
      {"TB", nccl ? kKi * kKi * kKi * kKi : 1e12},
      {"KiB", kKi},
      {"MiB", kKi * kKi},
      {"GiB", kKi * kKi * kKi},
      {"TiB", kKi * kKi * kKi * kKi},
      // nccl-tests reads -b/-e with K, M, G as powers of 1024.
      {"K", nccl ? kKi : 1e3},
      {"M", nccl ? kKi * kKi : 1e6},
      {"G", nccl ? kKi * kKi * kKi : 1e9},
      {"T", nccl ? kKi * kKi * kKi * kKi : 1e12},
  };
  // nccl-tests also reads k, m and g (parsesize, src/common.cu).
  if (nccl) table.insert(table.end(), {{"k", kKi}, {"m", kKi * kKi}, {"g", kKi * kKi * kKi}});
  auto r = lookup(text, table, "a size such as 512B, 4KiB, 1GB or 8G", true);
  if (r && *r < 0) return bad(text, "a non-negative size");
  return r;
}

Result<double> parse_bitrate(std::string_view text) {
  const std::vector<Suffix> table = {
      {"G", 1e9},      {"M", 1e6},       {"T", 1e12},   {"Gbps", 1e9},  {"Mbps", 1e6},
      {"Tbps", 1e12},  {"Gb/s", 1e9},    {"Mb/s", 1e6}, {"Tb/s", 1e12}, {"Gbit/s", 1e9},
      {"Mbit/s", 1e6}, {"Tbit/s", 1e12}, {"bps", 1},    {"GB/s", 8e9},  {"MB/s", 8e6},
      {"TB/s", 8e12},  {"GBps", 8e9},    {"GbE", 1e9},
  };
  auto r = lookup(text, table, "a rate such as 400G, 400Gbps or 50GB/s", false);
  if (r && *r <= 0) return bad(text, "a positive rate");
  return r;
}

Result<double> parse_seconds(std::string_view text) {
  const std::vector<Suffix> table = {
      {"ns", 1e-9}, {"us", 1e-6}, {"µs", 1e-6}, {"ms", 1e-3}, {"s", 1},
      {"sec", 1},   {"min", 60},  {"h", 3600},  {"d", 86400},
  };
  auto r = lookup(text, table, "a time such as 10s, 250ms or 3us", false);
  if (r && *r < 0) return bad(text, "a non-negative time");
  return r;
}

Result<double> parse_count(std::string_view text) {
  const std::vector<Suffix> table = {
      {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"B", 1e9}, {"G", 1e9}, {"T", 1e12},
  };
  return lookup(text, table, "a count such as 1024, 70B or 15T", true);
}

Result<double> parse_ratio(std::string_view text) {
  const std::string_view t = trim(text);
  const auto colon = t.find(':');
  if (colon == std::string_view::npos) {
    auto r = lookup(t, {}, "a ratio such as 2, 1.5 or 2:1", true);
    if (r && *r <= 0) return bad(text, "a positive ratio");
    return r;
  }
  double a = 0, b = 0;
  std::string sa, sb;
  if (!split_number(t.substr(0, colon), a, sa) || !split_number(t.substr(colon + 1), b, sb) ||
      !sa.empty() || !sb.empty() || a <= 0 || b <= 0)
    return bad(text, "a ratio such as 2, 1.5 or 2:1");
  return a / b;
}

Result<double> parse_usd(std::string_view text) {
  std::string_view t = trim(text);
  if (!t.empty() && t.front() == '$') t.remove_prefix(1);
  const std::vector<Suffix> table = {
      {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"B", 1e9}, {"USD", 1}, {"usd", 1},
  };
  auto r = lookup(t, table, "an amount in USD such as 50M or 250k", true);
  if (r && *r < 0) return bad(text, "a non-negative amount");
  return r;
}

namespace {
// Formats with 3 significant digits, dropping a trailing ".0".
std::string sig3(double v) {
  std::string s;
  const double a = std::fabs(v);
  if (a >= 100 || a == 0)
    s = fmt::format("{:.0f}", v);
  else if (a >= 10)
    s = fmt::format("{:.1f}", v);
  else
    s = fmt::format("{:.2f}", v);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string scaled(double v, const std::vector<std::pair<double, const char*>>& steps,
                   const char* sep) {
  for (const auto& [f, name] : steps)
    if (std::fabs(v) >= f) return sig3(v / f) + sep + name;
  return sig3(v / steps.back().first) + sep + steps.back().second;
}
}  // namespace

std::string format_bytes(double b) {
  return scaled(b, {{1e15, "PB"}, {1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}, {1, "B"}},
                " ");
}
std::string format_bitrate(double r) {
  return scaled(r, {{1e12, "Tbps"}, {1e9, "Gbps"}, {1e6, "Mbps"}, {1, "bps"}}, " ");
}
namespace {
// The unit format_seconds gives `s`: its size in seconds and its name.
std::pair<double, const char*> seconds_unit(double s) {
  constexpr double kYearS = 365.25 * 86400;  // a Julian year
  if (s >= 2 * kYearS) return {kYearS, " years"};
  if (s >= 86400 * 2) return {86400, " d"};
  if (s >= 3600) return {3600, " h"};
  if (s >= 120) return {60, " min"};
  if (s >= 1) return {1, " s"};
  if (s >= 1e-3) return {1e-3, " ms"};
  if (s >= 1e-6) return {1e-6, " us"};
  return {1e-9, " ns"};
}
}  // namespace

std::string format_seconds(double s) {
  const auto [unit, name] = seconds_unit(s);
  return sig3(s / unit) + name;
}
std::string format_seconds_pair(double a, double b) {
  const auto [unit, name] = seconds_unit(std::max(a, b));
  return sig3(a / unit) + " -> " + sig3(b / unit) + name;
}
std::string format_usd(double usd) {
  return "$" + scaled(usd, {{1e9, "B"}, {1e6, "M"}, {1e3, "k"}, {1, ""}}, "");
}
std::string format_count(double n) {
  return scaled(n, {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "k"}, {1, ""}}, "");
}
std::string format_power(double w) { return scaled(w, {{1e6, "MW"}, {1e3, "kW"}, {1, "W"}}, " "); }

}  // namespace gf::units
