// libFuzzer target: any bytes as a spec must give a Spec or diagnostics, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "plan/plan.h"
#include "spec/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const gf::Catalog catalog = *gf::builtin_catalog();
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto spec = gf::parse_spec(text, "fuzz.yaml");
  if (!spec) {
    for (const auto& d : spec.errors()) (void)gf::format_diagnostic(d);
    return 0;
  }
  auto errs = gf::validate_spec(*spec, catalog);
  if (!errs.empty()) return 0;
  // Planning is part of what a spec drives; keep inputs to sizes a unit test would plan.
  if (spec->gpus() <= 200000) (void)gf::make_plan(*spec, catalog);
  return 0;
}
