#include "sim/nccl_cost.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "sim/nccl_constants.h"

namespace gf {
std::optional<Algorithm> parse_algorithm(const std::string& text) {
  std::string s;  // NCCL_ALGO's names are read in any case (Ring, NVLSTree's nvls_tree is ours)
  for (char c : text) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "sharp" || s == "collnet_direct") return Algorithm::kCollNet;
  return parse_name(kAlgorithmNames, s);
}

std::optional<Protocol> parse_protocol(const std::string& s) {
  for (const auto& e : kProtocolNames) {
    const std::string n = e.name;
    if (n.size() == s.size() && std::equal(n.begin(), n.end(), s.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        }))
      return e.value;
  }
  return std::nullopt;
}

double bus_factor(Op op, long long n) {
  const double N = static_cast<double>(n);
  switch (op) {
    case Op::kAllReduce:
      return n > 1 ? 2 * (N - 1) / N : 0;
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAlltoall:
      return n > 1 ? (N - 1) / N : 0;
    default:
      return 1;
  }
}

double ring_traffic_factor(Op op, long long n) {
  const double N = static_cast<double>(n);
  switch (op) {
    case Op::kAllReduce:
      return 2 * (N - 1) / N;
    case Op::kAllGather:
    case Op::kReduceScatter:
      return (N - 1) / N;
    default:
      return 1.0;
  }
}

namespace {
const nccl::ReleaseTerms& terms(NcclRelease r);
}  // namespace

bool release_has_blackwell(NcclRelease r) { return terms(r).blackwell_rows; }

int release_max_channels(NcclRelease r) { return terms(r).max_channels; }

bool release_has_pat(NcclRelease r) { return terms(r).has_pat; }

namespace {
// A PCIe x16 link as NCCL's topology rates it, GB/s: per lane 2.5 GT/s 15, 5 GT/s 30, 8 GT/s 60,
// 16 GT/s 120, 32 GT/s 240, 64 GT/s 480 (x100 Mb/s, topo.cc@v2.29.7-1:446-448), x16 / 80: 48 for
// Gen5 x16.
double nccl_pcie_x16_GBps(int pcie_gen) {
  const double lane = pcie_gen >= 6 ? 480 : pcie_gen == 5 ? 240 : pcie_gen == 4 ? 120 : 60;
  return 16 * lane / 80;
}
}  // namespace

NvlsTuning nvls_tuning(NcclRelease r, GpuGeneration g, int domains, int domain_gpus,
                       double nic_path_GBps, bool nic_on_gpu_switch) {
  const nccl::ReleaseTerms& t = terms(r);
  const bool across = domains > 1;
  NvlsTuning v;
  v.channels = g == GpuGeneration::kBlackwell ? t.nvls_channels_blackwell[across ? 1 : 0]
                                              : nccl::kNvlsChannelsHopper;
  v.chunk_bytes = nccl::kNvlsChunkBytes;
  double tree_max = 0;  // 0: NCCL_NVLSTREE_MAX_CHUNKSIZE's default
  if (t.nvls_sm100_tuning && g == GpuGeneration::kBlackwell && across) {
    // ncclNvlsTreeSm100Tuning (nvls.cc@v2.30.7-1:164-200): `gpuToNicPathType <= PATH_PXB` is
    // the NIC on the GPU's PCIe switch (HGX and DGX boards); a NIC on Grace is PATH_P2C.
    const double bw = nic_path_GBps;
    const int ppn = domain_gpus;
    if (domains == 2 && bw >= nccl::kNvlsSm100NicGBs) {
      v.channels = nccl::kNvlsSm100ChannelsWide;
      tree_max = nccl::kNvlsChunkBytes;
      if (ppn <= 4) {
        v.chunk_bytes = tree_max = nccl::kNvlsSm100ChunkLarge;
      } else if (ppn >= 16 ||
                 (ppn <= 8 && nic_on_gpu_switch && bw < nccl::kNvlsSm100FastNicGBs)) {
        tree_max = nccl::kNvlsSm100TreeChunkSmall;
      }
    } else if (bw >= nccl::kNvlsSm100FastNicGBs) {
      if (ppn <= 8) {
        v.channels = nccl::kNvlsSm100Channels;
        v.chunk_bytes = tree_max = nccl::kNvlsSm100ChunkLarge;
      } else {
        v.channels = nccl::kNvlsSm100ChannelsWide;
        tree_max = ppn < 32 ? nccl::kNvlsChunkBytes : nccl::kNvlsSm100TreeChunkSmall;
      }
    } else if (bw >= nccl::kNvlsSm100NicGBs) {
      v.channels = nccl::kNvlsSm100Channels;
      tree_max = nic_on_gpu_switch ? nccl::kNvlsSm100TreeChunkSmall : nccl::kNvlsChunkBytes;
    }
  }
  // NVLS Tree starts from the release's chunk (v2.21 on: comm->nvlsChunkSize), at most
  // NCCL_NVLSTREE_MAX_CHUNKSIZE, whose default is 64 KiB from 4 nodes on (enqueue.cc@v2.29.7-1:
  // 2173-2176; nvls.cc@v2.30.7-1:227-233 where the tuning set none).
  const double start = t.nvls_sm100_tuning ? v.chunk_bytes : t.nvls_tree_chunk_bytes;
  if (tree_max <= 0)
    tree_max = t.nvls_tree_max_from_4_nodes && domains >= 4 ? nccl::kNvlsTreeChunkBytesFrom4Nodes
                                                            : start;
  v.tree_chunk_bytes = std::min(start, tree_max);
  return v;
}

double nic_path_GBps(double nic_GBps, int pcie_gen) {
  return std::min(nic_GBps, nccl_pcie_x16_GBps(pcie_gen));
}

namespace {

const nccl::ReleaseTerms& terms(NcclRelease r) {
  switch (r) {
    case NcclRelease::kV2_18:
      return nccl::kV2_18;
    case NcclRelease::kV2_20:
      return nccl::kV2_20;
    case NcclRelease::kV2_21:
      return nccl::kV2_21;
    case NcclRelease::kV2_24:
      return nccl::kV2_24;
    case NcclRelease::kV2_26:
      return nccl::kV2_26;
    case NcclRelease::kV2_27:
      return nccl::kV2_27;
    case NcclRelease::kV2_28_7:
      return nccl::kV2_28_7;
    case NcclRelease::kV2_28:
      return nccl::kV2_28;
    case NcclRelease::kV2_29:
      return nccl::kV2_29;
    case NcclRelease::kV2_30:
      break;
  }
  return nccl::kV2_30;
}

// The row of the per-generation tables: v2.18 has no Blackwell row and runs it as Hopper.
int generation_row(const CostShape& s) {
  if (!release_has_blackwell(s.release) && s.generation == GpuGeneration::kBlackwell)
    return static_cast<int>(GpuGeneration::kHopper);
  return static_cast<int>(s.generation);
}

// NCCL's nvlsEfficiency of the GPU (tuning.cc): Blackwell's, else Hopper's.
double nvls_efficiency(GpuGeneration g) {
  return g == GpuGeneration::kBlackwell ? nccl::kNvlsEfficiencyBlackwell
                                        : nccl::kNvlsEfficiencyHopper;
}

// tuning.cc's nodes class: 1, 2, or 3 and more nodes.
int nodes_class(int domains) { return domains <= 2 ? std::max(0, domains - 1) : 2; }

// log2i: floor of log2, 0 for n < 2 (NCCL's own, src/include/utils.h).
int log2_floor(long long n) {
  int k = 0;
  while (n >= 2) {
    n >>= 1;
    ++k;
  }
  return k;
}

// The ring's steps (nsteps in tuning.cc): all_reduce 2(N-1), gather-type N-1, others N.
long long ring_steps(Op op, long long n) {
  return op == Op::kAllReduce                                 ? 2 * (n - 1)
         : (op == Op::kAllGather || op == Op::kReduceScatter) ? n - 1
                                                              : n;
}

// The hops of a broadcast's or reduce's chain that cross the network: a ring has one network
// edge a node (connect.cc@v2.29.7-1:95-113) and the chain drops only the edge into the root,
// so n where the root is not its node's entry GPU, which on nodes of several NICs holds for
// most channels (the search starts each channel's ring at another NIC's GPU, search.cc:678,
// 729-731) and sets the time; n - 1 with one GPU a node (at most N - 1).
long long chain_network_hops(const CostShape& s) {
  return s.domains > 1 ? std::min<long long>(s.domains, std::max(0LL, s.ranks - 1)) : 0;
}

// Bus bandwidth to the payload's (algorithm) bandwidth of a ring, and of NVLS and NVLS Tree in
// v2.29: N / nsteps (tuning.cc@v2.29.7-1:349).
double bus_to_alg(const CostShape& s) {
  return static_cast<double>(s.ranks) /
         static_cast<double>(std::max(1LL, ring_steps(s.op, s.ranks)));
}

// What an NVLink step of the time costs beyond NCCL's hwLat[NVLINK], us: an NVL72 rack's switch
// trays (kRackNvlinkStepUs) and a profile's own (nvlink_hop_us). NCCL's estimate has neither.
double nvlink_step_extra_us(const CostShape& s) {
  return (s.nvlink_across_trays ? nccl::kRackNvlinkStepUs : 0.0) + s.nvlink_hop_us;
}

// One network step of algorithm `al`'s latency, us: NCCL's hwLat[NET] (Tree's with one GPU per
// node where `ppn1_tree_net`, v2.23+) plus the fabric's own hop.
double network_step_us(nccl::Algo al, Protocol p, const CostShape& s, bool ppn1_tree_net) {
  const double ppn = static_cast<double>(s.ranks) / std::max(1, s.domains);
  const nccl::Algo net_al = ppn1_tree_net && ppn == 1 ? nccl::kTree : al;
  return static_cast<double>(
             terms(s.release).hw_latency_us[nccl::kNet][net_al][static_cast<int>(p)]) +
         s.net_hop_us;
}

// What a data step across the network costs the time beyond network_step_us: LL's staging in
// the host's memory (kLLNetStagingUs), which NCCL's estimate leaves out.
double net_staging_us(Protocol p) { return p == Protocol::kLL ? nccl::kLLNetStagingUs : 0.0; }

}  // namespace

