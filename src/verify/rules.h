// The rules of diagnose and doctor (the guide's troubleshooting table, seed §6): for each kind of
// finding its fixed text (severity, cause, what to check, what to fix), in one table keyed by
// the finding's id. The detectors in diagnose.cc and doctor.cc decide when a rule fires and
// with what evidence; the words are all here.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "verify/findings.h"

namespace gf {

/// The fixed text of one kind of finding. A text may hold `{}` for a figure the detector gives
/// (a count, the planned MTU), filled in by `finding()`.
struct Rule {
  /// The finding's id; "id/source" where one id reads differently for another source (doctor
  /// looks at the host itself, not at a tool's output).
  std::string_view key;
  Severity severity;
  std::string_view cause, check, fix;
  constexpr std::string_view id() const { return key.substr(0, key.find('/')); }
};

inline constexpr Rule kRules[] = {
    // NCCL_DEBUG=INFO logs.
    {"nccl-socket-fallback", Severity::kError,
     "NCCL fell back to TCP sockets: RDMA is not in use (no usable InfiniBand/RoCE device, "
     "missing libibverbs or NCCL_IB_DISABLE=1)",
     "NCCL_DEBUG=INFO must show 'NET/IB : Using [0]mlx5_0' and 'Using network IB'; run "
     "ibv_devinfo",
     "install rdma-core/MLNX_OFED, load the NIC driver, unset NCCL_IB_DISABLE, set NCCL_IB_HCA "
     "to the RDMA NICs"},
    {"gpudirect-missing", Severity::kWarning,  // {} of {}: channels without GDR, all channels
     "{} of {} network channels run without GPUDirect RDMA: data is staged through host memory",
     "nvidia-smi topo -m: GPU to NIC should be PIX or PXB, not SYS; lsmod | grep nvidia_peermem",
     "load nvidia-peermem (or use DMA-BUF), place each GPU's NIC on its PCIe switch, set "
     "NCCL_NET_GDR_LEVEL"},
    {"memlock-limited", Severity::kWarning,
     "memory registration may be limited by the locked-memory ulimit",
     "ulimit -l on every host (must be unlimited); gpufabric doctor",
     "'* - memlock unlimited' in /etc/security/limits.d/, and LimitMEMLOCK=infinity for "
     "services"},
    {"nccl-transport-retry", Severity::kError,
     "RDMA connections time out: packets are dropped between the hosts (firewall, no subnet "
     "manager, PFC/lossless misconfigured) or memory registration is limited",
     "ib_write_bw between the two hosts; sminfo (InfiniBand); ulimit -l; firewall rules for the "
     "RDMA/bootstrap ports",
     "open the firewall, (re)start the subnet manager, set memlock unlimited in "
     "/etc/security/limits.d, fix PFC on the RoCE priority"},
    {"nccl-ib-async-event", Severity::kError,
     "a NIC reported an asynchronous event during the run (NCCL's IB async thread: 'port error' "
     "is the port going down, 'device fatal' the NIC failing), and the connections over it stop",
     "ibstat or ibv_devinfo on that host (port state, the link_downed counter), ethtool -S "
     "(link_down_events_phy), the switch port's log",
     "reseat or replace the cable or transceiver (or the NIC), and run again once the port is "
     "Active"},
    {"nccl-warnings", Severity::kWarning, "NCCL reported warnings", "read the lines quoted",
     "see NCCL's troubleshooting guide"},
    {"nccl-ll128-off", Severity::kWarning,
     "NCCL's tuner rates LL128 at 0 GB/s (its TUNING table): the protocol is off, so sizes from "
     "some 64 KiB to a few MiB run LL or Simple instead (NCCL_PROTO leaves it out, or NCCL found "
     "the GPUs not on NVLink or a GPU's NIC further than PXB, PXN from Hopper on: "
     "tuning.cc@v2.29.7-1:481-494)",
     "NCCL_PROTO unset; nvidia-smi topo -m: each GPU's NIC PIX or PXB; NCCL_DEBUG_SUBSYS=GRAPH: "
     "the ring's 'type NVL/PIX' (or PXB)",
     "put each GPU's NIC behind its PCIe switch (or fix the topology NCCL detects: "
     "NCCL_TOPO_FILE on VMs); unset NCCL_PROTO"},
    {"nccl-no-net-channels", Severity::kInfo, "the log shows no network channels (single node?)",
     "", ""},
    {"nccl-fewer-nics", Severity::kError,
     "NCCL uses fewer RDMA devices than the plan gives a node: the others carry nothing, so "
     "the node's network bandwidth is that much less",
     "NCCL_IB_HCA (a list that names too few, or a prefix that matches too few); ibstat: every "
     "rail port Active",
     "name every rail's device in NCCL_IB_HCA (configs --target host writes it in nccl.env), or "
     "leave it unset; bring the missing ports up"},
    // nvidia-smi topo -m.
    {"gpu-nic-affinity", Severity::kWarning,
     "GPUs without a NIC on their PCIe switch: GPUDirect RDMA crosses the CPU interconnect (SYS) "
     "or is disabled",
     "nvidia-smi topo -m: every GPU should see a NIC as PIX or PXB",
     "install a NIC per GPU pair on the same PCIe switch, or set NCCL_IB_HCA / "
     "NCCL_NET_GDR_LEVEL to match the topology"},
    // ibv_devinfo.
    {"rdma-port-down", Severity::kError,
     "an RDMA port is not active: cable, switch port, or (InfiniBand) no subnet manager",
     "ibstat / ibv_devinfo; the switch port's state; sminfo",
     "reseat or replace the cable, enable the switch port, start the SM"},
    {"rdma-mtu-small", Severity::kWarning,  // {}: the RDMA path MTU wanted
     "RDMA path MTU below {}: more packets per message, lower bandwidth",
     "ibv_devinfo active_mtu; ip link (RoCE interface MTU >= 4200)",
     "set MTU 9000 on RoCE interfaces and 9214 on the switches (guide §4.2)"},
    // ip -d link: the planned rails ({}: the planned host MTU), then the MTUs of all files.
    {"rail-missing", Severity::kWarning,
     "a rail the spec names (addressing.host_netdevs) is not on this host: renamed, driver not "
     "loaded, or the output is of another host",
     "ibdev2netdev; ip link", "fix addressing.host_netdevs or the host"},
    {"rail-down", Severity::kError,
     "a planned rail is not up: its GPUs' traffic moves to the other rails or NCCL fails",
     "ip link; ethtool (link, cable); the switch port",
     "bring the link up (cable, transceiver, switch port), netplan apply"},
    {"rail-mtu-below-plan", Severity::kError,
     "a planned rail runs below the planned MTU {}: jumbo RoCE frames and 4096-byte RDMA path "
     "MTU do not fit",
     "ip link; ibv_devinfo active_mtu; ping -M do -s 8972 to another host",
     "apply the generated netplan (MTU {}) on every node"},
    {"rail-mtu-above-plan", Severity::kWarning,
     "a planned rail runs above the planned MTU {}: frames larger than the switch MTU (9100 on "
     "SONiC) are dropped",
     "ip link; the switch port MTU", "MTU {} on hosts, 9100-9216 on switches"},
    {"mtu-mismatch", Severity::kWarning,
     "interfaces that are up use different MTUs: jumbo frames get dropped where the path is "
     "smaller (single node fine, multi-node broken)",
     "ip link on every host; ping -M do -s 8972 between hosts; a management interface at 1500 "
     "beside jumbo rails is the usual set-up: give --spec with addressing.host_netdevs to judge "
     "the rails alone",
     "one MTU on the rails and the RoCE path: 9000 on hosts (4096 RDMA path MTU), 9214 on "
     "switches"},
    {"mtu-not-jumbo", Severity::kInfo, "no interface that is up uses jumbo frames", "ip link",
     "MTU 9000 on the RoCE interfaces"},
    {"interface-down", Severity::kInfo,
     "interfaces that are down: if one is a rail, its GPUs' traffic moves to the other NICs or "
     "NCCL fails (diagnose --spec with addressing.host_netdevs judges the rails)",
     "ip link; ethtool (link, cable); the switch port",
     "bring the rails up (cable, transceiver, switch port), netplan apply"},
    // ethtool -S.
    {"pfc-pause-storm", Severity::kError,
     "the NIC receives pause frames at a high rate: a congested or stuck receiver back-pressures "
     "the fabric (PFC storm)",
     "switch 'show interface counters errors' and PFC counters; per-priority pause counters over "
     "time",
     "enable the PFC watchdog and ECN/DCQCN on the RoCE queue; check buffer thresholds; find the "
     "slow receiver"},
    {"link-flaps", Severity::kWarning,
     "the port's physical link went down and came back (a flapping cable or optic): every flap "
     "stalls the job's traffic on it, and NCCL may time out",
     "ethtool -m (the optic's temperature, power and error counters), the switch port's flap "
     "counters and logs",
     "reseat or replace the cable or transceiver; clean the fibre ends"},
    {"nic-discards", Severity::kWarning,
     "packets dropped at the NIC (lossless class misconfigured, or receive buffers exhausted)",
     "ethtool -S twice, a minute apart: are discards rising?",
     "trust DSCP and map RoCE to the PFC priority on host and switch; raise receive ring sizes"},
    // perftest (ib_write_bw, ...).
    {"cpu-frequency-scaling", Severity::kInfo,
     "CPU frequency scaling: perftest's timing may be off", "cpupower frequency-info",
     "set the performance governor"},
    // A warning; the detector makes it an error far below line rate.
    {"rdma-above-line-rate", Severity::kWarning,
     "RDMA bandwidth above what one port carries: the test ran over several ports (-d of a bond, "
     "--run_infinitely sums), the line rate given is not this port's, or the output was edited",
     "the test's header (Device, Link type), ibv_devinfo -v; --line-rate or the spec's NIC",
     "judge one port's test against that port's rate"},
    {"rdma-below-line-rate", Severity::kWarning,
     "RDMA bandwidth well below line rate: a link trained at a lower speed, a bad cable or FEC "
     "errors, the wrong PCIe slot, or small MTU",
     "ibv_devinfo -v (active_speed/width), ethtool (speed, FEC), lspci -vv (LnkSta), the test "
     "with -F --report_gbits",
     "replace or reseat the cable/transceiver, set the port speed and FEC, move the NIC to a x16 "
     "Gen5 slot"},
    {"rdma-mtu-small/perftest", Severity::kWarning, "the RDMA path MTU is small",
     "ibv_devinfo active_mtu", "MTU 9000 on RoCE interfaces, 4096 path MTU"},
    {"rdma-line-rate-guessed", Severity::kInfo,
     "RDMA bandwidth judged against a guessed line rate, the nearest standard rate at or above "
     "the result: a port that trained at a lower speed (a 400G port at 200G) passes unnoticed",
     "ibv_devinfo -v (active_speed/width) for the port's rate",
     "give --line-rate GBPS or --spec SPEC so that the port's own rate is the reference"},
    // iperf3 --json.
    {"tcp-retransmits", Severity::kInfo, "TCP retransmitted segments: some loss on the path",
     "netstat -s; switch drop counters", "check MTU consistency and drops"},
    // nccl-tests.
    {"busbw-below-expectation", Severity::kError,
     "collective bandwidth below what the planned fabric gives (by more than check's default "
     "tolerance): a slow link, NCCL not using every NIC or the switches' reduction, ECMP "
     "collisions or congestion",
     "NCCL_DEBUG=INFO (NET/IB on every NIC, GDRDMA), ib_write_bw per NIC pair, switch counters; "
     "gpufabric simulate --explain for the expected bottleneck",
     "fix the slow NIC or link; spread flows (NCCL_IB_QPS_PER_CONNECTION, adaptive routing)"},
    {"busbw-above-expectation", Severity::kWarning,
     "collective bandwidth above what the planned fabric can carry: the spec describes another "
     "cluster (GPU, NICs, in-network reduction), or the output was edited",
     "the run's rank lines (GPU, hosts) against the spec; gpufabric check for the rows",
     "check against the spec of the cluster the run was taken on"},
    {"busbw-not-compared", Severity::kInfo,
     "a nccl-tests output that could not be compared with the plan (the reason is quoted)",
     "the output's banner and rank lines", "keep the output as nccl-tests printed it"},
    {"busbw-not-judged", Severity::kInfo,
     "a nccl-tests output read without the cluster's spec: its bandwidth is not compared with "
     "what the fabric should reach (only its errors and wrong results are read)",
     "the spec of the cluster the run was taken on",
     "gpufabric diagnose --spec SPEC FILE (or gpufabric check SPEC FILE) to compare each size "
     "with the simulated plan"},
    {"nccl-tests-failed", Severity::kError,
     "the nccl-tests run failed (an NCCL or CUDA error ended it): the sizes after it did not run",
     "NCCL_DEBUG=INFO on the same run (gpufabric diagnose its log): the failing rank's NET/IB "
     "and transport lines",
     "fix what the log names (a port down, a missing plugin, GPUDirect), then run again"},
    {"nccl-tests-wrong-results", Severity::kError,
     "nccl-tests found wrong results: data corruption (faulty GPU, NIC, cable or driver)",
     "rerun with -c 1 on subsets of nodes to isolate the faulty one",
     "replace the failing component"},
    // doctor: this host's /sys, limits, environment and tools.
    {"mtu-mismatch/doctor", Severity::kWarning, "interfaces that are up use different MTUs",
     "ip link", "one MTU on every training interface (9000)"},
    {"rdma-absent", Severity::kInfo,
     "no RDMA device on this host (no /sys/class/infiniband): NCCL would use sockets here",
     "ibv_devinfo", "install the NIC driver (rdma-core / MLNX_OFED) on GPU hosts"},
    {"rdma-port-down/doctor", Severity::kError, "an RDMA port is not active", "ibstat",
     "check the cable, the switch port and the subnet manager"},
    {"rdma-present", Severity::kInfo, "RDMA devices found", "", ""},
    {"memlock-limited/doctor", Severity::kWarning,
     "locked memory is limited: RDMA memory registration can fail (NCCL 'Transport retry count "
     "exceeded', ibv_reg_mr errors)",
     "ulimit -l (should be unlimited)",
     "'* - memlock unlimited' in /etc/security/limits.d/ (gpufabric configs writes it)"},
    {"nccl-ib-disabled", Severity::kError, "NCCL_IB_DISABLE=1 forces TCP sockets",
     "env | grep NCCL", "unset NCCL_IB_DISABLE"},
    {"nccl-variables", Severity::kInfo, "NCCL variables set", "", ""},
    {"nccl-variable-invalid", Severity::kError,
     "an NCCL variable names an algorithm or protocol NCCL does not have: NCCL warns and ignores "
     "it, or refuses to start",
     "env | grep NCCL; NCCL_DEBUG=INFO prints what NCCL made of it",
     "NCCL_ALGO: Ring, Tree, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT; NCCL_PROTO: LL, "
     "LL128, Simple (comma-separated, ^ to exclude)"},
    {"nccl-device-absent", Severity::kWarning,
     "NCCL_IB_HCA or NCCL_SOCKET_IFNAME leaves no device of this host (it names none, or "
     "excludes all): NCCL finds no NIC it may use (IB: it falls back to sockets; sockets: it "
     "fails to bootstrap)",
     "ls /sys/class/infiniband /sys/class/net",
     "name this host's devices (a prefix matches, =name matches exactly, ^ excludes)"},
    {"tool-present", Severity::kInfo, "{} is installed", "", ""},  // {}: the tool
    {"tool-absent", Severity::kInfo, "{} is not installed on this host", "", ""},
};

namespace detail {
consteval bool rule_keys_are_unique() {
  for (const Rule& a : kRules) {
    int n = 0;
    for (const Rule& b : kRules) n += a.key == b.key;
    if (n != 1) return false;
  }
  return true;
}
static_assert(rule_keys_are_unique(), "two rules with one key");
}  // namespace detail

/// The rule of `key`; a key that is not in the table does not compile.
consteval const Rule& rule(std::string_view key) {
  for (const Rule& r : kRules)
    if (r.key == key) return r;
  throw "no rule with this key";  // not a constant expression: the call fails to compile
}

/// A finding of rule `r` with `evidence`; `args` fill the `{}` of its texts.
template <typename... Args>
Finding finding(const Rule& r, std::vector<Evidence> evidence, const Args&... args) {
  const auto text = [&](std::string_view t) {
    if constexpr (sizeof...(Args) == 0)
      return std::string(t);
    else
      return fmt::format(fmt::runtime(t), args...);
  };
  return {std::string(r.id()), r.severity,    std::move(evidence),
          text(r.cause),       text(r.check), text(r.fix)};
}

}  // namespace gf
