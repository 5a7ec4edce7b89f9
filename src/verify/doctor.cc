#include "verify/doctor.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "common/file.h"
#include "verify/rules.h"

extern char** environ;

namespace gf {
namespace {

// A sysfs attribute (operstate, mtu, rate): a few bytes; anything unreadable, endless or larger
// than a counter file reads as empty, as a missing one does.
std::string read_file(const std::string& path) {
  auto r = read_file_bounded(path, kMaxCounterFileBytes);
  return r ? *r : std::string();
}

std::string first_line_of(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

std::vector<Finding> doctor(const std::string& sysfs) {
  namespace fs = std::filesystem;
  std::vector<Finding> out;
  std::error_code ec;
  // Interfaces and their MTUs.
  std::map<int, std::vector<std::string>> mtus;
  for (const auto& e : fs::directory_iterator(fs::path(sysfs) / "class/net", ec)) {
    const std::string name = e.path().filename();
    if (name == "lo") continue;
    const std::string state = first_line_of(read_file((e.path() / "operstate").string()));
    const std::string mtu = first_line_of(read_file((e.path() / "mtu").string()));
    if (state != "up" || mtu.empty()) continue;
    const long v = std::strtol(mtu.c_str(), nullptr, 10);
    if (v > 0 && v < 1'000'000) mtus[static_cast<int>(v)].push_back(name);
  }
  if (mtus.size() > 1) {
    std::vector<Evidence> ev;
    for (const auto& [m, names] : mtus)
      for (const auto& n : names)
        ev.push_back({sysfs + "/class/net/" + n + "/mtu", 0, fmt::format("{} mtu {}", n, m)});
    out.push_back(finding(rule("mtu-mismatch/doctor"), ev));
  }
  // RDMA devices.
  std::vector<Evidence> rdma, down;
  for (const auto& d : fs::directory_iterator(fs::path(sysfs) / "class/infiniband", ec)) {
    for (const auto& p : fs::directory_iterator(d.path() / "ports", ec)) {
      const std::string state = first_line_of(read_file((p.path() / "state").string()));
      const std::string rate = first_line_of(read_file((p.path() / "rate").string()));
      const std::string where = (p.path() / "state").string();
      rdma.push_back({where, 0,
                      fmt::format("{} port {}: {} {}", d.path().filename().string(),
                                  p.path().filename().string(), state, rate)});
      if (state.find("ACTIVE") == std::string::npos) down.push_back(rdma.back());
    }
  }
  if (rdma.empty())
    out.push_back(finding(rule("rdma-absent"), {}));
  else if (!down.empty())
    out.push_back(finding(rule("rdma-port-down/doctor"), down));
  else
    out.push_back(finding(rule("rdma-present"), rdma));
  // memlock.
  struct rlimit rl {};
  if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    out.push_back(finding(rule("memlock-limited/doctor"),
                          {{"ulimit -l", 0, fmt::format("{} KiB", rl.rlim_cur / 1024)}}));
  // NCCL variables.
  std::vector<Evidence> vars;
  bool ib_disabled = false;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    if (kv.rfind("NCCL_", 0) != 0) continue;
    vars.push_back({"environment", 0, kv});
    ib_disabled = ib_disabled || kv == "NCCL_IB_DISABLE=1";
  }
  if (ib_disabled)
    out.push_back(finding(rule("nccl-ib-disabled"), vars));
  else if (!vars.empty())
    out.push_back(finding(rule("nccl-variables"), vars));
  // Tools, when present.
  for (const char* tool : {"nvidia-smi", "ibv_devinfo"}) {
    bool found = false;
    const char* path = std::getenv("PATH");
    std::stringstream ps(path ? path : "");
    for (std::string dir; std::getline(ps, dir, ':');)
      found = found || fs::exists(fs::path(dir) / tool, ec);
    out.push_back(finding(found ? rule("tool-present") : rule("tool-absent"),
                          {{tool, 0, found ? "found" : "not installed"}}, tool));
  }
  return out;
}

}  // namespace gf