double latency_us(Algorithm a, Protocol p, const CostShape& s, LatencyUse use) {
  const nccl::ReleaseTerms& t = terms(s.release);
  // Two of the release's terms are estimates NCCL itself later corrected (v2.23.4-1, kept to
  // v2.29.7-1:356-376): with one GPU per node the network step is fully exposed and costs
  // Tree's network latency, and an all_reduce ring crosses the network 2(n-1) times, not 2n.
  // The hardware behaved so before the correction too: the time takes the corrected count,
  // the tuner's choice keeps the release's own.
  const bool timed = use == LatencyUse::kTime;
  const bool ppn1_tree_net = timed || t.ppn1_uses_tree_net_latency;
  const bool inter_2n = !timed && t.ring_allreduce_inter_2n;
  const long long N = s.ranks;
  const int n = std::max(1, s.domains);
  const double ppn = static_cast<double>(N) / n;
  const int pi = static_cast<int>(p);
  // The rack's and the profile's NVLink step latency: the time's, not the tuner's.
  const double rack_step = timed ? nvlink_step_extra_us(s) : 0.0;
  // A domain over PCIe takes NCCL's PCI row for its hops (intraHw, tuning.cc@v2.29.7-1:360).
  auto hw = [&](nccl::Hw h, nccl::Algo al) {
    if (h == nccl::kNvlink && s.scaleup_pcie) h = nccl::kPci;
    return static_cast<double>(t.hw_latency_us[h][al][pi]) + (h == nccl::kNvlink ? rack_step : 0);
  };
  auto base = [&](nccl::Algo al) { return static_cast<double>(t.base_latency_us[al][pi]); };
  // A network step: the algorithm's (Tree's with one GPU per node, v2.23+), plus the fabric, and
  // in the time LL's staging in host memory.
  auto inter = [&](nccl::Algo al) {
    return network_step_us(al, p, s, ppn1_tree_net) + (timed ? net_staging_us(p) : 0.0);
  };
  switch (a) {
    case Algorithm::kRing: {
      const long long steps = ring_steps(s.op, N);
      if (s.op == Op::kBroadcast || s.op == Op::kReduce) {
        if (timed) {
          // The time: the chain's hops each at its own link's step latency, NVLink's inside a
          // node and the network's between nodes (chain_network_hops); the chunks' fill is the
          // pipeline's (pipeline_run).
          const long long hops = std::max(0LL, N - 1), net = chain_network_hops(s);
          return base(nccl::kRing) +
                 static_cast<double>(hops - net) * hw(nccl::kNvlink, nccl::kRing) +
                 static_cast<double>(net) * inter(nccl::kRing);
        }
        // NCCL's estimate: every step at one hop's latency, Simple at Tree's Simple step ("some
        // chunk latency, waiting for proper chunk modeling", tuning.cc@v2.29.7-1:363-370): the
        // network's on every step across nodes, NVLink's on one node. A graph of same channels
        // is charged one step, at the ring's own latency.
        const nccl::Hw h = n > 1 ? nccl::kNet : nccl::kNvlink;
        if (s.ring_same_channels)
          return base(nccl::kRing) + hw(h, nccl::kRing) + (n > 1 ? s.net_hop_us : 0);
        const double step = p == Protocol::kSimple
                                ? static_cast<double>(t.hw_latency_us[h][nccl::kTree][pi])
                                : hw(h, nccl::kRing);
        return base(nccl::kRing) + steps * step + (n > 1 ? (n - 1) * s.net_hop_us : 0);
      }
      const long long ninter = n <= 1                   ? 0
                               : s.op != Op::kAllReduce ? n - 1
                               : inter_2n               ? 2LL * n
                                                        : 2LL * (n - 1);
      double intra = hw(nccl::kNvlink, nccl::kRing);
      if (n > 1)  // netOverhead: the floor of a step inside a node of a ring across nodes
        intra = std::max(
            intra, (s.host_amd && !timed ? nccl::kNetOverheadUsAmd : nccl::kNetOverheadUsIntel) *
                       (p == Protocol::kSimple ? nccl::kNetOverheadSimpleFactor : 1));
      return base(nccl::kRing) + static_cast<double>(steps - ninter) * intra +
             static_cast<double>(ninter) * inter(nccl::kRing);
    }
    case Algorithm::kTree:
      return base(nccl::kTree) +
             2 * ((ppn - 1) * hw(nccl::kNvlink, nccl::kTree) + log2_floor(n) * inter(nccl::kTree));
    case Algorithm::kNvls:
      if (t.nvls_latency_v2_18)
        return base(nccl::kNvls) + (n > 1 ? hw(nccl::kNet, nccl::kNvls) + s.net_hop_us : 0);
      return hw(nccl::kNvlink, nccl::kNvls) + (n > 1 ? inter(nccl::kNvls) : 0);
    case Algorithm::kNvlsTree:
      if (t.nvls_latency_v2_18)
        return base(nccl::kNvlsTree) +
               2.0 * (n - 1) * (hw(nccl::kNet, nccl::kNvlsTree) + s.net_hop_us);
      return hw(nccl::kNvlink, nccl::kNvlsTree) + 2 * log2_floor(n) * inter(nccl::kNvlsTree);
    case Algorithm::kCollNet:  // CollNet Direct
      return base(nccl::kCollNetDirect) +
             2 * (std::min(1.0, ppn - 1) * hw(nccl::kNvlink, nccl::kCollNetDirect) +
                  (ppn - 1) * t.collnet_direct_arity_us) +
             inter(nccl::kCollNetDirect);
    case Algorithm::kCollNetChain:  // up the node's chain, the network, down the chain
      return base(nccl::kCollNetChain) + 2 * (ppn - 1) * hw(nccl::kNvlink, nccl::kCollNetChain) +
             inter(nccl::kCollNetChain);
    case Algorithm::kPat:
      if (!t.has_pat) return std::numeric_limits<double>::infinity();
      return base(nccl::kPat) + log2_floor(n) * (inter(nccl::kPat) / nccl::kPatLatencyDivisor) +
             static_cast<double>(N) * nccl::kPatPerRankUs;
    case Algorithm::kP2p: {
      // gpufabric's estimate: NCCL's tuner has no send/recv latency (docs/nccl-model-reference.md).
      // Across domains a send's crossing (kP2pNetSendUs, Simple) and the fabric's hop.
      const double one =
          n > 1 ? nccl::kP2pNetSendUs + s.net_hop_us : hw(nccl::kNvlink, nccl::kRing);
      return nccl::kP2pBaseLatencyUs + one;  // an alltoall's posting: alltoall_time_us
    }
  }
  return 0;
}

