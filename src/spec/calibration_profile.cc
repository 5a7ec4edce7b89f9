#include "spec/calibration_profile.h"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "yaml/yaml_reader.h"

namespace gf {

bool CalibrationProfile::identity() const {
  if (scaleup_efficiency || network_efficiency || network_step_latency_us != 0 ||
      nvlink_step_latency_us != 0 || network_message_us != 0)
    return false;
  for (double f : algorithm_factor)
    if (f != 1) return false;
  return true;
}

namespace {

// A number of `key` within [lo, hi]; an error at its line otherwise.
std::optional<double> bounded(YamlReader& r, const YAML::Node& map, const std::string& key,
                              const std::string& path, double lo, double hi,
                              const std::string& meaning) {
  const auto v = r.number(map, key, path);
  if (!v) return std::nullopt;
  if (!std::isfinite(*v) || *v < lo || *v > hi) {
    r.error(child(map, key), YamlReader::join(path, key),
            fmt::format("{} must lie in [{:g}, {:g}], found {:g}", meaning, lo, hi, *v),
            "write the value calibrate --fit gave, or remove the key to keep the model's");
    return std::nullopt;
  }
  return v;
}

}  // namespace

Result<CalibrationProfile> parse_calibration_profile(const std::string& text,
                                                     const std::string& file) {
  CalibrationProfile p;
  p.file = file;
  YamlReader r(file);
  const YAML::Node root = r.parse(text);
  if (!r.ok()) return r.errors();
  if (!root.IsDefined() || root.IsNull())
    return Diagnostic::at(file, 1, 1, "factors", "the calibration profile is empty",
                          "write it with gpufabric calibrate --fit FILE... -o profile.yaml");
  if (!r.expect_map(root, "")) return r.errors();
  r.check_keys(root, "",
               {"profile", "cluster", "fitted_on", "skipped", "factors", "not_fitted", "fit",
                "cross_validation", "note"});
  // The format: 1 is the only one written so far (calibrate --fit).
  if (const YAML::Node v = child(root, "profile"); v.IsDefined())
    if (!v.IsScalar() || v.Scalar() != "1")
      r.error(v, "profile",
              fmt::format("profile format '{}'; this gpufabric reads format 1",
                          v.IsScalar() ? v.Scalar() : std::string("?")),
              "write the profile again with this gpufabric's calibrate --fit");
  if (const YAML::Node c = child(root, "cluster"); c.IsDefined() && c.IsMap()) {
    for (auto [key, out] : {std::pair{"gpu", &p.fitted_gpu}, std::pair{"nic", &p.fitted_nic}})
      if (const YAML::Node v = child(c, key); v.IsDefined() && v.IsScalar()) *out = v.Scalar();
  }
  const YAML::Node f = child(root, "factors");
  if (!f.IsDefined()) {
    r.error(root, "factors", "missing required section",
            "a profile has factors: {network_efficiency: ..., ...}");
    return r.errors();
  }
  if (f.IsNull()) {  // a profile that changes nothing
    if (!r.ok()) return r.errors();
    return p;
  }
  if (!r.expect_map(f, "factors")) return r.errors();
  r.check_keys(f, "factors",
               {"scaleup_efficiency", "network_efficiency", "network_step_latency_us",
                "nvlink_step_latency_us", "network_message_us", "algorithms"});
  p.scaleup_efficiency =
      bounded(r, f, "scaleup_efficiency", "factors", kMinProfileEfficiency, kMaxProfileEfficiency,
              "an efficiency (the share of the NVLink rate Simple reaches)");
  p.network_efficiency =
      bounded(r, f, "network_efficiency", "factors", kMinProfileEfficiency, kMaxProfileEfficiency,
              "an efficiency (the share of the scale-out link rate Simple reaches)");
  if (auto v = bounded(r, f, "network_step_latency_us", "factors", 0, kMaxStepLatencyUs,
                       "a per-step latency in microseconds"))
    p.network_step_latency_us = *v;
  if (auto v = bounded(r, f, "nvlink_step_latency_us", "factors", 0, kMaxStepLatencyUs,
                       "a per-step latency in microseconds"))
    p.nvlink_step_latency_us = *v;
  if (auto v = bounded(r, f, "network_message_us", "factors", 0, kMaxNetworkMessageUs,
                       "a network message's time in microseconds"))
    p.network_message_us = *v;
  const YAML::Node algos = child(f, "algorithms");
  if (algos.IsDefined() && !algos.IsNull() && r.expect_map(algos, "factors.algorithms")) {
    const std::vector<std::string> names(std::begin(kProfileAlgorithmNames),
                                         std::end(kProfileAlgorithmNames));
    r.check_keys(algos, "factors.algorithms", names);
    for (int a = 0; a < kProfileAlgorithms; ++a)
      if (auto v = bounded(r, algos, names[a], "factors.algorithms", kMinAlgorithmFactor,
                           kMaxAlgorithmFactor, "an algorithm's bandwidth factor"))
        p.algorithm_factor[a] = *v;
  }
  if (!r.ok()) return r.errors();
  return p;
}

}  // namespace gf
