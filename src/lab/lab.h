// The emulated fabric (`gpufabric lab`): one network namespace per switch and per host of a
// small spec, one veth pair per cabling link, the generated host files applied to the hosts and
// FRR (zebra + bgpd) running the generated frr.conf on every switch. `check` proves the
// configurations: BGP sessions, ECMP next hops, jumbo frames end to end, traffic across the
// spines, and a link failure and its repair.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "common/diag.h"
#include "common/output.h"
#include "config/addressing.h"
#include "plan/plan.h"
#include "spec/spec.h"

namespace gf {

/// The most namespaces (switches + hosts) a lab builds: each switch runs two FRR daemons
/// (about 15 MiB each), and a lab is a proof of the configurations, not a copy of the cluster.
constexpr int kLabMaxDevices = 64;
/// Switch ports in the lab carry the MTU of a Linux (Cumulus-style swp) switch port.
constexpr int kLabSwitchMtu = 9216;
/// The longest Linux interface name (IFNAMSIZ 16 with its terminating NUL): every veth end.
constexpr size_t kLabMaxInterfaceName = 15;
/// The bridge on each leaf that holds its host ports; the leaf's frr.conf puts the host
/// gateway on it ("interface hosts").
inline constexpr const char* kLabHostBridge = "hosts";

struct LabDevice {
  std::string name;  ///< as in the plan: su01-r0-leaf, spine01, node001
  std::string role;  ///< leaf | spine | core | host
  std::string netns;
};

/// One veth pair: a cabling link. Switch ends are named as the frr/ files name the ports
/// (config/frr.h: frr_port_name, swp<cage>s<n> on a broken-out cage).
struct LabLink {
  std::string a, a_if, b, b_if;  ///< device names and interface names
  bool fabric = false;         ///< switch to switch (a is the lower tier) rather than host to leaf
  int a_port = 0, b_port = 0;  ///< the cabling plan's switch port numbers; 0 for a host end
};

struct LabLayout {
  std::string name;                ///< the spec's name, as used in namespace names
  std::vector<LabDevice> devices;  ///< switches (leaves, spines, cores), then hosts
  std::vector<LabLink> links;      ///< switch links, then host links
  AddressPlan addresses;
  std::vector<OutputFile> configs;  ///< ip-plan.csv, frr/SW.conf, hosts/NODE/* as `configs` writes
  const LabDevice* device(const std::string& name) const;
};

/// The lab of a planned spec. Errors: InfiniBand (no IP fabric; names fabric.technology), a
/// single switch (fabric.topology), more than kLabMaxDevices devices (cluster.nodes), and the
/// address plan's own errors.
Result<LabLayout> lab_layout(const PlannedSpec& planned);

struct LabCheck {
  std::string name;
  bool ok = false;
  std::string detail;
  double seconds = 0;
};

/// The file that marks a folder as a lab's state folder (it holds the lab's name). The lab
/// writes it when it makes the folder and never removes or deletes in a folder without it.
inline constexpr const char* kLabStateMarker = ".gpufabric-lab";
/// Where the lab keeps its state unless told otherwise (--state-dir).
inline constexpr const char* kLabDefaultStateDir = "/run/gpufabric/lab";

struct LabOptions {
  /// Holds a folder per lab (named after it): configs, logs and the record of namespaces.
  std::string state_dir = kLabDefaultStateDir;
  std::string frr_dir = "/usr/lib/frr";  ///< where zebra and bgpd are
  double timeout_s = 60;                 ///< how long check waits for BGP to converge
  /// Progress lines (each step of up, down); may be empty.
  std::function<void(const std::string&)> progress;
  /// Called as each check of `lab check` finishes; may be empty.
  std::function<void(const LabCheck&)> on_check;
};

/// What the lab needs from the machine (root, iproute2, FRR, ping, iperf3), checked before
/// anything is made: one error for each thing missing, with what to do. lab_up and lab_check
/// expect it to have passed.
std::vector<Diagnostic> lab_preflight(const LabOptions& options);

/// Whether `options.state_dir` may hold this lab's state: not a system folder (/, /etc, /home,
/// ... by any path that leads there) nor anything under /proc, /sys or /dev; a folder where it
/// exists; and the lab's folder in it, if it exists, marked (kLabStateMarker) as a lab's. One
/// error (key "--state-dir") per problem; nothing is touched. lab_up and lab_down refuse to run
/// without it passing.
std::vector<Diagnostic> lab_state_errors(const LabLayout& lab, const LabOptions& options);

struct LabUpResult {
  int namespaces = 0, links = 0, daemons = 0;
  std::string config_dir;
  std::vector<std::string> warnings;  ///< from removing the previous lab (see LabDownResult)
};

/// Builds the lab, removing a previous lab of the same name first. On any failure everything
/// made so far is removed again. Errors say what failed and what to do; those about the state
/// folder (refused, or it cannot be made) have the key "--state-dir".
Result<LabUpResult> lab_up(const LabLayout& lab, const LabOptions& options);

/// Runs the checks on a lab that is up; an error when it is not up (or not complete).
Result<std::vector<LabCheck>> lab_check(const LabLayout& lab, const LabOptions& options);

struct LabDownResult {
  int processes = 0, namespaces = 0;
  /// What was left alone, and why: a namespace in the record that is not named as the lab's,
  /// one of the lab's names that exists but was not recorded, files in the state folder the
  /// lab did not write.
  std::vector<std::string> warnings;
};

/// Ends the FRR daemons the lab started (by the PIDs they recorded, after checking they are
/// the lab's) and deletes its namespaces, with everything in them, and its state. Only
/// namespaces both in the lab's record and named with its prefix (gf-NAME-) are deleted, and
/// in its state folder only what the lab writes there. Refuses (lab_state_errors) a state
/// folder it did not make; a lab without a state folder is nothing to remove.
Result<LabDownResult> lab_down(const LabLayout& lab, const LabOptions& options);

}  // namespace gf
