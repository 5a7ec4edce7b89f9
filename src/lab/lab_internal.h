// What the lab's sources share and nothing outside src/lab/ includes: layout.cc (the lab of a
// plan), lab.cc (up, down and the state folder) and checks.cc (`lab check`) all name the lab's
// namespaces, run commands in them, wait for FRR and honour Ctrl-C in the same way. Defined in
// lab.cc.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "lab/lab.h"

namespace gf::lab_internal {

using Argv = std::vector<std::string>;
using Clock = std::chrono::steady_clock;

/// The FRR daemons of a lab switch, in start order (bgpd needs zebra's socket).
inline const std::vector<std::string> kFrrDaemons{"zebra", "bgpd"};
/// How often the lab looks again while it waits (for bgpd, for BGP to converge, for iperf3).
inline constexpr std::chrono::milliseconds kConvergePoll{250};

/// `argv` run inside the namespace `netns`: "ip netns exec NETNS ARGV...".
Argv in_netns(const std::string& netns, Argv argv);
/// Whether the namespace `netns` exists (ip netns add made it).
bool netns_exists(const std::string& netns);
/// The start of the name of every namespace of the lab `name`: "gf-NAME-" (NAME sanitized and
/// cut short, so that FRR's socket paths stay under 108 bytes).
std::string netns_prefix(const std::string& name);
/// The lab's folder in its state folder: STATE_DIR/NAME.
std::string lab_dir(const LabLayout& lab, const LabOptions& o);
/// The PID an FRR daemon recorded, if that process is still this lab's daemon; else -1.
pid_t lab_daemon_pid(const std::string& netns, const std::string& daemon);
/// Polls `done` until it returns true or `timeout_s` passes; returns its last answer.
bool wait_until(double timeout_s, const std::function<bool()>& done);
/// peer -> BGP state on the switch in `netns`, as vtysh's summary JSON says (verify/frr_json.h);
/// empty when bgpd does not answer.
std::map<std::string, std::string> bgp_peers(const std::string& netns);

/// Set by SIGINT and SIGTERM while an InterruptGuard lives.
extern volatile std::sig_atomic_t g_interrupted;

// While it lives, SIGINT and SIGTERM set g_interrupted instead of ending the program, so that
// up and check can finish a step and clean up.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  void (*int_)(int);
  void (*term_)(int);
};

}  // namespace gf::lab_internal