namespace {

// NCCL's LL128 switch, which holds where NCCL_PROTO does not name LL128 (protoEnable 2,
// tuning.cc@v2.29.7-1:413, 480-497): Blackwell from the release that lists it; between nodes a
// NIC path up to PATH_PXN, which a NIC on the CPU across C2C reaches from v2.27 (PATH_P2C;
// before, PATH_PHB, past it: ReleaseTerms::c2c_nic_is_p2c).
bool ll128_by_default(const nccl::ReleaseTerms& t, const CostShape& s, int domains) {
  if (s.generation == GpuGeneration::kBlackwell && !t.ll128_on_blackwell) return false;
  // Within a node only over NVLink (typeIntra <= PATH_NVB, tuning.cc@v2.29.7-1:487,
  // @v2.18.6-1:332): a ring of PCIe cards runs LL and Simple; one GPU a node has no such hop.
  if (s.scaleup_pcie && s.ranks > domains) return false;
  if (domains > 1 && s.nic_via_cpu_c2c && !t.c2c_nic_is_p2c) return false;
  return true;
}

// A point-to-point call of `bytes` inside one domain, split as NCCL splits it: an alltoall runs
// one send of bytes / N a round from round 0 (the rank's local copy) to N - 1, a sendrecv one
// send of all of them in round 1.
DomainP2pSplit domain_p2p_split_of_call(const CostShape& s, double bytes) {
  const double b = std::max(1.0, bytes);
  if (s.op != Op::kAlltoall) return domain_p2p_split(s, b, 1, 1);
  const long long N = std::max(1LL, s.ranks);
  return domain_p2p_split(s, b / static_cast<double>(N), 0, N);
}

// treeCorrectionFactor's factor for `bytes` (tuning.cc@v2.29.7-1:581-596): its column
// log2(bytes / 64), within the first `columns`; under 64 bytes (log2i of 0) none where `skips`
// (log2Down, v2.22 on), else the first column (v2.18-v2.21).
double tree_correction(Protocol p, double bytes, int columns, bool skips) {
  const long long units = static_cast<long long>(bytes) >> 6;
  if (units < 1 && skips) return 1.0;
  const int k = log2_floor(units);
  return k < columns ? nccl::kTreeCorrection[static_cast<int>(p)][k] : 1.0;
}

// The per-head cap of NVLS Tree in NCCL's tuner for a nodes class, GB/s (perChMaxNVLSTreeBws,
// v2.28 on; 0: none).
double nvls_tree_head_cap(const CostShape& s, int col) {
  const int row = generation_row(s);
  return row == static_cast<int>(GpuGeneration::kBlackwell)
             ? terms(s.release).nvls_tree_cap_blackwell[col]
             : nccl::kPerChMaxNvlsTreeBw[row][col];
}

// protocol_bandwidth; `ll_cap` false leaves out LL's llMaxBw, the one cap on the whole call's
// rate rather than its channels' (data_time_us).
double protocol_bandwidth_of(Algorithm a, Protocol p, const CostShape& s, double simple_Bps,
                             double bytes, bool ll_cap, bool tuner = false) {
  const nccl::ReleaseTerms& t = terms(s.release);
  const int n = std::max(1, s.domains);
  const double ppn = static_cast<double>(s.ranks) / n;
  const int row = generation_row(s), col = nodes_class(n);
  // llMaxBws: the GPU's row on one node, the CPU vendor's across nodes (row 1 for AMD hosts, 0
  // for Intel's and the rest, Grace included: tuning.cc@v2.29.7-1:253-255). The AMD row steers
  // NCCL's choice (`tuner`); the time keeps the row the model's LL terms were fitted with, Intel
  // hosts' (CostShape::host_amd).
  const int ll_row = n == 1 ? row : (s.host_amd && tuner ? 1 : 0);
  const double ll_max_Bps =
      ll_cap ? t.ll_max_bw[ll_row][col] * 1e9 : std::numeric_limits<double>::infinity();
  // The caps are per channel of the topology search's graph (tuning.cc multiplies them by
  // graphs[a]->nChannels), which the communicator then duplicates (connect.cc@v2.29.7-1:453:
  // comm->nChannels = 2 x nChannels): half of the communicator's channels.
  const double channels = std::max(
      1, s.graph_channels > 0 ? s.graph_channels : s.channels / nccl::kCommChannelsPerGraphChannel);
  if (p == Protocol::kLL128 && !s.ll128_forced && !ll128_by_default(t, s, n)) return 0;
  switch (a) {
    case Algorithm::kRing: {
      // Caps are on bus bandwidth; the payload moves at bus bandwidth x N / nsteps.
      const double to_alg = bus_to_alg(s);
      if (p == Protocol::kSimple) return simple_Bps;
      if (p == Protocol::kLL) {
        const bool multi = n > 1 || s.op == Op::kAllReduce || s.op == Op::kReduce;
        return std::min(ll_max_Bps * to_alg,
                        simple_Bps * (multi ? t.ring_ll_ratio_multi : t.ring_ll_ratio_intra));
      }
      return std::min(simple_Bps * (ppn < 2 ? t.ring_ll128_ratio_ppn1 : t.ring_ll128_ratio),
                      channels *
                          (row == static_cast<int>(GpuGeneration::kBlackwell)
                               ? t.ring_ll128_cap_blackwell[col]
                               : nccl::kPerChMaxRingLL128Bw[row][col]) *
                          1e9 * to_alg);
    }
    case Algorithm::kTree: {
      constexpr double kToAlg = 0.5;  // tree: bus bandwidth x .5
      const bool blackwell = row == static_cast<int>(GpuGeneration::kBlackwell);
      double bw = std::min(
          simple_Bps * nccl::kTreeRatio,
          channels * (blackwell ? t.tree_cap_blackwell[col] : nccl::kPerChMaxTreeBw[row][col]) *
              1e9 * kToAlg);
      if (p == Protocol::kLL) bw = std::min(bw * nccl::kTreeLLRatio, ll_max_Bps * kToAlg);
      if (p == Protocol::kLL128)
        bw = std::min(bw * (n == 1 ? nccl::kTreeLL128RatioOneNode : nccl::kTreeLL128RatioMulti),
                      channels *
                          (blackwell ? t.tree_ll128_cap_blackwell[col]
                                     : nccl::kPerChMaxTreeLL128Bw[row][col]) *
                          1e9 * kToAlg);
      // treeCorrectionFactor by log2(bytes / 64), for Tree its first 23 sizes in every release
      // (tuning.cc@v2.29.7-1:595: logSize < 23; the 24th column v2.29 added is NVLS Tree's,
      // :596); v2.22 on (log2i is log2Down, -1 for 0) skip messages under 64 bytes, v2.18 to
      // v2.21 (0 for 0) take the first column.
      return bw * tree_correction(p, bytes, nccl::kTreeCorrectionColumns,
                                  t.tree_correction_skips_under_64b);
    }
    case Algorithm::kPat:
      return p == Protocol::kSimple && t.has_pat ? simple_Bps * nccl::kPatRatio : 0;
    case Algorithm::kCollNet: {
      if (p != Protocol::kSimple) return 0;
      // all_gather / reduce_scatter: a head per NIC, the network at x.9 (tuning.cc@v2.29.7-1:
      // 315-317); no GPU/NIC factor (they need one NIC a GPU).
      if (s.op == Op::kAllGather || s.op == Op::kReduceScatter) {
        if (!t.collnet_gather_interpolated) return simple_Bps * nccl::kCollNetDirectGatherNetFactor;
        // v2.20-v2.26: from .95 at one GPU a node to .85 at eight (tuning.cc@v2.26.6-1:277-279).
        const double w = (ppn - 1) / (nccl::kCollNetGatherRatioGpus - 1);
        return simple_Bps *
               (w * nccl::kCollNetGatherRatioAtEight + (1 - w) * nccl::kCollNetGatherRatioAtOne);
      }
      // CollNet Direct all_reduce (tuning.cc@v2.29.7-1:318-322, v2.18.6-1:186-192): "requires
      // all GPUs to have a local NIC to work at full speed": the GPU/NIC ratio ppn / nChannels,
      // halfway back to 1, divides the bandwidth; x.85 from Hopper on.
      double factor = ppn / channels;
      factor -= (factor - 1) / 2;
      double bw = simple_Bps / std::max(1.0, factor);
      if (s.generation != GpuGeneration::kVolta && s.generation != GpuGeneration::kAmpere)
        bw *= nccl::kCollNetDirectHopperFactor;
      return bw;
    }
    case Algorithm::kCollNetChain:
      // CollNet Chain: Simple only, none of Direct's factors (tuning.cc@v2.29.7-1:284-285, 313;
      // v2.18.6-1:173-185), so the tuner rates it above Direct from Hopper on (Direct's x.85)
      // and NCCL chooses it. NCCL's own rate is nChannels x bwIntra, the NICs left out: the
      // tuner's estimate passes the NVLink part alone here (tuner_data_us), the time the flows'.
      return p == Protocol::kSimple ? simple_Bps : 0;
    case Algorithm::kP2p: {
      if (n < 2) {
        // Inside the domain LL carries half of what NVLink moves (its flags); on Blackwell the
        // busiest channel's parts, each at a thread block's copy rate, pace the call.
        const DomainP2pSplit split = domain_p2p_split_of_call(s, bytes);
        // The protocol is NCCL's rule's, not a choice: the other one does not run.
        if (p != (split.ll ? Protocol::kLL : Protocol::kSimple)) return 0;
        const double nvlink = simple_Bps * (split.ll ? nccl::kLLDataShare : 1.0);
        if (s.generation != GpuGeneration::kBlackwell) return nvlink;
        const double channel_GBps =
            split.ll ? nccl::kP2pDomainLLChannelGBsBlackwell : nccl::kP2pDomainChannelGBsBlackwell;
        const double busiest_s = split.busiest * split.part_bytes / (channel_GBps * 1e9);
        return std::min(nvlink, std::max(1.0, bytes) / busiest_s);
      }
      // Across domains a send runs Simple: NCCL picks LL only for a connection with LL buffers
      // (enqueue.cc@v2.29.7-1:866), and p2p network connections share their buffers and map no
      // LL one unless NCCL_ALLOC_P2P_NET_LL_BUFFERS=1 (transport/net.cc@v2.29.7-1:298, 340,
      // 901, 1073; init.cc:800, default 0).
      if (p != Protocol::kSimple) return 0;
      if (s.p2p_nic_GBps <= 0) return simple_Bps;
      // Across domains a peer's bytes move on its few channels, each at most a network p2p
      // channel's rate: sendrecv's one peer gets all the bytes, alltoall's each 1/N.
      const double peers = s.op == Op::kAlltoall ? static_cast<double>(s.ranks) : 1.0;
      const double per_peer = bytes / peers;
      const double cap = p2p_op_channels(s, per_peer) * nccl::kP2pNetChannelGBs * 1e9 * peers;
      return std::min(simple_Bps, cap);
    }
    default:  // NVLS runs Simple only
      return p == Protocol::kSimple ? simple_Bps : 0;
  }
}

}  // namespace

double protocol_bandwidth(Algorithm a, Protocol p, const CostShape& s, double simple_Bps,
                          double bytes) {
  return protocol_bandwidth_of(a, p, s, simple_Bps, bytes, true);
}

namespace {
int pow2_up(int v) {
  return static_cast<int>(std::bit_ceil(static_cast<unsigned>(std::max(1, v))));
}
// The communicator's p2p channels: its channels rounded up to a power of two
// (paths.cc@v2.29.7-1:893-899; v2.18.6-1:705-724).
int p2p_channels(const CostShape& s) {
  return pow2_up(std::clamp(s.channels, 1, nccl::kMaxChannels));
}
// nChannelsMin: a peer's `peer` channels halved until every one of `ranks` has one of the
// communicator's `all` p2p channels (enqueue.cc@v2.29.7-1:1110-1112; v2.18.6-1:634).
int channels_every_rank_has(int peer, long long ranks, int all) {
  int lo = peer;
  while (lo > 1 && static_cast<double>(lo) * static_cast<double>(ranks) > all) lo /= 2;
  return lo;
}
// One send cut into parts as addP2pToPlan cuts it, across domains and inside one
// (enqueue.cc@v2.29.7-1:891-900; v2.18.6-1's calcP2pChunkSize, 601-609): on `lo` channels, or as
// many parts of `min_part` as the bytes fill, doubled while a part exceeds `max_part` and the
// channels stay within `hi`.
struct P2pParts {
  int channels = 1;
  double part_bytes = 0;
};
P2pParts split_send(double bytes, int lo, int hi, double min_part, double max_part) {
  int n = std::max(1, std::min(lo, static_cast<int>(std::ceil(std::max(1.0, bytes) / min_part))));
  double part = std::max(min_part, bytes / n);
  while (part > max_part && n <= hi / 2) {
    n *= 2;
    part = bytes / n;
  }
  return {n, part};
}
}  // namespace

int ring_graph_channels_across(int nics_per_node, int gpus_per_node, double nic_GBps, int pcie_gen,
                               GpuGeneration generation) {
  const int nics = std::max(1, nics_per_node);
  const double pcie = nccl_pcie_x16_GBps(pcie_gen);
  const int nics_per_gpu = std::max(1, nics / std::max(1, gpus_per_node));
  const double bw = std::min(nic_GBps, pcie / nics_per_gpu);
  const bool hopper_on =
      generation == GpuGeneration::kHopper || generation == GpuGeneration::kBlackwell;
  const bool dup =
      bw >= nccl::kDupChannelsMinGBs && !(hopper_on && bw < nccl::kDupChannelsHopperMinGBs &&
                                          nics > nccl::kDupChannelsHopperMaxChannels);
  return std::min(nics * (dup ? 2 : 1), nccl::kMaxChannels / 2);
}

bool ring_same_channels(int domains, int gpus_per_domain, int nics_per_domain) {
  return domains <= 1 || gpus_per_domain <= 1 || nics_per_domain <= 1;
}

int p2p_channels_per_peer(const CostShape& s) {
  const int all = p2p_channels(s);
  const nccl::P2pNetRule rule = terms(s.release).p2p_net_rule;
  if (rule == nccl::P2pNetRule::kFixedTwo)
    return std::min(all, pow2_up(nccl::kP2pNetChannelsPerPeerV2_18));
  const int nics = std::max(1, s.p2p_local_nics);
  if (rule == nccl::P2pNetRule::kHalvedByRanks && s.domains > 1) {
    // Start from 2 and halve while 8+ operations would share a channel (2 x ranks > 4 x the
    // communicator's p2p channels, before their power-of-two rounding); at least one channel
    // per NIC the GPU needs for its bandwidth (getLocalNetCountByBw: local NICs until they
    // match the GPU's PCIe link, one where each GPU has its own NIC).
    const long long p2p = std::clamp(s.channels, 1, nccl::kMaxChannels);
    int max_ch = nccl::kP2pNetChannelsPerPeerV2_18;
    while (max_ch > 1 && max_ch * s.ranks > p2p * nccl::kP2pOpsPerChannelSync) max_ch /= 2;
    return std::min(all, pow2_up(std::max(nccl::kP2pNicsByBandwidth, max_ch)));
  }
  int cpp = pow2_up(
      std::max(nics, static_cast<int>(std::ceil(nics * s.p2p_nic_GBps / nccl::kP2pNetChannelGBs))));
  const long long rounds = (s.ranks + nccl::kP2pOpsPerBatch - 1) / nccl::kP2pOpsPerBatch;
  while (s.domains > 1 && cpp > 1 && cpp * rounds > all) cpp /= 2;
  return std::min(cpp, all);
}

