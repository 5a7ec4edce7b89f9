#include "lab/lab.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "common/file.h"
#include "config/config_set.h"
#include "config/frr.h"
#include "config/hosts.h"
#include "lab/netplan.h"
#include "lab/process.h"
#include "verify/parsers.h"

namespace gf {
namespace fs = std::filesystem;
using Argv = std::vector<std::string>;

namespace {

using Clock = std::chrono::steady_clock;

/// The FRR daemons of a lab switch, in start order (bgpd needs zebra's socket).
const std::vector<std::string> kFrrDaemons{"zebra", "bgpd"};
/// FRR's run directory; `-N NETNS` makes each daemon use /var/run/frr/NETNS/ for its pid file
/// and sockets, which is also where `vtysh -N NETNS` looks.
constexpr const char* kFrrRunDir = "/var/run/frr";
/// The account the FRR packages run their daemons as.
constexpr const char* kFrrUser = "frr";
/// Longest lab name kept in namespace names (FRR's socket paths must stay under 108 bytes).
constexpr size_t kMaxLabNameInNetns = 24;
/// How long bgpd may take to load its configuration after it started; seconds.
constexpr double kConfigLoadWaitS = 10;
/// How often check looks again while it waits for BGP.
constexpr std::chrono::milliseconds kConvergePoll{250};
/// Once a wait for convergence ran out, later waits take this long; seconds.
constexpr double kAfterTimeoutWaitS = 2;
/// The longest a single lab command (ping, iperf3 client, vtysh) may run; seconds.
constexpr double kCommandTimeoutS = 30;
/// A ping answers within this (the lab is one machine).
constexpr const char* kPingWaitS = "2";
/// Parallel TCP streams of the ECMP spread check: with 16, all on one of two uplinks happens
/// with probability 2^-15.
constexpr int kSpreadStreams = 16;
/// The least share of the bytes every uplink must carry in the ECMP spread check.
constexpr double kMinUplinkShare = 0.05;
/// How long an iperf3 server may take to listen; seconds.
constexpr double kIperfListenWaitS = 5;
/// Connection attempts of the iperf3 client (a refused one is tried again).
constexpr int kIperfAttempts = 3;
/// iperf3 runs this long per measurement; seconds.
constexpr const char* kIperfSeconds = "2";
/// The IPv4 and ICMP headers a ping payload rides in: 20 + 8 bytes.
constexpr int kPingHeaderBytes = 28;
/// The record of a lab's namespaces, written before each is made, so `down` finds them all.
constexpr const char* kNamespaceRecord = "namespaces";
/// The lab's folders in its state folder: the configurations it runs and the daemons' logs.
/// With the marker and the record, they are all `down` removes there.
constexpr const char* kConfigsDir = "configs";
constexpr const char* kLogsDir = "logs";
/// System folders never taken as --state-dir: the lab's folder would sit among the system's
/// own (with --state-dir /, a lab named etc would have /etc as its folder).
const std::vector<fs::path> kSystemFolders{
    "/",          "/bin",   "/boot",    "/dev",     "/etc",       "/home",
    "/lib",       "/lib32", "/lib64",   "/libx32",  "/media",     "/mnt",
    "/opt",       "/proc",  "/root",    "/run",     "/sbin",      "/srv",
    "/sys",       "/usr",   "/usr/bin", "/usr/lib", "/usr/local", "/usr/sbin",
    "/usr/share", "/var",   "/var/lib", "/var/log", "/var/run",   "/var/tmp"};
/// Kernel file systems: nothing can be kept anywhere under them.
const std::vector<fs::path> kKernelTrees{"/proc", "/sys", "/dev"};

std::string sanitize(const std::string& s, size_t max_len) {
  std::string out;
  for (char c : s) {
    if (out.size() >= max_len) break;
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '-';
  }
  return out.empty() ? "lab" : out;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Polls `done` until it returns true or `timeout_s` passes; returns its last answer.
bool wait_until(double timeout_s, const std::function<bool()>& done) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    if (done()) return true;
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(kConvergePoll);
  }
}

Argv in_netns(const std::string& netns, Argv argv) {
  argv.insert(argv.begin(), {"ip", "netns", "exec", netns});
  return argv;
}

bool netns_exists(const std::string& netns) { return fs::exists("/run/netns/" + netns); }

std::string lab_dir(const LabLayout& lab, const LabOptions& o) {
  return (fs::path(o.state_dir) / sanitize(lab.name, kMaxLabNameInNetns)).string();
}

// The start of the name of every namespace of the lab `name`: "gf-NAME-".
std::string netns_prefix(const std::string& name) {
  return "gf-" + sanitize(name, kMaxLabNameInNetns) + "-";
}

// Whether `ns` (a line of the record) is named as one of the lab's namespaces: its prefix, then
// only the characters of a device name (a '/' would lead the FRR run folder elsewhere).
bool named_as_lab_netns(const LabLayout& lab, const std::string& ns) {
  const std::string prefix = netns_prefix(lab.name);
  if (ns.size() <= prefix.size() || ns.compare(0, prefix.size(), prefix) != 0) return false;
  return std::all_of(ns.begin(), ns.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

bool marked_as_lab_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / kLabStateMarker, ec);
}

// `p` absolute, without "." or ".." and without a trailing slash: "/tmp/../etc/" is "/etc".
fs::path normal_path(const fs::path& p) {
  std::error_code ec;
  fs::path n = fs::absolute(p, ec).lexically_normal();
  if (ec) n = p.lexically_normal();
  if (n.has_relative_path() && n.filename().empty()) n = n.parent_path();
  return n;
}

bool is_within(const fs::path& p, const fs::path& tree) {
  auto pi = p.begin();
  for (auto ti = tree.begin(); ti != tree.end(); ++ti, ++pi)
    if (pi == p.end() || *pi != *ti) return false;
  return true;
}

std::string frr_run_dir(const std::string& netns) {
  return (fs::path(kFrrRunDir) / netns).string();
}

void say(const LabOptions& o, const std::string& line) {
  if (o.progress) o.progress(line);
}

// The PID an FRR daemon recorded, if that process is still this lab's daemon.
pid_t lab_daemon_pid(const std::string& netns, const std::string& daemon) {
  std::ifstream in(fs::path(frr_run_dir(netns)) / (daemon + ".pid"));
  long pid = 0;
  if (!(in >> pid) || pid <= 1) return -1;
  // A recycled PID is somebody else's: it must be this daemon, started for this namespace.
  const std::string cmd = process_cmdline(static_cast<pid_t>(pid));
  if (cmd.find(daemon) == std::string::npos || cmd.find("-N " + netns + " ") == std::string::npos)
    return -1;
  return static_cast<pid_t>(pid);
}

// The processes running in a namespace.
std::vector<pid_t> netns_pids(const std::string& netns) {
  std::vector<pid_t> out;
  std::istringstream in(run_command({"ip", "netns", "pids", netns}).out);
  for (long pid = 0; in >> pid;) out.push_back(static_cast<pid_t>(pid));
  return out;
}

std::vector<std::string> recorded_namespaces(const std::string& dir) {
  std::vector<std::string> out;
  // The lab writes the record, but it sits in a folder users can write: read it bounded.
  auto text = read_file_bounded((fs::path(dir) / kNamespaceRecord).string(), kMaxSpecBytes);
  if (!text) return out;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

// Runs every command, stopping at the first failure (returned as a diagnostic).
Result<bool> run_all(const std::vector<Argv>& cmds) {
  for (const auto& c : cmds) {
    const CommandResult r = run_command(c);
    if (!r.ok()) return Diagnostic{"", 0, 0, "", r.describe(c), ""};
  }
  return true;
}

}  // namespace

const LabDevice* LabLayout::device(const std::string& n) const {
  for (const auto& d : devices)
    if (d.name == n) return &d;
  return nullptr;
}

Result<LabLayout> lab_layout(const PlannedSpec& planned) {
  const Spec& spec = planned.spec;
  const Plan& plan = planned.plan;
  if (plan.technology == Technology::kInfiniband)
    return spec.at("fabric.technology",
                   "the lab emulates a routed (RoCE) fabric; InfiniBand has no IP underlay",
                   "plan the lab with fabric.technology: roce");
  if (plan.topo.kind == TopologyKind::kSingle)
    return spec.at("fabric.topology",
                   "the lab checks ECMP across spines and needs at least two tiers",
                   "set fabric.topology: clos2");
  const long long devices = plan.switch_total + plan.nodes;
  if (devices > kLabMaxDevices)
    return spec.at("cluster.nodes",
                   fmt::format("the lab emulates at most {} switches and hosts; this spec has {} "
                               "({} switches, {} nodes)",
                               kLabMaxDevices, devices, plan.switch_total, plan.nodes),
                   "run the lab on a small spec of the same design, e.g. "
                   "examples/roce-lab-16.yaml");
  // Exactly the files `gpufabric configs --target frr,host` writes.
  auto set = config_files(planned, {"frr", "host"});
  if (!set) return set.errors();
  LabLayout lab;
  lab.name = spec.name.empty() ? fs::path(spec.path).stem().string() : spec.name;
  lab.addresses = std::move(set->addresses);
  lab.configs = std::move(set->files);
  const std::string prefix = netns_prefix(lab.name);
  for (const auto& sw : lab.addresses.switches)
    lab.devices.push_back({sw.name, sw.role, prefix + sw.name});
  for (const auto& n : lab.addresses.nodes())
    lab.devices.push_back({n.node, "host", prefix + n.node});
  for (const auto& l : lab.addresses.links)
    lab.links.push_back({l.a_device, swp_name(l.a_port), l.b_device, swp_name(l.b_port), true});
  for (const auto& h : lab.addresses.hosts)
    lab.links.push_back({h.node, h.netdev, h.leaf, swp_name(h.leaf_port), false});
  return lab;
}

// ---------------------------------------------------------------------------------------------
// down

namespace {

// Removes the lab: the namespaces it recorded that are named as its own (with their daemons)
// and what it wrote in its state folder; `keep_logs` keeps the daemons' logs of a failed `up`
// for the user to read. The state folder must have passed lab_state_errors.
LabDownResult tear_down(const LabLayout& lab, const LabOptions& o, bool keep_logs) {
  LabDownResult r;
  const std::string dir = lab_dir(lab, o);
  std::set<std::string> recorded;
  std::vector<std::string> still_there;  // of the lab's own: they stay in the record
  for (const auto& ns : recorded_namespaces(dir)) {
    if (!recorded.insert(ns).second) continue;
    if (!named_as_lab_netns(lab, ns)) {
      r.warnings.push_back(
          fmt::format("namespace '{}' is in {}/{} but is not named as lab {}'s "
                      "({}...): left alone",
                      ns, dir, kNamespaceRecord, lab.name, netns_prefix(lab.name)));
      continue;
    }
    // Daemons first: a namespace lives on while a process is in it.
    for (auto it = kFrrDaemons.rbegin(); it != kFrrDaemons.rend(); ++it) {
      const pid_t pid = lab_daemon_pid(ns, *it);
      if (pid > 0 && end_process(pid)) ++r.processes;
    }
    // A check cut short (Ctrl-C) may leave its ping or iperf3 in a namespace: those are the
    // lab's own; anything else there is somebody's shell, named but left alone.
    if (netns_exists(ns))
      for (const pid_t pid : netns_pids(ns)) {
        const std::string cmd = process_cmdline(pid);
        const std::string prog = fs::path(cmd.substr(0, cmd.find(' '))).filename().string();
        if (prog == "ping" || prog == "iperf3") {
          if (end_process(pid)) ++r.processes;
        } else if (!cmd.empty()) {
          say(o, fmt::format("process {} ({}) still runs in {}: the namespace lives until it ends",
                             pid, cmd, ns));
        }
      }
    std::error_code ec;
    fs::remove_all(frr_run_dir(ns), ec);
    if (!netns_exists(ns)) continue;
    const Argv del{"ip", "netns", "delete", ns};
    if (const CommandResult d = run_command(del); d.ok()) {
      ++r.namespaces;
    } else {
      still_there.push_back(ns);
      r.warnings.push_back(d.describe(del) + " (it stays in the record)");
    }
  }
  for (const auto& d : lab.devices)
    if (!recorded.count(d.netns) && netns_exists(d.netns))
      r.warnings.push_back(fmt::format(
          "namespace {} exists but lab {} did not record it: left alone (ip netns delete {} if "
          "it is a leftover)",
          d.netns, lab.name, d.netns));
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return r;
  if (still_there.empty()) {
    fs::remove(fs::path(dir) / kNamespaceRecord, ec);
  } else {
    std::ofstream record(fs::path(dir) / kNamespaceRecord, std::ios::trunc);
    for (const auto& ns : still_there) record << ns << "\n";
  }
  fs::remove_all(fs::path(dir) / kConfigsDir, ec);
  if (!keep_logs) fs::remove_all(fs::path(dir) / kLogsDir, ec);
  // The folder goes (with its marker) once nothing else is in it; files somebody else put
  // there stay, and so does the marker that says the folder is the lab's.
  std::vector<std::string> others;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (const fs::path name = e.path().filename();
        name != kLabStateMarker && name != kNamespaceRecord && !(keep_logs && name == kLogsDir))
      others.push_back(name.string());
  if (!others.empty()) {
    std::sort(others.begin(), others.end());
    r.warnings.push_back(fmt::format("{} holds {} the lab did not write ({}): left there", dir,
                                     others.size() == 1 ? "a file" : "files", others.front()));
  } else if (!keep_logs && still_there.empty()) {
    fs::remove(fs::path(dir) / kLabStateMarker, ec);
    fs::remove(dir, ec);
  }
  return r;
}

}  // namespace

std::vector<Diagnostic> lab_state_errors(const LabLayout& lab, const LabOptions& o) {
  std::vector<Diagnostic> errs;
  auto refuse = [&](const std::string& what, const std::string& hint) {
    errs.push_back({"", 0, 0, "--state-dir", what, hint});
  };
  const std::string own_folder =
      fmt::format("give a folder of the lab's own, e.g. the default {}", kLabDefaultStateDir);
  if (o.state_dir.empty()) {
    refuse("is empty", own_folder);
    return errs;
  }
  // Both the path as given and where it leads (symbolic links followed) must be allowed.
  const fs::path given = normal_path(o.state_dir);
  std::error_code ec;
  fs::path real = fs::weakly_canonical(given, ec);
  real = ec ? given : normal_path(real);
  for (const fs::path& p : {given, real}) {
    const bool system =
        std::find(kSystemFolders.begin(), kSystemFolders.end(), p) != kSystemFolders.end();
    const bool kernel = std::any_of(kKernelTrees.begin(), kKernelTrees.end(),
                                    [&](const fs::path& t) { return is_within(p, t); });
    if (system || kernel) {
      refuse(fmt::format("{}{} is {}; the lab does not keep (and later remove) its state there",
                         o.state_dir, p == fs::path(o.state_dir) ? "" : " (" + p.string() + ")",
                         system ? "a system folder" : "in a kernel file system"),
             own_folder);
      return errs;
    }
  }
  // The nearest part of it that exists must be a folder: the lab's folder goes inside.
  for (fs::path p = real;; p = p.parent_path()) {
    if (fs::exists(fs::symlink_status(p, ec))) {
      if (!fs::is_directory(p, ec))
        refuse(fmt::format("{} is not a folder", p.string()), own_folder);
      break;
    }
    if (p == p.root_path() || !p.has_relative_path()) break;
  }
  if (!errs.empty()) return errs;
  const fs::path dir = lab_dir(lab, o);
  if (fs::exists(fs::symlink_status(dir, ec)) && !marked_as_lab_dir(dir))
    refuse(fmt::format("{} exists but gpufabric lab did not make it (it has no {} file): the lab "
                       "removes nothing there",
                       dir.string(), kLabStateMarker),
           "choose another --state-dir, or move the folder away yourself");
  return errs;
}

Result<LabDownResult> lab_down(const LabLayout& lab, const LabOptions& o) {
  if (auto errs = lab_state_errors(lab, o); !errs.empty()) return errs;
  return tear_down(lab, o, false);
}

// ---------------------------------------------------------------------------------------------
// up

std::vector<Diagnostic> lab_preflight(const LabOptions& o) {
  std::vector<Diagnostic> errs;
  auto need = [&](const std::string& what, const std::string& hint) {
    errs.push_back({"", 0, 0, "", what, hint});
  };
  if (geteuid() != 0)
    need("the lab needs root: it creates network namespaces and veth pairs",
         "run it as root (sudo gpufabric lab ...)");
  for (const auto& d : kFrrDaemons) {
    const fs::path p = fs::path(o.frr_dir) / d;
    if (access(p.c_str(), X_OK) != 0)
      need(fmt::format("FRR's {} is not at {}", d, p.string()),
           "install FRR (make deps installs the frr package) or pass --frr-dir");
  }
  for (const char* tool : {"ip", "ss", "vtysh", "ping", "iperf3", "sysctl"})
    if (!run_command({"sh", "-c", std::string("command -v ") + tool}).ok())
      need(fmt::format("{} is not installed", tool),
           "make deps installs iproute2, frr, iputils-ping, iperf3 and procps");
  return errs;
}

namespace {

// The commands that make the namespaces, links and bridges (before any daemon starts).
std::vector<Argv> fabric_commands(const LabLayout& lab) {
  std::vector<Argv> cmds;
  for (const auto& d : lab.devices) {
    cmds.push_back({"ip", "-n", d.netns, "link", "set", "dev", "lo", "up"});
    if (d.role != "host")  // a switch routes, and hashes ECMP over the 5-tuple (policy 1: L4)
      cmds.push_back(in_netns(
          d.netns, {"sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1",
                    "net.ipv4.fib_multipath_hash_policy=1"}));
  }
  const std::string mtu = std::to_string(kLabSwitchMtu);
  std::map<std::string, std::vector<std::string>> bridge_ports;  // leaf -> host ports
  for (const auto& l : lab.links) {
    const LabDevice* a = lab.device(l.a);
    const LabDevice* b = lab.device(l.b);
    cmds.push_back({"ip", "link", "add", "name", l.a_if, "netns", a->netns, "type", "veth", "peer",
                    "name", l.b_if, "netns", b->netns});
    // Switch ports: jumbo and up; a host's rail is set up by its netplan file.
    if (l.fabric)
      cmds.push_back({"ip", "-n", a->netns, "link", "set", "dev", l.a_if, "mtu", mtu, "up"});
    else
      bridge_ports[l.b].push_back(l.b_if);
    cmds.push_back({"ip", "-n", b->netns, "link", "set", "dev", l.b_if, "mtu", mtu, "up"});
  }
  for (const auto& [leaf, ports] : bridge_ports) {
    const std::string& ns = lab.device(leaf)->netns;
    cmds.push_back({"ip", "-n", ns, "link", "add", "name", kLabHostBridge, "type", "bridge"});
    for (const auto& p : ports)
      cmds.push_back({"ip", "-n", ns, "link", "set", "dev", p, "master", kLabHostBridge});
    cmds.push_back({"ip", "-n", ns, "link", "set", "dev", kLabHostBridge, "mtu", mtu, "up"});
  }
  return cmds;
}

// The host files of every node applied in its namespace: netplan (addresses, MTU, per-rail
// routes and rules) and sysctl.
Result<std::vector<Argv>> host_commands(const LabLayout& lab, const std::string& config_dir) {
  std::vector<Argv> cmds;
  for (const auto& d : lab.devices) {
    if (d.role != "host") continue;
    const fs::path dir = fs::path(config_dir) / "hosts" / d.name;
    auto text = read_file_bounded((dir / "netplan.yaml").string(), kMaxSpecBytes);
    if (!text) return text.errors();
    auto ifaces = parse_netplan(*text, (dir / "netplan.yaml").string());
    if (!ifaces) return ifaces.errors();
    for (const auto& i : *ifaces)
      for (auto& c : netplan_ip_commands(d.netns, i)) cmds.push_back(std::move(c));
    cmds.push_back(in_netns(d.netns, {"sysctl", "-q", "-p", (dir / "99-roce.conf").string()}));
  }
  return cmds;
}

// peer -> BGP state on the switch in `netns` (empty when bgpd does not answer).
std::map<std::string, std::string> bgp_peers(const std::string& netns) {
  std::map<std::string, std::string> out;
  const CommandResult r =
      run_command({"vtysh", "-N", netns, "-c", "show bgp ipv4 unicast summary json"});
  if (!r.ok()) return out;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  if (j.is_discarded()) return out;
  const nlohmann::json* peers = nullptr;
  if (j.contains("peers"))
    peers = &j["peers"];
  else if (j.contains("ipv4Unicast") && j["ipv4Unicast"].contains("peers"))
    peers = &j["ipv4Unicast"]["peers"];
  if (!peers) return out;
  for (const auto& [peer, v] : peers->items())
    out[peer] = v.is_object() && v.contains("state") && v["state"].is_string()
                    ? v["state"].get<std::string>()
                    : "?";
  return out;
}

Result<int> start_daemons(const LabLayout& lab, const LabOptions& o, const std::string& config_dir,
                          const std::string& log_dir) {
  int started = 0;
  for (const auto& d : lab.devices) {
    if (d.role == "host") continue;
    const std::string run = frr_run_dir(d.netns);
    fs::create_directories(run);
    // The daemons read their configuration after they drop to the frr account, which may not
    // reach the state folder: they get a copy in their own run folder, owned by that account.
    const std::string conf = (fs::path(run) / "frr.conf").string();
    std::error_code ec;
    fs::copy_file(fs::path(config_dir) / "frr" / (d.name + ".conf"), conf,
                  fs::copy_options::overwrite_existing, ec);
    if (ec)
      return Diagnostic{
          "", 0, 0, "", "cannot copy the frr.conf of " + d.name + " to " + run, ec.message()};
    const Argv chown{"chown", "-R", std::string(kFrrUser) + ":" + kFrrUser, run};
    if (const CommandResult r = run_command(chown); !r.ok())
      return Diagnostic{"", 0, 0, "", r.describe(chown), "the frr package creates the frr account"};
    for (const auto& daemon : kFrrDaemons) {
      const Argv cmd = in_netns(
          d.netns,
          {(fs::path(o.frr_dir) / daemon).string(), "-d", "-N", d.netns, "-f", conf, "-P", "0",
           "--log", "file:" + (fs::path(log_dir) / (d.name + "-" + daemon + ".log")).string()});
      const CommandResult r = run_command(cmd);
      if (!r.ok())
        return Diagnostic{
            "", 0, 0, "", r.describe(cmd), "its log is in " + log_dir + "; the config is " + conf};
      ++started;
    }
  }
  // bgpd starts even when it cannot read its configuration: every switch must know all its
  // neighbours before the lab counts as up.
  for (const auto& d : lab.devices) {
    if (d.role == "host") continue;
    const size_t expected = lab.addresses.ports_of(d.name).size();
    size_t known = 0;
    wait_until(kConfigLoadWaitS, [&] { return (known = bgp_peers(d.netns).size()) >= expected; });
    if (known < expected)
      return Diagnostic{"",
                        0,
                        0,
                        "",
                        fmt::format("bgpd on {} knows {} of its {} neighbours: it did not load "
                                    "its frr.conf",
                                    d.name, known, expected),
                        "see " + (fs::path(log_dir) / (d.name + "-bgpd.log")).string()};
  }
  return started;
}

Result<LabUpResult> build(const LabLayout& lab, const LabOptions& o) {
  const std::string dir = lab_dir(lab, o);
  LabUpResult res;
  res.config_dir = (fs::path(dir) / kConfigsDir).string();
  const std::string log_dir = (fs::path(dir) / kLogsDir).string();
  say(o, "writing the configurations to " + res.config_dir);
  auto written = write_outputs(res.config_dir, lab.configs);
  if (!written) return written.errors();
  fs::create_directories(log_dir);

  say(o, fmt::format("creating {} namespaces", lab.devices.size()));
  {
    std::ofstream record(fs::path(dir) / kNamespaceRecord, std::ios::app);
    for (const auto& d : lab.devices) {
      // The previous lab is gone: one that exists now is somebody else's, and is not recorded
      // (so not deleted when this `up` fails).
      if (netns_exists(d.netns))
        return Diagnostic{
            "",
            0,
            0,
            "",
            fmt::format("namespace {} exists but is not lab {}'s (not in its record)", d.netns,
                        lab.name),
            fmt::format("delete it (ip netns delete {}) if it is a leftover", d.netns)};
      record << d.netns << "\n" << std::flush;  // recorded before it exists
      const Argv cmd{"ip", "netns", "add", d.netns};
      const CommandResult r = run_command(cmd);
      if (!r.ok()) return Diagnostic{"", 0, 0, "", r.describe(cmd), ""};
      ++res.namespaces;
    }
  }
  say(o, fmt::format("wiring {} links and the leaves' host bridges", lab.links.size()));
  if (auto ok = run_all(fabric_commands(lab)); !ok) return ok.errors();
  res.links = static_cast<int>(lab.links.size());
  say(o, "applying the host files (netplan, sysctl)");
  auto hosts = host_commands(lab, res.config_dir);
  if (!hosts) return hosts.errors();
  if (auto ok = run_all(*hosts); !ok) return ok.errors();
  say(o, "starting FRR (zebra, bgpd) on every switch");
  auto daemons = start_daemons(lab, o, res.config_dir, log_dir);
  if (!daemons) return daemons.errors();
  res.daemons = *daemons;
  return res;
}

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int) { g_interrupted = 1; }

// While it lives, SIGINT and SIGTERM set g_interrupted instead of ending the program, so that
// up and check can finish a step and clean up.
class InterruptGuard {
 public:
  InterruptGuard()
      : int_(std::signal(SIGINT, on_interrupt)), term_(std::signal(SIGTERM, on_interrupt)) {
    g_interrupted = 0;
  }
  ~InterruptGuard() {
    std::signal(SIGINT, int_);
    std::signal(SIGTERM, term_);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  void (*int_)(int);
  void (*term_)(int);
};

// Makes the lab's folder in the state folder and marks it as the lab's before anything else
// goes in.
Result<bool> make_state_dir(const LabLayout& lab, const LabOptions& o) {
  const fs::path dir = lab_dir(lab, o);
  std::error_code ec;
  const bool made = fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec))
    return Diagnostic{"",
                      0,
                      0,
                      "--state-dir",
                      fmt::format("cannot make the lab's folder {}: {}", dir.string(),
                                  ec ? ec.message() : "not a folder"),
                      "give a writable folder"};
  std::ofstream marker(dir / kLabStateMarker, std::ios::trunc);
  marker << lab.name << "\n";
  marker.close();
  if (!marker) {
    if (made) fs::remove(dir, ec);  // not left behind unmarked
    return Diagnostic{"",
                      0,
                      0,
                      "--state-dir",
                      fmt::format("cannot write {} in {}", kLabStateMarker, dir.string()),
                      "give a writable folder"};
  }
  return true;
}

}  // namespace

