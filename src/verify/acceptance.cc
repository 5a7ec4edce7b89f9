#include "verify/acceptance.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>

#include "common/text.h"
#include "config/addressing.h"
#include "config/hosts.h"
#include "sim/collective.h"
#include "topo/fabric.h"
#include "verify/check.h"

namespace gf {
namespace {

/// perftest's default out-of-band TCP port (perftest man page, -p: "default 18515"); a server
/// of several tests in one round listens on one port per rail port above it.
constexpr int kPerftestBasePort = 18515;
/// Flow labels a test may take: 1 to 0x3FFF. A nonzero label fixes the RoCE v2 UDP source port
/// (Linux include/rdma/ib_verbs.h, rdma_get_udp_sport / rdma_flow_label_to_udp_sport, 5.18;
/// perftest --flow_label sets ah_attr.grh.flow_label, src/perftest_resources.c
/// ctx_modify_qp_to_rtr); below 0x4000 the port is 0xC000 | label, one label per port.
constexpr int kMaxFlowLabel = 0x3FFF;
/// Rounds of the greedy schedule before it gives up on cables it cannot reach.
constexpr int kMaxRounds = 64;
/// Flow labels a test tries per uplink of the busiest switch (each label one hashed path), and
/// once a label covers something new.
constexpr int kTriesPerUplink = 32;
constexpr int kTriesOnceFound = 4;
/// The second sweep of a round: receivers tried per idle sender, flow labels per receiver.
constexpr int kIdleCandidates = 64;
constexpr int kIdleTries = 16;
// Of those candidates, the ones taken next to the sender before the rest spread out.
constexpr size_t kIdleNear = 16;
/// ib_write_lat iterations: perftest's default is 1000; 10,000 steadies t_typical.
constexpr int kLatencyIterations = 10000;
/// nccl-tests sizes: 1 MiB to 8 GiB, doubling (the guide §5.2 runs -b 1G -e 10G -f 2 -g 1; the
/// smaller sizes show where the latency-bound region ends).
constexpr double kNcclMinBytes = 1 << 20;
constexpr double kNcclMaxBytes = 8.0 * (1 << 30);
/// The bit error ratio a link may show: 10^-12, the objective IEEE 802.3 sets its PHYs (e.g.
/// clause 49, 10GBASE-R) and the InfiniBand Architecture Specification Vol. 2 sets its links.
/// A burn-in port may count at most this many symbol (or FCS) errors per bit it received.
constexpr double kMaxBitErrorRatio = 1e-12;
/// A link that went down during the burn-in is flapping: none is accepted.
constexpr double kMaxLinkDowns = 0;
/// PFC pause frames on the lossless priority per packet received: above it the link is pausing
/// continuously (the threshold of diagnose's pfc-pause-storm rule, src/verify/diagnose.cc
/// kPauseStormRatio, an estimate). One flow per link (the link tests) should pause rarely.
constexpr double kMaxPauseRatio = 1e-5;
/// perfquery's PortRcvData counts 4-byte words (IBTA PortCounters).
constexpr double kIbDataWordBytes = 4;

const char* const kNcclBinaries[][2] = {{"all_reduce", "all_reduce_perf"},
                                        {"all_gather", "all_gather_perf"},
                                        {"reduce_scatter", "reduce_scatter_perf"}};

// The UDP source port a flow label gives (rdma_flow_label_to_udp_sport).
uint16_t udp_sport_of_flow_label(uint32_t fl) {
  return static_cast<uint16_t>(((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14)) | 0xC000);
}

// The cables of the compute fabric and where their directed links sit in the Fabric graph:
// Fabric::build adds two links per cable (lower to upper, then back) in for_each_link's order,
// after the host side, appliance ports left out.
struct CableIndex {
  std::vector<AcceptanceCable> cables;
  int32_t base = 0;  ///< fabric link id of cable 0's upward direction
  int crossing(int32_t link) const { return link - base; }  ///< cable x 2 + direction
};

Result<CableIndex> index_cables(const Plan& plan, const Catalog& cat, const Fabric& f) {
  CableIndex ix;
  for_each_link(plan, cat, [&](const CableRun& r) {
    if (r.kind == LinkKind::kApplianceLeaf) return;
    ix.cables.push_back({r.kind, r.a_device, r.a_port, r.b_device, r.b_port});
  });
  ix.base = f.first_cable_link();
  const auto expected = static_cast<size_t>(ix.base) + 2 * ix.cables.size();
  // The order is Fabric::build's; a change there must not silently mislabel cables.
  if (f.links().size() != expected || (!ix.cables.empty() && f.nic_to_leaf(0, 0) != ix.base))
    return Diagnostic::error(
        fmt::format("internal: the fabric graph has {} links where its cabling gives {}",
                    f.links().size(), expected));
  return ix;
}

// Nodes that share a leaf on rail 0 of plane 0, counted from node 0 (a block of consecutive
// nodes: cabling numbers them so).
int nodes_per_leaf(const Fabric& f) {
  int b = 1;
  const int leaf = f.leaf_of_nic(f.nic(0, 0), 0);
  while (b < f.nodes() && f.leaf_of_nic(f.nic(b, 0), 0) == leaf) ++b;
  return b;
}

// The pairing of one round: node i rail r sends to node (i + shift) rail (r + rail_shift).
struct Pairing {
  int shift = 0, rail_shift = 0;
};

// Shifts that move a whole leaf's NICs to one other leaf come first (every uplink of the leaf
// then has a test to carry), then the others; `variant` (the burn-in pass) rotates the list and
// shifts the rails, so that each burn-in pass pairs the NICs differently.
std::vector<Pairing> pairings(const Fabric& f, int variant) {
  const int n = f.nodes(), rails = f.nics_per_node(), b = nodes_per_leaf(f);
  std::vector<int> shifts;
  for (int s = b; s < n; s += b) shifts.push_back(s);
  for (int s = 1; s < n; ++s)
    if (s % b) shifts.push_back(s);
  // Same-rail pairs never leave a leaf when one leaf holds all of a rail's NICs: cross rails.
  const bool cross = b >= n && rails > 1;
  std::vector<Pairing> out;
  if (shifts.empty()) {  // one node: its rails to each other
    for (int r = 1; r < rails; ++r) out.push_back({0, r});
  } else {
    // Burn-in passes also cross rails: the tests of one rail between two leaves all cross
    // both leaves' cables to a spine, which no same-rail pairing tells apart.
    const int burn_in_rails = rails > 1 ? variant % rails : 0;
    for (size_t k = 0; k < shifts.size(); ++k)
      out.push_back({shifts[k], cross ? 1 + static_cast<int>(k) % (rails - 1) : burn_in_rails});
  }
  if (!out.empty()) {
    const size_t r = static_cast<size_t>(variant) % out.size();
    std::rotate(out.begin(), out.begin() + static_cast<long>(r), out.end());
  }
  return out;
}

// Names of a NIC port for the commands: node, cabling port, RDMA device.
struct NicNames {
  std::string node, port, device;
};

// One pass of link tests: rounds of a greedy schedule until every directed cable crossing is
// covered. Each test takes, among the flow labels it tries, the path that crosses the most
// uncovered cable directions without touching one another test of the round uses.
long long schedule_pass(const Fabric& f, const CableIndex& ix, bool roce, int pass,
                        const std::vector<std::vector<NicNames>>& names, int planes,
                        std::vector<LinkTest>& out, int& rounds,
                        std::vector<int>* left_out = nullptr) {
  const size_t crossings = 2 * ix.cables.size();
  std::vector<char> covered(crossings, 0);
  std::vector<int> used(crossings, 0);
  long long uncovered = static_cast<long long>(crossings);
  const int nics = f.nodes() * f.nics_per_node();
  // Tries per test: enough to find each of a leaf's uplinks (and a spine's) in turn.
  int up = 1;
  for (int v = 0; v < f.vertices(); ++v) up = std::max(up, f.up_degree(v));
  const int max_tries = roce ? std::min(kMaxFlowLabel, kTriesPerUplink * up) : 1;
  // Uncovered switch-to-switch crossings by where a test must start or end to reach them: a
  // leaf's uplinks need a sender on it, links down into it a receiver on it; a spine's links to
  // the cores need a sender in its pod, the cores' links down a receiver there. A test whose
  // ends reach none of them, and whose own cables are covered, is not tried.
  const size_t nv = static_cast<size_t>(f.vertices());
  std::vector<int> from_leaf(nv, 0), into_leaf(nv, 0), from_pod(nv, 0), into_pod(nv, 0);
  std::vector<int> pod(nv, -1);  // a leaf's or spine's pod: the lowest spine its pod's leaves reach
  for (size_t c = 0; c < ix.cables.size(); ++c) {
    const Link& l = f.links()[static_cast<size_t>(ix.base) + 2 * c];
    if (l.cls != LinkClass::kLeafSpine) continue;
    auto& p = pod[static_cast<size_t>(l.from)];
    p = p < 0 ? l.to : std::min(p, l.to);
  }
  for (size_t c = 0; c < ix.cables.size(); ++c) {
    const Link& l = f.links()[static_cast<size_t>(ix.base) + 2 * c];
    if (l.cls == LinkClass::kLeafSpine)
      pod[static_cast<size_t>(l.to)] = pod[static_cast<size_t>(l.from)];
  }
  std::vector<int> owner(crossings, -1);  // crossing -> its leaf, or -2 - its spine
  int global_left = 0;
  for (size_t c = 0; c < ix.cables.size(); ++c) {
    const Link& l = f.links()[static_cast<size_t>(ix.base) + 2 * c];
    if (l.cls == LinkClass::kLeafSpine) {
      ++from_leaf[static_cast<size_t>(l.from)];
      ++into_leaf[static_cast<size_t>(l.from)];
      owner[2 * c] = owner[2 * c + 1] = l.from;
    } else if (l.cls == LinkClass::kSpineCore) {
      const auto k = static_cast<size_t>(std::max(0, pod[static_cast<size_t>(l.from)]));
      ++from_pod[k];
      ++into_pod[k];
      owner[2 * c] = owner[2 * c + 1] = -2 - l.from;
    } else if (l.cls == LinkClass::kGlobal) {
      global_left += 2;
    }
  }
  auto newly_covered = [&](int x) {
    const int o = owner[static_cast<size_t>(x)];
    const bool up_dir = x % 2 == 0;
    if (o >= 0) {
      --(up_dir ? from_leaf : into_leaf)[static_cast<size_t>(o)];
    } else if (o <= -2) {
      const auto k = static_cast<size_t>(std::max(0, pod[static_cast<size_t>(-2 - o)]));
      --(up_dir ? from_pod : into_pod)[k];
    } else if (ix.cables[static_cast<size_t>(x / 2)].kind == LinkKind::kGlobal) {
      --global_left;
    }
  };
  auto worth_trying = [&](int s, int d, int plane, int sx, int dx) {
    if (!covered[static_cast<size_t>(sx)] || !covered[static_cast<size_t>(dx)] || global_left > 0)
      return true;
    const auto ls = static_cast<size_t>(f.leaf_of_nic(s, plane)),
               ld = static_cast<size_t>(f.leaf_of_nic(d, plane));
    if (ls == ld) return false;
    if (from_leaf[ls] > 0 || into_leaf[ld] > 0) return true;
    if (!f.has_core() || pod[ls] == pod[ld] || pod[ls] < 0 || pod[ld] < 0) return false;
    return from_pod[static_cast<size_t>(pod[ls])] > 0 || into_pod[static_cast<size_t>(pod[ld])] > 0;
  };
  const auto order = pairings(f, pass - 1);
  std::vector<int32_t> path, best;
  int count = 0;
  rounds = 0;
  for (int round = 1; round <= kMaxRounds && uncovered > 0 && !order.empty(); ++round) {
    const Pairing pr = order[static_cast<size_t>(round - 1) % order.size()];
    int added = 0;
    // A test from NIC s to NIC d on `plane`, with the best of `tries` flow labels; false when no
    // label gives a free path that crosses an uncovered cable direction.
    auto place = [&](int s, int d, int plane, int tries) {
      if (d == s) return false;
      const int sx = ix.crossing(f.nic_to_leaf(s, plane)),
                dx = ix.crossing(f.leaf_to_nic(d, plane));
      if (sx < 0 || dx < 0 || used[sx] == round || used[dx] == round) return false;
      if (!worth_trying(s, d, plane, sx, dx)) return false;
      int best_score = 0, best_fl = 0;
      for (int t = 0; t < tries; ++t) {
        if (best_score > 0 && t >= kTriesOnceFound * up) break;  // good enough: move on
        // Labels start where the test's index points, so that tests spread over the hash.
        const int fl = roce ? 1 + (s * 7919 + t + pass * 104729) % kMaxFlowLabel : 0;
        FlowTuple tuple{nic_ipv4(s, plane), nic_ipv4(d, plane),
                        roce ? udp_sport_of_flow_label(static_cast<uint32_t>(fl)) : uint16_t{0},
                        kRoceV2UdpPort};
        path.clear();
        if (!f.route(s, d, plane, tuple, path)) break;
        int score = 0;
        bool free = true;
        for (int32_t l : path) {
          const int x = ix.crossing(l);
          if (used[x] == round) free = false;
          score += !covered[x];
        }
        if (free && score > best_score) {
          best_score = score;
          best_fl = fl;
          best = path;
        }
        if (best_score == static_cast<int>(path.size())) break;         // every crossing new
        if (f.leaf_of_nic(s, plane) == f.leaf_of_nic(d, plane)) break;  // one path only
      }
      if (best_score == 0) return false;
      LinkTest t;
      t.id =
          pass == 1 ? fmt::format("T{:04d}", ++count) : fmt::format("P{}-T{:04d}", pass, ++count);
      t.pass = pass;
      t.round = round;
      const auto& a = names[static_cast<size_t>(s)][static_cast<size_t>(plane)];
      const auto& b = names[static_cast<size_t>(d)][static_cast<size_t>(plane)];
      t.src_node = a.node, t.src_port = a.port, t.src_device = a.device;
      t.dst_node = b.node, t.dst_port = b.port, t.dst_device = b.device;
      t.plane = plane;
      t.tcp_port = kPerftestBasePort + (d % f.nics_per_node()) * planes + plane;
      t.flow_label = best_fl;
      for (int32_t l : best) {
        const int x = ix.crossing(l);
        used[x] = round;
        if (!covered[x]) {
          --uncovered;
          newly_covered(x);
        }
        covered[x] = 1;
        t.crossings.push_back(x);
      }
      t.latency_floor_us = f.latency_s(best) * 1e6;
      t.switches = static_cast<int>(best.size()) - 1;
      out.push_back(std::move(t));
      ++added;
      return true;
    };
    for (int plane = 0; plane < planes; ++plane) {
      // The round's pairing first: whole leaves to other leaves.
      for (int k = 0; k < nics; ++k) {
        const int s = (k + round - 1) % nics;  // a different NIC first each round
        const int node = s / f.nics_per_node(), rail = s % f.nics_per_node();
        place(s, f.nic((node + pr.shift) % f.nodes(), (rail + pr.rail_shift) % f.nics_per_node()),
              plane, max_tries);
      }
      // Then the NICs the pairing left idle (their partner's path was taken), each with the
      // first idle receiver that still gives it something to cover: often one on its own leaf.
      std::vector<int> idle_rx;
      for (int d = 0; d < nics; ++d)
        if (used[ix.crossing(f.leaf_to_nic(d, plane))] != round) idle_rx.push_back(d);
      for (int k = 0; k < nics && !idle_rx.empty(); ++k) {
        const int s = (k + round - 1) % nics;
        if (used[ix.crossing(f.nic_to_leaf(s, plane))] == round) continue;
        int tried = 0;
        // The first candidates beside the sender (its own leaf: the cheapest test), then spread
        // over the whole fabric, every pod in reach: a link from a spine to a core needs a
        // receiver in another pod, and those next to the sender are in its own.
        const size_t n_rx = idle_rx.size();
        const size_t stride = std::max<size_t>(1, n_rx / kIdleCandidates) | 1;
        for (size_t j = 0; j < n_rx && tried < kIdleCandidates; ++j) {
          const size_t at = j < kIdleNear ? j : kIdleNear + (j - kIdleNear) * stride;
          const int d = idle_rx[(at + static_cast<size_t>(k)) % n_rx];
          if (d == s || used[ix.crossing(f.leaf_to_nic(d, plane))] == round) continue;
          ++tried;
          if (place(s, d, plane, std::min(max_tries, kIdleTries))) break;
        }
      }
    }
    if (added == 0) break;
    rounds = round;
  }
  if (left_out)
    for (size_t x = 0; x < crossings; ++x)
      if (!covered[x]) left_out->push_back(static_cast<int>(x));
  return uncovered;
}

// No schedule has fewer rounds than the busiest port needs: a leaf's uplinks are each crossed
// upwards by a test from one of its NICs, a NIC sends one test a round; the same downwards.
// Deeper switches are fed by their links from below, which bound them the same way.
int lower_bound(const Fabric& f, const CableIndex& ix, std::string& why) {
  std::vector<int> up_out(static_cast<size_t>(f.vertices()), 0),
      below_in(static_cast<size_t>(f.vertices()), 0);
  for (size_t c = 0; c < ix.cables.size(); ++c) {
    const Link& l = f.links()[static_cast<size_t>(ix.base) + 2 * c];  // lower to upper
    if (l.cls == LinkClass::kGlobal) continue;
    ++up_out[static_cast<size_t>(l.from)];
    ++below_in[static_cast<size_t>(l.to)];
  }
  std::map<int, std::string> name;  // switch vertex -> its cabling name
  for (size_t c = 0; c < ix.cables.size(); ++c) {
    const Link& l = f.links()[static_cast<size_t>(ix.base) + 2 * c];
    name[l.from] = ix.cables[c].a_device;
    name[l.to] = ix.cables[c].b_device;
  }
  int bound = ix.cables.empty() ? 0 : 1;
  why = "every cable needs a test";
  for (int v = 0; v < f.vertices(); ++v) {
    if (f.tier(v) == 0 || below_in[static_cast<size_t>(v)] == 0) continue;
    const int need = (up_out[static_cast<size_t>(v)] + below_in[static_cast<size_t>(v)] - 1) /
                     below_in[static_cast<size_t>(v)];
    if (need > bound) {
      bound = need;
      why = fmt::format("{} has {} links up and {} from below, each test crossing one of each",
                        name[v], up_out[static_cast<size_t>(v)], below_in[static_cast<size_t>(v)]);
    }
  }
  return bound;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string perftest_args(const AcceptancePlan& a, const LinkTest& t, const std::string& device,
                          bool latency, int duration_s) {
  std::string s = fmt::format("-d {} -F", device);
  if (a.gid_index >= 0) s += fmt::format(" -x {}", a.gid_index);
  if (latency)
    s += fmt::format(" -n {}", kLatencyIterations);
  else
    s += fmt::format(" --report_gbits -q {} -D {}", a.options.qps, duration_s);
  s += fmt::format(" -p {}", t.tcp_port);
  if (t.flow_label) s += fmt::format(" --flow_label={}", t.flow_label);
  return s;
}

// The lines of a script that write the results folder's plan file (kResultsPlanFile), after
// `R` is set: each script writes it, so that any step run leaves it.
std::string plan_file_lines(const AcceptancePlan& a) {
  return fmt::format("mkdir -p \"$R\"\ncat > \"$R/{}\" <<'GPUFABRIC_PLAN'\n{}GPUFABRIC_PLAN\n",
                     kResultsPlanFile, results_plan_text(a));
}

std::string round_script(const AcceptancePlan& a, const std::vector<const LinkTest*>& ts,
                         const std::string& title, int duration_s) {
  std::string s = fmt::format(
      "#!/bin/sh\n# generated by gpufabric: {}: {} tests at once, no two on one cable direction.\n"
      "# RESULTS: the results folder (default ./results); SSH: how to reach a node (default "
      "ssh).\nset -u\nR=\"${{RESULTS:-results}}\"\nS=\"${{SSH:-ssh}}\"\n",
      title, ts.size());
  s += plan_file_lines(a);
  std::set<std::string> dirs;
  for (const auto* t : ts) {
    const std::string p = link_test_result_path(*t, false);
    dirs.insert(p.substr(0, p.rfind('/')));
  }
  for (const auto& d : dirs) s += fmt::format("mkdir -p \"$R/{}\"\n", d);
  for (int lat = 0; lat < 2; ++lat) {
    const char* tool = lat ? "ib_write_lat" : "ib_write_bw";
    s += fmt::format("# {}: servers, then clients\n", tool);
    for (const auto* t : ts)
      s += fmt::format("$S {} {} {} >/dev/null 2>&1 &\n", t->dst_node, tool,
                       perftest_args(a, *t, t->dst_device, lat, duration_s));
    s += "sleep 2\n";
    for (const auto* t : ts)
      s += fmt::format("$S {} {} {} {} > \"$R/{}\" 2>&1 &\n", t->src_node, tool,
                       perftest_args(a, *t, t->src_device, lat, duration_s), t->dst_node,
                       link_test_result_path(*t, lat));
    s += "wait\n";
  }
  return s;
}

// Host ports whose counters the burn-in reads: each node's rail ports.
struct HostPort {
  std::string node, device, netdev;
};

std::vector<HostPort> host_ports(const PlannedSpec& planned) {
  std::vector<HostPort> out;
  const auto& spec = planned.spec.addressing;
  const Plan& plan = planned.plan;
  for_each_link(plan, planned.catalog, [&](const CableRun& r) {
    if (r.kind != LinkKind::kNodeLeaf) return;
    const size_t port = static_cast<size_t>(r.rail) * std::max(1, plan.topo.planes) + r.plane;
    out.push_back({r.a_device,
                   port < spec.host_rdma_devices.size() ? spec.host_rdma_devices[port]
                                                        : fmt::format("mlx5_{}", port),
                   port < spec.host_netdevs.size() ? spec.host_netdevs[port] : r.a_port});
  });
  return out;
}

std::string counter_path(const std::string& when, const HostPort& h) {
  return fmt::format("counters/{}/{}/{}.txt", when, h.node, h.device);
}

}  // namespace

std::string AcceptanceCable::name() const {
  return fmt::format("{}:{} - {}:{}", a_device, a_port, b_device, b_port);
}

std::string link_test_result_path(const LinkTest& t, bool latency) {
  const std::string dir = t.pass == 1 ? "link-tests" : fmt::format("burn-in/pass-{}", t.pass);
  return fmt::format("{}/{}-{}.txt", dir, t.id, latency ? "lat" : "bw");
}

std::string nccl_result_path(const NcclStage& s) {
  return fmt::format("nccl/{}/{}.txt", s.name, s.binary);
}

Result<AcceptancePlan> plan_acceptance(const PlannedSpec& planned, const AcceptanceOptions& o) {
  const Plan& plan = planned.plan;
  AcceptancePlan a;
  a.options = o;
  a.roce = plan.technology == Technology::kRoce;
  a.gid_index = a.roce ? kRoceV2GidIndex : -1;
  a.line_gbps = plan.nic.rate_gbps / plan.topo.planes;
  a.expected_gbps = a.line_gbps * kRdmaLineRateShare;
  const Fabric f = Fabric::build(plan, planned.catalog);
  auto ix = index_cables(plan, planned.catalog, f);
  if (!ix) return ix.errors();
  a.cables = ix->cables;
  // Every NIC port's names, per plane: the cabling's node and port, the spec's RDMA device.
  const int planes = plan.topo.planes;
  std::vector<std::vector<NicNames>> names(static_cast<size_t>(f.nodes() * f.nics_per_node()),
                                           std::vector<NicNames>(static_cast<size_t>(planes)));
  {
    const auto ports = host_ports(planned);
    size_t i = 0;
    for_each_link(plan, planned.catalog, [&](const CableRun& r) {
      if (r.kind != LinkKind::kNodeLeaf) return;
      const auto nic = static_cast<size_t>(r.a_index * plan.nics_per_node + r.rail);
      names[nic][static_cast<size_t>(r.plane)] = {r.a_device, r.a_port, ports[i++].device};
    });
  }
  for (int pass = 1; pass <= 1 + o.burn_in_passes; ++pass) {
    int rounds = 0;
    std::vector<int> left_crossings;
    const long long left = schedule_pass(f, *ix, a.roce, pass, names, planes, a.tests, rounds,
                                         pass == 1 ? &left_crossings : nullptr);
    if (pass == 1) {
      a.rounds = rounds;
      a.uncovered = left;
      for (const int x : left_crossings) {
        const AcceptanceCable& c = a.cables[static_cast<size_t>(x / 2)];
        const std::string lo = c.a_device + ":" + c.a_port, hi = c.b_device + ":" + c.b_port;
        a.uncovered_directions.push_back(x % 2 == 0 ? lo + " -> " + hi : hi + " -> " + lo);
      }
    }
  }
  // A NIC alone in the fabric has no other NIC to test its cable against: no test is possible.
  const bool no_peer = f.nodes() * f.nics_per_node() < 2;
  a.lower_bound_rounds = lower_bound(f, *ix, a.lower_bound_reason);
  if (no_peer) {
    a.lower_bound_rounds = 0;
    a.lower_bound_reason = "one NIC port, and a link test runs between two";
  }
  if (a.roce)
    a.notes.push_back(
        "RoCE: each test's --flow_label fixes its QPs' UDP source port, and with it the path the "
        "switches' ECMP hash gives it; the path is the one gpufabric's model of that hash gives "
        "(Toeplitz under the seeds the generated configs set). A switch ASIC hashes with its own "
        "function: where it differs the test still crosses its node-leaf cables, but its "
        "leaf-spine cables may differ. The burn-in's pairings differ, so that each cable is "
        "crossed by several tests; confirm the uplinks on the switches' port counters.");
  else
    a.notes.push_back(
        "InfiniBand: a QP's path is the subnet manager's (routing by destination LID), not "
        "chosen by the test; the plan uses the model's routes, so its coverage of leaf-spine "
        "cables holds in the model. Record each test's real path with ibtracert (the runbook's "
        "step 2) and compare it with link-tests.csv's path.");
  if (a.uncovered > 0) {
    a.notes.push_back(
        fmt::format("{} cable direction{} crossed by no test of pass 1 ({}): {}; expected.json "
                    "(uncovered) and the list below name {}",
                    a.uncovered, a.uncovered == 1 ? " is" : "s are",
                    no_peer ? "the fabric has one NIC port, and a link test needs two"
                            : "no pairing of the rounds reached them",
                    no_peer ? "check the link's state and rate (ibstat, or ethtool on RoCE) instead"
                            : "test them by hand, between NICs whose path crosses them",
                    a.uncovered == 1 ? "it" : "them"));
  }
  // Names the scripts take from the spec's addressing, where the spec gives none: what stands in
  // for them would fail on a real host (ethtool -S nic0 under set -e stops the burn-in's
  // counters at the first port; NCCL_SOCKET_IFNAME==mgmt0 finds no interface).
  const AddressingSpec& given = planned.spec.addressing;
  if (a.roce && given.host_netdevs.empty())
    a.placeholders.push_back(
        "addressing.host_netdevs: the burn-in's ethtool -S reads nic0, nic1, ... (each rail's "
        "netdev, as ibdev2netdev shows them)");
  if (given.host_rdma_devices.empty())
    a.placeholders.push_back(
        "addressing.host_rdma_devices: the link tests and counters use mlx5_0, mlx5_1, ... in "
        "rail order (as ibdev2netdev shows them)");
  if (a.roce && given.mgmt_netdev == kMgmtNetdevPlaceholder)
    a.placeholders.push_back(fmt::format(
        "addressing.mgmt_netdev: the nccl-tests scripts pass NCCL_SOCKET_IFNAME=={} (the "
        "management interface NCCL bootstraps over)",
        kMgmtNetdevPlaceholder));
  // NCCL's environment as the host configurations set it (configs --target host, nccl.env).
  if (a.roce) {
    auto ap = plan_addresses(plan, planned.catalog, planned.spec.addressing);
    if (!ap) {
      std::vector<Diagnostic> errs;
      for (const auto& d : ap.errors()) errs.push_back(planned.spec.at(d.key, d.message, d.hint));
      return errs;
    }
    for (const auto& [path, text] : host_files(plan, *ap)) {
      if (path.size() < 9 || path.substr(path.size() - 9) != "/nccl.env") continue;
      size_t p = 0;
      while (p < text.size()) {
        const size_t e = std::min(text.find('\n', p), text.size());
        const std::string line = text.substr(p, e - p);
        if (!line.empty() && line[0] != '#') a.nccl_env.push_back(line);
        p = e + 1;
      }
      break;  // every node's nccl.env sets the same variables
    }
  }
  // nccl-tests at growing scale, each size with the simulator's busbw at that node count.
  std::vector<std::pair<std::string, int>> scales;
  if (plan.nodes >= 2) scales.push_back({"2-nodes", 2});
  if (plan.topo.nodes_per_unit > 2 && plan.topo.nodes_per_unit < plan.nodes)
    scales.push_back({"1-unit", plan.topo.nodes_per_unit});
  if (plan.nodes > 2) scales.push_back({"cluster", plan.nodes});
  for (const auto& [name, nodes] : scales)
    for (const auto& [op_name, binary] : kNcclBinaries) {
      NcclStage st{name, nodes, *parse_op(op_name), binary, {}};
      SimOptions so;
      so.op = st.op;
      so.nodes = nodes;
      auto model = CollectiveModel::build(f, plan, so);
      if (!model) return model.errors();
      for (double b = kNcclMinBytes; b <= kNcclMaxBytes; b *= 2)
        st.expected.push_back({b, model->at(b).busbw_gbs});
      a.nccl.push_back(std::move(st));
    }
  return a;
}

std::vector<OutputFile> acceptance_files(const PlannedSpec& planned, const AcceptancePlan& a) {
  const Plan& plan = planned.plan;
  std::vector<OutputFile> out;
  // link-tests.csv: every test, its expectation and its path.
  std::string csv =
      "id,pass,round,src_node,src_port,src_device,dst_node,dst_port,dst_device,flow_label,"
      "tcp_port,expected_gbps,latency_floor_us,switches,path\n";
  for (const auto& t : a.tests) {
    std::string path;
    for (int x : t.crossings) {
      const auto& c = a.cables[static_cast<size_t>(x / 2)];
      path += (path.empty() ? "" : " | ") +
              (x % 2 ? fmt::format("{}:{}>{}:{}", c.b_device, c.b_port, c.a_device, c.a_port)
                     : fmt::format("{}:{}>{}:{}", c.a_device, c.a_port, c.b_device, c.b_port));
    }
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.1f},{:.2f},{},{}\n", t.id, t.pass,
                       t.round, t.src_node, t.src_port, t.src_device, t.dst_node, t.dst_port,
                       t.dst_device, t.flow_label, t.tcp_port, a.expected_gbps, t.latency_floor_us,
                       t.switches, csv_field(path));
  }
  out.push_back({"link-tests.csv", csv});
  // Round scripts.
  std::map<std::pair<int, int>, std::vector<const LinkTest*>> by_round;
  for (const auto& t : a.tests) by_round[{t.pass, t.round}].push_back(&t);
  for (const auto& [key, ts] : by_round) {
    const auto [pass, round] = key;
    const std::string file = pass == 1
                                 ? fmt::format("link-tests/round-{:02d}.sh", round)
                                 : fmt::format("burn-in/pass-{}/round-{:02d}.sh", pass, round);
    out.push_back(
        {file, round_script(a, ts,
                            pass == 1 ? fmt::format("link tests, round {}", round)
                                      : fmt::format("burn-in pass {}, round {}", pass, round),
                            pass == 1 ? a.options.duration_s : a.options.burn_in_duration_s)});
  }
  // Counters before and after the burn-in.
  const auto ports = host_ports(planned);
  std::string cs =
      "#!/bin/sh\n# generated by gpufabric: error counters of every rail port; run with 'before' "
      "ahead of the burn-in and 'after' behind it.\nset -eu\nW=\"${1:?before or after}\"\n"
      "R=\"${RESULTS:-results}\"\nS=\"${SSH:-ssh}\"\n";
  cs += plan_file_lines(a);
  for (const auto& h : ports) {
    const std::string p = counter_path("$W", h);
    cs += fmt::format("mkdir -p \"$R/{}\"\n", p.substr(0, p.rfind('/')));
    cs += a.roce ? fmt::format("$S {} ethtool -S {} > \"$R/{}\"\n", h.node, h.netdev, p)
                 : fmt::format(
                       "$S {0} 'perfquery -C {1} -P 1; perfquery -x -C {1} -P 1' > \"$R/{2}\"\n",
                       h.node, h.device, p);
  }
  out.push_back({"burn-in/counters.sh", cs});
  // nccl-tests: a hostfile and an mpirun line per stage.
  std::string env;
  for (const auto& e : a.nccl_env) env += " -x " + shell_quote(e);
  std::set<std::string> stages;
  for (const auto& st : a.nccl) {
    if (stages.insert(st.name).second) {
      std::string hosts;
      int n = 0;
      for_each_link(plan, planned.catalog, [&](const CableRun& r) {
        if (r.kind == LinkKind::kNodeLeaf && r.rail == 0 && r.plane == 0 && n < st.nodes) {
          hosts += fmt::format("{} slots={}\n", r.a_device, plan.gpus_per_node);
          ++n;
        }
      });
      out.push_back({fmt::format("nccl/hosts-{}.txt", st.name), hosts});
      std::string sh = fmt::format(
          "#!/bin/sh\n# generated by gpufabric: nccl-tests on {} nodes ({} GPUs), one process per "
          "GPU; NCCL's environment as the host configs set it.\n# NCCL_TESTS: the nccl-tests "
          "build folder (default ./build); RESULTS: the results folder.\nset -eu\n"
          "R=\"${{RESULTS:-results}}\"\nT=\"${{NCCL_TESTS:-build}}\"\nmkdir -p \"$R/nccl/{}\"\n",
          st.nodes, 1LL * st.nodes * plan.gpus_per_node, st.name);
      sh += plan_file_lines(a);
      for (const auto& other : a.nccl)
        if (other.name == st.name)
          sh += fmt::format(
              "mpirun -np {} -N {} --hostfile \"$(dirname \"$0\")/hosts-{}.txt\" --bind-to numa{} "
              "\"$T/{}\" -b 1M -e 8G -f 2 -g 1 > \"$R/{}\"\n",
              1LL * other.nodes * plan.gpus_per_node, plan.gpus_per_node, other.name, env,
              other.binary, nccl_result_path(other));
      out.push_back({fmt::format("nccl/{}.sh", st.name), sh});
    }
  }
  out.push_back({"expected.json", acceptance_json(a).dump(2) + "\n"});
  // The runbook.
  std::string md = fmt::format("# Acceptance runbook: {}\n\n", plan.name);
  md += fmt::format(
      "Generated by gpufabric from the spec. {} cables of the compute fabric; every step below "
      "writes into one results folder (`RESULTS`, default `./results`) that `gpufabric check "
      "SPEC RESULTS/` reads back.\n\n",
      a.cables.size());
  if (!a.placeholders.empty()) {
    md +=
        "**Names to set first.** The spec does not give these, and the scripts use stand-ins "
        "that a real host will not have; set them in the spec and run `gpufabric acceptance` "
        "again:\n\n";
    for (const auto& p : a.placeholders) md += "- " + p + "\n";
    md += "\n";
  }
  md += "## 1. Before you start\n\n";
  md += a.roce ? "- Apply the host configurations (`gpufabric configs SPEC -o DIR --target host`: "
                 "netplan, RoCE QoS, memlock, nccl.env) and the switch configurations.\n"
               : "- Start the subnet manager with `gpufabric configs SPEC -o DIR` (opensm/); "
                 "`ibstat` shows every rail port Active at the planned rate.\n";
  md +=
      "- Install perftest and nccl-tests on every node; the scripts reach nodes by name over "
      "ssh (`SSH` overrides).\n\n";
  md += fmt::format(
      "## 2. Link tests (`sh link-tests/round-NN.sh`)\n\n{} tests in {} round(s) (no schedule "
      "needs fewer than {}: {}). Run the rounds one after the other; the tests of a round run at "
      "once "
      "and share no cable direction. Each test is `ib_write_bw` ({} QPs, {} s) then "
      "`ib_write_lat` between two NIC ports, server on the destination.\n\n",
      std::count_if(a.tests.begin(), a.tests.end(), [](const LinkTest& t) { return t.pass == 1; }),
      a.rounds, a.lower_bound_rounds, a.lower_bound_reason, a.options.qps, a.options.duration_s);
  md += fmt::format(
      "- Expected: `BW average` >= {:.0f} Gb/s, {:.0f} % of the {:.0f} Gb/s line rate (the "
      "guide §5: ib_write_bw reaches ~380 of 400 Gbps).\n- Latency: `t_typical` is at least the "
      "path's floor (link-tests.csv: its switches at the catalog's {:.0f} ns each, plus "
      "propagation); below it the traffic took a shorter path than planned (a cabling "
      "mistake).\n",
      a.expected_gbps, kRdmaLineRateShare * 100, a.line_gbps, planned.plan.sw.latency_ns);
  if (!a.roce)
    md +=
        "- Record each pair's real path: `ibtracert -C SRC_DEVICE SRC_LID DST_LID` (LIDs from "
        "`ibstat`).\n";
  for (const auto& n : a.notes) md += "- " + n + "\n";
  if (!a.uncovered_directions.empty()) {
    md += "\nCable directions no link test crosses:\n\n";
    for (const auto& d : a.uncovered_directions) md += "- `" + d + "`\n";
  }
  const bool burn_in_tests =
      std::any_of(a.tests.begin(), a.tests.end(), [](const LinkTest& t) { return t.pass > 1; });
  md += fmt::format(
      "\n## 3. Burn-in (`burn-in/`)\n\n1. `sh burn-in/counters.sh before`{}\n2. {}\n"
      "3. `sh burn-in/counters.sh after`\n\n"
      "Thresholds per rail port (after - before): link downs <= {:.0f}; symbol and FCS errors "
      "<= {:.0e} x bits received (the 10^-12 bit error ratio of IEEE 802.3 and the InfiniBand "
      "specification); {}\n\n",
      a.options.burn_in_passes == 0 ? " (before section 2's link tests)" : "",
      a.options.burn_in_passes == 0
          ? std::string("No burn-in passes (`--burn-in-passes 0`): the link tests of section 2 "
                        "run between the two counter readings, which judge their traffic alone.")
      : !burn_in_tests
          ? fmt::format("No link test to repeat (see section 2): keep the fabric under load "
                        "for the burn-in's {} s (the nccl-tests of section 4) between the two "
                        "counter readings.",
                        a.options.burn_in_duration_s)
          : fmt::format("The {} pass{} `sh burn-in/pass-N/round-NN.sh` (N from 2), each {} s a "
                        "test: the same coverage, paired differently (other nodes, other rails), "
                        "so that a failing cable is singled out by elimination.",
                        a.options.burn_in_passes, a.options.burn_in_passes == 1 ? "" : "es",
                        a.options.burn_in_duration_s),
      kMaxLinkDowns, kMaxBitErrorRatio,
      a.roce ? fmt::format("PFC pause frames on priority {} <= {:.0e} per packet received (the "
                           "pfc-pause-storm threshold of `gpufabric diagnose`).",
                           kRocePriority, kMaxPauseRatio)
             : "PortXmitWait is shown, not judged (congestion, not a cable fault).");
  md += fmt::format("## 4. nccl-tests at growing scale (`sh nccl/STAGE.sh`, smallest first)\n\n");
  md += a.nccl_env.empty()
            ? "InfiniBand: `configs` writes no host files; NCCL finds the HCAs itself.\n\n"
            : "Environment (the host configs' nccl.env, passed with `mpirun -x`): `" +
                  fmt::format("{}", fmt::join(a.nccl_env, "`, `")) + "`.\n\n";
  md += fmt::format(
      "Expected bus bandwidth (GB/s) from the simulator at each scale; sizes from 1 GiB are "
      "judged, {:.0f} % below still accepted:\n\n| stage | nodes | binary | 1 GiB | 8 GiB |\n|---|"
      "---:|---|---:|---:|\n",
      a.options.tolerance * 100);
  for (const auto& st : a.nccl) {
    auto at = [&](double b) {
      for (const auto& [bytes, bw] : st.expected)
        if (bytes == b) return bw;
      return 0.0;
    };
    md += fmt::format("| {} | {} | {} | {:.1f} | {:.1f} |\n", st.name, st.nodes, st.binary,
                      at(1 << 30), at(kNcclMaxBytes));
  }
  md +=
      "\nEvery size's figure is in expected.json.\n\n## 5. Read the results back\n\n"
      "```\ngpufabric check SPEC RESULTS/\n```\n\nThe results folder:\n\n```\n"
      "RESULTS/\n  acceptance-plan.txt            the plan the results follow (every script "
      "writes it)\n"
      "  link-tests/T0001-bw.txt        ib_write_bw client output of test T0001\n"
      "  link-tests/T0001-lat.txt       ib_write_lat client output\n"
      "  burn-in/pass-2/P2-T0001-bw.txt the burn-in's passes, the same two files a test\n"
      "  counters/before/NODE/DEVICE.txt  ethtool -S NETDEV (RoCE); perfquery, then perfquery -x "
      "(IB)\n"
      "  counters/after/NODE/DEVICE.txt\n"
      "  nccl/STAGE/all_reduce_perf.txt nccl-tests output, as printed\n```\n\n"
      "check prints PASS/FAIL per test and run, and for failed link tests the cable that only "
      "the failing tests share (exit 1 on any failure or missing result, 2 on a file it "
      "cannot read).\n";
  out.push_back({"runbook.md", md});
  return out;
}

