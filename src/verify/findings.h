// A finding of diagnose or doctor: a problem, where it shows, and what to do about it; and how
// findings are printed (text and --json).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace gf {

/// How bad a finding is; diagnose and doctor exit 1 on an error.
enum class Severity { kError, kWarning, kInfo };
/// "error", "warning" or "info", as the text and --json output write it.
std::string_view severity_name(Severity s);

/// Where a finding comes from.
struct Evidence {
  std::string file;
  int line = 0;
  std::string text;
};

/// One problem found, with what to do about it.
struct Finding {
  std::string id;
  Severity severity = Severity::kInfo;
  std::vector<Evidence> evidence;
  std::string cause, check, fix;
};

nlohmann::json findings_json(const std::vector<Finding>& f);
std::string findings_text(const std::vector<Finding>& f);

}  // namespace gf
