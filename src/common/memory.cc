#include "common/memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "common/file.h"

namespace gf {
namespace {

// /proc and cgroup files are a few KiB.
constexpr std::size_t kMaxProcFileBytes = 64 * kKiB;

/// The number in `text` after `label` (e.g. "MemAvailable:"), times `scale`; 0 when absent.
double field(const std::string& text, const std::string& label, double scale) {
  const auto at = text.find(label);
  if (at == std::string::npos) return 0;
  return std::strtod(text.c_str() + at + label.size(), nullptr) * scale;
}

double number_in(const std::string& path) {
  auto t = read_file_bounded(path, kMaxProcFileBytes);
  if (!t || t->empty() || t->compare(0, 3, "max") == 0) return 0;
  return std::strtod(t->c_str(), nullptr);
}

}  // namespace

double available_memory_bytes() {
  double best = 0;
  const auto consider = [&](double v) {
    if (v > 0) best = best > 0 ? std::min(best, v) : v;
  };
  if (auto m = read_file_bounded("/proc/meminfo", kMaxProcFileBytes))
    consider(field(*m, "MemAvailable:", 1024));
  struct rlimit rl {};
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    // What is mapped already (libraries, the heap so far) counts against the limit.
    double mapped = 0;
    if (auto s = read_file_bounded("/proc/self/statm", kMaxProcFileBytes))
      mapped = std::strtod(s->c_str(), nullptr) * static_cast<double>(sysconf(_SC_PAGESIZE));
    consider(std::max(1.0, static_cast<double>(rl.rlim_cur) - mapped));
  }
  const double cg_max = number_in("/sys/fs/cgroup/memory.max");
  if (cg_max > 0) consider(std::max(1.0, cg_max - number_in("/sys/fs/cgroup/memory.current")));
  return best;
}

}  // namespace gf
