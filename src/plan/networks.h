// The cluster's networks besides the compute fabric (spec networks:): storage, in-band and
// out-of-band management, each sized as one tier or leaf/spine from its switch's ports, with its
// own bill of materials so that the compute fabric's figures stay apart (guide §7).
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "common/diag.h"
#include "plan/bom.h"
#include "spec/spec.h"

namespace gf {

struct Plan;

/// Which network a link or a switch belongs to (cabling.csv's `network` column).
enum class NetworkKind { kCompute, kStorage, kInband, kOob };
inline constexpr EnumName<NetworkKind> kNetworkKindNames[] = {{NetworkKind::kCompute, "compute"},
                                                              {NetworkKind::kStorage, "storage"},
                                                              {NetworkKind::kInband, "inband"},
                                                              {NetworkKind::kOob, "oob"}};
inline const char* network_kind_name(NetworkKind k) { return name_of(kNetworkKindNames, k); }

/// One of the other networks, sized: `sides` leaf groups (a node's port i goes to a leaf of
/// group i, so that two ports reach two switches), and a spine tier when one leaf per side
/// cannot hold every port.
struct NetworkPlan {
  NetworkKind kind = NetworkKind::kStorage;
  Switch sw;        ///< the leaf (or only) switch
  Switch spine_sw;  ///< the spine switch (tiers == 2)
  std::string switch_reason;
  double port_gbps = 0;       ///< host-facing port speed
  double uplink_gbps = 0;     ///< leaf-to-spine port speed
  int ports_per_node = 0;     ///< GPU-server ports on this network (0 with isolation: vlan)
  long long node_ports = 0;   ///< GPU servers' ports
  long long other_ports = 0;  ///< storage servers' ports; BMCs of switches; PDUs
  int sides = 1;
  int tiers = 1;
  int leaf_ports = 0;              ///< host-facing ports of a leaf at port_gbps
  int leaf_down = 0, leaf_up = 0;  ///< per leaf of the GPU servers' ports, as used
  int leaves = 0, spines = 0;
  /// Storage at an oversubscribed leaf: the storage servers' ports have leaves of their own at
  /// 1:1 (DGX SuperPOD H100 RA, storage fabric), after the GPU servers' leaves of each side.
  /// Elsewhere every port shares the leaves and these stay 0.
  int other_leaves_per_side = 0;
  int other_down = 0, other_up = 0;  ///< per leaf of the storage servers' ports, as used
  /// In-band: ports of its leaves taken by the OOB switches' uplinks (cabled and counted with
  /// the OOB network), after its own host ports on each side.
  long long reserved_ports = 0;
  long long host_links = 0, leaf_spine_links = 0;
  /// MLAG peer-link cables between the two leaves of each pair (Ethernet, two sides).
  long long isl_links = 0;
  /// isolation: vlan, storage: the storage leaves' uplinks end on the compute fabric's top tier
  /// (its free ports) instead of a storage spine.
  bool uplinks_to_compute = false;
  /// OOB: the leaves' uplinks end on the in-band leaves (their reserved ports), no OOB spines.
  bool uplinks_to_inband = false;
  /// OOB sized per scalable unit of the compute fabric: leaves = units x leaves_per_unit.
  int units = 1, leaves_per_unit = 0;
  std::string nic_id;  ///< the servers' NIC carrying this network's ports; empty: none counted
  long long nics = 0;
  /// Of `nics`, the cards the servers' own figure already includes (catalog node.nics): the BOM
  /// lists them at no further cost, with `nics_in_server_source` saying whose figure holds them.
  long long nics_in_server = 0;
  std::string nics_in_server_source;
  std::string host_cable, host_length_class;      ///< cabling.csv's cable and length class
  std::string uplink_cable, uplink_length_class;  ///< the same of leaf uplinks
  std::string isl_cable;                          ///< the peer links' cable
  Bom bom;
  int switches() const { return leaves + spines; }
  /// Every cable of this network: cabling.csv's rows of it.
  long long links() const { return host_links + leaf_spine_links + isl_links; }
  /// GPU-server leaves of one side (the first of each side's leaves).
  int node_leaves_per_side() const { return leaves / std::max(1, sides) - other_leaves_per_side; }
};

/// Every other network of the cluster, and the storage figures the checkpoint model uses.
struct NetworksPlan {
  Isolation isolation = Isolation::kPhysical;
  std::vector<NetworkPlan> nets;  ///< in the order storage, inband, oob (those enabled)
  int storage_nodes = 0;
  double storage_node_gbps = 0;            ///< one storage server's ports together
  double storage_target_gbs_per_node = 0;  ///< GB/s per GPU server the fabric was sized for
  /// Storage write bandwidth of one GPU server (its storage ports, or with vlan its compute
  /// NICs) and of the whole storage system (the storage servers' ports), bytes/s.
  double node_storage_Bps = 0, storage_system_Bps = 0;
  int racks = 0, pdus = 0;
  double capex_usd = 0, power_w = 0;  ///< these networks alone
  std::vector<std::string> warnings;
  const NetworkPlan* find(NetworkKind k) const;
};

/// Sizes the networks of `spec.networks` around the compute plan `compute` (its switch count
/// gives the OOB network's switch management ports). Errors point at the networks.* key.
Result<NetworksPlan> plan_networks(const Spec& spec, const Catalog& catalog, const Plan& compute);

/// One link of a network's cabling (the same fields cabling.csv writes).
struct NetworkLink {
  NetworkKind network = NetworkKind::kStorage;
  std::string a_device, a_port, b_device, b_port, cable, length_class;
  bool peer_link = false;  ///< the MLAG peer link of a leaf pair (both ends leaves)
};
/// Every link of the other networks, in a deterministic order with deterministic names.
void for_each_network_link(const Plan& plan, const std::function<void(const NetworkLink&)>& visit);

/// The names devices of the other networks get (configs use them): "stor-leaf-a01",
/// "inband-spine01", "oob-leaf001", "storage001".
std::string network_switch_name(const NetworkPlan& net, bool spine, int index);
std::string storage_node_name(int index);

}  // namespace gf