int p2p_op_channels(const CostShape& s, double bytes) {
  const int peer = p2p_channels_per_peer(s), all = p2p_channels(s);
  // v2.29 takes one channel an operation while the peers overflow the channels; v2.18 does so
  // only on one node, where no network channel is counted.
  const int lo =
      s.release != NcclRelease::kV2_18 ? channels_every_rank_has(peer, s.ranks, all) : peer;
  // The network chunk, doubled on Grace Blackwell trays from 2.29 (init.cc@v2.29.7-1:773-776),
  // and at most a Simple step (:784: p2pChunkSize x NCCL_STEPS within buffSizes[SIMPLE]), which
  // only an NCCL_BUFFSIZE under 1 MiB (2 MiB doubled) makes smaller.
  const bool doubled = terms(s.release).p2p_net_chunk_doubled_on_grace && s.host_grace &&
                       s.generation == GpuGeneration::kBlackwell && s.domains > 1;
  const double chunk =
      std::min(nccl::kP2pNetChunkBytes * (doubled ? 2 : 1), step_data_bytes(Protocol::kSimple, s));
  return split_send(bytes, lo, peer, chunk / 2, chunk).channels;
}

DomainP2pSplit domain_p2p_split(const CostShape& s, double op_bytes, int first_round,
                                long long rounds) {
  DomainP2pSplit d;
  const int all =
      pow2_up(s.domain_p2p_channels > 0 ? s.domain_p2p_channels : nccl::kDomainP2pChannels);
  const long long N = std::max(1LL, s.ranks);
  const nccl::P2pLLRule rule = terms(s.release).p2p_ll_rule;
  // p2pnChannelsPerPeer: an NVLink peer's 2 x links, all the p2p channels on the catalog's
  // 18-link GPUs. nChannelsMin halves until every rank has one (enqueue.cc@v2.29.7-1:1110-1112);
  // v2.18 also halves nChannelsMax where 8+ operations would share a channel (v2.18.6-1:636).
  const int lo = channels_every_rank_has(all, N, all);
  int hi = all;
  if (s.release == NcclRelease::kV2_18)
    while (hi > 1 && static_cast<long long>(hi) * N > 4LL * all) hi /= 2;
  // Simple's step: NCCL_P2P_NVL_CHUNKSIZE, within the Simple buffer's eighth from v2.19
  // (init.cc@v2.29.7-1:784; v2.18.6-1:525-530 has no such bound).
  const double simple_step =
      s.release == NcclRelease::kV2_18
          ? nccl::kP2pNvlChunkBytes
          : std::min(nccl::kP2pNvlChunkBytes, step_data_bytes(Protocol::kSimple, s));
  const double b = std::max(1.0, op_bytes);
  // From v2.22 LL is chosen for the whole send, before the split, which then takes LL's step.
  d.ll = rule == nccl::P2pLLRule::kPerPeerChannels && b <= hi * nccl::kP2pLLThresholdBytes;
  const double step = d.ll ? nccl::kP2pLLStepBytes : simple_step;
  const double min_part = step / nccl::kP2pDomainMinPartDivisor;
  const double max_part = step * nccl::kP2pDomainMaxPartChunks;
  const P2pParts parts = split_send(b, lo, hi, min_part, max_part);
  int n = parts.channels;
  double part = parts.part_bytes;
  if (rule == nccl::P2pLLRule::kPerPart) {
    // calcP2pChunkSize aligns a part up to a multiple of the smallest (enqueue.cc@v2.18.6-1:608);
    // the send is then that many parts as fill it.
    part = std::ceil(part / min_part) * min_part;
    n = static_cast<int>(std::ceil(b / part));
  }
  d.per_op = n;
  d.part_bytes = std::min(b, part);
  if (rule == nccl::P2pLLRule::kPerPart) d.ll = d.part_bytes <= nccl::kP2pLLThresholdBytes;
  if (rule == nccl::P2pLLRule::kPerOpChannels) d.ll = b <= n * nccl::kP2pLLThresholdBytes;
  // The send's chunk: LL's step's data (half its lines) or NVLink's.
  d.chunk_bytes = d.ll ? nccl::kStepDataBytes[nccl::kLL] : simple_step;
  // Round r's parts on channels reverseBits(r) + part, modulo the p2p channels (n <= all):
  // the bits reversed are r's low log2(all), so rounds all apart share their channels.
  const int bits = std::countr_zero(static_cast<unsigned>(all));
  const long long first = std::max(0, first_round), count = std::max(1LL, rounds);
  std::vector<long long> load(static_cast<size_t>(all), 0);
  for (int q = 0; q < all; ++q) {
    // rounds r in [first, first + count) with r % all == q
    const long long lead = ((q - first) % all + all) % all;
    const long long here = lead < count ? (count - lead - 1) / all + 1 : 0;
    if (here == 0) continue;
    unsigned base = 0;
    for (int i = 0; i < bits; ++i)
      if ((static_cast<unsigned>(q) >> i) & 1u) base |= 1u << (bits - 1 - i);
    for (int k = 0; k < n; ++k) load[(base + static_cast<unsigned>(k)) & (all - 1)] += here;
  }
  d.channels =
      static_cast<int>(std::count_if(load.begin(), load.end(), [](long long v) { return v > 0; }));
  d.busiest = static_cast<int>(std::max(1LL, *std::max_element(load.begin(), load.end())));
  return d;
}

double scale_up_simple_efficiency(GpuGeneration g) {
  return g == GpuGeneration::kBlackwell ? nccl::kScaleUpSimpleEfficiencyBlackwell
                                        : nccl::kScaleUpSimpleEfficiency;
}

double nvls_link_share(GpuGeneration g) {
  return nvls_efficiency(g) * nccl::kScaleUpSimpleEfficiency / scale_up_simple_efficiency(g);
}

double step_data_bytes(Protocol p, const CostShape& s) {
  if (p != Protocol::kSimple || !(s.simple_buffer_bytes > 0))
    return nccl::kStepDataBytes[static_cast<int>(p)];
  return s.simple_buffer_bytes / nccl::kNcclSteps;
}

double alltoall_posting_us(long long network_peers) {
  return static_cast<double>(std::max(0LL, network_peers)) * nccl::kP2pPerPeerLatencyUs;
}

double alltoall_time_us(double fixed_us, long long network_peers, double data_us) {
  return fixed_us + std::max(alltoall_posting_us(network_peers), data_us);
}

double host_issue_us(Op op, long long ranks, int gpus_per_thread) {
  const double tasks = op == Op::kAlltoall   ? 2.0 * static_cast<double>(std::max(1LL, ranks))
                       : op == Op::kSendRecv ? 2.0
                                             : 0.0;
  return std::max(1, gpus_per_thread) * (nccl::kHostIssueUsPerGpu + tasks * nccl::kHostP2pTaskUs);
}

double collnet_op_us(int domains) {
  return nccl::kCollNetOpBaseUs +
         nccl::kCollNetOpPerDoublingUs * std::log2(static_cast<double>(std::max(1, domains)));
}

int nvls_heads(const CostShape& s) {
  const int n = std::max(1, s.domains);
  const int ppn = std::max(1, static_cast<int>(std::max(1LL, s.ranks) / n));
  if (n == 1) return static_cast<int>(std::clamp(s.ranks, 1LL, 1LL * nccl::kMaxNvlsArity));
  const int nics = s.collnet_nics > 0 ? s.collnet_nics : ppn;
  return std::clamp(std::min(ppn, nics), 1, nccl::kMaxNvlsArity);
}

namespace {
// Releases are numbered in the order they came out (spec.h), which the comparisons below take.
static_assert(NcclRelease::kV2_18 < NcclRelease::kV2_20 &&
              NcclRelease::kV2_27 < NcclRelease::kV2_28_7 &&
              NcclRelease::kV2_28_7 < NcclRelease::kV2_28 &&
              NcclRelease::kV2_29 < NcclRelease::kV2_30);

// The search speeds a graph between nodes takes on the GPU (nccl::kSearchSpeedsInter...).
std::span<const double> search_speeds(const CostShape& s) {
  const bool blackwell = s.generation == GpuGeneration::kBlackwell;
  if (blackwell && s.release >= NcclRelease::kV2_30) return nccl::kSearchSpeedsInterBlackwellV2_30;
  if (blackwell && s.release >= NcclRelease::kV2_29) return nccl::kSearchSpeedsInterBlackwellV2_29;
  if (blackwell && s.release >= NcclRelease::kV2_27) return nccl::kSearchSpeedsInterBlackwellV2_27;
  if (blackwell || s.generation == GpuGeneration::kHopper)
    return s.release == NcclRelease::kV2_18
               ? std::span<const double>(nccl::kSearchSpeedsInterHopperV2_18)
               : std::span<const double>(nccl::kSearchSpeedsInterHopper);
  return nccl::kSearchSpeedsInter;
}
// The index of the highest search speed at most `limit` GB/s (the table's size: none).
size_t search_speed_index(std::span<const double> speeds, double limit) {
  size_t i = 0;
  while (i < speeds.size() && speeds[i] > limit + 1e-9) ++i;
  return i;
}
// A GPU's NVLink to its switches as NCCL rates it, GB/s (nccl::kNvlinkGBs...; 0: not known).
double nccl_nvlink_GBps(const CostShape& s) {
  double link = 0;
  switch (s.generation) {
    case GpuGeneration::kAmpere:
      link = nccl::kNvlinkGBsAmpere;
      break;
    case GpuGeneration::kHopper:
      link =
          s.release == NcclRelease::kV2_18 ? nccl::kNvlinkGBsHopperV2_18 : nccl::kNvlinkGBsHopper;
      break;
    case GpuGeneration::kBlackwell:
      link = s.release >= NcclRelease::kV2_27   ? nccl::kNvlinkGBsBlackwell
             : s.release >= NcclRelease::kV2_26 ? nccl::kNvlinkGBsBlackwellV2_26
             : s.release == NcclRelease::kV2_18 ? nccl::kNvlinkGBsHopperV2_18
                                                : nccl::kNvlinkGBsHopper;
      break;
    default:
      return 0;
  }
  return std::max(0, s.nvlinks) * link;
}
// Nodes of an NVLink board whose NICs have a GPU each, whose graphs gpufabric knows.
bool search_graphs_known(const CostShape& s) {
  return s.domains > 1 && !s.nvlink_across_trays && s.nic_path_GBps > 0 && s.collnet_nics > 0 &&
         s.collnet_nics <= s.domain_gpus && s.nvlinks > 0;
}
}  // namespace

