// The traffic patterns of a qos run, as NIC-to-NIC connections.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "qos/engine.h"
#include "sim/flow_builder.h"
#include "sim/nccl_constants.h"
#include "sim/nccl_cost.h"

namespace gf {
namespace {

// The ECMP key of connection `index`: its QP numbers, as the flow model derives them
// (sim/flow_builder.h mix_key; 24 bits at each end).
constexpr uint64_t kQpSeed = 0x51f15e;
uint64_t qp_key(uint64_t index) { return mix_key(kQpSeed, index) & 0xFFFFFFFFFFFFULL; }

std::string size_str(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return fmt::format("{:g} {}", bytes, units[u]);
}

}  // namespace

namespace {

// NCCL's ring across nodes (all_reduce, all_gather, reduce_scatter): every rank sends
// `per_rank` bytes to the next; the rings run rail by rail, two channels per NIC
// (nccl_constants.h kRingChannelsPerNic), each channel one connection from node n to node
// n + 1 on its rail, so a connection carries per_rank / (rails x channels).
template <class Add>
void ring_flows(const Fabric& fab, int nodes, double per_rank, Add add) {
  const int rails = fab.nics_per_node(), planes = fab.planes();
  const int ch = nccl::kRingChannelsPerNic;
  const double per = per_rank / (rails * ch);
  int k = 0;
  for (int r = 0; r < rails; ++r)
    for (int c = 0; c < ch; ++c)
      for (int n = 0; n < nodes; ++n)
        add(fab.nic(n, r), fab.nic((n + 1) % nodes, r), (k++) % planes, per);
}

// nccl-tests alltoall of `bytes` per rank: S/N to every rank. Across nodes PXN sends a node's
// data for GPU d through the NIC on d's rail (sim/flow_builder.h): node A to node B on rail r
// carries G x (G / rails) x S / N. Traffic inside a node stays on NVLink.
template <class Add>
void alltoall_flows(const Fabric& fab, int nodes, double bytes, Add add) {
  const int rails = fab.nics_per_node(), planes = fab.planes(), G = fab.gpus_per_node();
  const double ranks = 1.0 * nodes * G;
  const double per = G * (static_cast<double>(G) / rails) * bytes / ranks;
  int k = 0;
  for (int a = 0; a < nodes; ++a)
    for (int b = 0; b < nodes; ++b)
      if (a != b)
        for (int r = 0; r < rails; ++r) add(fab.nic(a, r), fab.nic(b, r), (k++) % planes, per);
}

// A power of two as a size flag takes it (K M G binary, as nccl-tests' -b and -e).
std::string flag_size(double bytes) {
  const char* units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return fmt::format("{:g}{}", bytes, units[u]);
}

// The checks every traffic ends with: the payload bound (named by `bytes_flag`, whose value
// `bytes` the payload grows with) and the endpoints that take part.
Result<QosTraffic> finish(QosTraffic t, const Fabric& fab, const std::string& bytes_flag,
                          double bytes) {
  double total = 0;
  for (const QosFlow& f : t.flows) total += f.bytes;
  if (total > kMaxQosPayloadBytes) {
    // The largest power of two whose traffic fits, as nccl-tests' sizes go.
    const double fits = std::exp2(std::floor(std::log2(bytes * kMaxQosPayloadBytes / total)));
    return Diagnostic::flag(
        bytes_flag,
        fmt::format("{} moves {} across the fabric; the packet-level engine runs at most {}",
                    t.what, size_str(total), size_str(kMaxQosPayloadBytes)),
        fits >= 1 ? fmt::format("use {} {} or less", bytes_flag, flag_size(fits))
                  : "use a smaller " + bytes_flag);
  }
  std::vector<uint8_t> seen(static_cast<size_t>(fab.nodes()) * fab.nics_per_node(), 0);
  for (const QosFlow& f : t.flows) seen[f.src_nic] = seen[f.dst_nic] = 1;
  t.endpoints = static_cast<int>(std::count(seen.begin(), seen.end(), 1));
  return t;
}

int qps_of(const Plan& plan) {
  return plan.load_balancing == LoadBalancing::kEcmpMultiQp ? nccl::kQpsPerConnection : 1;
}

}  // namespace

long long qos_endpoints(const Fabric& fab, int nodes) {
  return 1LL * nodes * fab.nics_per_node() * fab.planes();
}

Result<QosTraffic> qos_collective_traffic(const Plan& plan, const Fabric& fab, Op op, int nodes,
                                          double size, const std::string& bytes_flag,
                                          double wire_factor) {
  QosTraffic t;
  const double bytes = size * wire_factor;  // on the wire
  t.nodes = nodes > 0 ? std::min(nodes, fab.nodes()) : fab.nodes();
  if (qos_endpoints(fab, t.nodes) > kMaxQosEndpoints) {
    const int unit = plan.topo.nodes_per_unit;
    const bool unit_fits =
        unit > 0 && unit < t.nodes && qos_endpoints(fab, unit) <= kMaxQosEndpoints;
    return Diagnostic::flag(
        "--engine",
        fmt::format("the packet-level engine simulates at most {} RoCE endpoints; {} nodes x {} "
                    "NICs x {} planes are {}",
                    kMaxQosEndpoints, t.nodes, fab.nics_per_node(), fab.planes(),
                    qos_endpoints(fab, t.nodes)),
        unit_fits ? fmt::format("run one scalable unit: --nodes {}", unit)
                  : fmt::format("run on fewer nodes: --nodes {} or less",
                                kMaxQosEndpoints / (fab.nics_per_node() * fab.planes())));
  }
  if (t.nodes < 2)
    return Diagnostic::flag("--engine",
                            "on one node the collective stays on NVLink: no RoCE traffic to "
                            "simulate at packet level",
                            "use --engine flow, or --nodes 2 or more");
  if (!(bytes > 0)) return Diagnostic::flag(bytes_flag, "must be more than 0 bytes");
  const int qps = qps_of(plan);
  auto add = [&](int src, int dst, int plane, double b) {
    t.flows.push_back({src, dst, plane, b, qps, qp_key(t.flows.size())});
  };
  const double ranks = 1.0 * t.nodes * fab.gpus_per_node();
  const std::string scope = t.nodes == fab.nodes()
                                ? fmt::format("{} nodes", t.nodes)
                                : fmt::format("the first {} of {} nodes", t.nodes, fab.nodes());
  switch (op) {
    case Op::kAllReduce:
      ring_flows(fab, t.nodes, 2 * (ranks - 1) / ranks * bytes, add);
      break;
    case Op::kAllGather:
    case Op::kReduceScatter:
      // nccl-tests' size is the whole buffer: every rank forwards N - 1 chunks of S / N.
      ring_flows(fab, t.nodes, (ranks - 1) / ranks * bytes, add);
      break;
    case Op::kAlltoall:
      alltoall_flows(fab, t.nodes, bytes, add);
      break;
    default:
      return Diagnostic::flag(
          "--op",
          fmt::format("--engine packet builds ring all_reduce, all_gather and reduce_scatter and "
                      "alltoall; not {}",
                      op_name(op)),
          "use --engine flow for broadcast, reduce and sendrecv");
  }
  t.what = fmt::format(
      "{} {} of {}{} over {} GPUs ({})", op == Op::kAlltoall ? "PXN" : "ring", op_name(op),
      size_str(size),
      wire_factor != 1.0 ? fmt::format(" ({} on the wire: the protocol's flags ride with the data)",
                                       size_str(bytes))
                         : "",
      static_cast<long long>(ranks), scope);
  return finish(std::move(t), fab, bytes_flag, size);  // the flag's value, not the wire's
}

Result<QosTraffic> qos_traffic(const Plan& plan, const Fabric& fab, QosPattern pattern,
                               int incast_senders, double bytes) {
  QosTraffic t;
  const int rails = fab.nics_per_node(), planes = fab.planes(), G = fab.gpus_per_node();
  const long long all = qos_endpoints(fab, fab.nodes());
  t.nodes = fab.nodes();
  std::string scope = fmt::format("{} nodes", t.nodes);
  if (all > kMaxQosEndpoints) {
    // One scalable unit of a larger fabric, where it fits.
    const int unit = plan.topo.nodes_per_unit;
    if (unit > 0 && unit < fab.nodes() && qos_endpoints(fab, unit) <= kMaxQosEndpoints) {
      t.nodes = unit;
      scope = fmt::format("scalable unit 1 ({} of {} nodes)", unit, fab.nodes());
    } else {
      return Diagnostic::at_key(
          "cluster.nodes",
          fmt::format("the packet-level engine simulates at most {} RoCE endpoints; this fabric "
                      "has {} ({} nodes x {} NICs x {} planes) and no scalable unit that small",
                      kMaxQosEndpoints, all, fab.nodes(), rails, planes),
          "simulate a spec of fewer nodes (one pod or scalable unit of the fabric)");
    }
  }
  if (!(bytes > 0)) return Diagnostic::flag("--bytes", "must be more than 0 bytes");
  const int qps = qps_of(plan);
  auto add = [&](int src, int dst, int plane, double b) {
    t.flows.push_back({src, dst, plane, b, qps, qp_key(t.flows.size())});
  };
  const int nics = t.nodes * rails;
  // One NIC sends to no other: the spec's cluster is what to change, not the pattern's N.
  auto too_few_nics = [&](const char* what) {
    return Diagnostic::at_key(
        "cluster.nodes",
        fmt::format("the cluster has too few {} for {}: {} GPU{} with {} NIC{} ({} node{} x "
                    "{}), and it takes 2 NICs or more (a receiver and a sender)",
                    t.nodes * G < 2 ? "GPUs" : "NICs", what, 1LL * t.nodes * G,
                    t.nodes * G == 1 ? "" : "s", nics, nics == 1 ? "" : "s", t.nodes,
                    t.nodes == 1 ? "" : "s", rails),
        "give the spec more nodes (cluster.nodes) or more GPUs and NICs a node "
        "(cluster.gpus_per_node, cluster.nics_per_node)");
  };
  switch (pattern) {
    case QosPattern::kIncast: {
      // N senders to NIC 0 of node 1; senders on other nodes of the same rail first (through the
      // rail's leaves), then the other rails.
      const int n = incast_senders;
      if (nics < 2) return too_few_nics("an incast");
      if (n < 1 || n > nics - 1)
        return Diagnostic::flag(
            "--pattern",
            fmt::format("incast:{} needs {} senders besides the receiver; {} NICs take part", n, n,
                        nics),
            fmt::format("incast:N with N from 1 to {}", nics - 1));
      int made = 0;
      for (int r = 0; r < rails && made < n; ++r)
        for (int node = 0; node < t.nodes && made < n; ++node) {
          const int nic = fab.nic(node, r);
          if (nic == fab.nic(0, 0)) continue;
          add(nic, fab.nic(0, 0), 0, bytes);
          ++made;
        }
      t.what = fmt::format("{}-to-1 incast of {} each to {}:nic0 ({})", n, size_str(bytes),
                           node_name(plan, 0), scope);
      break;
    }
    case QosPattern::kPermutation: {
      // Every NIC sends to one other and receives from one: a random cycle (Sattolo's
      // algorithm), seeded, so that no NIC sends to itself.
      std::vector<int> to(static_cast<size_t>(nics));
      std::iota(to.begin(), to.end(), 0);
      uint64_t x = 0x2545F4914F6CDD1DULL;
      for (int i = nics - 1; i > 0; --i) {
        x = mix_key(x, static_cast<uint64_t>(i));
        const int j = static_cast<int>(x % static_cast<uint64_t>(i));
        std::swap(to[static_cast<size_t>(i)], to[static_cast<size_t>(j)]);
      }
      if (nics < 2) return too_few_nics("a permutation");
      for (int i = 0; i < nics; ++i)
        add(fab.nic(i / rails, i % rails), fab.nic(to[i] / rails, to[i] % rails), i % planes,
            bytes);
      t.what = fmt::format("permutation of {} NICs, {} each ({})", nics, size_str(bytes), scope);
      break;
    }
    case QosPattern::kAlltoall: {
      if (t.nodes < 2) return Diagnostic::flag("--pattern", "alltoall on one node stays on NVLink");
      alltoall_flows(fab, t.nodes, bytes, add);
      t.what = fmt::format("alltoall of {} per rank over {} GPUs ({})", size_str(bytes),
                           1LL * t.nodes * G, scope);
      break;
    }
    case QosPattern::kAllReduce: {
      if (t.nodes < 2)
        return Diagnostic::flag("--pattern", "all_reduce on one node stays on NVLink");
      const double ranks = 1.0 * t.nodes * G;
      ring_flows(fab, t.nodes, 2 * (ranks - 1) / ranks * bytes, add);
      t.what = fmt::format("ring all_reduce of {} over {} GPUs ({})", size_str(bytes),
                           static_cast<long long>(ranks), scope);
      break;
    }
  }
  return finish(std::move(t), fab, "--bytes", bytes);
}

}  // namespace gf
