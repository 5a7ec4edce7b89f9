#include "sim/checkpoint.h"

#include <algorithm>
#include <cmath>

#include "sim/flow_model.h"
#include "sim/memory.h"

namespace gf {
namespace {

// The converged-port model is one rail of one plane: every rail carries the same ring and the
// same share of the checkpoint, so one rail's links say what all of them do. Rings longer than
// this many nodes are modelled with this many, the storage side scaled to match (the sharing on
// a NIC link does not depend on the ring's length).
constexpr int kMaxModelledNodes = 256;

}  // namespace

std::string dp_traffic_name(int zero) {
  if (zero == 3) return "ZeRO-3's DP reduce-scatters and parameter gathers";
  if (zero == 2) return "ZeRO-2's DP reduce-scatters and weight gather";
  return zero >= 1 ? "the DP reduce-scatter and all-gather" : "the DP all-reduce";
}

DpTraffic nominal_dp_traffic(const Plan& plan, const WorkloadSpec& w) {
  DpTraffic d;
  const auto& par = w.parallelism;
  const double dp = std::max(1, par.dp);
  const double ring_share = (dp - 1) / dp;  // of a buffer a rank sends in a ring's pass
  // Guide §3: gradient bytes of one replica, ring all-reduce moves 2(n-1)/n of them per rank;
  // the bytes a parameter as the step moves them (fp32 gradients by Megatron-LM's default).
  const double held = w.model.params / (par.tp * par.pp);
  // ZeRO-2 and -3 reduce-scatter the gradients after every microbatch (the step's
  // dp_reduce_scatter), ZeRO-2 gathering the updated weights once; ZeRO-0 and -1 reduce once, and
  // so does ZeRO-2 under a pipeline schedule (dp_zero: it runs as ZeRO-1 there).
  const int zero = dp_zero(w);
  double per_gpu = 0;
  if (zero >= 2)
    per_gpu = microbatches_per_step(w) * held * gradient_reduce_bytes(w) * ring_share +
              (zero == 2 ? held * weight_bytes(w) * ring_share : 0);
  else
    per_gpu = held * dp_bytes_per_param(w) * 2 * ring_share;
  if (zero == 3) {
    // The weights gathered before each use, every microbatch (the step's zero3_param_allgather).
    per_gpu +=
        zero3_gather_passes(w) * microbatches_per_step(w) * held * weight_bytes(w) * ring_share;
  }
  // A node's GPUs share its NICs.
  d.nic_bytes = per_gpu * plan.gpus_per_node / std::max(1, plan.nics_per_node);
  d.alone_s = d.nic_bytes / (plan.nic.rate_gbps * 1e9 / 8);
  d.exposed_s = w.overlap ? 0 : d.alone_s;
  d.what = dp_traffic_name(zero);
  return d;
}

DpTraffic step_dp_traffic(const StepResult& step, const Plan& plan) {
  DpTraffic d;
  int zero = 0;
  for (const auto& c : step.comms) {
    // An all-reduce sends 2(n-1)/n of its buffer, a reduce-scatter and an all-gather (n-1)/n.
    double passes = 0;
    auto is = [&](const char* name) {
      return c.kind == name || c.kind == "expert_" + std::string(name);
    };
    if (is("dp_allreduce")) {
      passes = 2;
    } else if (is("dp_reduce_scatter_all_gather")) {
      passes = 2;
      zero = std::max(zero, 1);
    } else if (is("dp_param_allgather")) {
      passes = 1;
      zero = std::max(zero, 2);
    } else if (is("dp_reduce_scatter")) {
      passes = 1;
      zero = std::max(zero, 2);
    } else if (c.kind == "zero3_param_allgather") {
      passes = 1;
      zero = 3;
    } else {
      continue;
    }
    const double n = std::max(1, c.group_size);
    d.nic_bytes += c.count * c.bytes * passes * (n - 1) / n * plan.gpus_per_node /
                   std::max(1, plan.nics_per_node);
    d.alone_s += c.total_s;
    d.exposed_s += c.exposed_s;
  }
  d.what = dp_traffic_name(zero);
  return d;
}

CheckpointEstimate checkpoint_estimate(const Plan& plan, const WorkloadSpec& w,
                                       const DpTraffic& dp) {
  CheckpointEstimate c;
  c.bytes_per_param = checkpoint_bytes_per_param(w.precision);
  c.bytes = w.model.params * c.bytes_per_param;
  if (!plan.networks) return c;
  const NetworksPlan& nets = *plan.networks;
  const NetworkPlan* storage = nets.find(NetworkKind::kStorage);
  if (!storage) return c;
  const double nodes = plan.nodes;
  const double servers_Bps = nets.node_storage_Bps * nodes;
  c.write_Bps = std::min(servers_Bps, nets.storage_system_Bps);
  c.bottleneck = servers_Bps <= nets.storage_system_Bps
                     ? (storage->uplinks_to_compute ? "GPU servers' compute NICs"
                                                    : "GPU servers' storage ports")
                     : "storage servers' ports";
  if (storage->uplinks_to_compute) {
    const double uplinks_Bps = storage->leaf_spine_links * storage->uplink_gbps * 1e9 / 8;
    if (uplinks_Bps < c.write_Bps) {
      c.write_Bps = uplinks_Bps;
      c.bottleneck = "storage leaves' uplinks into the compute fabric";
    }
  }
  c.write_s = c.write_Bps > 0 ? c.bytes / c.write_Bps : 0;
  if (nets.isolation != Isolation::kVlan || dp.nic_bytes <= 0 || c.write_Bps <= 0) return c;

  // Converged: one rail's ring and the checkpoint's share of that rail, on the same links.
  c.converged = true;
  const int lanes_per_node = std::max(1, plan.nics_per_node) * std::max(1, plan.topo.planes);
  const int n = static_cast<int>(std::min<double>(nodes, kMaxModelledNodes));
  const double lane_Bps = plan.topo.lane_gbps * 1e9 / 8;
  // Links: 0..n-1 the NICs' uplinks, n..2n-1 their downlinks, 2n the path into storage (this
  // rail's share of everything beyond the NICs that bounds the write).
  std::vector<double> cap(2 * static_cast<size_t>(n) + 1, lane_Bps);
  const double beyond_Bps = std::min(c.write_Bps, nets.storage_system_Bps);
  cap[2 * static_cast<size_t>(n)] = beyond_Bps * n / (nodes * lanes_per_node);
  const double ring_bytes = dp.nic_bytes / std::max(1, plan.topo.planes);
  const double ckpt_bytes = c.bytes / (nodes * lanes_per_node);
  auto ring_flow = [&](FlowSet& fs) {
    std::vector<FlowSet::Hop> hops;
    for (int i = 0; i < n; ++i) {
      hops.push_back({i, 1.0f});
      hops.push_back({n + (i + 1) % n, 1.0f});
    }
    return fs.add(ring_bytes, hops);
  };
  FlowSet alone;
  ring_flow(alone);
  const FluidResult a = run_fluid(alone, cap);
  FlowSet shared;
  const int ring = ring_flow(shared);
  for (int i = 0; i < n; ++i) shared.add(ckpt_bytes, {{i, 1.0f}, {2 * n, 1.0f}});
  const FluidResult s = run_fluid(shared, cap);
  const double ring_alone = a.completion_s[0], ring_shared = s.completion_s[ring];
  double write_end = 0;
  for (int f = 1; f < shared.size(); ++f) write_end = std::max(write_end, s.completion_s[f]);
  const double factor = ring_alone > 0 ? ring_shared / ring_alone : 1;
  c.dp_traffic = dp.what.empty() ? dp_traffic_name(0) : dp.what;
  c.allreduce_share = 1 / factor;
  c.allreduce_alone_s = dp.alone_s;
  c.allreduce_shared_s = dp.alone_s * factor;
  c.write_shared_s = write_end;
  // What compute hid of the traffic stays hidden; the slower rest is exposed.
  const double hidden = std::max(0.0, dp.alone_s - dp.exposed_s);
  c.step_cost_s = std::max(0.0, c.allreduce_shared_s - hidden) - dp.exposed_s;
  return c;
}

}  // namespace gf