SearchGraph ring_search_graph(const CostShape& s) {
  SearchGraph g;
  // v2.18 (and 2.19, which runs the 2.20 table) cross no NICs in a ring (crossNic 0, the way
  // back through a peer GPU, PXN): on H100 with 400G NICs their search settles at 8 x 45 on
  // NVLink rated 18 x 20.0, a criterion this does not model.
  if (!search_graphs_known(s) || s.release == NcclRelease::kV2_18) return g;
  const std::span<const double> speeds = search_speeds(s);
  const size_t i = search_speed_index(speeds, s.nic_path_GBps);
  if (i == speeds.size()) return g;
  const double speed = speeds[i];
  const int gpus = std::max(1, s.domain_gpus);
  // Not modelled: a path to the NIC twice the fastest speed (NCCL then stacks channels on a NIC
  // up to the NVLink, 15-16 x 48 for B200 with 800G NICs on PCIe Gen6 in v2.26-v2.27), and
  // channels the GPUs' NVLink cannot carry (a channel enters a node at one GPU and leaves at
  // another: N - 1 NVLink hops over N GPUs).
  if (s.nic_path_GBps >= 2 * speed ||
      s.collnet_nics * speed * (gpus - 1) / gpus > nccl_nvlink_GBps(s) + 1e-9)
    return g;
  g.channels = s.collnet_nics;
  g.intra_GBps = g.inter_GBps = speed;
  return g;
}

SearchGraph nvls_search_graph(const CostShape& s) {
  SearchGraph g;
  if (!search_graphs_known(s) ||
      (s.generation != GpuGeneration::kHopper && s.generation != GpuGeneration::kBlackwell))
    return g;
  const int heads = nvls_heads(s);
  const std::span<const double> speeds = search_speeds(s);
  size_t i =
      search_speed_index(speeds, std::min(s.nic_path_GBps, nccl_nvlink_GBps(s) / (heads + 1)));
  if (i == speeds.size()) return g;
  const double intra = speeds[i];
  // From v2.19 the second pass raises bwInter a speed at a time while under twice bwIntra and
  // within the path to the NIC; v2.18's raises bwIntra instead, which the NVLink holds, and
  // bwInter stays bwIntra (search.cc@v2.18.6-1:965-971).
  double inter = intra;
  if (s.release != NcclRelease::kV2_18)
    while (i > 0 && inter < 2 * intra && speeds[i - 1] <= s.nic_path_GBps + 1e-9)
      inter = speeds[--i];
  g.channels = heads;
  g.intra_GBps = intra;
  g.inter_GBps = inter;
  return g;
}

int nvls_tree_min_heads(NcclRelease r) {
  return terms(r).nvls_tree_per_head_cap ? nccl::kNvlsTreeMinHeadsV2_28 : 1;
}

double nvls_tree_tuner_Bps(const CostShape& s) {
  const SearchGraph g = nvls_search_graph(s);
  if (!g.known() || s.op != Op::kAllReduce || g.channels < nvls_tree_min_heads(s.release)) return 0;
  const int n = std::max(2, s.domains);
  const double h = g.channels;
  double alg = 0;
  if (s.release == NcclRelease::kV2_18) {
    alg = h * (n <= 2 ? g.intra_GBps : g.inter_GBps) * nccl::kNvlsTreeAlgRatioV2_18 * n /
          (2.0 * (n - 1));
  } else if (terms(s.release).nvls_tree_per_head_cap) {
    const double cap = nvls_tree_head_cap(s, nodes_class(n));
    const double bw = std::min({g.intra_GBps * nvls_efficiency(s.generation) * (h - 1) / h * 2,
                                g.inter_GBps * (n <= 2 ? 2 : 1), cap > 0 ? cap : HUGE_VAL});
    alg = h * bw * bus_to_alg(s);
  } else {
    alg = h * std::min(g.intra_GBps, n <= 2 ? g.inter_GBps : g.inter_GBps / 2) *
          nccl::kNvlsTreeAlgRatioV2_20;
  }
  return alg * 1e9;
}

namespace {
// A tree's fill, as the mean share of a chunk's steady time that each of its `stages` takes:
// kTreeStageShare a stage, but where the tree between the nodes has no node with two children
// (two nodes, three) its `network_stages` hold their NIC for the whole chunk or half of it
// (kTwoNodeTreeNetworkStageShare, kThreeNodeTreeNetworkStageShare, nccl_constants.h).
double tree_stage_share(int stages, int network_stages, int domains) {
  if ((domains != 2 && domains != 3) || stages <= 1) return nccl::kTreeStageShare;
  const double net = domains == 2 ? nccl::kTwoNodeTreeNetworkStageShare
                                  : nccl::kThreeNodeTreeNetworkStageShare;
  network_stages = std::clamp(network_stages, 0, stages);
  const double sum = (stages - network_stages) * nccl::kTreeStageShare + network_stages * net;
  return sum / stages;
}

// NVLS all_reduce's copies inside one Blackwell rack, us a channel: every loop the scatter
// thread group copies the channel's nHeads chunks from the user's buffer into the heads' regions
// of the NVLS buffer, one chunk after the other, after waiting for all of their slots and before
// posting them (ScatterGatherOp, device/prims_simple.h@v2.29.7-1:427-484; RunWorkColl NVLS,
// oneNode, device/all_reduce.h@v2.29.7-1:409-440; the regions are the GPU's own memory, ucBuff
// in transport/nvls.cc@v2.28.9-1:354-358), and the gather group (one warp fewer) copies the
// multicast results back the same way. The last loop's chunks are its remainder over nHeads,
// rounded up to 16 KiB (all_reduce.h:414), and only the heads that get data are copied to. Each
// chunk costs kNvlsCopyChunkUs and its bytes at kNvlsCopyChannelGBs, measured in GB300 racks
// only: elsewhere this is 0. On an HGX board no figure is known (on Hopper's the same cost would
// put the test set's 1-4 MiB NVLS rows 8-17 points too slow); across domains (NVLS over CollNet,
// NVLS Tree) the kernels split and align differently and no row measures them.
double nvls_copy_us(const CostShape& s, double heads, double k, double channel_bytes) {
  if (s.generation != GpuGeneration::kBlackwell || !s.nvlink_across_trays ||
      s.op != Op::kAllReduce || s.domains > 1)
    return 0;
  const double loop = k * heads;
  const double full = std::floor(channel_bytes / loop);
  const double rem = channel_bytes - full * loop;
  double pieces = full * heads;
  if (rem > 0) {
    const double align = nccl::kNvlsLastChunkAlignBytes;
    pieces += std::ceil(rem / (std::ceil(std::ceil(rem / heads) / align) * align));
  }
  return pieces * nccl::kNvlsCopyChunkUs + channel_bytes / (nccl::kNvlsCopyChannelGBs * 1e9) * 1e6;
}

struct CallThreads {
  int threads = 0;  ///< a channel's data threads for this call
  int full = 0;     ///< ... at full size
};

// The threads a channel of a ring, tree or CollNet Chain call moves data with, and their count
// at full size: once the call is down to one channel, NCCL halves its threads while nBytes <
// channels x threads x threshold and the count is a multiple of 128, then gives it at least 3
// warps; Simple's ring one more for its synchronisation, which moves no data, and Simple's tree
// 4 more for its split into a reduce and a broadcast group (enqueue.cc@v2.29.7-1:2005-2018,
// @v2.18.6-1:1208-1219). Tree keeps them all from v2.22, PAT always (enqueue.cc@v2.29.7-1:
// 2019-2020). With ring LL's threshold x nRanks, a 32-rank broadcast runs one channel of 256
// threads at 64 KiB and 96 below 32 KiB. `channel_bytes`: what one channel of full threads needs
// (their count x the threshold a thread).
CallThreads call_threads(Algorithm a, Protocol p, const CostShape& s, double bytes, int channels,
                         double channel_bytes) {
  const int pi = static_cast<int>(p);
  const int max =
      a == Algorithm::kCollNetChain ? nccl::kMaxThreadsNvlsCollNet : nccl::kMaxThreads[pi];
  const double threshold = channel_bytes / max;  // bytes a thread
  const bool simple = p == Protocol::kSimple;
  const int sync = simple && a == Algorithm::kRing ? nccl::kWarpSize : 0;
  const int split = simple && a == Algorithm::kTree ? nccl::kTreeSplitWarps * nccl::kWarpSize : 0;
  // Those that keep them all run NCCL_MAX_NTHREADS (enqueue.cc@v2.29.7-1:2019-2020).
  if (a == Algorithm::kPat || (a == Algorithm::kTree && terms(s.release).tree_keeps_all_threads))
    return {nccl::kMaxThreadsNvlsCollNet, nccl::kMaxThreadsNvlsCollNet};
  CallThreads t{max + split, max + split};
  int nt = max;
  while (bytes < channels * static_cast<double>(nt) * threshold && nt % 128 == 0) nt /= 2;
  t.threads = std::max(nt + sync + split, nccl::kMinCallWarps * nccl::kWarpSize) - sync;
  return t;
}

// The channels the kernel plan's scheduler spreads a call over (scheduleCollTasksToPlan,
// enqueue.cc@v2.29.7-1:570-700, @v2.24.3-1:470-640): the call's traffic (its bytes x 2 for
// all_reduce, x nRanks for all_gather and reduce_scatter, whose count is a rank's) is cut into
// cells of the minimum traffic, and each channel takes the cells of its share of the traffic,
// never fewer than one; so a channel carries at least a cell. CollNet calls keep theirs.
int scheduled_channels(Protocol p, const CostShape& s, double bytes, int channels) {
  const nccl::ReleaseTerms& t = terms(s.release);
  const double min_traffic = t.min_traffic_per_channel;
  if (!(min_traffic > 0) || channels <= 1) return channels;
  const double N = static_cast<double>(std::max(1LL, s.ranks));
  const bool gather = s.op == Op::kAllGather || s.op == Op::kReduceScatter;
  const double per_byte = s.op == Op::kAllReduce ? 2 : gather ? N : 1;
  const double count_bytes = gather ? bytes / N : bytes;
  auto up16 = [](double b) { return std::ceil(b / 16) * 16; };
  // From v2.26 LL's traffic counts x4, for the call (enqueue.cc@v2.29.7-1:456) and its cells.
  const double cell_per_byte =
      per_byte * (p == Protocol::kLL && t.ll_cells_quartered ? nccl::kLLCellTrafficFactor : 1);
  const double traffic = std::max(min_traffic, count_bytes * cell_per_byte);
  const double per_channel = t.min_traffic_floors_channel_share
                                 ? std::max(min_traffic, traffic / channels)
                                 : up16(traffic / channels);
  const double cell = up16(std::ceil(min_traffic / cell_per_byte));
  const double cells = std::max(1.0, std::ceil(count_bytes / cell));
  const double per = std::min(cells, std::ceil(per_channel / (cell * cell_per_byte)));
  return static_cast<int>(std::clamp(std::ceil(cells / per), 1.0, static_cast<double>(channels)));
}
}  // namespace

