// Bringing the lab up and down (`lab up`, `lab down`): the state folder (refused where it could
// be the system's, marked as the lab's), the namespaces, veth pairs and bridges, the host files,
// the FRR daemons, and removing all of it again. The layout is in layout.cc, the checks in
// checks.cc.
#include "lab/lab.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "common/file.h"
#include "lab/lab_internal.h"
#include "lab/netplan.h"
#include "lab/process.h"
#include "verify/frr_json.h"

namespace gf {
namespace fs = std::filesystem;
using namespace lab_internal;  // NOLINT(google-build-using-namespace): the lab's own helpers

namespace {

/// FRR's run directory; `-N NETNS` makes each daemon use /var/run/frr/NETNS/ for its pid file
/// and sockets, which is also where `vtysh -N NETNS` looks.
constexpr const char* kFrrRunDir = "/var/run/frr";
/// The account the FRR packages run their daemons as.
constexpr const char* kFrrUser = "frr";
/// Longest lab name kept in namespace names (FRR's socket paths must stay under 108 bytes).
constexpr size_t kMaxLabNameInNetns = 24;
/// How long bgpd may take to load its configuration after it started; seconds.
constexpr double kConfigLoadWaitS = 10;
/// The record of a lab's namespaces, written before each is made, so `down` finds them all.
constexpr const char* kNamespaceRecord = "namespaces";
/// The lab's folders in its state folder: the configurations it runs and the daemons' logs.
/// With the marker and the record, they are all `down` removes there.
constexpr const char* kConfigsDir = "configs";
constexpr const char* kLogsDir = "logs";

std::string sanitize(const std::string& s, size_t max_len) {
  std::string out;
  for (char c : s) {
    if (out.size() >= max_len) break;
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '-';
  }
  return out.empty() ? "lab" : out;
}

std::string frr_run_dir(const std::string& netns) {
  return (fs::path(kFrrRunDir) / netns).string();
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

void say(const LabOptions& o, const std::string& line) {
  if (o.progress) o.progress(line);
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
    if (!r.ok()) return Diagnostic::error(r.describe(c));
  }
  return true;
}

extern "C" void on_interrupt(int) { g_interrupted = 1; }

}  // namespace

// ---------------------------------------------------------------------------------------------
// helpers of lab_internal.h

namespace lab_internal {

volatile std::sig_atomic_t g_interrupted = 0;

InterruptGuard::InterruptGuard()
    : int_(std::signal(SIGINT, on_interrupt)), term_(std::signal(SIGTERM, on_interrupt)) {
  g_interrupted = 0;
}

InterruptGuard::~InterruptGuard() {
  std::signal(SIGINT, int_);
  std::signal(SIGTERM, term_);
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

// peer -> BGP state on the switch in `netns` (empty when bgpd does not answer, or answers what
// parse_bgp_summary_json cannot read).
std::map<std::string, std::string> bgp_peers(const std::string& netns) {
  const Argv cmd{"vtysh", "-N", netns, "-c", "show bgp ipv4 unicast summary json"};
  const CommandResult r = run_command(cmd);
  if (!r.ok()) return {};
  auto peers = parse_bgp_summary_json(r.out, "vtysh -N " + netns + " -c '" + cmd.back() + "'");
  return peers ? std::move(*peers) : std::map<std::string, std::string>{};
}

}  // namespace lab_internal

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
    errs.push_back(Diagnostic::flag("--state-dir", what, hint));
  };
  const std::string own_folder =
      fmt::format("give a folder of the lab's own, e.g. the default {}", kLabDefaultStateDir);
  if (o.state_dir.empty()) {
    refuse("is empty", own_folder);
    return errs;
  }
  // Both the path as given and where it leads (symbolic links followed) must be allowed.
  std::string where;
  if (const auto why = system_folder_reason(o.state_dir, &where)) {
    refuse(fmt::format("{}{} is {}; the lab does not keep (and later remove) its state there",
                       o.state_dir, where == o.state_dir ? "" : " (" + where + ")", *why),
           own_folder);
    return errs;
  }
  const fs::path given = normal_path(o.state_dir);
  std::error_code ec;
  fs::path real = fs::weakly_canonical(given, ec);
  real = ec ? given : normal_path(real);
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
    errs.push_back(Diagnostic::error(what, hint));
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
      return Diagnostic::error("cannot copy the frr.conf of " + d.name + " to " + run,
                               ec.message());
    const Argv chown{"chown", "-R", std::string(kFrrUser) + ":" + kFrrUser, run};
    if (const CommandResult r = run_command(chown); !r.ok())
      return Diagnostic::error(r.describe(chown), "the frr package creates the frr account");
    for (const auto& daemon : kFrrDaemons) {
      const Argv cmd = in_netns(
          d.netns,
          {(fs::path(o.frr_dir) / daemon).string(), "-d", "-N", d.netns, "-f", conf, "-P", "0",
           "--log", "file:" + (fs::path(log_dir) / (d.name + "-" + daemon + ".log")).string()});
      const CommandResult r = run_command(cmd);
      if (!r.ok())
        return Diagnostic::error(r.describe(cmd),
                                 "its log is in " + log_dir + "; the config is " + conf);
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
      return Diagnostic::error(
          fmt::format("bgpd on {} knows {} of its {} neighbours: it did not load "
                      "its frr.conf",
                      d.name, known, expected),
          "see " + (fs::path(log_dir) / (d.name + "-bgpd.log")).string());
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
        return Diagnostic::error(
            fmt::format("namespace {} exists but is not lab {}'s (not in its record)", d.netns,
                        lab.name),
            fmt::format("delete it (ip netns delete {}) if it is a leftover", d.netns));
      record << d.netns << "\n" << std::flush;  // recorded before it exists
      const Argv cmd{"ip", "netns", "add", d.netns};
      const CommandResult r = run_command(cmd);
      if (!r.ok()) return Diagnostic::error(r.describe(cmd));
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

// Makes the lab's folder in the state folder and marks it as the lab's before anything else
// goes in.
Result<bool> make_state_dir(const LabLayout& lab, const LabOptions& o) {
  const fs::path dir = lab_dir(lab, o);
  std::error_code ec;
  const bool made = fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec))
    return Diagnostic::flag("--state-dir",
                            fmt::format("cannot make the lab's folder {}: {}", dir.string(),
                                        ec ? ec.message() : "not a folder"),
                            "give a writable folder");
  std::ofstream marker(dir / kLabStateMarker, std::ios::trunc);
  marker << lab.name << "\n";
  marker.close();
  if (!marker) {
    if (made) fs::remove(dir, ec);  // not left behind unmarked
    return Diagnostic::flag("--state-dir",
                            fmt::format("cannot write {} in {}", kLabStateMarker, dir.string()),
                            "give a writable folder");
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
    if (built && g_interrupted) return Result<LabUpResult>(Diagnostic::error("interrupted"));
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

}  // namespace gf
