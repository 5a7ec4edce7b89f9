// What the benchmarks share: a spec of the repository loaded and planned.
#pragma once

#include <stdexcept>
#include <string>

#include "plan/plan.h"
#include "spec/spec.h"

namespace gf::bench {

struct Loaded {
  gf::LoadedSpec spec;
  gf::Plan plan;
};

/// `name` (relative to the source tree) loaded and planned; throws on any error.
inline Loaded load(const char* name) {
  auto s = gf::load_spec(std::string(GPUFABRIC_SOURCE_DIR) + "/" + name);
  if (!s) throw std::runtime_error(gf::format_diagnostics(s.errors()));
  auto p = gf::make_plan(s->spec, s->catalog);
  if (!p) throw std::runtime_error(gf::format_diagnostics(p.errors()));
  return {*s, *p};
}

}  // namespace gf::bench