// NVLS all_reduce's reductions in an NVL72 rack, us: every GPU's `bytes` through the rack's
// switch reduction at kRackNvlsReduceTBs, each rack its own (NVLS Tree and NVLS over CollNet
// reduce a rack's GPUs in it too). 0 elsewhere: an HGX board's NVSwitches are not measured
// near such a bound, and all_gather/reduce_scatter not at a rack's scale.
double rack_reduce_us(Algorithm a, const CostShape& s, double bytes) {
  if ((a != Algorithm::kNvls && a != Algorithm::kNvlsTree) || !s.nvlink_across_trays ||
      s.op != Op::kAllReduce)
    return 0;
  return std::max(1, s.domain_gpus) * bytes / (nccl::kRackNvlsReduceTBs * 1e12) * 1e6;
}

PipelineRun pipeline_run(Algorithm a, Protocol p, const CostShape& s, double bytes) {
  PipelineRun r;
  const int pi = static_cast<int>(p);
  const long long N = std::max(1LL, s.ranks);
  const int n = std::max(1, s.domains);
  const double ppn = static_cast<double>(N) / n;
  const double S = std::max(1.0, bytes);
  r.comm_channels = std::max(1, s.channels);
  r.channels = r.comm_channels;
  CallThreads threads;  // a channel's data threads, and their count at full size (0: not halved)
  if (a == Algorithm::kRing || a == Algorithm::kTree || a == Algorithm::kPat ||
      a == Algorithm::kCollNetChain) {
    // Channels are dropped while nBytes < nc x nThreads x threshold (enqueue.cc@v2.29.7-1:
    // 1997-2004, v2.18.6-1:1208-1212); ring LL's threshold is x nRanks, CollNet Chain's
    // 640 threads x 512 bytes.
    double per_channel =
        a == Algorithm::kCollNetChain
            ? nccl::kCollNetChainBytesPerChannel
            : static_cast<double>(nccl::kMaxThreads[pi]) * nccl::kThreadThreshold[pi];
    if (a == Algorithm::kRing && p == Protocol::kLL) per_channel *= static_cast<double>(N);
    r.channels = static_cast<int>(
        std::clamp(std::floor(S / per_channel), 1.0, static_cast<double>(r.comm_channels)));
    threads = call_threads(a, p, s, S, r.channels, per_channel);
    if (a != Algorithm::kCollNetChain) r.channels = scheduled_channels(p, s, S, r.channels);
  } else if (a == Algorithm::kNvls || a == Algorithm::kNvlsTree) {
    // NVLS keeps its channels in getAlgoInfo (enqueue.cc@v2.29.7-1:1990-1996) but goes through
    // the scheduler's cells as the rest; its chunk is then chosen a channel at a time.
    r.channels = scheduled_channels(p, s, S, r.channels);
  }
  const double nc = r.channels;
  const double per_channel_bytes = S / nc;
  // CollNet: the in-network operations one step issues at a NIC for `channels` of its
  // connection (a group of up to 8 each), and what one costs in series with its bytes.
  auto collnet_ops = [](int channels) {
    return static_cast<double>((std::max(1, channels) + nccl::kCollNetGroupChannels - 1) /
                               nccl::kCollNetGroupChannels);
  };
  const double op_us = collnet_op_us(n);
  const double step = step_data_bytes(p, s);
  auto stream = [&](double chunk, double streamed_bytes, int stages) {
    r.chunk_bytes = std::min(chunk, streamed_bytes);
    r.chunks = std::max(1.0, std::ceil(streamed_bytes / chunk));
    r.stages = std::max(1, stages);
  };
  switch (a) {
    case Algorithm::kRing:
      if (s.op == Op::kBroadcast || s.op == Op::kReduce) {
        // PipelineFrom / PipelineTo: one step a chunk down a chain of N - 1 hops
        // (enqueue.cc@v2.29.7-1:2205-2242). With Simple a hop forwards a step once it has all
        // of it (the receiver waits for the step's tail). LL and LL128 carry flags in the data,
        // and a GPU forwards what it reads at once (LLGenericOp, device/prims_ll.h@v2.29.7-1:
        // 226-290, a 16-byte line; prims_ll128.h:189-197, 268-290, a warp's 16 lines), into
        // the next GPU's buffer over NVLink (transport/p2p.cc): an NVLink hop adds its latency
        // only. A network hop still holds a whole step, which the proxy sends once all of it is
        // there (transport/net.cc@v2.29.7-1:1292-1333): those hops are the stages. As for
        // Simple's network hops, the GPU's filling of that step and the proxy's send are one
        // stage (counted apart, n + 1: docs/nccl-model-reference.md, ring broadcast).
        const int stages = p == Protocol::kSimple
                               ? static_cast<int>(N - 1)
                               : static_cast<int>(std::max(1LL, chain_network_hops(s)));
        stream(step, per_channel_bytes, stages);
      } else {
        // Every rank sends at every step of the loop: the steps' latency is the fixed part, and
        // loops follow each other through the 8-step FIFO; nothing more to fill.
        const double chunk = step * (p == Protocol::kSimple ? nccl::kRingSimpleChunkSteps : 1);
        stream(chunk * static_cast<double>(N), per_channel_bytes, 1);
      }
      break;
    case Algorithm::kTree: {
      // Depth "m - 1 + log2i(nodes)" (connect.cc@v2.29.7-1:143). runTreeSplit: reduce up and
      // broadcast down run at once, so a chunk crosses 2 x depth hops (device/all_reduce.h@
      // v2.29.7-1:150-230).
      const int depth = static_cast<int>(ppn) - 1 + log2_floor(n);
      double k = step;
      if (p == Protocol::kSimple && s.release == NcclRelease::kV2_18) {
        // v2.18 shrinks the chunk for shallow trees (enqueue.cc@v2.18.6-1:1313-1319).
        while (S / (nc * k) < depth * 8 && k > 131072) k /= 2;
        while (S / (nc * k) < depth * 4 && k > 65536) k /= 2;
        while (S / (nc * k) < depth && k > 32768) k /= 2;
      }
      if (p == Protocol::kLL128) {  // enqueue.cc@v2.29.7-1:2181-2189
        const double steps_ll128 = 1 + log2_floor(n) + 0.1 * ppn;
        while (std::floor(S / (nc * k)) < steps_ll128 * 64 / ppn && k > 131072) k /= 2;
        while (std::floor(S / (nc * k)) < steps_ll128 * 16 / ppn && k > 32768) k /= 2;
      }
      // With Simple a hop forwards a step once it has all of it: every hop of the depth is a
      // stage. LL and LL128 forward what they read at once over NVLink (as the ring chain
      // above: prims_ll.h, prims_ll128.h), so only the network hops, which the proxy sends a
      // whole step at a time (transport/net.cc@v2.29.7-1:1292-1333), are stages: log2(nodes)
      // of them up the tree between the nodes and as many down.
      const int stages =
          p == Protocol::kSimple ? 2 * std::max(1, depth) : std::max(1, 2 * log2_floor(n));
      stream(k, per_channel_bytes, stages);
      r.stage_share = tree_stage_share(stages, 2 * log2_floor(n), n);
      break;
    }
    case Algorithm::kNvls:
    case Algorithm::kNvlsTree: {
      // A loop is nHeads chunks per channel (one per local rank): reduced through the switch,
      // then multicast (and, for NVLS Tree, up and down the tree between nodes). Chunk sizes as
      // enqueue.cc@v2.29.7-1:2153-2180 chooses them.
      const double heads = nvls_heads(s);
      const double ops = nc * heads;
      // NVLS moves data with multimem loads and stores on the buffers themselves, no FIFO of
      // steps: each loop's stage waits for the last one's flags, at the Simple protocol's step
      // latency over NVLink (tuning.cc's hwLat[NVLINK][RING][SIMPLE]).
      r.exposed_step_us =
          terms(s.release).hw_latency_us[nccl::kNvlink][nccl::kRing][pi] + nvlink_step_extra_us(s);
      const NvlsTuning tuning = nvls_tuning(s.release, s.generation, n, s.domain_gpus,
                                            s.nic_path_GBps, !s.nic_via_cpu_c2c);
      double k = a == Algorithm::kNvls ? tuning.chunk_bytes : tuning.tree_chunk_bytes;
      if (a == Algorithm::kNvls) {
        if (S < 64 * ops * k && k > 65536) k = 65536;
        if (S < 8 * ops * k && k > 32768) k = 32768;
        if (S < 2 * ops * k && k > 16384) k = 16384;
        stream(k * heads, per_channel_bytes, 2);
        r.copy_us = nvls_copy_us(s, heads, k, per_channel_bytes);
        // Across domains NVLS runs over CollNet: every head sends its chunk of each channel to
        // the in-network reduction, one operation per group of channels a loop, as Direct.
        if (n > 1 && s.op == Op::kAllReduce) r.net_op_us = collnet_ops(r.channels) * op_us;
      } else {
        if (S < 32 * ops * k && k > 262144) k = 262144;
        if (S < 16 * ops * k && k > 131072) k = 131072;
        if (S < 4 * ops * k && k > 65536) k = 65536;
        if (S < ops * k && k > 32768) k = 32768;
        stream(k * heads, per_channel_bytes, 2 + 2 * log2_floor(n));
        r.stage_share = tree_stage_share(r.stages, 2 * log2_floor(n), n);
      }
      break;
    }
    case Algorithm::kCollNet: {
      // CollNet Direct: nHeads chunks a loop; scattered to the heads, reduced by the switches
      // and back, gathered: three stages (enqueue.cc@v2.29.7-1:2142-2152, depth 1).
      const double heads = ppn;
      double k = step;
      while (S / (nc * heads * k) < 64 && k > 131072) k /= 2;
      while (S / (nc * heads * k) < 8 && k > 65536) k /= 2;
      while (S / (nc * heads * k) < 8 && k > 32768) k /= 2;
      stream(k * heads, per_channel_bytes, 3);
      // Every GPU heads every channel: a loop is one reduction a group of channels at each NIC.
      if (s.op == Op::kAllReduce && n > 1) r.net_op_us = collnet_ops(r.channels) * op_us;
      break;
    }
    case Algorithm::kCollNetChain: {
      // A chunk goes up the chain of the node's GPUs, reduced at each, through the network's
      // reduction from its head, and back down (device/all_reduce.h@v2.29.7-1:630-720:
      // reduce-up and broadcast-down thread groups of one block run at once): 2(m - 1) NVLink
      // hops and the network. Chunks as enqueue.cc@v2.29.7-1:2147-2152 sizes them.
      const double depth = ppn;
      double k = nccl::kCollNetChainMaxChunkBytes;
      while (S / (nc * k) < depth * 64 && k > 131072) k /= 2;
      while (S / (nc * k) < depth * 8 && k > 65536) k /= 2;
      while (S / (nc * k) < depth && k > 32768) k /= 2;
      stream(k, per_channel_bytes, 2 * std::max(0, static_cast<int>(ppn) - 1) + 1);
      // Where the NIC paces the chain, a chunk's NVLink hops take their share of its NIC time
      // each: the fill is 2(m - 1) of them, at the NVLink part's rate over the NICs'.
      if (s.collnet_intra_seconds_per_byte > 0 &&
          s.collnet_net_seconds_per_byte > s.collnet_intra_seconds_per_byte)
        r.stage_share = s.collnet_intra_seconds_per_byte / s.collnet_net_seconds_per_byte;
      // A channel has one head, the GPU of its NIC: a NIC's head serves its share of the
      // channels, one reduction per group of them a step.
      const int nics = s.collnet_nics > 0 ? s.collnet_nics : std::max(1, static_cast<int>(ppn));
      if (n > 1) r.net_op_us = collnet_ops((r.channels + nics - 1) / nics) * op_us;
      break;
    }
    case Algorithm::kP2p:
      if (n == 1) {
        // Inside the domain every part streams its NVLink chunks through two copies (the
        // sender's into the connection's buffer, the receiver's out of it): one chunk of fill.
        // LL's parts are read line by line as they land: nothing to fill (its halved rate is
        // not charged: such parts are at most 16 KiB, their time the latency's).
        const DomainP2pSplit split = domain_p2p_split_of_call(s, bytes);
        stream(split.chunk_bytes, split.part_bytes, split.ll ? 1 : nccl::kP2pDomainCopyStages);
        // The kernel's thread blocks are the channels the parts occupy (the SMs it takes); the
        // rate is already theirs (protocol_bandwidth), so the call's share of it stays whole.
        r.channels = r.comm_channels = split.channels;
        break;
      }
      // Across domains point-to-point has its own schedule (alltoall_time_us).
      stream(per_channel_bytes, per_channel_bytes, 1);
      break;
    default:  // PAT's steps are simulated one by one
      stream(per_channel_bytes, per_channel_bytes, 1);
      break;
  }
  r.threads = threads.threads;
  if (threads.threads > 0 && threads.threads < threads.full) {
    // A channel's threads share a step's data, LL a line (8 bytes of data) each, the others a
    // 16-byte word each, in a loop (prims_ll.h@v2.29.7-1:226-290; prims_simple.h, reduceCopy):
    // with fewer threads each takes more turns. Threads beyond the step's units idle, so a step
    // too small to busy them all costs no more. A ring's step is a loop's slice, one rank's: the
    // halving stops at the first count whose threshold the bytes reach, so the slice has between
    // one and two lines a thread (the full count took it in one turn where it has up to 512); a
    // chain's or a tree's step is the channel's whole chunk, which few threads take in many.
    const double unit = p == Protocol::kLL ? nccl::kLLLineDataBytes : nccl::kThreadWordBytes;
    const bool ring_loop = a == Algorithm::kRing && s.op != Op::kBroadcast && s.op != Op::kReduce;
    const double step = r.chunk_bytes / (ring_loop ? static_cast<double>(N) : 1.0);
    const double units = std::max(1.0, std::ceil(step / unit));
    r.thread_share =
        std::min<double>(threads.threads, units) / std::min<double>(threads.full, units);
  }
  return r;
}

