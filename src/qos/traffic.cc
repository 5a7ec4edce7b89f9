// The traffic patterns of a qos run, as NIC-to-NIC connections.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "qos/engine.h"
#include "sim/flow_builder.h"
#include "sim/nccl_constants.h"

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

Result<QosTraffic> qos_traffic(const Plan& plan, const Fabric& fab, QosPattern pattern,
                               int incast_senders, double bytes) {
  QosTraffic t;
  const int rails = fab.nics_per_node(), planes = fab.planes(), G = fab.gpus_per_node();
  const long long all = 1LL * fab.nodes() * rails * planes;
  t.nodes = fab.nodes();
  std::string scope = fmt::format("{} nodes", t.nodes);
  if (all > kMaxQosEndpoints) {
    // One scalable unit of a larger fabric, where it fits.
    const int unit = plan.topo.nodes_per_unit;
    if (unit > 0 && unit < fab.nodes() && 1LL * unit * rails * planes <= kMaxQosEndpoints) {
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
  const int qps = plan.load_balancing == LoadBalancing::kEcmpMultiQp ? nccl::kQpsPerConnection : 1;
  auto add = [&](int src, int dst, int plane, double b) {
    t.flows.push_back({src, dst, plane, b, qps, qp_key(t.flows.size())});
  };
  const int nics = t.nodes * rails;
  switch (pattern) {
    case QosPattern::kIncast: {
      // N senders to NIC 0 of node 1; senders on other nodes of the same rail first (through the
      // rail's leaves), then the other rails.
      const int n = incast_senders;
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
      t.what =
          fmt::format("{}-to-1 incast of {} each to node1/nic0 ({})", n, size_str(bytes), scope);
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
      if (nics < 2) return Diagnostic::flag("--pattern", "permutation needs 2 NICs or more");
      for (int i = 0; i < nics; ++i)
        add(fab.nic(i / rails, i % rails), fab.nic(to[i] / rails, to[i] % rails), i % planes,
            bytes);
      t.what = fmt::format("permutation of {} NICs, {} each ({})", nics, size_str(bytes), scope);
      break;
    }
    case QosPattern::kAlltoall: {
      // nccl-tests alltoall of `bytes` per rank: S/N to every rank. Across nodes PXN sends a
      // node's data for GPU d through the NIC on d's rail (sim/flow_builder.h): node A to node B
      // on rail r carries G x (G / rails) x S / N. Traffic inside a node stays on NVLink.
      if (t.nodes < 2) return Diagnostic::flag("--pattern", "alltoall on one node stays on NVLink");
      const double ranks = 1.0 * t.nodes * G;
      const double per = G * (static_cast<double>(G) / rails) * bytes / ranks;
      int k = 0;
      for (int a = 0; a < t.nodes; ++a)
        for (int b = 0; b < t.nodes; ++b)
          if (a != b)
            for (int r = 0; r < rails; ++r) add(fab.nic(a, r), fab.nic(b, r), (k++) % planes, per);
      t.what = fmt::format("alltoall of {} per rank over {} GPUs ({})", size_str(bytes),
                           static_cast<long long>(ranks), scope);
      break;
    }
    case QosPattern::kAllReduce: {
      // NCCL's ring all_reduce: every rank sends 2 (N - 1) / N x S; across nodes the rings run
      // rail by rail, two channels per NIC (nccl_constants.h kRingChannelsPerNic), each channel
      // one connection from node n to node n + 1 on its rail.
      if (t.nodes < 2)
        return Diagnostic::flag("--pattern", "all_reduce on one node stays on NVLink");
      const double ranks = 1.0 * t.nodes * G;
      const int ch = nccl::kRingChannelsPerNic;
      const double per = 2 * (ranks - 1) / ranks * bytes / (rails * ch);
      int k = 0;
      for (int r = 0; r < rails; ++r)
        for (int c = 0; c < ch; ++c)
          for (int n = 0; n < t.nodes; ++n)
            add(fab.nic(n, r), fab.nic((n + 1) % t.nodes, r), (k++) % planes, per);
      t.what = fmt::format("ring all_reduce of {} over {} GPUs ({})", size_str(bytes),
                           static_cast<long long>(ranks), scope);
      break;
    }
  }
  double total = 0;
  for (const QosFlow& f : t.flows) total += f.bytes;
  if (total > kMaxQosPayloadBytes)
    return Diagnostic::flag(
        "--bytes",
        fmt::format("{} moves {} across the fabric; the packet-level engine runs at most {}",
                    t.what, size_str(total), size_str(kMaxQosPayloadBytes)),
        "use a smaller --bytes");
  std::vector<uint8_t> seen(static_cast<size_t>(fab.nodes()) * rails, 0);
  for (const QosFlow& f : t.flows) seen[f.src_nic] = seen[f.dst_nic] = 1;
  t.endpoints = static_cast<int>(std::count(seen.begin(), seen.end(), 1));
  return t;
}

}  // namespace gf
