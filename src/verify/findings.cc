#include "verify/findings.h"

#include <fmt/format.h>

#include <iterator>

#include "common/text.h"

namespace gf {
namespace {

// The names of the severities, in the order of the enum: the only place they are written.
constexpr std::string_view kSeverityNames[] = {"error", "warning", "info"};
static_assert(std::size(kSeverityNames) == static_cast<std::size_t>(Severity::kInfo) + 1);

}  // namespace

std::string_view severity_name(Severity s) { return kSeverityNames[static_cast<std::size_t>(s)]; }

// Findings quote the files' lines, device and interface names, and file names as the user gave
// them, none of which need be UTF-8; JSON must be (dump() throws on anything else).
nlohmann::json findings_json(const std::vector<Finding>& fs) {
  const auto u = utf8_or_replacement;
  nlohmann::json a = nlohmann::json::array();
  for (const auto& f : fs) {
    nlohmann::json ev = nlohmann::json::array();
    for (const auto& e : f.evidence)
      ev.push_back({{"file", u(e.file)}, {"line", e.line}, {"text", u(e.text)}});
    a.push_back({{"id", u(f.id)},
                 {"severity", std::string(severity_name(f.severity))},
                 {"evidence", ev},
                 {"cause", u(f.cause)},
                 {"check", u(f.check)},
                 {"fix", u(f.fix)}});
  }
  return {{"findings", a}};
}

std::string findings_text(const std::vector<Finding>& fs) {
  std::string s;
  if (fs.empty()) return "No findings.\n";
  for (const auto& f : fs) {
    s += fmt::format("[{}] {}: {}\n", severity_name(f.severity), f.id, f.cause);
    for (const auto& e : f.evidence)
      s += e.line > 0 ? fmt::format("    {}:{}: {}\n", e.file, e.line, e.text)
                      : fmt::format("    {}: {}\n", e.file, e.text);
    if (!f.check.empty()) s += "    check: " + f.check + "\n";
    if (!f.fix.empty()) s += "    fix:   " + f.fix + "\n";
  }
  return s;
}

}  // namespace gf