double network_messages_us(Algorithm a, Protocol p, const CostShape& s, const PipelineRun& run,
                           double bytes) {
  if (!(s.network_message_us > 0) || s.domains < 2) return 0;
  const bool chain = s.op == Op::kBroadcast || s.op == Op::kReduce;
  double extra = 0;  // messages a connection carries after the first loop's
  if (a == Algorithm::kRing && !chain) {
    // NCCL runs whole loops (nLoops = DIVUP(nBytes, loop bytes), enqueue.cc@v2.29.7-1:2240-2242),
    // each over the ring's steps, a chunk of 4 Simple steps in 2 slices (1 step each for LL and
    // LL128); every slice is posted, an empty one too (device/prims_simple.h@v2.29.7-1:307). The
    // first loop's messages are its steps' latency.
    const long long N = std::max(1LL, s.ranks);
    const bool simple = p == Protocol::kSimple;
    const double chunk = step_data_bytes(p, s) * (simple ? nccl::kRingSimpleChunkSteps : 1);
    const double per_channel = std::max(1.0, bytes) / std::max(1, run.channels);
    const double loops = std::ceil(per_channel / (chunk * static_cast<double>(N)));
    extra = (loops - 1) * static_cast<double>(ring_steps(s.op, N)) *
            (simple ? nccl::kRingSimpleChunkSteps / nccl::kRingSimpleSliceSteps : 1);
  } else if (a == Algorithm::kRing || a == Algorithm::kTree) {
    // A chain's or a tree's connection carries the channel's chunks, a message each; the first
    // is the chain's (tree's) latency.
    extra = run.chunks - 1;
  }
  return std::max(0.0, extra) * s.network_message_us;
}

namespace {

// The data at protocol_bandwidth over every channel, us, as NCCL's tuner estimates it, with the
// caps that only steer its choice.
double tuner_data_us(Algorithm a, Protocol p, const CostShape& s, double seconds_per_byte,
                     double bytes) {
  // CollNet all_reduce: NCCL rates it by its graph's intra-node bandwidth, the NICs left out
  // (`collnet ? bwIntra`, tuning.cc@v2.29.7-1:285; v2.18.6-1:174): the NVLink part alone.
  if ((a == Algorithm::kCollNet || a == Algorithm::kCollNetChain) && s.op == Op::kAllReduce &&
      s.collnet_intra_seconds_per_byte > 0)
    seconds_per_byte = s.collnet_intra_seconds_per_byte;
  // NCCL's tuner knows its topology search's graphs, not the fabric: where gpufabric knows the
  // ring's graph (ring_search_graph), the ring's estimate is its channels at their speed, bus
  // bandwidth to the payload's at N / nsteps (tuning.cc@v2.24.3-1:244-247, 286), before the
  // protocols' ratios and caps.
  if (a == Algorithm::kRing) {
    const SearchGraph g = ring_search_graph(s);
    if (g.known())
      seconds_per_byte =
          1.0 / (g.channels * (s.domains <= 2 ? g.intra_GBps : g.inter_GBps) * 1e9 * bus_to_alg(s));
  }
  double bw = protocol_bandwidth_of(a, p, s, 1.0 / seconds_per_byte, bytes, true, true);
  // NVLS Tree likewise from its graph (nvls_tree_tuner_Bps): from three nodes NCCL rates its
  // network part at half (v2.20-v2.27) or at the per-head cap (v2.28 on), which steers its
  // choice but is no limit of the hardware: forced NVLS Tree measures 388-390 GB/s bus bandwidth
  // on 4-16 B200 nodes (together-nccl-tests flapping-airplanes, nccl-public.csv) against a cap of
  // 8 heads x 43.8 = 350. The tuner's estimate takes it; the time does not.
  const double nvls_tree_nccl = a == Algorithm::kNvlsTree ? nvls_tree_tuner_Bps(s) : 0;
  if (nvls_tree_nccl > 0) {
    if (bw > 0) bw = nvls_tree_nccl;
  } else if (a == Algorithm::kNvlsTree && terms(s.release).nvls_tree_per_head_cap) {
    const double cap = nvls_tree_head_cap(s, nodes_class(std::max(1, s.domains)));
    if (cap > 0) bw = std::min(bw, nvls_heads(s) * cap * 1e9 * bus_to_alg(s));
  }
  // From v2.29 NCCL's time function also takes treeCorrectionFactor's column of the size for NVLS
  // Tree all_reduce on Blackwell x86 hosts, below 1 GiB (tuning.cc@v2.29.7-1:596, @v2.30.7-1:643;
  // not in v2.28.9-1).
  if (a == Algorithm::kNvlsTree && s.op == Op::kAllReduce && s.release >= NcclRelease::kV2_29 &&
      s.generation == GpuGeneration::kBlackwell && !s.host_grace) {
    bw *= tree_correction(p, bytes, nccl::kNvlsTreeCorrectionColumns, true);
  }
  return bw > 0 ? bytes / bw * 1e6 : std::numeric_limits<double>::infinity();
}

// The fixed part of a time: the latency, with ring Simple all_reduce's plateau factor across
// nodes (tuning.cc@v2.29.7-1:597-600).
double fixed_us(Algorithm a, Protocol p, const CostShape& s, double bytes, LatencyUse use) {
  double lat = latency_us(a, p, s, use);
  if (a == Algorithm::kRing && p == Protocol::kSimple && s.domains > 1 && s.op == Op::kAllReduce &&
      bytes / (std::max(1, s.channels) * static_cast<double>(s.ranks)) >=
          nccl::kRingPlateauMinBytes)
    lat *= s.generation == GpuGeneration::kVolta ? nccl::kRingPlateauLatencyFactorVolta
                                                 : nccl::kRingPlateauLatencyFactor;
  return lat;
}

double assemble_us(Algorithm a, Protocol p, const CostShape& s, double bytes, double data_us,
                   LatencyUse use) {
  if (!std::isfinite(data_us)) return data_us;
  if (a == Algorithm::kP2p && s.op == Op::kAlltoall)
    return alltoall_time_us(latency_us(a, p, s, use),
                            s.ranks - std::min<long long>(s.ranks, std::max(1, s.domain_gpus)),
                            data_us);
  return fixed_us(a, p, s, bytes, use) + data_us;
}

}  // namespace

