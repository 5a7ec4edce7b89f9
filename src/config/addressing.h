// The IP and ASN plan of a routed (RoCE) fabric: /32 loopbacks, a /31 per routed switch link,
// one host subnet per leaf (a rail), one ASN per leaf and per spine tier (guide §4, RFC 7938).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "common/diag.h"
#include "plan/plan.h"
#include "spec/spec.h"

namespace gf {

/// An IPv4 prefix.
struct Ipv4Prefix {
  uint32_t addr = 0;
  int len = 0;
  std::string str() const;  ///< "10.0.0.0/16"
};
/// Parses "a.b.c.d/len" (host bits must be zero).
Result<Ipv4Prefix> parse_prefix(const std::string& text);
std::string ipv4_str(uint32_t addr);

struct SwitchAddress {
  std::string name, role;  ///< role: leaf | spine | core
  long long asn = 0;
  uint32_t loopback = 0;
  uint32_t ecmp_seed = 0;  ///< the ECMP hash seed the simulator gives it (fabric.ecmp_hash.seed)
};

struct RoutedLink {
  std::string a_device, b_device;  ///< a is the lower tier
  int a_port = 0, b_port = 0;
  uint32_t a_ip = 0, b_ip = 0;  ///< a /31: a gets the even address
};

struct HostSubnet {
  std::string leaf;
  Ipv4Prefix prefix;
  uint32_t gateway = 0;  ///< the leaf's address in it (the first)
};

struct HostAddress {
  std::string node, nic, leaf;  ///< nic: the cabling plan's port name (nic0, nic3.p1)
  std::string netdev;           ///< the OS interface (addressing.host_netdevs, else = nic)
  std::string rdma_device;      ///< the RDMA device (addressing.host_rdma_devices, else mlx5_N)
  int rail = 0, leaf_port = 0;
  int plane = 0;  ///< 0-based
  int port = 0;   ///< the node's rail port: rail x planes + plane (its policy-routing table)
  uint32_t ip = 0;
  int prefix_len = 0;
  uint32_t gateway = 0;
};

/// A routed link as one of its switches sees it.
struct SwitchPort {
  int port = 0;      ///< this switch's port
  std::string peer;  ///< the switch at the other end
  int peer_port = 0;
  uint32_t ip = 0, peer_ip = 0;  ///< 0 when unnumbered
  bool up = false;               ///< towards the higher tier
};

/// A node and its rail addresses, in cabling order.
struct NodeRails {
  std::string node;
  std::vector<const HostAddress*> rails;
};

struct AddressPlan {
  std::vector<SwitchAddress> switches;  ///< leaves, then spines, then cores, in cabling order
  std::vector<RoutedLink> links;
  std::vector<HostSubnet> subnets;
  std::vector<HostAddress> hosts;
  bool unnumbered = false;
  /// addressing.hosts: every host subnet, today's and those of leaves added later, lies in it.
  Ipv4Prefix host_pool;
  /// addressing.mgmt_netdev: a node's management interface (bootstrap and rendezvous).
  std::string mgmt_netdev = kMgmtNetdevPlaceholder;
  const SwitchAddress* find(const std::string& name) const;
  /// The routed links of switch `name`, in cabling order.
  std::vector<SwitchPort> ports_of(const std::string& name) const;
  /// The host subnet of leaf `name`; nullptr for other switches.
  const HostSubnet* subnet_of(const std::string& name) const;
  /// The hosts grouped by node, nodes in first-seen (cabling) order.
  std::vector<NodeRails> nodes() const;
};

/// What a routed fabric takes from its address pools before any address is built: its switches'
/// /32 loopbacks, a /31 a routed link (none where unnumbered) and each leaf's host subnet, sized
/// to its host ports and aligned, in the order plan_addresses hands them out. Fabrics without an
/// IP plan (InfiniBand, dragonfly) take nothing.
struct AddressNeeds {
  long long switches = 0;      ///< loopbacks
  long long routed_links = 0;  ///< /31s (0 once unnumbered)
  long long spines = 0;        ///< of the switches, the spines (clos3: their pods' ASNs)
  std::vector<int> host_lens;  ///< each leaf's host subnet's prefix length, in allocation order
};
AddressNeeds address_needs(const Plan& plan, const Catalog& catalog, bool unnumbered);

/// The errors `plan_addresses` and `plan_network_addresses` would give for the spec's pools,
/// subnets and ASNs: a pool too small (how many addresses it holds, how many the fabric takes
/// and a prefix that would), leaf ASNs over the spines' or a reserved ASN; computed without
/// building an address, so that `plan` refuses what `configs` would. Empty where all fit.
std::vector<Diagnostic> address_pool_errors(const Plan& plan, const Catalog& catalog,
                                            const Spec& spec);

/// `d`, an error of address_pool_errors or plan_addresses, at its key's place in the spec's file;
/// where the spec does not write the key (its default), the hint says to write it.
Diagnostic addressing_diagnostic(const Spec& spec, const Diagnostic& d);

/// Plans the addresses of a RoCE (routed) fabric. Errors name the addressing key whose pool is
/// too small, or say why the plan has no IP fabric (InfiniBand).
Result<AddressPlan> plan_addresses(const Plan& plan, const Catalog& catalog,
                                   const AddressingSpec& spec);

/// ip-plan.csv: one row per address (loopbacks, link ends, host subnets and hosts). Switch
/// ports are named as the frr/ files name them (frr.h: frr_port_name), where the addresses are
/// configured.
std::string ip_plan_csv(const Plan& plan, const AddressPlan& a);

}  // namespace gf