std::string results_plan_text(const AcceptancePlan& a) {
  return fmt::format(
      "# gpufabric acceptance: the plan these results follow; gpufabric check reads it.\n"
      "burn-in-passes {}\n",
      a.options.burn_in_passes);
}

Result<int> parse_results_plan(const std::string& text, const std::string& file) {
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  std::optional<int> passes;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    auto error = [&](const std::string& message) {
      Diagnostic d = Diagnostic::in_file(
          file, "burn-in-passes", message,
          "the runbook's scripts write this file; run one of them again, or give check "
          "--burn-in-passes N");
      d.line = line_no;
      return d;
    };
    std::istringstream fields(line);
    std::string key, value, more;
    fields >> key >> value;
    if (key != "burn-in-passes") return error(fmt::format("unknown line '{}'", line.substr(0, 80)));
    int n = -1;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size() || n < 0 || n > kMaxBurnInPasses ||
        (fields >> more))
      return error(fmt::format("'{}' is not a count of burn-in passes (0 to {})",
                               value.substr(0, 40), kMaxBurnInPasses));
    passes = n;
  }
  if (!passes) {
    Diagnostic d = Diagnostic::in_file(file, "burn-in-passes", "names no burn-in passes",
                                       "run one of the runbook's scripts again, or give check "
                                       "--burn-in-passes N");
    return d;
  }
  return *passes;
}

