#include "verify/findings.h"

#include <fmt/format.h>

#include "common/text.h"

namespace gf {

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
                 {"severity", u(f.severity)},
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
    s += fmt::format("[{}] {}: {}\n", f.severity, f.id, f.cause);
    for (const auto& e : f.evidence)
      s += e.line > 0 ? fmt::format("    {}:{}: {}\n", e.file, e.line, e.text)
                      : fmt::format("    {}: {}\n", e.file, e.text);
    if (!f.check.empty()) s += "    check: " + f.check + "\n";
    if (!f.fix.empty()) s += "    fix:   " + f.fix + "\n";
  }
  return s;
}

}  // namespace gf
