// libFuzzer target: the units parsers take any text.
#include <cstddef>
#include <cstdint>
#include <string>

#include "units/units.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string t(reinterpret_cast<const char*>(data), size);
  using namespace gf::units;
  (void)parse_bytes(t);
  (void)parse_bytes(t, SizeStyle::kNccl);
  (void)parse_bitrate(t);
  (void)parse_seconds(t);
  (void)parse_count(t);
  (void)parse_ratio(t);
  if (auto r = parse_usd(t)) (void)format_usd(*r);
  if (auto r = parse_count(t)) (void)format_count(*r);
  return 0;
}