std::string acceptance_text(const AcceptancePlan& a) {
  long long first = 0, burn = 0;
  for (const auto& t : a.tests) (t.pass == 1 ? first : burn)++;
  std::string s = fmt::format("Acceptance: {} cables of the compute fabric\n", a.cables.size());
  s += fmt::format("  link tests     {} in {} round{} (lower bound {}: {})\n", first, a.rounds,
                   a.rounds == 1 ? "" : "s", a.lower_bound_rounds, a.lower_bound_reason);
  constexpr std::size_t kNamedUncovered = 3;
  std::vector<std::string> named(
      a.uncovered_directions.begin(),
      a.uncovered_directions.begin() +
          static_cast<std::ptrdiff_t>(std::min(kNamedUncovered, a.uncovered_directions.size())));
  s += fmt::format(
      "  coverage       {}\n",
      a.uncovered == 0
          ? std::string("every cable, both directions")
          : fmt::format("{} cable direction{} uncovered: {}{} (the runbook lists {})", a.uncovered,
                        a.uncovered == 1 ? "" : "s", fmt::join(named, ", "),
                        a.uncovered_directions.size() > named.size() ? ", ..." : "",
                        a.uncovered == 1 ? "it" : "them"));
  s += fmt::format(
      "  expected       ib_write_bw >= {:.0f} Gb/s ({:.0f} % of {:.0f} Gb/s, guide §5)\n",
      a.expected_gbps, kRdmaLineRateShare * 100, a.line_gbps);
  if (a.options.burn_in_passes == 0)
    s += "  burn-in        none (--burn-in-passes 0): the error counters read before and "
         "after the link tests\n";
  else if (burn == 0)
    s += "  burn-in        no link test to repeat: the error counters read before and after "
         "the burn-in's time\n";
  else
    s += fmt::format("  burn-in        {} pass{}, {} tests, {} s each\n", a.options.burn_in_passes,
                     a.options.burn_in_passes == 1 ? "" : "es", burn, a.options.burn_in_duration_s);
  std::set<std::string> seen;
  for (const auto& st : a.nccl) {
    if (st.op != Op::kAllReduce) continue;
    double at1g = 0;
    for (const auto& [b, bw] : st.expected)
      if (b == 1 << 30) at1g = bw;
    s += fmt::format("  nccl-tests     {:<8} {:>5} nodes: all_reduce busbw {:.1f} GB/s at 1 GiB\n",
                     st.name, st.nodes, at1g);
  }
  for (const auto& p : a.placeholders)
    s += fmt::format("  placeholder    {}: set it in the spec before running the scripts\n", p);
  return s;
}

