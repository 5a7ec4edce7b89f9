// libFuzzer target: a user's catalog file with any content merges or is rejected, never crashes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "catalog/catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gf::Catalog c;
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)gf::merge_catalog(c, text, "fuzz.yaml");
  return 0;
}
