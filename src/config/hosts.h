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
#include "plan/roce_qos.h"  // the RoCE marking, ECN and PFC values

namespace gf {

/// Jumbo MTU on hosts; switches carry 9214 (EOS) / 9100 (SONiC) to leave room for headers.
constexpr int kHostMtu = 9000;
/// The RoCE v2 GID of an IPv4 address is usually index 3 on ConnectX (NCCL >= 2.21 finds it).
constexpr int kRoceV2GidIndex = 3;

/// The files of every node, under hosts/NODE/: netplan.yaml, roce-qos.sh, 99-rdma-memlock.conf,
/// 99-roce.conf (sysctl), nccl.env, torchrun.sh.
std::vector<OutputFile> host_files(const Plan& plan, const AddressPlan& a);

}  // namespace gf