nlohmann::json acceptance_json(const AcceptancePlan& a) {
  // Per test, link-tests.csv (a cluster of 16k GPUs has 120k tests): here the counts.
  long long first = 0;
  for (const auto& t : a.tests) first += t.pass == 1;
  nlohmann::json nccl = nlohmann::json::array();
  for (const auto& st : a.nccl) {
    nlohmann::json sizes = nlohmann::json::array();
    for (const auto& [b, bw] : st.expected) sizes.push_back({{"bytes", b}, {"busbw_gbs", bw}});
    nccl.push_back({{"stage", st.name},
                    {"nodes", st.nodes},
                    {"binary", st.binary},
                    {"collective", op_name(st.op)},
                    {"expected", sizes}});
  }
  return {{"cables", a.cables.size()},
          {"rounds", a.rounds},
          {"lower_bound_rounds", a.lower_bound_rounds},
          {"uncovered_directions", a.uncovered},
          {"uncovered", a.uncovered_directions},
          {"expected_gbps", a.expected_gbps},
          {"line_gbps", a.line_gbps},
          {"tolerance", a.options.tolerance},
          {"nccl_env", a.nccl_env},
          {"link_tests", first},
          {"burn_in_tests", static_cast<long long>(a.tests.size()) - first},
          {"burn_in_passes", a.options.burn_in_passes},
          {"nccl", nccl},
          {"notes", a.notes},
          {"placeholders", a.placeholders}};
}

