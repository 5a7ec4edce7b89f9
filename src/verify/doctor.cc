#include "verify/doctor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "common/file.h"
#include "common/text.h"
#include "sim/nccl_cost.h"
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

// The words of an NCCL list variable: comma-, semicolon- or colon-separated, a leading ^ (the
// list excludes) dropped.
std::vector<std::string> list_words(std::string v) {
  if (!v.empty() && v[0] == '^') v.erase(0, 1);
  std::vector<std::string> out;
  std::string w;
  for (char c : v + ",") {
    if (c == ',' || c == ';' || c == ':') {
      if (!w.empty()) out.push_back(w);
      w.clear();
    } else if (c != ' ') {
      w += c;
    }
  }
  return out;
}

// Names NCCL takes in NCCL_ALGO and NCCL_PROTO, in any case (kNcclAlgoNames, kProtocolNames:
// src/graph/tuning.cc@v2.29.7-1 ncclAlgoStr / ncclProtoStr), and the collectives the
// per-collective form names before a ':' (NCCL_ALGO="allreduce:tree;allgather:ring", from
// v2.24: kOpNames without their underscores).
bool known_word(const std::string& var, const std::string& w) {
  const std::string l = ascii_lower(w);
  for (const auto& e : kOpNames) {
    std::string op = e.name;
    std::erase(op, '_');
    if (op == l) return true;
  }
  if (var != "NCCL_ALGO") return parse_protocol(l).has_value();
  return std::any_of(std::begin(kNcclAlgoNames), std::end(kNcclAlgoNames),
                     [&](const auto& e) { return ascii_lower(e.name) == l; });
}

// Whether an NCCL_IB_HCA / NCCL_SOCKET_IFNAME value leaves NCCL a device of `devices`, as NCCL
// reads the list (matchIfList, misc/utils.cc@v2.29.7-1:203; bootstrap.cc:559-573: ^ first
// excludes, = then matches whole names, else an item is a prefix; :port after an HCA). A list
// keeps the devices it names; an exclusion list the ones it does not name. An excluded item with
// a port excludes that port only, and the device's other ports may remain: it is not counted (no
// warning where one could be wrong).
bool leaves_a_device(const std::string& value, const std::vector<std::string>& devices, bool hca) {
  if (value.empty()) return true;
  std::string v = value;
  const bool exclude = v[0] == '^';
  if (exclude) v.erase(0, 1);
  const bool exact = !v.empty() && v[0] == '=';
  if (exact) v.erase(0, 1);
  std::vector<std::string> items;
  std::string item;
  for (char c : v + ",") {
    if (c != ',') {
      item += c;
      continue;
    }
    const size_t port = hca ? item.find(':') : std::string::npos;
    const std::string name = item.substr(0, port);
    if (!name.empty() && !(exclude && port != std::string::npos)) items.push_back(name);
    item.clear();
  }
  for (const auto& d : devices) {
    const bool named = std::any_of(items.begin(), items.end(), [&](const std::string& i) {
      return exact ? d == i : d.rfind(i, 0) == 0;
    });
    if (named != exclude) return true;
  }
  return false;
}

}  // namespace

std::vector<Finding> doctor(const std::string& sysfs) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  return doctor(sysfs, env);
}

std::vector<Finding> doctor(const std::string& sysfs, const std::vector<std::string>& environment) {
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
  // What is read from the running host, not from `sysfs` (limits, environment, tools): marked
  // as this host's where `sysfs` is a recorded tree of another.
  std::error_code canon_ec;
  const bool recorded = fs::weakly_canonical(fs::path(sysfs), canon_ec) != fs::path("/sys");
  const std::string here = recorded ? " (this host, not the recorded tree)" : "";
  // memlock.
  struct rlimit rl {};
  if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    out.push_back(finding(rule("memlock-limited/doctor"),
                          {{"ulimit -l" + here, 0, fmt::format("{} KiB", rl.rlim_cur / 1024)}}));
  // NCCL variables: the ones whose values can be checked here, then all of them.
  std::vector<std::string> hcas, ifaces;
  for (const auto& d : fs::directory_iterator(fs::path(sysfs) / "class/infiniband", ec))
    hcas.push_back(d.path().filename().string());
  for (const auto& d : fs::directory_iterator(fs::path(sysfs) / "class/net", ec))
    ifaces.push_back(d.path().filename().string());
  // In name order: the directories' order is the filesystem's.
  std::sort(hcas.begin(), hcas.end());
  std::sort(ifaces.begin(), ifaces.end());
  std::vector<Evidence> vars, invalid, absent, ib_disabled;
  for (const std::string& kv : environment) {
    if (kv.rfind("NCCL_", 0) != 0) continue;
    vars.push_back({"environment" + here, 0, kv});
    const size_t eq = kv.find('=');
    const std::string name = kv.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (kv == "NCCL_IB_DISABLE=1") ib_disabled.push_back(vars.back());
    if (name == "NCCL_ALGO" || name == "NCCL_PROTO")
      for (const auto& w : list_words(value))
        if (!known_word(name, w))
          invalid.push_back({"environment" + here, 0, fmt::format("{}: '{}' is not one", kv, w)});
    // NCCL_IB_HCA against the HCAs, NCCL_SOCKET_IFNAME against the interfaces.
    const bool ib = name == "NCCL_IB_HCA";
    const std::vector<std::string>& devices = ib ? hcas : ifaces;
    if ((ib || name == "NCCL_SOCKET_IFNAME") && !devices.empty() &&
        !leaves_a_device(value, devices, ib))
      absent.push_back({"environment" + here, 0,
                        fmt::format("{}: {} this host's {}, {}", kv,
                                    !value.empty() && value[0] == '^' ? "excludes every one of"
                                                                      : "names none of",
                                    ib ? "HCAs" : "interfaces", fmt::join(devices, ", "))});
  }
  if (!ib_disabled.empty()) out.push_back(finding(rule("nccl-ib-disabled"), ib_disabled));
  if (!invalid.empty()) out.push_back(finding(rule("nccl-variable-invalid"), invalid));
  if (!absent.empty()) out.push_back(finding(rule("nccl-device-absent"), absent));
  if (!vars.empty()) out.push_back(finding(rule("nccl-variables"), vars));
  // Tools, when present.
  for (const char* tool : {"nvidia-smi", "ibv_devinfo"}) {
    bool found = false;
    const char* path = std::getenv("PATH");
    std::stringstream ps(path ? path : "");
    for (std::string dir; std::getline(ps, dir, ':');)
      found = found || fs::exists(fs::path(dir) / tool, ec);
    out.push_back(finding(found ? rule("tool-present") : rule("tool-absent"),
                          {{tool + here, 0, found ? "found" : "not installed"}}, tool));
  }
  return out;
}

}  // namespace gf