bool back_to_back_chain(Algorithm a, Protocol p, const CostShape& s, double bytes) {
  return s.iters > 1 && a == Algorithm::kRing && (s.op == Op::kBroadcast || s.op == Op::kReduce) &&
         (s.ring_same_channels || pipeline_run(a, p, s, bytes).channels == 1);
}

namespace {

// What one rank spends streaming a call's bytes, us, term by term: the links at the protocol's
// rate over the call's channels, the SMs' copies where they are the slower (run.copy_us), a
// rack's switch reduction (rack_reduce_us), and the network messages in series with them.
struct StreamTerms {
  double links_us = std::numeric_limits<double>::infinity();
  double copy_us = 0, reduce_us = 0, messages_us = 0;
  double total() const { return std::max({links_us, copy_us, reduce_us}) + messages_us; }
};

// Whether the channels' thread blocks bound the call (block_copy_Bps): across domains of one
// GPU each, on Ampere.
bool block_copy_bounds(const CostShape& s) {
  return s.generation == GpuGeneration::kAmpere && s.domains >= 2 && s.ranks <= s.domains;
}

// What the call's channels' thread blocks let through, payload bytes/s (0: no bound known):
// each block copies nccl::kChannelCopyGBsAmpere of step-chunks (of which the protocol's lines
// carry their data share), and a payload byte costs its step-chunks. Ring (runRing): all_gather
// and reduce_scatter move each of a loop's N chunks once (a send, N - 2 receive-and-sends, a
// receive), all_reduce 2N - 1 for its N chunks, a chain's hop each chunk once; PAT's all_gather
// and reduce_scatter, as the ring's, each chunk once. Point-to-point: a channel carries both its
// peer's send and the matching receive, each byte sent is moved twice. Across domains of one
// GPU each, on Ampere: where it was measured. With more GPUs a node NCCL spreads a GPU's network
// traffic over more channels (a ring's 2 a NIC over 8 GPUs, PXN's proxies for point-to-point),
// which no measurement here shows bound by their blocks. Tree and the CollNet and NVLS
// algorithms are not bound.
double block_copy_Bps(Algorithm a, Protocol p, const CostShape& s, double bytes,
                      const PipelineRun& run) {
  if (!block_copy_bounds(s)) return 0;
  const double share = p == Protocol::kLL      ? nccl::kLLDataShare
                       : p == Protocol::kLL128 ? nccl::kLL128LineDataShare
                                               : 1.0;
  const double block_Bps = nccl::kChannelCopyGBsAmpere * 1e9 * share;
  const double N = static_cast<double>(std::max(2LL, s.ranks));
  if (a == Algorithm::kRing || a == Algorithm::kPat) {
    const double moves = s.op == Op::kAllReduce ? (2 * N - 1) / N : 1.0;
    return std::max(1, run.channels) * block_Bps / moves;
  }
  if (a == Algorithm::kP2p) {
    const double peers = s.op == Op::kAlltoall ? N : 1.0;
    return p2p_op_channels(s, bytes / peers) * (block_Bps / 2) * peers;
  }
  return 0;
}

StreamTerms stream_terms(Algorithm a, Protocol p, const CostShape& s, double seconds_per_byte,
                         double bytes, const PipelineRun& run) {
  StreamTerms t;
  // The protocol's rate over every channel (0: NCCL does not run it).
  const double Bps = 1.0 / seconds_per_byte;
  const double capped = protocol_bandwidth(a, p, s, Bps, bytes);
  if (!(capped > 0)) return t;
  const double share = run.rate_share();
  // The call's channels carry their share of the bandwidth, at what their threads move. LL's
  // llMaxBw is no channel's: NCCL indexes it by the GPU on one node and by the CPU's vendor across
  // nodes (tuning.cc@v2.29.7-1: 252-256), a bound of the host's path on the whole call, which fewer
  // channels still reach.
  double rate = capped * share;
  if (p == Protocol::kLL && (a == Algorithm::kRing || a == Algorithm::kTree))
    rate = std::min(protocol_bandwidth_of(a, p, s, Bps, bytes, false) * share, capped);
  // A profile's bandwidth factor on the algorithm scales the links' rate and a rack's switch
  // reduction, both the algorithm's bandwidth, not the SMs' copies (run.copy_us); the network
  // messages' own time is in series with the bytes they carry.
  t.links_us = bytes / rate * 1e6 / s.bandwidth_factor;
  // The channels' thread blocks, where their copies are the slower (block_copy_Bps): SM copies,
  // which a profile's bandwidth factor does not scale.
  if (const double block = block_copy_Bps(a, p, s, bytes, run); block > 0)
    t.links_us = std::max(t.links_us, bytes / block * 1e6);
  t.copy_us = run.copy_us;
  t.reduce_us = rack_reduce_us(a, s, bytes) / s.bandwidth_factor;
  t.messages_us = network_messages_us(a, p, s, run, bytes);
  return t;
}

// The data of one call as the pipeline moves it (with its fill), us; `stream_only`: without the
// fill, what one rank spends on the call's bytes.
double call_data_us(Algorithm a, Protocol p, const CostShape& s, double seconds_per_byte,
                    double bytes, bool stream_only) {
  const PipelineRun run = pipeline_run(a, p, s, bytes);
  const StreamTerms terms = stream_terms(a, p, s, seconds_per_byte, bytes, run);
  if (!std::isfinite(terms.links_us)) return terms.links_us;
  const double stream = terms.total();
  if (stream_only) return stream;
  const double t = stream * run.fill_factor() + run.exposed_us();
  // CollNet: the NICs' own path, their bytes and the in-network operations in series, paces the
  // call where it is the longer (NIC-bound Chain and Direct; NVLS only where NVLink leaves the
  // NICs no slack for them). The first loop's operations are the network step NCCL's latency
  // already charges (latency_us); every further loop pays its own.
  if (run.net_op_us <= 0 || s.collnet_net_seconds_per_byte <= 0) return t;
  const double net = bytes * s.collnet_net_seconds_per_byte * 1e6 / s.bandwidth_factor /
                         run.rate_share() * run.fill_factor() +
                     (run.chunks - 1) * run.net_op_us;
  return std::max(t, net);
}

}  // namespace

bool block_copy_paces(Algorithm a, Protocol p, const CostShape& s, double seconds_per_byte,
                      double bytes) {
  // at() asks this of every size's pick: only the shapes the blocks bound build the call's run.
  if (!block_copy_bounds(s)) return false;
  const PipelineRun run = pipeline_run(a, p, s, bytes);
  const double block = block_copy_Bps(a, p, s, bytes, run);
  if (!(block > 0)) return false;
  const double capped = protocol_bandwidth(a, p, s, 1.0 / seconds_per_byte, bytes);
  return capped > 0 && block < capped * run.rate_share() * s.bandwidth_factor;
}

bool rack_reduce_paces(Algorithm a, Protocol p, const CostShape& s, double seconds_per_byte,
                       double bytes) {
  // at() asks this of every size's pick: only NVLS in a rack goes on to build the call's run.
  if (!(rack_reduce_us(a, s, bytes) > 0)) return false;
  const StreamTerms t =
      stream_terms(a, p, s, seconds_per_byte, bytes, pipeline_run(a, p, s, bytes));
  return t.reduce_us > 0 && t.reduce_us >= std::max(t.links_us, t.copy_us);
}

double data_time_us(Algorithm a, Protocol p, const CostShape& s, double seconds_per_byte,
                    double bytes) {
  return call_data_us(a, p, s, seconds_per_byte, bytes, back_to_back_chain(a, p, s, bytes));
}

double tuner_time_us(Algorithm a, Protocol p, const CostShape& s, double seconds_per_byte,
                     double bytes) {
  return assemble_us(a, p, s, bytes, tuner_data_us(a, p, s, seconds_per_byte, bytes),
                     LatencyUse::kTuner);
}

double collective_time_us(Algorithm a, Protocol p, const CostShape& s, double seconds_per_byte,
                          double bytes) {
  const double one = assemble_us(
      a, p, s, bytes, call_data_us(a, p, s, seconds_per_byte, bytes, false), LatencyUse::kTime);
  if (!std::isfinite(one) || !back_to_back_chain(a, p, s, bytes)) return one;
  // Back to back down a chain: the first call takes the whole chain, each further one the
  // chain's period, the longest of
  // - a GPU's: its kernel's fixed part (NCCL's base latency of ring and protocol, tuning.cc's
  //   baseLat: the call's cost apart from its hops) and its bytes;
  // - a network hop's: its proxy runs one operation a connection at a time, so the next call's
  //   receive is posted only once this one's data is consumed, and the sender's RDMA write waits
  //   for that receive's clear-to-send (proxy.cc@v2.29.7-1:435-470, transport/net.cc:1627-1631,
  //   transport/net_ib/p2p.cc:272-278): two network steps and the bytes, the data's step with
  //   LL's staging in host memory (net_staging_us);
  // - the host's issue of a call on the GPUs its thread drives.
  // The chain's end finishes the last call after one + (iters - 1) periods (nccl-tests averages
  // over the ranks, whose first calls end along the chain: that is about (one - period) / 2 /
  // iters less, under 1 us at 1 KiB on 4 x 8 H100, and not counted).
  const double base =
      static_cast<double>(terms(s.release).base_latency_us[nccl::kRing][static_cast<int>(p)]);
  const double hop =
      s.domains > 1 ? 2 * network_step_us(nccl::kRing, p, s, true) + net_staging_us(p) : 0;
  const double period = std::max(
      s.host_issue_us, std::max(base, hop) + call_data_us(a, p, s, seconds_per_byte, bytes, true));
  return std::min(one, period + (one - period) / s.iters);
}

ProtocolPick pick_protocol(Algorithm a, const CostShape& s, double seconds_per_byte, double bytes,
                           std::optional<Protocol> only) {
  ProtocolPick pick;
  for (Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
    if (only && p != *only) continue;
    const double estimate = tuner_time_us(a, p, s, seconds_per_byte, bytes);
    if (estimate < pick.estimate_us)
      pick = {p, estimate, collective_time_us(a, p, s, seconds_per_byte, bytes)};
  }
  return pick;
}

}  // namespace gf