// ---- Reading a results folder back ----

namespace {

struct CounterReading {
  double link_downs = 0, symbol_errors = 0, rx_bytes = 0, pauses = 0, rx_packets = 0, wait = 0;
};

double counter(const std::map<std::string, double>& m, std::initializer_list<const char*> keys) {
  double v = 0;
  for (const char* k : keys)
    if (auto it = m.find(k); it != m.end()) v += it->second;
  return v;
}

Result<CounterReading> read_counters(const ResultFile& f, bool roce) {
  CounterReading c;
  if (roce) {
    auto s = parse_ethtool(f.text, f.path);
    if (!s) return s.errors();
    const auto& m = s->counters;
    // ConnectX (mlx5) counter names: the physical port's, as ethtool -S prints them.
    c.link_downs = counter(m, {"link_down_events_phy"});
    c.symbol_errors = counter(m, {"rx_symbol_err_phy", "rx_crc_errors_phy"});
    c.rx_bytes =
        counter(m, {"rx_bytes_phy"}) > 0 ? counter(m, {"rx_bytes_phy"}) : counter(m, {"rx_bytes"});
    c.rx_packets = counter(m, {"rx_packets_phy"}) > 0 ? counter(m, {"rx_packets_phy"})
                                                      : counter(m, {"rx_packets"});
    c.pauses = counter(m, {fmt::format("rx_prio{}_pause", kRocePriority).c_str(),
                           fmt::format("tx_prio{}_pause", kRocePriority).c_str()});
    return c;
  }
  auto q = parse_perfquery(f.text, f.path);
  if (!q) return q.errors();
  const auto& m = q->counters;
  c.link_downs = counter(m, {"LinkDownedCounter"});
  c.symbol_errors = counter(m, {"SymbolErrorCounter"});
  c.rx_bytes = counter(m, {"PortRcvData"}) * kIbDataWordBytes;
  c.wait = counter(m, {"PortXmitWait"});
  return c;
}

}  // namespace

