#include "cli/flags.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "units/units.h"

namespace gf::cli {

CLI::Validator finite_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !std::isfinite(v))
          return fmt::format("'{}' is not a finite number", text);
        if (v < lo || v > hi) return fmt::format("{} is outside {:.15g}..{:.15g}", text, lo, hi);
        return "";
      },
      fmt::format("NUMBER in {:.15g}..{:.15g}", lo, hi));
}

CLI::Validator unsigned_64_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t v = 0;
        const char* end = text.data() + text.size();
        const auto r = std::from_chars(text.data(), end, v);  // digits only: no sign, no space
        if (text.empty() || r.ec != std::errc() || r.ptr != end)
          return fmt::format("'{}' is not a whole number from 0 to 18446744073709551615", text);
        return "";
      },
      "UINT");
}

CLI::Validator path_named() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return text.empty() ? "an empty name: give a folder or file, or leave the flag out" : "";
      },
      "");  // no word in --help: the option's own text says what it names
}

CLI::Validator non_empty() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return text.empty() ? "an empty value: give one, or leave the flag out" : "";
      },
      "");
}

std::optional<double> quantity_flag(const std::string& flag, const std::string& text,
                                    const std::function<Result<double>(std::string_view)>& parse,
                                    double lo, double hi, bool whole,
                                    std::vector<Diagnostic>& errs) {
  if (text.empty()) return std::nullopt;
  auto r = parse(text);
  if (!r) {
    Diagnostic d = r.errors().front();
    d.key = flag;
    errs.push_back(d);
    return std::nullopt;
  }
  const double v = *r;
  if (!std::isfinite(v) || v < lo || v > hi) {
    errs.push_back(
        Diagnostic::at_key(flag, fmt::format("'{}' is outside {:.15g}..{:.15g}", text, lo, hi)));
    return std::nullopt;
  }
  if (whole && v != std::floor(v)) {
    errs.push_back(Diagnostic::at_key(flag, fmt::format("'{}' is not a whole number", text)));
    return std::nullopt;
  }
  return v;
}

std::optional<double> nccl_bytes_flag(const std::string& flag, const std::string& text, double lo,
                                      std::vector<Diagnostic>& errs) {
  const auto parse = [](std::string_view t) {
    return units::parse_bytes(t, units::SizeStyle::kNccl);
  };
  return quantity_flag(flag, text, parse, lo, kMaxFlagBytes, true, errs);
}

std::optional<LoadBalancing> load_balancing_flag(const std::string& text,
                                                 std::vector<Diagnostic>& errs) {
  if (text.empty()) return std::nullopt;
  auto lb = parse_name(kLoadBalancingNames, text);
  if (!lb) {
    std::string hint = did_you_mean(text, names_of(kLoadBalancingNames));
    if (hint.empty()) hint = "one of: " + names_joined(kLoadBalancingNames, ", ");
    errs.push_back(
        Diagnostic::flag("--load-balancing", fmt::format("unknown mode '{}'", text), hint));
  }
  return lb;
}

}  // namespace gf::cli