Result<LabUpResult> lab_up(const LabLayout& lab, const LabOptions& o) {
  auto old = lab_down(lab, o);
  if (!old) return old.errors();
  if (old->namespaces + old->processes > 0)
    say(o, fmt::format("removed the previous lab {} ({} namespaces, {} daemons)", lab.name,
                       old->namespaces, old->processes));
  if (auto made = make_state_dir(lab, o); !made) return made.errors();
  // Ctrl-C while building: finish the step, then clean up instead of leaving half a lab.
  Result<LabUpResult> r = [&] {
    const InterruptGuard guard;
    Result<LabUpResult> built = build(lab, o);
    if (built && g_interrupted)
      return Result<LabUpResult>(Diagnostic{"", 0, 0, "", "interrupted", ""});
    return built;
  }();
  if (!r) {
    say(o,
        "failed: removing what was made (the daemons' logs stay in " + lab_dir(lab, o) + "/logs)");
    tear_down(lab, o, true);
  } else {
    r->warnings = std::move(old->warnings);
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// check

namespace {

struct Checker {
  const LabLayout& lab;
  const LabOptions& o;
  std::vector<LabCheck> checks;

  void add(const std::string& name, bool ok, const std::string& detail, Clock::time_point t0) {
    checks.push_back({name, ok, detail, seconds_since(t0)});
    if (o.on_check) o.on_check(checks.back());
  }

  // Sessions not Established, over all switches ("spine01 10.1.0.0 Active").
  std::vector<std::string> sessions_down(int& total) const {
    std::vector<std::string> down;
    total = 0;
    for (const auto& d : lab.devices) {
      if (d.role == "host") continue;
      const auto peers = bgp_peers(d.netns);
      const size_t expected = lab.addresses.ports_of(d.name).size();
      total += static_cast<int>(expected);
      for (const auto& [peer, state] : peers)
        if (state != "Established") down.push_back(d.name + " " + peer + " " + state);
      if (peers.size() < expected)
        down.push_back(
            fmt::format("{}: {} of {} neighbours configured", d.name, peers.size(), expected));
    }
    return down;
  }

  // Next hops the kernel of `leaf` holds for `prefix` (0: no route).
  static int next_hops(const LabDevice& leaf, const std::string& prefix) {
    const CommandResult r =
        run_command({"ip", "-j", "-n", leaf.netns, "route", "show", "exact", prefix});
    if (!r.ok()) return 0;
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    if (j.is_discarded() || !j.is_array() || j.empty()) return 0;
    const auto& route = j[0];
    if (!route.is_object()) return 0;
    if (route.contains("nexthops")) return static_cast<int>(route["nexthops"].size());
    return route.contains("gateway") || route.contains("via") ? 1 : 0;
  }

  // The links from `leaf` up to the spines, in cabling order.
  std::vector<const LabLink*> uplinks_of(const std::string& leaf) const {
    std::vector<const LabLink*> out;
    for (const auto& l : lab.links)
      if (l.fabric && l.a == leaf) out.push_back(&l);
    return out;
  }
  int uplinks(const std::string& leaf) const { return static_cast<int>(uplinks_of(leaf).size()); }
  // The switches `leaf`'s uplinks reach: "spine01, spine02".
  std::string spine_names(const std::string& leaf) const {
    std::set<std::string> peers;
    for (const auto* l : uplinks_of(leaf)) peers.insert(l->b);
    std::string s;
    for (const auto& p : peers) s += (s.empty() ? "" : ", ") + p;
    return s;
  }

  // Next hops `leaf` should hold towards the subnet of leaf `owner` while `down` (if any) is
  // down: one per uplink, less the failed uplink itself and the uplinks to a spine that no
  // longer reaches `owner` directly (a spine of another pod reaches it through the cores).
  int expected_next_hops(const std::string& leaf, const std::string& owner,
                         const LabLink* down) const {
    int n = 0;
    for (const auto& p : lab.addresses.ports_of(leaf)) {
      if (!p.up) continue;
      if (down && leaf == down->a && swp_name(p.port) == down->a_if) continue;
      if (down && owner == down->a && p.peer == down->b) {
        int live = 0;  // the spine's other links to the owner
        for (const auto& l : lab.links)
          live += l.fabric && l.a == owner && l.b == p.peer && &l != down ? 1 : 0;
        if (live == 0) continue;
      }
      ++n;
    }
    return n;
  }

  // Leaf routes to remote host subnets whose next-hop count is not what `down` leaves:
  // "su01-r0-leaf 10.128.0.8/29: 1 next hops, expected 2".
  std::vector<std::string> ecmp_mismatches(const LabLink* down, int& routes) const {
    std::vector<std::string> bad;
    routes = 0;
    for (const auto& d : lab.devices) {
      if (d.role != "leaf") continue;
      for (const auto& s : lab.addresses.subnets) {
        if (s.leaf == d.name || plane_of(s.leaf) != plane_of(d.name)) continue;
        ++routes;
        const int got = next_hops(d, s.prefix.str());
        const int want = expected_next_hops(d.name, s.leaf, down);
        if (got != want)
          bad.push_back(
              fmt::format("{} {}: {} next hops, expected {}", d.name, s.prefix.str(), got, want));
      }
    }
    return bad;
  }

  const HostAddress& first_host() const { return lab.addresses.hosts.front(); }
  // A host on a leaf other than the first host's, in its plane (planes are separate fabrics),
  // in the last unit: the farthest one.
  const HostAddress& far_host() const {
    const HostAddress& f = first_host();
    for (auto it = lab.addresses.hosts.rbegin(); it != lab.addresses.hosts.rend(); ++it)
      if (it->leaf != f.leaf && it->plane == f.plane && it->rail == f.rail) return *it;
    for (auto it = lab.addresses.hosts.rbegin(); it != lab.addresses.hosts.rend(); ++it)
      if (it->leaf != f.leaf && it->plane == f.plane) return *it;
    return lab.addresses.hosts.back();
  }
  // The first node's first port in the plane of `to` (planes are separate fabrics; within one,
  // rail 0 reaches every rail through the spines).
  const HostAddress& source_for(const HostAddress& to) const {
    for (const auto& h : lab.addresses.hosts)
      if (h.node == first_host().node && h.plane == to.plane) return h;
    return first_host();
  }
  // The plane of a leaf (from the hosts cabled to it).
  int plane_of(const std::string& leaf) const {
    for (const auto& h : lab.addresses.hosts)
      if (h.leaf == leaf) return h.plane;
    return 0;
  }
  const LabDevice& dev(const std::string& name) const { return *lab.device(name); }

  Argv ping_argv(const HostAddress& from, const HostAddress& to, int payload) const {
    return in_netns(dev(from.node).netns,
                    {"ping", "-n", "-M", "do", "-s", std::to_string(payload), "-c", "1", "-W",
                     kPingWaitS, "-I", ipv4_str(from.ip), ipv4_str(to.ip)});
  }
  CommandResult ping(const HostAddress& from, const HostAddress& to, int payload) const {
    return run_command(ping_argv(from, to, payload));
  }

  // How long a wait for convergence may take: the whole timeout until one wait has run out,
  // then only a moment (a fabric that did not converge once will not, and check should end).
  double wait_s() const { return converged_ ? o.timeout_s : kAfterTimeoutWaitS; }
  bool waited(bool ok) {
    converged_ = converged_ && ok;
    return ok;
  }
  bool converged_ = true;

  // iperf3 from `from` to `to`; Gbit/s received, or an error text.
  Result<double> iperf(const HostAddress& from, const HostAddress& to, int streams = 1) const {
    BackgroundCommand server(
        in_netns(dev(to.node).netns, {"iperf3", "-s", "-1", "-B", ipv4_str(to.ip)}));
    if (!server.started()) return Diagnostic{"", 0, 0, "", "iperf3 server did not start", ""};
    const Argv client =
        in_netns(dev(from.node).netns, {"iperf3", "-c", ipv4_str(to.ip), "-B", ipv4_str(from.ip),
                                        "-t", kIperfSeconds, "-P", std::to_string(streams), "-J"});
    // The client may only start once the server listens.
    const Argv listening = in_netns(dev(to.node).netns, {"ss", "-Hltn", "src", ipv4_str(to.ip)});
    wait_until(kIperfListenWaitS, [&] { return !run_command(listening).out.empty(); });
    CommandResult r;
    for (int attempt = 0; attempt < kIperfAttempts; ++attempt) {
      r = run_command(client, kCommandTimeoutS);
      if (r.out.find("Connection refused") == std::string::npos) break;
      std::this_thread::sleep_for(kConvergePoll);
    }
    // iperf3 -J exits 0 even when it could not connect; its JSON then holds "error".
    const bool ran = r.ok() && r.out.find("\"error\"") == std::string::npos;
    const CommandResult served = server.finish(ran ? kCommandTimeoutS : 0);
    if (!r.ok()) {
      std::string said = served.out;
      while (!said.empty() && said.back() == '\n') said.pop_back();
      return Diagnostic{
          "", 0, 0, "", r.describe(client) + (said.empty() ? "" : " (server: " + said + ")"), ""};
    }
    auto run = parse_iperf3(r.out, "iperf3 -J");
    if (!run) return run.errors();
    return run->received_bps / 1e9;
  }

  std::string where(const HostAddress& h) const {
    return fmt::format("{} {} ({})", h.node, h.netdev, ipv4_str(h.ip));
  }

  void check_sessions(const std::string& name) {
    const auto t0 = Clock::now();
    int total = 0;
    std::vector<std::string> down;
    const bool ok = waited(wait_until(wait_s(), [&] {
      down = sessions_down(total);
      return down.empty();
    }));
    add(name, ok,
        ok ? fmt::format("{} of {} eBGP sessions Established on {} switches", total, total,
                         lab.addresses.switches.size())
           : fmt::format("{} not Established after {:.0f} s: {}", down.size(), o.timeout_s,
                         down.front()),
        t0);
  }

  void check_ecmp(const std::string& name, const LabLink* down, const std::string& what) {
    const auto t0 = Clock::now();
    int routes = 0;
    std::vector<std::string> bad;
    const bool ok = waited(wait_until(wait_s(), [&] {
      bad = ecmp_mismatches(down, routes);
      return bad.empty();
    }));
    add(name, ok,
        ok ? fmt::format("{} leaf routes to remote host subnets, {}", routes, what)
           : fmt::format("{} of {} routes wrong: {}", bad.size(), routes, bad.front()),
        t0);
  }

  void check_jumbo() {
    const auto t0 = Clock::now();
    const HostAddress& src = first_host();
    const int payload = kHostMtu - kPingHeaderBytes;
    int answered = 0, asked = 0;
    std::string failed;
    // Resolve the gateways first: the echoes to other leaves would all queue behind their ARP
    // resolution, and the kernel holds only ~200 KiB (unres_qlen_bytes) of them, a dozen
    // jumbo frames.
    std::set<int> seen_planes;
    for (const auto& h : lab.addresses.hosts) {
      if (h.node != src.node || !seen_planes.insert(h.plane).second) continue;
      run_command(in_netns(dev(h.node).netns, {"ping", "-n", "-c", "1", "-W", kPingWaitS, "-I",
                                               ipv4_str(h.ip), ipv4_str(h.gateway)}));
    }
    const size_t planes = seen_planes.size();
    // All at once: a broken fabric costs one ping timeout, not one per host. Each address is
    // pinged from the first node's first port in its plane.
    std::vector<std::pair<const HostAddress*, std::unique_ptr<BackgroundCommand>>> pings;
    for (const auto& h : lab.addresses.hosts)
      if (h.node != src.node)
        pings.emplace_back(
            &h, std::make_unique<BackgroundCommand>(ping_argv(source_for(h), h, payload)));
    int retried = 0;
    for (auto& [h, p] : pings) {
      ++asked;
      bool ok = p->finish(kCommandTimeoutS).ok();
      if (!ok) {  // one more try: a busy machine can lose a single echo; a broken path stays so
        ++retried;
        ok = ping(source_for(*h), *h, payload).ok();
      }
      if (ok)
        ++answered;
      else if (failed.empty())
        failed = where(*h);
    }
    add("jumbo-frames", answered == asked,
        fmt::format("{} of {} host addresses answer {}-byte pings with DF set from {}{}{}",
                    answered, asked, kHostMtu,
                    planes > 1
                        ? fmt::format("{}'s first port in each of the {} planes", src.node, planes)
                        : where(src),
                    retried ? fmt::format(" ({} asked twice)", retried) : "",
                    failed.empty() ? "" : "; first silent: " + failed),
        t0);
  }

  void check_oversize() {
    const auto t0 = Clock::now();
    const CommandResult r = ping(first_host(), far_host(), kHostMtu - kPingHeaderBytes + 1);
    std::string why = r.err.empty() ? r.out : r.err;
    if (const auto p = why.find("message too long"); p != std::string::npos)
      why = why.substr(p, why.find('\n', p) - p);
    else
      why = r.ok() ? "it was answered" : "no answer";
    const bool refused =
        !r.ok() && why.find("mtu=" + std::to_string(kHostMtu)) != std::string::npos;
    add("oversized-frames-refused", refused,
        fmt::format("a {}-byte packet with DF set from {}: {}", kHostMtu + 1, first_host().node,
                    why),
        t0);
  }

  void check_traffic(const std::string& name, const std::string& context) {
    const auto t0 = Clock::now();
    const HostAddress& a = first_host();
    const HostAddress& b = far_host();
    auto gbps = iperf(a, b);
    const bool ok = gbps && *gbps > 0;
    add(name, ok,
        ok ? fmt::format("iperf3 {} -> {}{}: {:.1f} Gbit/s", where(a), where(b), context, *gbps)
           : (gbps ? std::string("no traffic received") : gbps.errors().front().message),
        t0);
  }

  // Bytes sent so far by `port` of the switch in `netns` (-1 when unreadable).
  static long long tx_bytes(const std::string& netns, const std::string& port) {
    const CommandResult r =
        run_command({"ip", "-j", "-s", "-n", netns, "link", "show", "dev", port});
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    if (j.is_discarded() || !j.is_array() || j.empty() || !j[0].is_object()) return -1;
    const auto& st = j[0].contains("stats64") ? j[0]["stats64"] : j[0]["stats"];
    if (!st.is_object() || !st.contains("tx") || !st["tx"].is_object()) return -1;
    const auto& b = st["tx"]["bytes"];
    return b.is_number() ? b.get<long long>() : -1;
  }

  // Many TCP streams between two hosts of different leaves leave the source leaf over every
  // uplink: the switches hash the 5-tuple (as the configurations ask), so the streams' source
  // ports spread them.
  void check_ecmp_spread() {
    const auto t0 = Clock::now();
    const HostAddress& a = first_host();
    const HostAddress& b = far_host();
    const LabDevice& leaf = dev(a.leaf);
    const std::vector<const LabLink*> ups = uplinks_of(a.leaf);
    if (ups.size() < 2) {
      add("ecmp-spread", true, fmt::format("skipped: {} has one uplink", a.leaf), t0);
      return;
    }
    std::vector<long long> before;
    for (const auto* u : ups) before.push_back(tx_bytes(leaf.netns, u->a_if));
    auto gbps = iperf(a, b, kSpreadStreams);
    if (!gbps) {
      add("ecmp-spread", false, gbps.errors().front().message, t0);
      return;
    }
    long long total = 0;
    std::vector<long long> sent;
    for (size_t i = 0; i < ups.size(); ++i) {
      sent.push_back(tx_bytes(leaf.netns, ups[i]->a_if) - before[i]);
      total += sent.back();
    }
    std::string split;
    bool every = total > 0;
    for (size_t i = 0; i < ups.size(); ++i) {
      const double share = total > 0 ? static_cast<double>(sent[i]) / total : 0;
      every = every && share >= kMinUplinkShare;
      split += fmt::format("{}{} {:.0f}%", i ? ", " : "", ups[i]->a_if, 100 * share);
    }
    add("ecmp-spread", every,
        fmt::format("{} TCP streams {} -> {} ({:.1f} Gbit/s) leave {} over {}", kSpreadStreams,
                    a.node, b.node, *gbps, a.leaf, split),
        t0);
  }

  // Takes the first leaf's first uplink down, checks the fabric routes around it, and brings it
  // back.
  void check_link_failure() {
    // The first host's leaf, if it has another uplink to fail over to.
    const std::vector<const LabLink*> ups = uplinks_of(first_host().leaf);
    const auto t0 = Clock::now();
    if (ups.size() < 2) {
      add("link-down", true,
          fmt::format("skipped: {} has {} uplink, nothing to fail over to (plan two or more "
                      "uplinks per leaf, e.g. a lower oversubscription)",
                      first_host().leaf, ups.size()),
          t0);
      return;
    }
    const LabLink* link = ups.front();
    const LabDevice& leaf = dev(link->a);
    const std::string name = fmt::format("{} {} - {} {}", link->a, link->a_if, link->b, link->b_if);
    const CommandResult down =
        run_command({"ip", "-n", leaf.netns, "link", "set", "dev", link->a_if, "down"});
    if (!down.ok()) {
      add("link-down", false, down.describe({"ip", "link", "set", link->a_if, "down"}), t0);
      return;
    }
    // Ctrl-C while the link is down: the checks of the failure that are left are skipped, the
    // link comes back and lab_check stops.
    const std::vector<std::function<void()>> while_down{
        [&] {  // the session over the failed link goes down (and check then sees it come back)
          std::string peer = link->a_if;  // unnumbered sessions are named by their interface
          for (const auto& p : lab.addresses.ports_of(leaf.name))
            if (swp_name(p.port) == link->a_if && !lab.addresses.unnumbered)
              peer = ipv4_str(p.peer_ip);
          std::string state;
          const bool ok = waited(wait_until(wait_s(), [&] {
            const auto peers = bgp_peers(leaf.netns);
            const auto it = peers.find(peer);
            state = it == peers.end() ? "gone" : it->second;
            return state != "Established";
          }));
          add("link-down-session", ok,
              fmt::format("{} BGP session to {} over {}: {}", leaf.name, link->b, peer,
                          ok ? state : "still Established"),
              t0);
        },
        [&] {
          const int full = uplinks(leaf.name);
          check_ecmp("link-down-reroutes", link,
                     fmt::format("{} down: {} routes through {} of {} uplinks, and the other "
                                 "leaves reach it only through the spines still linked to it",
                                 name, leaf.name, full - 1, full));
        },
        [&] {
          const auto t1 = Clock::now();
          const CommandResult r = ping(first_host(), far_host(), kHostMtu - kPingHeaderBytes);
          add("link-down-pings", r.ok(),
              fmt::format("{} -> {} with {} down: {}", first_host().node, far_host().node,
                          link->a_if, r.ok() ? "answered" : "no answer"),
              t1);
        },
        [&] { check_traffic("link-down-traffic", " with " + link->a_if + " down"); }};
    for (const auto& step : while_down)
      if (!g_interrupted) step();
    run_command({"ip", "-n", leaf.netns, "link", "set", "dev", link->a_if, "up"});
    if (g_interrupted) return;
    check_sessions("link-up-sessions");
    check_ecmp("link-up-restores", nullptr,
               fmt::format("{} back up: every leaf uses all its uplinks again", name));
  }
};

}  // namespace

Result<std::vector<LabCheck>> lab_check(const LabLayout& lab, const LabOptions& o) {
  // The lab must be up: every namespace and every daemon.
  for (const auto& d : lab.devices) {
    if (!netns_exists(d.netns))
      return Diagnostic{"",
                        0,
                        0,
                        "",
                        fmt::format("lab {} is not up: no namespace {}", lab.name, d.netns),
                        "run gpufabric lab up with the same spec first"};
    if (d.role == "host") continue;
    for (const auto& daemon : kFrrDaemons)
      if (lab_daemon_pid(d.netns, daemon) <= 0)
        return Diagnostic{"",
                          0,
                          0,
                          "",
                          fmt::format("lab {}: {} is not running on {}", lab.name, daemon, d.name),
                          fmt::format("see {}/logs/{}-{}.log; run gpufabric lab up again",
                                      lab_dir(lab, o), d.name, daemon)};
  }
  Checker c{lab, o, {}};
  const LabDevice* leaf = nullptr;
  for (const auto& d : lab.devices)
    if (d.role == "leaf") {
      leaf = &d;
      break;
    }
  const std::vector<std::function<void()>> steps{
      [&] { c.check_sessions("bgp-sessions"); },
      [&] {
        c.check_ecmp("ecmp-routes", nullptr,
                     fmt::format("each with one next hop per uplink ({} on {}: {})",
                                 c.uplinks(leaf->name), leaf->name, c.spine_names(leaf->name)));
      },
      [&] { c.check_jumbo(); },
      [&] { c.check_oversize(); },
      [&] { c.check_traffic("traffic-across-spines", ""); },
      [&] { c.check_ecmp_spread(); },
      [&] { c.check_link_failure(); }};
  // Ctrl-C: finish the step (the failed link is always brought back), then stop; an interrupt
  // during the last step is reported too.
  const InterruptGuard guard;
  for (const auto& step : steps) {
    step();
    if (g_interrupted) {
      c.add("interrupted", false, "check was interrupted; the remaining checks did not run",
            Clock::now());
      break;
    }
  }
  return c.checks;
}

}  // namespace gf