Result<AcceptanceResult> check_acceptance(const PlannedSpec& planned, const AcceptancePlan& a,
                                          const std::vector<ResultFile>& files) {
  std::map<std::string, const ResultFile*> by_path;
  for (const auto& f : files) by_path[f.path] = &f;
  AcceptanceResult res;
  std::vector<Diagnostic> errs;
  std::set<std::string> read;
  auto find = [&](const std::string& p) -> const ResultFile* {
    auto it = by_path.find(p);
    if (it == by_path.end()) return nullptr;
    read.insert(p);
    return it->second;
  };
  auto missing = [&](const std::string& what, const std::string& id, const std::string& p) {
    res.rows.push_back({"missing", id, p, what + ": no result file", 0, 0, false, true});
    ++res.missing;
  };
  // Link tests: bandwidth judged against the line-rate share; latency against the floor.
  std::vector<const LinkTest*> failed, passed;
  for (const auto& t : a.tests) {
    const std::string bw_path = link_test_result_path(t, false);
    const ResultFile* bw = find(bw_path);
    if (!bw) {
      missing("ib_write_bw", t.id, bw_path);
    } else if (const auto why = perftest_run_failure(bw->text)) {
      // The test ran and failed (a dead cable's "Completion with error", ssh's "No route to
      // host"): a failed link test, which the suspect's search takes as one.
      res.rows.push_back({"link", t.id, bw_path,
                          fmt::format("{}:{} -> {}:{}: no result, {}", t.src_node, t.src_port,
                                      t.dst_node, t.dst_port, *why),
                          0, a.expected_gbps, false, true});
      failed.push_back(&t);
    } else if (auto p = parse_perftest(bw->text, bw->path); !p) {
      errs.insert(errs.end(), p.errors().begin(), p.errors().end());
    } else if (p->latency) {
      errs.push_back(Diagnostic::at(bw->path, 1, 0, "",
                                    "a latency test where ib_write_bw's "
                                    "output belongs"));
    } else {
      // A bidirectional test (-b) reports both directions' sum: judged a direction.
      const double g = p->rows.back().bw_avg_gbps / std::max(1, p->directions);
      // Above the port's line rate (beyond the printed rounding) it is not this link's test.
      const bool above = g > a.line_gbps * kAbovePortLineRateShare;
      const bool ok = g >= a.expected_gbps - 1e-9 && !above;
      res.rows.push_back(
          {"link", t.id, bw_path,
           fmt::format("{}:{} -> {}:{}{}", t.src_node, t.src_port, t.dst_node, t.dst_port,
                       above ? fmt::format(": above the port's {:g} Gb/s line rate, not this "
                                           "link's test (or edited)",
                                           a.line_gbps)
                             : ""),
           g, a.expected_gbps, ok, true});
      (ok ? passed : failed).push_back(&t);
    }
    const std::string lat_path = link_test_result_path(t, true);
    const ResultFile* lat = find(lat_path);
    if (!lat) {
      missing("ib_write_lat", t.id, lat_path);
    } else if (const auto why = perftest_run_failure(lat->text)) {
      res.rows.push_back({"latency", t.id, lat_path, "no result, " + *why, 0,
                          t.latency_floor_us, false, true});
    } else if (auto p = parse_perftest(lat->text, lat->path); !p) {
      errs.insert(errs.end(), p.errors().begin(), p.errors().end());
    } else if (!p->latency) {
      errs.push_back(Diagnostic::at(lat->path, 1, 0, "",
                                    "a bandwidth test where ib_write_lat's "
                                    "output belongs"));
    } else {
      const double us = p->rows.back().t_typical_us;
      const bool ok = us >= t.latency_floor_us;
      res.rows.push_back({"latency", t.id, lat_path,
                          ok ? "t_typical at or above the path's floor"
                             : "below the planned path's floor: a shorter path than planned",
                          us, t.latency_floor_us, ok, true});
    }
  }
  res.failed_links = static_cast<int>(failed.size());
  res.passed_links = static_cast<int>(passed.size());
  // The suspect: one cable (and the directions it fails in) that every failed test crosses in
  // a bad direction and no passed test crosses in one.
  if (!failed.empty()) {
    std::vector<char> passed_dir(2 * a.cables.size(), 0);
    for (const auto* t : passed)
      for (int x : t->crossings) passed_dir[static_cast<size_t>(x)] = 1;
    std::set<int> candidates;
    for (int x : failed.front()->crossings) candidates.insert(x / 2);
    for (int c : candidates) {
      for (int mask : {1, 2, 3}) {  // bad a->b, bad b->a, bad both
        bool ok = true;
        for (int d = 0; d < 2 && ok; ++d)
          if ((mask >> d & 1) && passed_dir[static_cast<size_t>(2 * c + d)]) ok = false;
        for (const auto* t : failed) {
          if (!ok) break;
          bool crosses = false;
          for (int x : t->crossings) crosses = crosses || (x / 2 == c && (mask >> (x % 2) & 1));
          ok = crosses;
        }
        if (ok) {
          res.suspects.push_back({a.cables[static_cast<size_t>(c)].name(), mask == 1   ? "a->b"
                                                                           : mask == 2 ? "b->a"
                                                                                       : "both"});
          break;
        }
      }
    }
    if (res.suspects.empty() && failed.size() == 1)
      res.suspect_note =
          "no cable explains the failed test: each cable on its path passes in another test, so "
          "look at its two hosts' NICs and set-up (a slow host, a NIC's firmware or PCIe link); "
          "see its path in link-tests.csv";
    else if (res.suspects.empty())
      res.suspect_note =
          "no single cable explains every failed test: more than one fault (or a slow host); see "
          "each failed test's path in link-tests.csv";
    else if (res.suspects.size() > 1)
      res.suspect_note = fmt::format(
          "the evidence cannot single out one cable: {} candidates, each crossed only by "
          "failing tests; run the burn-in passes (paired differently) to eliminate the others",
          res.suspects.size());
    else
      res.suspect_note = "the one cable that only the failing tests share";
  }
  // Burn-in counters, per rail port.
  for (const auto& h : host_ports(planned)) {
    const std::string pb = counter_path("before", h), pa = counter_path("after", h);
    const ResultFile *b = find(pb), *af = find(pa);
    if (!b || !af) {
      missing("burn-in counters", h.node + ":" + h.device, b ? pa : pb);
      continue;
    }
    auto cb = read_counters(*b, a.roce), ca = read_counters(*af, a.roce);
    if (!cb || !ca) {
      for (const auto* r : {&cb, &ca})
        if (!*r) errs.insert(errs.end(), r->errors().begin(), r->errors().end());
      continue;
    }
    const std::string port = h.node + ":" + h.device;
    // Counters only grow: one that went down between the two readings was cleared during the
    // burn-in (or the before and after files are swapped), and the differences judge nothing.
    const std::string went_down = [&]() -> std::string {
      for (const auto& [name, before, after] :
           {std::tuple{"received bytes", cb->rx_bytes, ca->rx_bytes},
            std::tuple{"received packets", cb->rx_packets, ca->rx_packets},
            std::tuple{"link downs", cb->link_downs, ca->link_downs},
            std::tuple{"symbol/FCS errors", cb->symbol_errors, ca->symbol_errors},
            std::tuple{"PFC pauses", cb->pauses, ca->pauses},
            std::tuple{"PortXmitWait", cb->wait, ca->wait}})
        if (after < before)
          return fmt::format("{} went down from {:g} to {:g}", name, before, after);
      return "";
    }();
    if (!went_down.empty()) {
      errs.push_back(Diagnostic::in_file(
          pa, "",
          fmt::format("{}'s counters went backwards since {} ({}): they were cleared during the "
                      "burn-in, or the before and after readings are swapped",
                      port, pb, went_down),
          "read them with burn-in/counters.sh before and after one burn-in, without clearing "
          "them between"));
      continue;
    }
    const double bits = std::max(0.0, ca->rx_bytes - cb->rx_bytes) * 8;
    const double downs = ca->link_downs - cb->link_downs;
    res.rows.push_back({"counter", port, pa, "link downs during the burn-in", downs, kMaxLinkDowns,
                        downs <= kMaxLinkDowns, true});
    const double errors = ca->symbol_errors - cb->symbol_errors, budget = kMaxBitErrorRatio * bits;
    res.rows.push_back({"counter", port, pa,
                        fmt::format("symbol/FCS errors over {:.3g} bits received", bits), errors,
                        budget, errors <= budget, true});
    if (a.roce) {
      const double pkts = std::max(1.0, ca->rx_packets - cb->rx_packets);
      const double pauses = ca->pauses - cb->pauses;
      res.rows.push_back({"counter", port, pa,
                          fmt::format("PFC pauses (priority {}) per packet", kRocePriority),
                          pauses / pkts, kMaxPauseRatio, pauses / pkts <= kMaxPauseRatio, true});
    } else {
      res.rows.push_back({"counter", port, pa, "PortXmitWait (congestion, shown)",
                          ca->wait - cb->wait, 0, true, false});
    }
  }
  // nccl-tests: each stage's file against the simulation at its node count (check's rows).
  for (const auto& st : a.nccl) {
    const std::string p = nccl_result_path(st);
    const ResultFile* f = find(p);
    if (!f) {
      missing(st.binary, st.name, p);
      continue;
    }
    ToolOutput o{f->path, f->text, detect_output_kind(f->text)};
    if (o.kind != OutputKind::kNcclTests) o.kind = OutputKind::kNcclTests;  // the layout says so
    auto run = parse_nccl_tests(o.text, o.file);
    if (!run) {
      errs.insert(errs.end(), run.errors().begin(), run.errors().end());
      continue;
    }
    const int nodes = nodes_of(*run, planned.plan.gpus_per_node);
    if (nodes != st.nodes) {
      res.rows.push_back({"nccl", st.name + " " + st.binary, p,
                          fmt::format("ran on {} nodes; the stage plans {}", nodes, st.nodes),
                          static_cast<double>(nodes), static_cast<double>(st.nodes), false, true});
      continue;
    }
    if (!run->collective.empty() && run->collective != op_name(st.op)) {
      res.rows.push_back({"nccl", st.name + " " + st.binary, p,
                          fmt::format("this is {}_perf's output; the layout puts {} here",
                                      run->collective, st.binary),
                          0, 0, false, true});
      continue;
    }
    // Outputs of nccl-tests before 2.13 do not name their test: the layout does.
    if (run->collective.empty())
      o.text = fmt::format("# Collective test starting: {}\n", st.binary) + o.text;
    auto c = check_measurements(planned.plan, planned.catalog, {o}, a.options.tolerance);
    if (!c) {
      errs.insert(errs.end(), c.errors().begin(), c.errors().end());
      continue;
    }
    bool judged = false;
    for (const auto& r : c->rows) {
      judged = judged || r.judged;
      res.rows.push_back({"nccl", fmt::format("{} {} {:.0f}", st.name, st.binary, r.bytes), p,
                          r.note.empty() ? "busbw GB/s" : r.note, r.measured, r.expected, r.ok(),
                          r.judged});
    }
    if (!judged)
      res.rows.push_back({"nccl", st.name + " " + st.binary, p,
                          "no size of 1 GiB or more: nothing judged (run -e 8G)", 0, 0, false,
                          true});
  }
  if (!errs.empty()) return errs;
  // A folder with none of the runbook's files is the wrong folder, not a failed acceptance.
  if (read.empty())
    return Diagnostic::in_file(
        ".", "RESULTS", "holds none of the results the acceptance runbook names",
        "give the folder the runbook's scripts wrote into (link-tests/T0001-bw.txt, "
        "counters/before/..., nccl/2-nodes/all_reduce_perf.txt): see gpufabric acceptance -o");
  for (const auto& f : files)
    if (!read.count(f.path))
      res.rows.push_back(
          {"ignored", "", f.path, "not a file the runbook names", 0, 0, true, false});
  res.pass = true;
  for (const auto& r : res.rows)
    if (r.judged && !r.ok) res.pass = false;
  return res;
}

