// Helpers shared by the unit tests.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "plan/plan.h"
#include "spec/spec.h"

namespace gf::testing {

/// The text of a recorded tool output, tests/data/outputs/NAME; a test failure if it is missing.
inline std::string output_fixture(const std::string& name) {
  std::ifstream in(std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/outputs/" + name);
  EXPECT_TRUE(in) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The spec of `yaml`, validated against `catalog`, planned; test failures on the way.
inline Plan plan_of(const std::string& yaml, const Catalog& catalog, Spec* spec_out = nullptr) {
  auto spec = parse_spec(yaml, "test.yaml");
  EXPECT_TRUE(spec.ok()) << format_diagnostics(spec.errors());
  if (!spec.ok()) return {};
  auto errs = validate_spec(*spec, catalog);
  EXPECT_TRUE(errs.empty()) << format_diagnostics(errs);
  auto plan = make_plan(*spec, catalog);
  EXPECT_TRUE(plan.ok()) << format_diagnostics(plan.errors());
  if (spec_out) *spec_out = *spec;
  return plan.ok() ? *plan : Plan{};
}

/// examples/NAME loaded and planned; a test failure if it does not plan.
inline PlannedSpec load_example(const std::string& name) {
  auto p = load_and_plan(GPUFABRIC_SOURCE_DIR "/examples/" + name);
  EXPECT_TRUE(p.ok()) << format_diagnostics(p.errors());
  return p.ok() ? *p : PlannedSpec{};
}

/// examples/NAME with the first `from` of each edit replaced by its `to`, written beside a copy
/// (so relative paths still resolve the same way from a temporary folder of its own) and
/// planned; a test failure if a `from` is not there or it does not plan. The folder is removed
/// afterwards.
inline PlannedSpec load_example_edited(
    const std::string& name, const std::vector<std::pair<std::string, std::string>>& edits) {
  namespace fs = std::filesystem;
  std::ifstream in(std::string(GPUFABRIC_SOURCE_DIR) + "/examples/" + name);
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  for (const auto& [from, to] : edits) {
    const size_t at = yaml.find(from);
    EXPECT_NE(at, std::string::npos) << name << ": no '" << from << "'";
    if (at == std::string::npos) return {};
    yaml.replace(at, from.size(), to);
  }
  const fs::path dir = fs::temp_directory_path() / ("gf_edited_" + name);
  fs::create_directories(dir);
  std::ofstream(dir / "spec.yaml") << yaml;
  auto p = load_and_plan((dir / "spec.yaml").string());
  fs::remove_all(dir);
  EXPECT_TRUE(p.ok()) << format_diagnostics(p.errors());
  return p.ok() ? *p : PlannedSpec{};
}
inline PlannedSpec load_example_edited(const std::string& name, const std::string& from,
                                       const std::string& to) {
  return load_example_edited(name, {{from, to}});
}

}  // namespace gf::testing
