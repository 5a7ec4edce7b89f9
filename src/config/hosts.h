// Host configuration of a RoCE cluster, one set per node (guide §4.3, §4.4): netplan for the
// rail interfaces, RoCE QoS, memlock limits, sysctl, the NCCL environment and a torchrun
// launcher. The lines and their sources (NCCL's environment documentation for the exact-match
// NCCL_IB_HCA and NCCL_SOCKET_IFNAME) are in docs/configs/hosts.md.
#pragma once

#include <string>
#include <vector>

#include "common/output.h"
#include "config/addressing.h"
#include "plan/plan.h"

namespace gf {

/// RoCE traffic marking (guide §4.2): RoCE data in DSCP 26 (lossless, PFC priority 3), CNPs in
/// DSCP 48. The verbs traffic class is the IP ToS byte: DSCP << 2, plus ECT(0) = 2 so that
/// switches may mark ECN instead of dropping (106 is the value NVIDIA's RoCE guides use).
constexpr int kRoceDscp = 26;
constexpr int kRocePriority = 3;
constexpr int kCnpDscp = 48;
constexpr int kRoceTrafficClass = (kRoceDscp << 2) | 2;
/// CNPs leave switches by a strict-priority queue (traffic class 6).
constexpr int kCnpQueue = 6;
/// ECN marking on the RoCE queue: from 150 KiB, every packet by 1.5 MiB, at most 20 % (the
/// ranges NVIDIA and Arista RoCE guides start from; tune with the fabric's RTT).
constexpr int kEcnMinKiB = 150;
constexpr int kEcnMaxKiB = 1536;
constexpr int kEcnMarkPercent = 20;
/// PFC watchdog: a queue paused this long is stuck (a storm); drop, recover after as long.
constexpr int kPfcWatchdogMs = 200;
/// Jumbo MTU on hosts; switches carry 9214 (EOS) / 9100 (SONiC) to leave room for headers.
constexpr int kHostMtu = 9000;
/// NCCL_IB_QPS_PER_CONNECTION with ecmp-multi-qp: more QPs, more UDP source ports for ECMP.
constexpr int kQpsPerConnectionMultiQp = 4;
/// The RoCE v2 GID of an IPv4 address is usually index 3 on ConnectX (NCCL >= 2.21 finds it).
constexpr int kRoceV2GidIndex = 3;

/// The files of every node, under hosts/NODE/: netplan.yaml, roce-qos.sh, 99-rdma-memlock.conf,
/// 99-roce.conf (sysctl), nccl.env, torchrun.sh.
std::vector<OutputFile> host_files(const Plan& plan, const AddressPlan& a);

}  // namespace gf