std::string acceptance_result_text(const AcceptanceResult& r) {
  std::string s;
  std::map<std::string, std::pair<int, int>> tally;  // what -> (ok, failed)
  for (const auto& row : r.rows) {
    if (!row.judged) continue;
    auto& t = tally[row.what];
    (row.ok ? t.first : t.second)++;
  }
  for (const auto& row : r.rows) {
    if (row.ok || !row.judged) continue;
    // A missing result has no figure to show: "-", as a table's empty cell.
    if (row.what == "missing")
      s += fmt::format("FAIL  {:<8} {:<22} {:>10} {:<16}  {}  [{}]\n", row.what, row.id, "-", "",
                       row.detail, row.file);
    else
      s += fmt::format("FAIL  {:<8} {:<22} {:>10.4g} (expected {}{:.4g})  {}  [{}]\n", row.what,
                       row.id, row.measured, row.what == "counter" ? "<= " : ">= ", row.expected,
                       row.detail, row.file);
  }
  for (const auto& [what, t] : tally)
    s += fmt::format("{:<8} {} PASS, {} FAIL\n", what, t.first, t.second);
  if (!r.suspects.empty() || !r.suspect_note.empty()) {
    s += fmt::format("Suspect cable ({}):\n", r.suspect_note);
    for (const auto& c : r.suspects) s += fmt::format("  {}  (slow {})\n", c.cable, c.direction);
  }
  s += r.pass ? "Verdict: PASS\n" : "Verdict: FAIL\n";
  return s;
}

nlohmann::json acceptance_result_json(const AcceptanceResult& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : r.rows)
    rows.push_back(
        {{"what", row.what},
         {"id", row.id},
         {"file", utf8_or_replacement(row.file)},
         {"detail", row.detail},
         // A missing result measured nothing: null, not 0.
         {"measured", row.what == "missing" ? nlohmann::json() : nlohmann::json(row.measured)},
         {"expected", row.what == "missing" ? nlohmann::json() : nlohmann::json(row.expected)},
         {"ok", row.ok},
         {"judged", row.judged}});
  nlohmann::json sus = nlohmann::json::array();
  for (const auto& c : r.suspects) sus.push_back({{"cable", c.cable}, {"direction", c.direction}});
  return {{"verdict", r.pass ? "pass" : "fail"},
          {"failed_link_tests", r.failed_links},
          {"passed_link_tests", r.passed_links},
          {"missing", r.missing},
          {"suspects", sus},
          {"suspect_note", r.suspect_note},
          {"rows", rows}};
}

}  // namespace gf
