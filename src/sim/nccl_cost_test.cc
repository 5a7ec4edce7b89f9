// NCCL's cost terms one by one, against the formula of src/graph/tuning.cc worked by hand from
// the tables in nccl_constants.h (nothing here was fitted).
#include "sim/nccl_cost.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "../../tests/support.h"
#include "sim/nccl_constants.h"
#include "verify/parsers.h"

namespace gf {
namespace {

TEST(NcclCost, NamesRoundTrip) {
  for (const auto& e : kOpNames) EXPECT_EQ(parse_op(e.name), e.value) << e.name;
  for (const auto& e : kAlgorithmNames) EXPECT_EQ(parse_algorithm(e.name), e.value) << e.name;
  for (const auto& e : kProtocolNames) EXPECT_EQ(parse_protocol(e.name), e.value) << e.name;
  EXPECT_STREQ(op_name(Op::kReduceScatter), "reduce_scatter");
  EXPECT_EQ(parse_algorithm("sharp"), Algorithm::kCollNet);
  EXPECT_EQ(parse_protocol("ll128"), Protocol::kLL128);
  EXPECT_EQ(parse_protocol("SIMPLE"), Protocol::kSimple);
  EXPECT_FALSE(parse_protocol("ll12"));
  EXPECT_FALSE(parse_op("allreduce"));
  EXPECT_FALSE(parse_algorithm(""));
}

TEST(NcclCost, BusFactorIsNcclTests) {
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAlltoall, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kBroadcast, 16), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllReduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(ring_traffic_factor(Op::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(ring_traffic_factor(Op::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(ring_traffic_factor(Op::kBroadcast, 4), 1.0);
}

// Communicators with no fabric hop of their own, so that the figures are tuning.cc's alone.
CostShape shape(Op op, long long ranks, int domains, NcclRelease r) {
  CostShape s;
  s.op = op;
  s.ranks = ranks;
  s.domains = domains;
  s.domain_gpus = static_cast<int>(ranks / domains);
  s.release = r;
  s.generation = GpuGeneration::kHopper;
  s.channels = 16;
  return s;
}
constexpr NcclRelease k218 = NcclRelease::kV2_18, k229 = NcclRelease::kV2_29;

// NCCL's topology search graphs across nodes as NCCL's own search code finds them (search.cc@
// v2.24.3-1 and @v2.27.7-1, compiled and run on the topologies below): on 8 x H100 with a 400G
// NIC each (PCIe Gen5: 48 GB/s paths), ring 8 channels of 48 GB/s, NVLS 8 heads of 40 GB/s
// inside (9 x 42 would exceed 18 x 20.6 of NVLink) and 48 between nodes; B200 from v2.27 48 / 48,
// before v2.26 rated as Hopper. NCCL's tuner then rates NVLS Tree at 8 x 40 x 5/6 on 2 nodes and
// 8 x 24 x 5/6 from 3 (v2.24), against the ring's 8 x 48 x N / nsteps.
TEST(NcclCost, RingAndNvlsGraphsAreNcclsSearchs) {
  auto hgx = [](long long nodes, NcclRelease r, GpuGeneration g) {
    CostShape s = shape(Op::kAllReduce, 8 * nodes, static_cast<int>(nodes), r);
    s.generation = g;
    s.nic_path_GBps = 48;
    s.collnet_nics = 8;
    s.nvlinks = 18;
    return s;
  };
  const NcclRelease k224 = NcclRelease::kV2_24, k227 = NcclRelease::kV2_27;
  const CostShape h4 = hgx(4, k224, GpuGeneration::kHopper);
  const SearchGraph ring = ring_search_graph(h4);
  EXPECT_EQ(ring.channels, 8);
  EXPECT_DOUBLE_EQ(ring.inter_GBps, 48);
  const SearchGraph nvls = nvls_search_graph(h4);
  EXPECT_EQ(nvls.channels, 8);
  EXPECT_DOUBLE_EQ(nvls.intra_GBps, 40);
  EXPECT_DOUBLE_EQ(nvls.inter_GBps, 48);
  EXPECT_DOUBLE_EQ(nvls_search_graph(hgx(4, k227, GpuGeneration::kBlackwell)).intra_GBps, 48);
  EXPECT_DOUBLE_EQ(nvls_search_graph(hgx(4, k227, GpuGeneration::kBlackwell)).inter_GBps, 48);
  EXPECT_DOUBLE_EQ(nvls_search_graph(hgx(4, k224, GpuGeneration::kBlackwell)).intra_GBps, 40);
  EXPECT_NEAR(nvls_tree_tuner_Bps(hgx(2, k224, GpuGeneration::kHopper)), 8 * 40 * 5e9 / 6, 1);
  EXPECT_NEAR(nvls_tree_tuner_Bps(h4), 8 * 24 * 5e9 / 6, 1);
  EXPECT_NEAR(nvls_tree_tuner_Bps(hgx(8, k224, GpuGeneration::kHopper)), 8 * 24 * 5e9 / 6, 1);
  EXPECT_NEAR(nvls_tree_tuner_Bps(hgx(2, k227, GpuGeneration::kBlackwell)), 8 * 48 * 5e9 / 6, 1);
  // v2.18 raises bwIntra, not bwInter (40 / 40), and rates bwInter from 3 nodes x .7 n / 2(n - 1);
  // v2.29: the per-head cap x N / nsteps.
  EXPECT_DOUBLE_EQ(nvls_search_graph(hgx(4, k218, GpuGeneration::kHopper)).inter_GBps, 40);
  EXPECT_NEAR(nvls_tree_tuner_Bps(hgx(4, k218, GpuGeneration::kHopper)), 8 * 40 * 0.7 * 4 / 6 * 1e9,
              1);
  EXPECT_NEAR(nvls_tree_tuner_Bps(hgx(4, k229, GpuGeneration::kHopper)),
              8 * nccl::kPerChMaxNvlsTreeBw[2][2] * 32 / 62 * 1e9, 1);
  // H800's 8 NVLinks and 100G NICs: 12 GB/s channels (the highest speed within 12.5); A100's 12
  // NVLinks and 200G NICs on PCIe Gen4 (24 GB/s paths): 8 x 24.
  CostShape h800 = hgx(2, NcclRelease::kV2_21, GpuGeneration::kHopper);
  h800.nvlinks = 8;
  h800.nic_path_GBps = 12.5;
  EXPECT_DOUBLE_EQ(ring_search_graph(h800).inter_GBps, 12);
  EXPECT_DOUBLE_EQ(nvls_search_graph(h800).intra_GBps, 12);
  CostShape a100 = hgx(4, k224, GpuGeneration::kAmpere);
  a100.nvlinks = 12;
  a100.nic_path_GBps = 24;
  EXPECT_EQ(ring_search_graph(a100).channels, 8);
  EXPECT_DOUBLE_EQ(ring_search_graph(a100).inter_GBps, 24);
  EXPECT_FALSE(nvls_search_graph(a100).known());
  // 4 NICs on 8 H100: 4 heads of 48 / 48 (5 x 48 within the NVLink); the ring's product 4 x 48,
  // which NCCL lists as 8 x 24.
  CostShape four_nics = h4;
  four_nics.collnet_nics = 4;
  EXPECT_DOUBLE_EQ(ring_search_graph(four_nics).channels * ring_search_graph(four_nics).inter_GBps,
                   192);
  EXPECT_EQ(nvls_search_graph(four_nics).channels, 4);
  EXPECT_DOUBLE_EQ(nvls_search_graph(four_nics).intra_GBps, 48);
  // From v2.28 one head (one NIC a node) is no NVLS Tree for NCCL's tuner.
  EXPECT_EQ(nvls_tree_min_heads(k229), 2);
  EXPECT_EQ(nvls_tree_min_heads(k224), 1);
  CostShape one_nic = hgx(4, k229, GpuGeneration::kHopper);
  one_nic.collnet_nics = 1;
  ASSERT_TRUE(nvls_search_graph(one_nic).known());
  EXPECT_EQ(nvls_tree_tuner_Bps(one_nic), 0);
  // Not known, and the tuner keeps the flows' rate: one node, an NVL72 rack, two NICs a GPU,
  // no NVLink count, a ring whose channels the NVLink could not carry, v2.18's ring (8 x 45 on
  // this node), a NIC path twice the fastest speed (NCCL stacks channels on a NIC).
  EXPECT_FALSE(ring_search_graph(hgx(4, k218, GpuGeneration::kHopper)).known());
  CostShape gen6 = hgx(4, NcclRelease::kV2_26, GpuGeneration::kBlackwell);
  gen6.nic_path_GBps = 96;
  EXPECT_FALSE(ring_search_graph(gen6).known());
  EXPECT_FALSE(ring_search_graph(hgx(1, k224, GpuGeneration::kHopper)).known());
  CostShape rack = h4;
  rack.nvlink_across_trays = true;
  EXPECT_FALSE(nvls_search_graph(rack).known());
  EXPECT_EQ(nvls_tree_tuner_Bps(rack), 0);
  CostShape two_nics = h4;
  two_nics.domain_gpus = 4;
  EXPECT_FALSE(ring_search_graph(two_nics).known());
  CostShape no_links = h4;
  no_links.nvlinks = 0;
  EXPECT_FALSE(ring_search_graph(no_links).known());
  CostShape thin = h4;
  thin.nvlinks = 4;
  EXPECT_FALSE(ring_search_graph(thin).known());
}

// From v2.29 NCCL's time function scales NVLS Tree by treeCorrectionFactor below 1 GiB on
// Blackwell x86 hosts (tuning.cc@v2.29.7-1:596): 16 MiB is column 18, Simple's 0.7. Not on Grace
// hosts, not at 1 GiB, not in v2.28.
TEST(NcclCost, NvlsTreeTakesTheTreeCorrectionOnBlackwellX86From229) {
  CostShape s = shape(Op::kAllReduce, 32, 4, k229);
  s.generation = GpuGeneration::kBlackwell;
  s.nic_path_GBps = 48;
  s.collnet_nics = 8;
  s.nvlinks = 18;
  CostShape grace = s;
  grace.host_grace = true;
  const double mib = 1 << 20, flows = 1 / 190e9;
  auto t = [&](const CostShape& c, double bytes) {
    return tuner_time_us(Algorithm::kNvlsTree, Protocol::kSimple, c, flows, bytes);
  };
  const double data = 16 * mib / nvls_tree_tuner_Bps(s) * 1e6;
  EXPECT_NEAR(t(s, 16 * mib) - t(grace, 16 * mib), data * (1 / 0.7 - 1), 1e-6);
  EXPECT_DOUBLE_EQ(t(s, 1024 * mib), t(grace, 1024 * mib));
  CostShape v228 = s;
  v228.release = NcclRelease::kV2_28;
  CostShape v228_grace = v228;
  v228_grace.host_grace = true;
  EXPECT_DOUBLE_EQ(t(v228, 16 * mib), t(v228_grace, 16 * mib));
}

// With those graphs NCCL 2.24's tuner moves a 4 x 8 H100 all_reduce from NVLS Tree to ring
// between 128 and 256 MiB: ring 395.9 + S / 198.2 GB/s against NVLS Tree 81 + S / 160 GB/s
// (latencies of tuning.cc@v2.24.3-1, ring's x1.4 plateau) cross at 261.5 MB. Voltage Park's
// 2.24.3 cluster and gj-aion's dip there (busbw 275 at 128 MiB, 240 at 256 MiB: nccl-public.csv
// test rows 304, 258). The flows alone rated NVLS Tree 188 GB/s and kept it to 1 GiB.
TEST(NcclCost, TunerLeavesNvlsTreeForRingAt256MiBOnFourH100Nodes) {
  CostShape s = shape(Op::kAllReduce, 32, 4, NcclRelease::kV2_24);
  s.nic_path_GBps = 48;
  s.collnet_nics = 8;
  s.nvlinks = 18;
  s.graph_channels = 8;
  const double flows = 1 / 194e9;  // the flows' rate of either, per payload byte
  auto tuner = [&](Algorithm a, double bytes) {
    return tuner_time_us(a, Protocol::kSimple, s, flows, bytes);
  };
  const double mib = 1 << 20;
  EXPECT_LT(tuner(Algorithm::kNvlsTree, 128 * mib), tuner(Algorithm::kRing, 128 * mib));
  EXPECT_GT(tuner(Algorithm::kNvlsTree, 256 * mib), tuner(Algorithm::kRing, 256 * mib));
  // Without the graphs (no NVLink count) both take the flows' rate: NVLS Tree's lower latency
  // keeps it at every size.
  s.nvlinks = 0;
  EXPECT_LT(tuner(Algorithm::kNvlsTree, 1024 * mib), tuner(Algorithm::kRing, 1024 * mib));
}

// An NVL72 rack's NVLink steps cross its switch trays: each costs kRackNvlinkStepUs more in the
// time, not in NCCL's estimate (its tuner does not know). A ring all_reduce on 4 GPUs has 6
// NVLink steps; NVLS's exposed step a loop takes it too.
TEST(NcclCost, RackNvlinkStepsCostMoreInTheTimeOnly) {
  CostShape hgx = shape(Op::kAllReduce, 4, 1, k229);
  CostShape rack = hgx;
  rack.nvlink_across_trays = true;
  for (Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
    EXPECT_NEAR(latency_us(Algorithm::kRing, p, rack, LatencyUse::kTime) -
                    latency_us(Algorithm::kRing, p, hgx, LatencyUse::kTime),
                6 * nccl::kRackNvlinkStepUs, 1e-9);
    EXPECT_DOUBLE_EQ(latency_us(Algorithm::kRing, p, rack, LatencyUse::kTuner),
                     latency_us(Algorithm::kRing, p, hgx, LatencyUse::kTuner));
  }
  EXPECT_NEAR(pipeline_run(Algorithm::kNvls, Protocol::kSimple, rack, 1 << 30).exposed_step_us -
                  pipeline_run(Algorithm::kNvls, Protocol::kSimple, hgx, 1 << 30).exposed_step_us,
              nccl::kRackNvlinkStepUs, 1e-9);
}

// NVLS all_reduce in a Blackwell rack: each channel's scatter (and gather) copies its heads'
// chunks one after the other, a fixed cost each and its bytes. 64 GPUs (32 heads) on 24
// channels at 64 MiB: NCCL's chunk is 32 KiB there (64 MiB < 8 x 768 operations x 64 KiB,
// >= 2 x 768 x 32 KiB: enqueue.cc), a loop 32 x 32 KiB = 1 MiB; a channel's 64 MiB / 24 holds 2
// loops and a remainder whose chunks are 21.3 KiB rounded up to 32 KiB: 22 of them. 86 chunks.
TEST(NcclCost, RackNvlsCopiesEveryHeadsChunkInTurn) {
  CostShape rack = shape(Op::kAllReduce, 64, 1, k229);
  rack.generation = GpuGeneration::kBlackwell;
  rack.channels = 24;
  rack.nvlink_across_trays = true;
  const double S = 64.0 * (1 << 20);
  const PipelineRun run = pipeline_run(Algorithm::kNvls, Protocol::kSimple, rack, S);
  EXPECT_NEAR(run.copy_us,
              86 * nccl::kNvlsCopyChunkUs + S / 24 / (nccl::kNvlsCopyChannelGBs * 1e9) * 1e6, 1e-6);
  // With NVLink far faster than the copies, they pace the call: its time is at least theirs.
  EXPECT_GT(collective_time_us(Algorithm::kNvls, Protocol::kSimple, rack, 1 / 4e12, S),
            run.copy_us);
  // The tuner's estimate does not see them (NCCL's does not).
  CostShape hgx = rack;
  hgx.nvlink_across_trays = false;
  EXPECT_DOUBLE_EQ(tuner_time_us(Algorithm::kNvls, Protocol::kSimple, rack, 1 / 4e12, S),
                   tuner_time_us(Algorithm::kNvls, Protocol::kSimple, hgx, 1 / 4e12, S));
  // Measured inside one rack only: none on an HGX board, on Hopper, for all_gather, or across
  // racks (NVLS over CollNet, NVLS Tree).
  CostShape racks = shape(Op::kAllReduce, 128, 2, k229);
  racks.generation = GpuGeneration::kBlackwell;
  racks.channels = 24;
  racks.nvlink_across_trays = true;
  EXPECT_EQ(pipeline_run(Algorithm::kNvlsTree, Protocol::kSimple, racks, S).copy_us, 0);
  EXPECT_EQ(pipeline_run(Algorithm::kNvls, Protocol::kSimple, racks, S).copy_us, 0);
  EXPECT_EQ(pipeline_run(Algorithm::kNvls, Protocol::kSimple, hgx, S).copy_us, 0);
  CostShape hopper = rack;
  hopper.generation = GpuGeneration::kHopper;
  EXPECT_EQ(pipeline_run(Algorithm::kNvls, Protocol::kSimple, hopper, S).copy_us, 0);
  CostShape gather = rack;
  gather.op = Op::kAllGather;
  EXPECT_EQ(pipeline_run(Algorithm::kNvls, Protocol::kSimple, gather, S).copy_us, 0);
  // The last loop's chunks are its remainder over the heads rounded up to 16 KiB, and only the
  // heads that get data are copied to. 1 GiB: 64 KiB chunks, 21 loops of 32 and a remainder of
  // 699,051 bytes in chunks of 32 KiB: 694 (whole 64 KiB chunks would be 683). 1 MiB: the
  // scheduler's cells of 32 KiB of traffic, three a channel, leave it 22 channels
  // (TheSchedulerGivesEachChannelACellOfTraffic): 47,662 bytes a channel, three chunks of 16 KiB.
  EXPECT_NEAR(
      pipeline_run(Algorithm::kNvls, Protocol::kSimple, rack, 1 << 30).copy_us,
      694 * nccl::kNvlsCopyChunkUs + (1 << 30) / 24.0 / (nccl::kNvlsCopyChannelGBs * 1e9) * 1e6,
      1e-6);
  EXPECT_EQ(pipeline_run(Algorithm::kNvls, Protocol::kSimple, rack, 1 << 20).channels, 22);
  EXPECT_NEAR(
      pipeline_run(Algorithm::kNvls, Protocol::kSimple, rack, 1 << 20).copy_us,
      3 * nccl::kNvlsCopyChunkUs + (1 << 20) / 22.0 / (nccl::kNvlsCopyChannelGBs * 1e9) * 1e6,
      1e-6);
}

// NVLS all_reduce in an NVL72 rack: the rack's switches reduce every GPU's data at
// kRackNvlsReduceTBs together. On 72 GPUs at 16 GiB, with NVLink out of the way, that paces the
// call's data (72 x S at the rate, through the pipeline's fill); on two racks NVLS Tree's each
// reduces its own 72; on 8 GPUs of the rack the same bytes take 8 x S, under their copies, and
// do not pace it. An HGX board, all_gather and ring have no such term, and NCCL's estimate does
// not know it.
TEST(NcclCost, ARacksNvlsReductionIsSharedByItsGpus) {
  CostShape rack = shape(Op::kAllReduce, 72, 1, k229);
  rack.generation = GpuGeneration::kBlackwell;
  rack.channels = 24;
  rack.domain_gpus = 72;
  rack.nvlink_across_trays = true;
  const double S = 16.0 * (1LL << 30), fast = 1 / 100e12;
  const double reduce_us = 72 * S / (nccl::kRackNvlsReduceTBs * 1e12) * 1e6;
  EXPECT_NEAR(rack_reduce_us(Algorithm::kNvls, rack, S), reduce_us, 1e-6);
  const PipelineRun run = pipeline_run(Algorithm::kNvls, Protocol::kSimple, rack, S);
  ASSERT_LT(run.copy_us, reduce_us);
  EXPECT_NEAR(data_time_us(Algorithm::kNvls, Protocol::kSimple, rack, fast, S),
              reduce_us * run.fill_factor() + run.exposed_us(), 1e-6);
  EXPECT_TRUE(rack_reduce_paces(Algorithm::kNvls, Protocol::kSimple, rack, fast, S));
  // A calibration profile's factor on NVLS scales it as the algorithm's bandwidth: a rack whose
  // NVLS runs at 0.8 of the model's takes 1 / 0.8 of the reduction's time.
  CostShape profiled = rack;
  profiled.bandwidth_factor = 0.8;
  EXPECT_NEAR(data_time_us(Algorithm::kNvls, Protocol::kSimple, profiled, fast, S),
              reduce_us / 0.8 * run.fill_factor() + run.exposed_us(), 1e-6);
  // NVLS Tree reduces each rack's GPUs in its switches too: on two racks each reduces its own
  // 72 GPUs' data, not the 144's, and with every link fast that paces the tree's data.
  CostShape racks = rack;
  racks.ranks = 144;
  racks.domains = 2;
  EXPECT_NEAR(rack_reduce_us(Algorithm::kNvlsTree, racks, S), reduce_us, 1e-6);
  const PipelineRun tree = pipeline_run(Algorithm::kNvlsTree, Protocol::kSimple, racks, S);
  EXPECT_NEAR(data_time_us(Algorithm::kNvlsTree, Protocol::kSimple, racks, fast, S),
              reduce_us * tree.fill_factor() + tree.exposed_us(), 1e-6);
  EXPECT_TRUE(rack_reduce_paces(Algorithm::kNvlsTree, Protocol::kSimple, racks, fast, S));
  // 8 GPUs of the rack: their copies outlast the reduction.
  CostShape eight = rack;
  eight.ranks = 8;
  eight.domain_gpus = 8;
  EXPECT_NEAR(rack_reduce_us(Algorithm::kNvls, eight, S), reduce_us * 8 / 72, 1e-6);
  EXPECT_FALSE(rack_reduce_paces(Algorithm::kNvls, Protocol::kSimple, eight, fast, S));
  // Elsewhere nothing: an HGX board, all_gather, ring.
  CostShape hgx = rack;
  hgx.nvlink_across_trays = false;
  CostShape gather = rack;
  gather.op = Op::kAllGather;
  EXPECT_EQ(rack_reduce_us(Algorithm::kNvls, hgx, S), 0);
  EXPECT_EQ(rack_reduce_us(Algorithm::kNvls, gather, S), 0);
  EXPECT_EQ(rack_reduce_us(Algorithm::kRing, rack, S), 0);
  EXPECT_DOUBLE_EQ(tuner_time_us(Algorithm::kNvls, Protocol::kSimple, rack, fast, S),
                   tuner_time_us(Algorithm::kNvls, Protocol::kSimple, hgx, fast, S));
}

TEST(NcclCost, RingLatencyOneNodeIsTheSameInBothReleases) {
  // 8 GPUs, all_reduce: 14 NVLink steps. LL 6.6 + 14 x .6; LL128 14 + 14 x 1.9; Simple 8.4 +
  // 14 x 3.4 (docs/nccl-model-reference.md 1.5, worked values).
  for (NcclRelease r : {k218, k229}) {
    const CostShape s = shape(Op::kAllReduce, 8, 1, r);
    EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kLL, s), 15.0, 1e-4);
    EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kLL128, s), 40.6, 1e-4);
    EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kSimple, s), 56.0, 1e-4);
  }
}

TEST(NcclCost, RingLatencyAcrossNodesPerRelease) {
  // 8 nodes x 8 GPUs all_reduce: 126 steps; between nodes 2n = 16 (2.18) or 2(n-1) = 14 (2.23+);
  // a step inside a node at least netOverhead (1 us, x3 for Simple).
  const CostShape a = shape(Op::kAllReduce, 64, 8, k218), b = shape(Op::kAllReduce, 64, 8, k229);
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kLL, a), 6.6 + 110 * 1.0 + 16 * 2.7, 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kLL, b), 6.6 + 112 * 1.0 + 14 * 2.7, 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kLL128, a), 287.0, 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kLL128, b), 282.8, 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kSimple, a), 606.4, 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kSimple, b), 585.2, 1e-4);
  // The fabric's own hop latency is added to every step between nodes.
  CostShape hop = b;
  hop.net_hop_us = 2;
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kSimple, hop), 585.2 + 14 * 2, 1e-4);
}

// The time takes the two terms NCCL 2.23 corrected, whatever the release; the tuner keeps the
// release's own, so that 2.18 still chooses as 2.18 did.
TEST(NcclCost, TheTimeTakesTheCorrectedStepsTheTunerTheReleases) {
  // 8 nodes x 8 GPUs all_reduce under 2.18: the tuner counts 2n = 16 network steps, the time
  // 2(n-1) = 14, as 2.29 does, each with LL's staging in host memory, which no release's tuner
  // has.
  const CostShape a = shape(Op::kAllReduce, 64, 8, k218), b = shape(Op::kAllReduce, 64, 8, k229);
  const double staging = nccl::kLLNetStagingUs;
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kLL, a, LatencyUse::kTime),
              latency_us(Algorithm::kRing, Protocol::kLL, b) + 14 * staging, 1e-9);
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kLL, a, LatencyUse::kTuner),
              6.6 + 110 * 1.0 + 16 * 2.7, 1e-4);
  // Two nodes of one GPU, all_gather: one network step, fully exposed. 2.18's tuner takes the
  // ring's 2.7 us; the time takes Tree's 5.0, as 2.23+ do, and the staging.
  const CostShape one = shape(Op::kAllGather, 2, 2, k218);
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kLL, one, LatencyUse::kTuner), 6.6 + 2.7,
              1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kLL, one, LatencyUse::kTime),
              6.6 + 5.0 + staging, 1e-4);
  // collective_time_us is the time; tuner_time_us the estimate NCCL chooses by.
  const double t = collective_time_us(Algorithm::kRing, Protocol::kLL, one, 1e-9, 8);
  const double e = tuner_time_us(Algorithm::kRing, Protocol::kLL, one, 1e-9, 8);
  EXPECT_GT(t - e, 2.0);
}

// LL's network steps pay its staging in host memory (kLLNetStagingUs: a network connection's LL
// send buffer is the host's, transport/net.cc@v2.29.7-1:889) in the time, not in NCCL's estimate;
// LL128 and Simple (the GPU's memory with GPUDirect RDMA) and NVLink steps do not.
// The host's issue of a call: kHostIssueUsPerGpu a GPU its thread drives, and a point-to-point
// call's sends and receives planned one by one (an alltoall's two per rank, a sendrecv's two).
TEST(NcclCost, TheHostPlansEachSendAndReceive) {
  static_assert(nccl::kHostP2pTaskUs > 0, "the floor would not grow with an alltoall's ranks");
  const double t = nccl::kHostP2pTaskUs;
  EXPECT_DOUBLE_EQ(host_issue_us(Op::kAllReduce, 64, 1), nccl::kHostIssueUsPerGpu);
  EXPECT_DOUBLE_EQ(host_issue_us(Op::kBroadcast, 64, 1), nccl::kHostIssueUsPerGpu);
  EXPECT_DOUBLE_EQ(host_issue_us(Op::kSendRecv, 64, 1), nccl::kHostIssueUsPerGpu + 2 * t);
  EXPECT_DOUBLE_EQ(host_issue_us(Op::kAlltoall, 64, 1), nccl::kHostIssueUsPerGpu + 128 * t);
  EXPECT_NEAR(host_issue_us(Op::kAlltoall, 64, 1) - host_issue_us(Op::kAlltoall, 8, 1), 112 * t,
              1e-9);
  // -g 4: one thread issues the call on four GPUs, each with its own sends and receives.
  EXPECT_DOUBLE_EQ(host_issue_us(Op::kAlltoall, 8, 4), 4 * host_issue_us(Op::kAlltoall, 8, 1));
}

TEST(NcclCost, LLStagesItsNetworkStepsInHostMemory) {
  // The sums below would hold for any value, 0 too: the staging must cost something.
  static_assert(nccl::kLLNetStagingUs > 0);
  const double staging = nccl::kLLNetStagingUs;
  auto extra = [](Algorithm a, Protocol p, const CostShape& s) {
    return latency_us(a, p, s, LatencyUse::kTime) - latency_us(a, p, s, LatencyUse::kTuner);
  };
  // 16 nodes of 8, all_reduce: the tree's 2 x log2(16) network steps (the 16-node H100 runs the
  // constant was fitted on), the ring's 2(n - 1) = 30.
  const CostShape ar16 = shape(Op::kAllReduce, 128, 16, k229);
  EXPECT_NEAR(extra(Algorithm::kTree, Protocol::kLL, ar16), 8 * staging, 1e-9);
  EXPECT_NEAR(extra(Algorithm::kRing, Protocol::kLL, ar16), 30 * staging, 1e-9);
  for (const Protocol p : {Protocol::kLL128, Protocol::kSimple}) {
    EXPECT_NEAR(extra(Algorithm::kTree, p, ar16), 0, 1e-9);
    EXPECT_NEAR(extra(Algorithm::kRing, p, ar16), 0, 1e-9);
  }
  // One node: no network step, nothing staged.
  const CostShape ar1 = shape(Op::kAllReduce, 8, 1, k229);
  EXPECT_NEAR(extra(Algorithm::kTree, Protocol::kLL, ar1), 0, 1e-9);
  EXPECT_NEAR(extra(Algorithm::kRing, Protocol::kLL, ar1), 0, 1e-9);
  // The estimate NCCL chooses by is its own: baseLat + 2 (7 NVLink + 4 network steps).
  EXPECT_NEAR(latency_us(Algorithm::kTree, Protocol::kLL, ar16, LatencyUse::kTuner),
              6.8 + 2 * (7 * 0.6 + 4 * 5.0), 1e-4);
}

// NVLS Tree's per-head cap (v2.29) is in the tuner's estimate only: measured forced NVLS Tree
// runs exceed it, so the time keeps the flow model's bandwidth.
TEST(NcclCost, NvlsTreeCapSteersTheChoiceNotTheTime) {
  CostShape s = shape(Op::kAllReduce, 32, 4, k229);
  s.generation = GpuGeneration::kBlackwell;
  const double bytes = 16.0 * (1LL << 30), fast = 1e-13;  // 10 TB/s: far above the cap
  const double capped_alg = 8 * 43.8e9 * 32 / 62;         // 8 heads x 43.8 GB/s x N / nsteps
  const double est = tuner_time_us(Algorithm::kNvlsTree, Protocol::kSimple, s, fast, bytes);
  EXPECT_NEAR(est - latency_us(Algorithm::kNvlsTree, Protocol::kSimple, s),
              bytes / capped_alg * 1e6, 1.0);
  // The time follows the flow model's bandwidth below the cap: ten times slower links add nine
  // times the data's time (a capped time would not move at all).
  const double t1 = collective_time_us(Algorithm::kNvlsTree, Protocol::kSimple, s, fast, bytes);
  const double t10 =
      collective_time_us(Algorithm::kNvlsTree, Protocol::kSimple, s, 10 * fast, bytes);
  EXPECT_GT(t10 - t1, 9 * bytes * fast * 1e6 * 0.99);
  CostShape old = s;
  old.release = k218;  // 2.18 has no such cap
  EXPECT_LT(tuner_time_us(Algorithm::kNvlsTree, Protocol::kSimple, old, fast, bytes), est / 4);
  old.release = NcclRelease::kV2_27;  // nor 2.27 (perChMaxNVLSTreeBws came with 2.28)
  EXPECT_LT(tuner_time_us(Algorithm::kNvlsTree, Protocol::kSimple, old, fast, bytes), est / 4);
  old.release = NcclRelease::kV2_28;
  EXPECT_NEAR(tuner_time_us(Algorithm::kNvlsTree, Protocol::kSimple, old, fast, bytes), est, 1.0);
}

TEST(NcclCost, TreeLatencyIsChainPlusFloorLog) {
  // 2 x ((ppn - 1) x NVLink + floor(log2 n) x Net) + base; Tree Simple's base is 0 in 2.18.
  const CostShape a = shape(Op::kAllReduce, 64, 8, k218), b = shape(Op::kAllReduce, 64, 8, k229);
  EXPECT_NEAR(latency_us(Algorithm::kTree, Protocol::kLL, b), 45.2, 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kTree, Protocol::kLL128, b), 82.5, 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kTree, Protocol::kSimple, a), 140.0, 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kTree, Protocol::kSimple, b), 148.4, 1e-4);
  // 2.21 and 2.22: Tree's Simple step is 28 us on every link and its base 0
  // (tuning.cc@v2.21.5-1:56, 66-74); 2.23 to 2.27 take 2.29's.
  CostShape b21 = b, b27 = b;
  b21.release = NcclRelease::kV2_21;
  b27.release = NcclRelease::kV2_27;
  EXPECT_NEAR(latency_us(Algorithm::kTree, Protocol::kSimple, b21), 2 * (7 * 28.0 + 3 * 28.0),
              1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kTree, Protocol::kSimple, b27), 148.4, 1e-4);
  EXPECT_TRUE(std::isinf(
      latency_us(Algorithm::kPat, Protocol::kSimple, shape(Op::kAllGather, 16, 16, b21.release))));
  // floor, not ceil: 5 nodes are 2 levels.
  const CostShape five = shape(Op::kAllReduce, 40, 5, k229);
  EXPECT_NEAR(latency_us(Algorithm::kTree, Protocol::kSimple, five), 8.4 + 2 * (7 * 4.0 + 2 * 14),
              1e-4);
}

TEST(NcclCost, NvlsCollNetAndPatLatencyPerRelease) {
  const CostShape one18 = shape(Op::kAllReduce, 8, 1, k218),
                  one29 = shape(Op::kAllReduce, 8, 1, k229);
  EXPECT_NEAR(latency_us(Algorithm::kNvls, Protocol::kSimple, one18), 23.0, 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kNvls, Protocol::kSimple, one29), 25.0, 1e-4);
  const CostShape m18 = shape(Op::kAllReduce, 32, 4, k218),
                  m29 = shape(Op::kAllReduce, 32, 4, k229);
  EXPECT_NEAR(latency_us(Algorithm::kNvlsTree, Protocol::kSimple, m18), 23 + 2 * 3 * 19.0, 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kNvlsTree, Protocol::kSimple, m29), 25 + 2 * 2 * 20.9, 1e-4);
  // 2.21 to 2.27 step NVLS Tree across the network at 14 us (tuning.cc@v2.27.7-1:96), 2.28 at
  // 20.9 (tuning.cc@v2.28.9-1's hwLat); the rest of the term is 2.28's.
  CostShape m27 = m29, m28 = m29;
  m27.release = NcclRelease::kV2_27;
  m28.release = NcclRelease::kV2_28;
  EXPECT_NEAR(latency_us(Algorithm::kNvlsTree, Protocol::kSimple, m27), 25 + 2 * 2 * 14.0, 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kNvlsTree, Protocol::kSimple, m28), 25 + 2 * 2 * 20.9, 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kSimple, m27),
              latency_us(Algorithm::kRing, Protocol::kSimple, m28), 1e-9);
  // CollNet Direct: 2 x (NVLink + 7 x arity) + Net.
  EXPECT_NEAR(latency_us(Algorithm::kCollNet, Protocol::kSimple, m18), 2 * (8.0 + 7 * 0.5) + 10.7,
              1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kCollNet, Protocol::kSimple, m29), 2 * (3.7 + 7 * 0.4) + 31,
              1e-4);
  // PAT (2.23+): one GPU per node, 16 nodes: 8 + log2(16) x 14 / 3.5 + 16 x 2.8; none in 2.18.
  const CostShape pat = shape(Op::kAllGather, 16, 16, k229);
  EXPECT_NEAR(latency_us(Algorithm::kPat, Protocol::kSimple, pat), 8 + 4 * 14 / 3.5 + 16 * 2.8,
              1e-4);
  EXPECT_TRUE(std::isinf(
      latency_us(Algorithm::kPat, Protocol::kSimple, shape(Op::kAllGather, 16, 16, k218))));
}

// A tree's fill: a stage takes a third of the steady chunk time where an inner node's NIC
// carries three chunks per chunk of the tree; on two nodes the tree has no inner node and its
// network hops take the whole chunk time, on three (a chain) half of it.
TEST(NcclCost, TwoNodeTreesFillOverWholeNetworkHops) {
  const double big = 1 << 30;
  // LL128 trees fill over their network hops only: 2 on two nodes, at the whole chunk time;
  // 4 on four nodes, at a third.
  const CostShape two = shape(Op::kAllReduce, 16, 2, k229), four = shape(Op::kAllReduce, 32, 4, k229);
  const PipelineRun t2 = pipeline_run(Algorithm::kTree, Protocol::kLL128, two, big);
  EXPECT_EQ(t2.stages, 2);
  EXPECT_DOUBLE_EQ(t2.stage_share, 1);
  EXPECT_DOUBLE_EQ(pipeline_run(Algorithm::kTree, Protocol::kLL128, four, big).stage_share,
                   1.0 / 3);
  // Simple trees fill over every hop of the depth (7 NVLink hops and 1 network hop, each way):
  // 14 at a third and 2 whole.
  const PipelineRun s2 = pipeline_run(Algorithm::kTree, Protocol::kSimple, two, big);
  EXPECT_EQ(s2.stages, 16);
  EXPECT_DOUBLE_EQ(s2.stage_share, (14.0 / 3 + 2) / 16);
  // NVLS Tree: the switch's reduction and multicast at a third, the two network hops whole.
  const PipelineRun n2 = pipeline_run(Algorithm::kNvlsTree, Protocol::kSimple, two, big);
  EXPECT_EQ(n2.stages, 4);
  EXPECT_DOUBLE_EQ(n2.stage_share, (2.0 / 3 + 2) / 4);
  EXPECT_DOUBLE_EQ(pipeline_run(Algorithm::kNvlsTree, Protocol::kSimple, four, big).stage_share,
                   1.0 / 3);
  // Three nodes make a chain (0, 2, 1): its middle NIC carries two chunks, a hop half the time.
  const CostShape three = shape(Op::kAllReduce, 24, 3, k229);
  EXPECT_DOUBLE_EQ(pipeline_run(Algorithm::kTree, Protocol::kLL128, three, big).stage_share, 0.5);
}

// NVLS's channels and chunks by release (nvls.cc, enqueue.cc): v2.30 tunes Blackwell across
// nodes by its NICs (ncclNvlsTreeSm100Tuning, nvls.cc@v2.30.7-1:164-200); NVLS Tree starts from
// the Simple step up to v2.20, with no 64 KiB limit from 4 nodes in v2.18.
TEST(NcclCost, NvlsTuningByRelease) {
  constexpr NcclRelease k220 = NcclRelease::kV2_20, k230 = NcclRelease::kV2_30;
  const auto bw = GpuGeneration::kBlackwell, hop = GpuGeneration::kHopper;
  // A 400G NIC on PCIe Gen5 x16 is 48 GB/s to NCCL, 800G on Gen6 96, 800G on Gen5 48.
  EXPECT_EQ(nic_path_GBps(50, 5), 48);
  EXPECT_EQ(nic_path_GBps(100, 6), 96);
  EXPECT_EQ(nic_path_GBps(100, 5), 48);
  EXPECT_EQ(nic_path_GBps(25, 4), 24);
  struct Case {
    NcclRelease r;
    GpuGeneration g;
    int nodes, ppn;
    double nic;
    int channels;
    double chunk, tree_chunk;
  };
  const double K = 1024;
  for (const Case& c : std::initializer_list<Case>{
           // v2.29: 32 channels across nodes, 128 KiB, NVLS Tree 64 KiB from 4 nodes.
           {k229, bw, 2, 8, 48, 32, 128 * K, 128 * K},
           {k229, bw, 4, 8, 48, 32, 128 * K, 64 * K},
           {k229, bw, 4, 8, 96, 32, 128 * K, 64 * K},
           // v2.30, B200 with 400G NICs: two nodes 32 channels and 64 KiB trees; from three,
           // 24 channels.
           {k230, bw, 2, 8, 48, 32, 128 * K, 64 * K},
           {k230, bw, 3, 8, 48, 24, 128 * K, 64 * K},
           {k230, bw, 16, 8, 48, 24, 128 * K, 64 * K},
           // Four GPUs a node on two nodes: 256 KiB chunks.
           {k230, bw, 2, 4, 48, 32, 256 * K, 256 * K},
           // 800G NICs on Gen6: 24 channels and 256 KiB from three nodes; two nodes 128 KiB.
           {k230, bw, 4, 8, 96, 24, 256 * K, 256 * K},
           {k230, bw, 2, 8, 96, 32, 128 * K, 128 * K},
           // An NVL72 domain (72 GPUs a "node"): 32 channels, 64 KiB trees.
           {k230, bw, 4, 72, 96, 32, 128 * K, 64 * K},
           {k230, bw, 2, 72, 48, 32, 128 * K, 64 * K},
           // Below 48 GB/s NCCL keeps its defaults; so does Hopper, and one node.
           {k230, bw, 4, 8, 24, 32, 128 * K, 64 * K},
           {k230, bw, 2, 8, 24, 32, 128 * K, 128 * K},
           {k230, hop, 4, 8, 48, 16, 128 * K, 64 * K},
           {k230, bw, 1, 8, 48, 24, 128 * K, 128 * K},
           // v2.20: NVLS Tree from the 512 KiB Simple step, 64 KiB from 4 nodes; v2.18 no limit.
           {k220, hop, 2, 8, 48, 16, 128 * K, 512 * K},
           {k220, hop, 4, 8, 48, 16, 128 * K, 64 * K},
           {k218, hop, 4, 8, 48, 16, 128 * K, 512 * K},
       }) {
    const NvlsTuning t = nvls_tuning(c.r, c.g, c.nodes, c.ppn, c.nic, true);
    EXPECT_EQ(t.channels, c.channels) << c.nodes << " x " << c.ppn << " at " << c.nic;
    EXPECT_EQ(t.chunk_bytes, c.chunk) << c.nodes << " x " << c.ppn << " at " << c.nic;
    EXPECT_EQ(t.tree_chunk_bytes, c.tree_chunk) << c.nodes << " x " << c.ppn << " at " << c.nic;
  }
  // The chunk reaches the pipeline: NVLS Tree on 2 x 8 B200 at 1 GiB runs 64 KiB chunks of 8
  // heads in v2.30 where v2.29 runs 128 KiB.
  CostShape s = shape(Op::kAllReduce, 16, 2, k229);
  s.generation = bw;
  s.nic_path_GBps = 48;
  s.channels = 32;
  const double big = 1 << 30;
  EXPECT_EQ(pipeline_run(Algorithm::kNvlsTree, Protocol::kSimple, s, big).chunk_bytes, 8 * 128 * K);
  s.release = k230;
  EXPECT_EQ(pipeline_run(Algorithm::kNvlsTree, Protocol::kSimple, s, big).chunk_bytes, 8 * 64 * K);
  // NVLS's heads: every GPU on one node; across nodes one a NIC that has a GPU of its own
  // (search.cc@v2.29.7-1:695-712): 4 NICs on 8 GPUs make 4 heads, 16 NICs still 8.
  EXPECT_EQ(nvls_heads(s), 8);
  s.collnet_nics = 4;
  EXPECT_EQ(nvls_heads(s), 4);
  EXPECT_EQ(pipeline_run(Algorithm::kNvlsTree, Protocol::kSimple, s, big).chunk_bytes, 4 * 64 * K);
  s.collnet_nics = 16;
  EXPECT_EQ(nvls_heads(s), 8);
  EXPECT_EQ(nvls_heads(shape(Op::kAllReduce, 8, 1, k230)), 8);
  // One NVL72 rack: 32 heads of its 72 GPUs, NCCL_MAX_NVLS_ARITY (search.cc@v2.29.7-1:1065).
  EXPECT_EQ(nvls_heads(shape(Op::kAllReduce, 72, 1, k230)), 32);
}

// A NIC on the CPU the GPU reaches over NVLink-C2C (Grace Blackwell): PATH_PHB up to 2.26, past
// the LL128 switch's PATH_PXN, so no LL128 between nodes; PATH_P2C from 2.27, below PXN
// (tuning.cc@v2.26.6-1:429, @v2.27.7-1:459-461, topo.h@v2.27.7-1:80-83). v2.30's NVLS tuning
// keeps 128 KiB trees for it where a NIC on the GPU's switch gets 64 KiB (nvls.cc@v2.30.7-1:
// 173-196, the PATH_PXB tests at 179 and 194).
TEST(NcclCost, NicOnTheCpuAcrossC2c) {
  constexpr NcclRelease k226 = NcclRelease::kV2_26, k227 = NcclRelease::kV2_27;
  CostShape s = shape(Op::kAllReduce, 288, 4, k226);
  s.generation = GpuGeneration::kBlackwell;
  auto ll128 = [&](const CostShape& c) {
    return protocol_bandwidth(Algorithm::kRing, Protocol::kLL128, c, 50e9, 1 << 24);
  };
  EXPECT_GT(ll128(s), 0);  // the NIC on the GPU's switch
  s.nic_via_cpu_c2c = true;
  EXPECT_EQ(ll128(s), 0);
  EXPECT_NE(pick_protocol(Algorithm::kRing, s, 1 / 50e9, 1 << 24).protocol, Protocol::kLL128);
  EXPECT_EQ(protocol_bandwidth(Algorithm::kTree, Protocol::kLL128, s, 50e9, 1 << 24), 0);
  // LL and Simple are not gated.
  EXPECT_GT(protocol_bandwidth(Algorithm::kRing, Protocol::kLL, s, 50e9, 1 << 24), 0);
  s.ll128_forced = true;  // NCCL_PROTO=LL128
  EXPECT_GT(ll128(s), 0);
  s.ll128_forced = false;
  for (NcclRelease r : {k227, NcclRelease::kV2_28_7, NcclRelease::kV2_28, k229, NcclRelease::kV2_30}) {
    s.release = r;
    EXPECT_GT(ll128(s), 0) << static_cast<int>(r);
  }
  // Hopper on a C2C NIC (GH200), where the Blackwell rows do not decide: off up to 2.26 in
  // every table, on from 2.27.
  CostShape h = shape(Op::kAllReduce, 64, 4, k218);
  h.nic_via_cpu_c2c = true;
  for (NcclRelease r : {k218, NcclRelease::kV2_20, NcclRelease::kV2_21, NcclRelease::kV2_24, k226}) {
    h.release = r;
    EXPECT_EQ(ll128(h), 0) << static_cast<int>(r);
  }
  h.release = k227;
  EXPECT_GT(ll128(h), 0);
  // On one NVLink domain no graph crosses the NIC.
  CostShape one = shape(Op::kAllReduce, 72, 1, k226);
  one.generation = GpuGeneration::kBlackwell;
  one.nic_via_cpu_c2c = true;
  EXPECT_GT(ll128(one), 0);
  // v2.30's NVLS tuning at 48 GB/s: from three nodes a NIC on the GPU's switch gets 64 KiB trees
  // and one across C2C 128 KiB; on two nodes of eight GPUs likewise.
  const auto bw = GpuGeneration::kBlackwell;
  constexpr NcclRelease k230 = NcclRelease::kV2_30;
  const double K = 1024;
  EXPECT_EQ(nvls_tuning(k230, bw, 4, 4, 48, true).tree_chunk_bytes, 64 * K);
  EXPECT_EQ(nvls_tuning(k230, bw, 4, 4, 48, false).tree_chunk_bytes, 128 * K);
  EXPECT_EQ(nvls_tuning(k230, bw, 2, 8, 48, true).tree_chunk_bytes, 64 * K);
  EXPECT_EQ(nvls_tuning(k230, bw, 2, 8, 48, false).tree_chunk_bytes, 128 * K);
  // ... and it reaches the pipeline.
  CostShape t = shape(Op::kAllReduce, 16, 4, k230);
  t.generation = bw;
  t.nic_path_GBps = 48;
  t.channels = 24;
  EXPECT_EQ(pipeline_run(Algorithm::kNvlsTree, Protocol::kSimple, t, 1 << 30).chunk_bytes, 4 * 64 * K);
  t.nic_via_cpu_c2c = true;
  EXPECT_EQ(pipeline_run(Algorithm::kNvlsTree, Protocol::kSimple, t, 1 << 30).chunk_bytes,
            4 * 128 * K);
}

// The tables between 2.21 and 2.27 and inside 2.28, each term from its own tag
// (nccl_constants.h): what 2.24, 2.26 and 2.28.7 change against their neighbours.
TEST(NcclCost, TablesOfTheReleasesBetween) {
  constexpr NcclRelease k224 = NcclRelease::kV2_24, k226 = NcclRelease::kV2_26,
                        k227 = NcclRelease::kV2_27, k2287 = NcclRelease::kV2_28_7,
                        k228 = NcclRelease::kV2_28;
  // MAXCHANNELS 32 up to 2.24 (device.h@v2.24.3-1), 64 from 2.25; Blackwell rows from 2.25.
  EXPECT_EQ(release_max_channels(k224), 32);
  EXPECT_EQ(release_max_channels(k226), 64);
  EXPECT_FALSE(release_has_blackwell(k224));
  EXPECT_TRUE(release_has_blackwell(k226));
  // Blackwell's NVLS channels: 16 on every GPU up to 2.24, 32 on one domain in 2.25-2.26, 24
  // from 2.27 (nvls.cc); Hopper's 16 in all.
  const auto bw = GpuGeneration::kBlackwell;
  auto nvls_channels = [](NcclRelease r, GpuGeneration g, bool across) {
    return nvls_tuning(r, g, across ? 2 : 1, 8, 48, true).channels;
  };
  EXPECT_EQ(nvls_channels(k224, bw, false), 16);
  EXPECT_EQ(nvls_channels(k224, bw, true), 16);
  EXPECT_EQ(nvls_channels(k226, bw, false), 32);
  EXPECT_EQ(nvls_channels(k227, bw, false), 24);
  EXPECT_EQ(nvls_channels(k227, bw, true), 32);
  EXPECT_EQ(nvls_channels(k227, GpuGeneration::kHopper, true), 16);
  // LL128 does not run on Blackwell up to 2.24 (no case 100 in the LL128 switch).
  CostShape b = shape(Op::kAllGather, 16, 2, k224);
  b.generation = bw;
  EXPECT_EQ(protocol_bandwidth(Algorithm::kRing, Protocol::kLL128, b, 50e9, 1 << 20), 0);
  EXPECT_EQ(pick_protocol(Algorithm::kRing, b, 1 / 50e9, 1 << 20).protocol == Protocol::kLL128,
            false);
  // NCCL_PROTO=LL128 skips that switch (protoEnable 1): forced, LL128 runs.
  b.ll128_forced = true;
  EXPECT_GT(protocol_bandwidth(Algorithm::kRing, Protocol::kLL128, b, 50e9, 1 << 20), 0);
  b.ll128_forced = false;
  b.release = k226;
  EXPECT_GT(protocol_bandwidth(Algorithm::kRing, Protocol::kLL128, b, 50e9, 1 << 20), 0);
  // CollNet Direct all_gather: 2.26 interpolates .95 (one GPU a node) to .85 (eight); 2.27 on
  // the network at x.9.
  const double simple = 40e9;
  const CostShape g8 = shape(Op::kAllGather, 32, 4, k226), g1 = shape(Op::kAllGather, 4, 4, k226);
  EXPECT_NEAR(protocol_bandwidth(Algorithm::kCollNet, Protocol::kSimple, g8, simple, 1e9),
              simple * 0.85, 1);
  EXPECT_NEAR(protocol_bandwidth(Algorithm::kCollNet, Protocol::kSimple, g1, simple, 1e9),
              simple * 0.95, 1);
  EXPECT_NEAR(protocol_bandwidth(Algorithm::kCollNet, Protocol::kSimple,
                                 shape(Op::kAllGather, 32, 4, k227), simple, 1e9),
              simple * 0.9, 1);
  // 2.28.0-2.28.7 step NVLS Tree across the network at 14 us (tuning.cc@v2.28.7-1:165), 2.28.9
  // at 20.9; the rest of the latency is the same.
  const CostShape m2287 = shape(Op::kAllReduce, 32, 4, k2287),
                  m228 = shape(Op::kAllReduce, 32, 4, k228);
  EXPECT_NEAR(latency_us(Algorithm::kNvlsTree, Protocol::kSimple, m2287), 25 + 2 * 2 * 14.0, 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kNvlsTree, Protocol::kSimple, m228), 25 + 2 * 2 * 20.9, 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kSimple, m2287),
              latency_us(Algorithm::kRing, Protocol::kSimple, m228), 1e-9);
}

TEST(NcclCost, RingProtocolBandwidthPerRelease) {
  const double simple = 50e9;  // payload bytes/s
  // 8 nodes: llMaxBw 20.4 GB/s of bus bandwidth (Intel CPU, 3+ nodes), x N/nsteps = 64/126.
  const double ll_cap = 20.4e9 * 64 / 126;
  const CostShape a = shape(Op::kAllReduce, 64, 8, k218), b = shape(Op::kAllReduce, 64, 8, k229);
  EXPECT_NEAR(protocol_bandwidth(Algorithm::kRing, Protocol::kLL, a, simple, 1e6), ll_cap, 1);
  EXPECT_NEAR(protocol_bandwidth(Algorithm::kRing, Protocol::kLL, b, simple, 1e6), ll_cap, 1);
  // Where the cap does not bind: x1/4 (2.18) against x.5 (2.21+).
  EXPECT_NEAR(protocol_bandwidth(Algorithm::kRing, Protocol::kLL, a, 20e9, 1e6), 5e9, 1);
  EXPECT_NEAR(protocol_bandwidth(Algorithm::kRing, Protocol::kLL, b, 20e9, 1e6), 10e9, 1);
  EXPECT_NEAR(protocol_bandwidth(Algorithm::kRing, Protocol::kLL128, b, simple, 1e6), simple * 0.92,
              1);
  EXPECT_EQ(protocol_bandwidth(Algorithm::kRing, Protocol::kSimple, b, simple, 1e6), simple);
  // One node of Hopper: llMaxBw 87.7 (2.18) or 141.0 (2.29) GB/s; all_gather x1/3 in 2.18.
  const CostShape g18 = shape(Op::kAllGather, 8, 1, k218), g29 = shape(Op::kAllGather, 8, 1, k229);
  EXPECT_NEAR(protocol_bandwidth(Algorithm::kRing, Protocol::kLL, g18, 300e9, 1e6),
              std::min(87.7e9 * 8 / 7, 100e9), 1);
  EXPECT_NEAR(protocol_bandwidth(Algorithm::kRing, Protocol::kLL, g29, 300e9, 1e6),
              std::min(141.0e9 * 8 / 7, 150e9), 1);
  // 2.19 and 2.20 keep 2.18's ring LL (x1/4, x1/3) and Hopper's row of 87.7; 2.21 takes x.5 and
  // 141 (git diff v2.20.5-1 v2.21.5-1 -- src/graph/tuning.cc).
  CostShape g20 = g18, g21 = g18, m20 = a;
  g20.release = m20.release = NcclRelease::kV2_20;
  g21.release = NcclRelease::kV2_21;
  EXPECT_NEAR(protocol_bandwidth(Algorithm::kRing, Protocol::kLL, g20, 300e9, 1e6),
              protocol_bandwidth(Algorithm::kRing, Protocol::kLL, g18, 300e9, 1e6), 1);
  EXPECT_NEAR(protocol_bandwidth(Algorithm::kRing, Protocol::kLL, g21, 300e9, 1e6),
              protocol_bandwidth(Algorithm::kRing, Protocol::kLL, g29, 300e9, 1e6), 1);
  EXPECT_NEAR(protocol_bandwidth(Algorithm::kRing, Protocol::kLL, m20, 20e9, 1e6), 5e9, 1);
  // Their NVLS step over NVLink is 23 us (tuning.cc@v2.20.5-1:69), 2.21's 25.
  const CostShape one20 = shape(Op::kAllReduce, 8, 1, NcclRelease::kV2_20);
  EXPECT_NEAR(latency_us(Algorithm::kNvls, Protocol::kSimple, one20), 23.0, 1e-4);
}

TEST(NcclCost, TreeBandwidthHasItsRatioAndPerSizeCorrection) {
  const CostShape b = shape(Op::kAllReduce, 64, 8, k229);
  // 1 GiB: past the correction table; x.92.
  EXPECT_NEAR(protocol_bandwidth(Algorithm::kTree, Protocol::kSimple, b, 40e9, 1 << 30),
              40e9 * 0.92, 1);
  // 1 MiB: log2(2^20 / 64) = 14, Simple's factor .5.
  EXPECT_NEAR(protocol_bandwidth(Algorithm::kTree, Protocol::kSimple, b, 40e9, 1 << 20),
              40e9 * 0.92 * 0.5, 1);
  // LL: /3.8, under llMaxBw x .5; LL128 x120/128 across nodes.
  EXPECT_NEAR(protocol_bandwidth(Algorithm::kTree, Protocol::kLL, b, 40e9, 1 << 30),
              std::min(40e9 * 0.92 / 3.8, 20.4e9 * 0.5), 1);
  EXPECT_NEAR(protocol_bandwidth(Algorithm::kTree, Protocol::kLL128, b, 40e9, 1 << 30),
              40e9 * 0.92 * 120 / 128, 1);
  // NVLS, CollNet and p2p run Simple only; PAT x.75 where it exists.
  EXPECT_EQ(protocol_bandwidth(Algorithm::kNvls, Protocol::kLL, b, 40e9, 1e6), 0);
  EXPECT_EQ(protocol_bandwidth(Algorithm::kPat, Protocol::kSimple, b, 40e9, 1e6), 30e9);
  EXPECT_EQ(protocol_bandwidth(Algorithm::kPat, Protocol::kSimple,
                               shape(Op::kAllGather, 16, 16, k218), 40e9, 1e6),
            0);
}

TEST(NcclCost, CollectiveTimeAddsLatencyDataAndRingPlateau) {
  const CostShape b = shape(Op::kAllReduce, 64, 8, k229);
  // 1 GB at 1 ns/byte on Simple: the latency x1.4 (plateau: 1e9 / (16 x 64) >= 64 B) + 1e6 us.
  const double t = collective_time_us(Algorithm::kRing, Protocol::kSimple, b, 1e-9, 1e9);
  EXPECT_NEAR(t, 585.2 * 1.4 + 1e6, 1e-3);
  // 32 KiB: under the plateau's threshold (32 B per channel and rank). NCCL's tuner charges the
  // data at every channel's bandwidth; the call runs on one channel of 16 (32 KiB < 2 x 512
  // threads x 64 B), at a 16th of it.
  EXPECT_NEAR(tuner_time_us(Algorithm::kRing, Protocol::kSimple, b, 1e-9, 32768), 585.2 + 32.768,
              1e-3);
  EXPECT_NEAR(collective_time_us(Algorithm::kRing, Protocol::kSimple, b, 1e-9, 32768),
              585.2 + 32.768 * 16, 1e-3);
  EXPECT_NEAR(data_time_us(Algorithm::kRing, Protocol::kSimple, b, 1e-9, 1e9), 1e6, 1e-3);
  EXPECT_TRUE(std::isinf(collective_time_us(Algorithm::kNvls, Protocol::kLL, b, 1e-9, 1)));
}

TEST(NcclCost, PipelineKeepsChannelsAsEnqueueDoes) {
  const CostShape one = shape(Op::kAllReduce, 8, 1, k229);  // 16 channels
  // Simple ring: a channel per 512 threads x 64 B = 32 KiB (enqueue.cc's loop), at least one.
  EXPECT_EQ(pipeline_run(Algorithm::kRing, Protocol::kSimple, one, 8).channels, 1);
  EXPECT_EQ(pipeline_run(Algorithm::kRing, Protocol::kSimple, one, 5 * 32768).channels, 5);
  EXPECT_EQ(pipeline_run(Algorithm::kRing, Protocol::kSimple, one, 1 << 30).channels, 16);
  // Ring LL's threshold is x nRanks: 512 x 8 x 8 = 32 KiB too on 8 GPUs; LL128 640 x 8 = 5 KiB,
  // which would leave 96 KiB 16 channels, but the scheduler's cells of 32 KiB of traffic (16 KiB
  // of an all_reduce) give it 6 (TheSchedulerGivesEachChannelACellOfTraffic); v2.18 has no cells.
  EXPECT_EQ(pipeline_run(Algorithm::kRing, Protocol::kLL, one, 3 * 32768).channels, 3);
  EXPECT_EQ(pipeline_run(Algorithm::kRing, Protocol::kLL128, one, 3 * 32768).channels, 6);
  EXPECT_EQ(
      pipeline_run(Algorithm::kRing, Protocol::kLL128, shape(Op::kAllReduce, 8, 1, k218), 3 * 32768)
          .channels,
      16);
  // NVLS keeps its channels in getAlgoInfo at every size; the scheduler's cells then give an
  // 8-byte call one of them, a 64 MiB call all.
  EXPECT_EQ(pipeline_run(Algorithm::kNvls, Protocol::kSimple, one, 8).channels, 1);
  EXPECT_EQ(pipeline_run(Algorithm::kNvls, Protocol::kSimple, one, 64 << 20).channels, 16);
}

// The kernel plan's scheduler cuts a call into cells of the least traffic a channel carries and
// gives each channel at least one (scheduleCollTasksToPlan): from v2.23 16 KiB of traffic (an
// all_reduce's bytes count twice) with a floor a channel, from v2.26 LL's cells a quarter of
// that, from v2.29 32 KiB without the floor.
TEST(NcclCost, TheSchedulerGivesEachChannelACellOfTraffic) {
  const NcclRelease k224 = NcclRelease::kV2_24, k228 = NcclRelease::kV2_28;
  auto channels = [](NcclRelease r, Op op, Algorithm a, Protocol p, double bytes) {
    return pipeline_run(a, p, shape(op, 32, 4, r), bytes).channels;
  };
  // Tree LL all_reduce: 512 threads x 8 B leave 64 KiB 16 channels; v2.24's cells of 8 KiB of
  // data (16 KiB of traffic) take 8 of them, 32 KiB 4, 8 KiB 1.
  EXPECT_EQ(channels(k218, Op::kAllReduce, Algorithm::kTree, Protocol::kLL, 65536), 16);
  EXPECT_EQ(channels(k224, Op::kAllReduce, Algorithm::kTree, Protocol::kLL, 65536), 8);
  EXPECT_EQ(channels(k224, Op::kAllReduce, Algorithm::kTree, Protocol::kLL, 32768), 4);
  EXPECT_EQ(channels(k224, Op::kAllReduce, Algorithm::kTree, Protocol::kLL, 8192), 1);
  // v2.28 counts LL's traffic x4: cells of 2 KiB, every channel keeps one.
  EXPECT_EQ(channels(k228, Op::kAllReduce, Algorithm::kTree, Protocol::kLL, 65536), 16);
  // ... but not LL128's: 640 x 8 B leave 64 KiB 12 channels, its 8 KiB cells 8.
  EXPECT_EQ(channels(k228, Op::kAllReduce, Algorithm::kTree, Protocol::kLL128, 65536), 8);
  // LL's traffic counts x4 from v2.26, the call's as its cells': 128,000 B on one node of 32
  // channels (31 by the threads' rule) is 1,024,000 B of traffic; v2.28's floor of 16 KiB a
  // channel and cells of 2 KiB take 3 a channel, 21 channels; v2.29's 32 KiB: 4 KiB cells, 2 a
  // channel, 16.
  for (const auto& [r, n] : {std::pair{k228, 21}, std::pair{k229, 16}}) {
    CostShape wide = shape(Op::kAllReduce, 8, 1, r);
    wide.channels = 32;
    EXPECT_EQ(pipeline_run(Algorithm::kTree, Protocol::kLL, wide, 128000).channels, n);
  }
  // v2.29: the call's traffic over the channels, cells of 4 KiB for LL: 16 channels.
  EXPECT_EQ(channels(k229, Op::kAllReduce, Algorithm::kTree, Protocol::kLL, 65536), 16);
  // A broadcast's or all_gather's ring at 1 MiB carries well over a cell a channel: unchanged.
  EXPECT_EQ(channels(k224, Op::kBroadcast, Algorithm::kRing, Protocol::kLL, 1 << 20), 8);
  EXPECT_EQ(channels(k218, Op::kBroadcast, Algorithm::kRing, Protocol::kLL, 1 << 20), 8);
  EXPECT_EQ(channels(k224, Op::kAllGather, Algorithm::kRing, Protocol::kLL, 1 << 20), 8);
  // NVLS keeps all its channels in getAlgoInfo, then goes through the same cells: 512 KiB on 24
  // channels is 1 MiB of traffic, 43.7 KiB a channel, two cells of 16 KiB: 16 channels.
  CostShape nvls = shape(Op::kAllReduce, 8, 1, k229);
  nvls.channels = 24;
  EXPECT_EQ(pipeline_run(Algorithm::kNvls, Protocol::kSimple, nvls, 512 << 10).channels, 16);
  EXPECT_EQ(pipeline_run(Algorithm::kNvls, Protocol::kSimple, nvls, 64 << 20).channels, 24);
  // The call's threads stay what getAlgoInfo gave its channels before the cells: a 32 KiB
  // v2.24 tree keeps 512 a channel (Tree's all threads), its data at 4 channels' share.
  const CostShape t224 = shape(Op::kAllReduce, 32, 4, k224);
  EXPECT_DOUBLE_EQ(pipeline_run(Algorithm::kTree, Protocol::kLL, t224, 32768).thread_share, 1.0);
  EXPECT_NEAR(data_time_us(Algorithm::kTree, Protocol::kLL, t224, 1e-11, 32768),
              data_time_us(Algorithm::kTree, Protocol::kLL, t224, 1e-11, 8192), 1e-9);
}

// Down to one channel, NCCL halves a call's threads while nBytes < threads x threshold (ring LL:
// 8 B x nRanks), to no fewer than 3 warps. A broadcast's chain moves the whole message as one
// chunk, whose lines the few threads take in many turns: its data runs at their share of the
// channel's rate. A ring's loop slices the message N ways: the halving stops where a slice has
// one to two lines a thread, so a ring is slowed only where its slice has more than one.
TEST(NcclCost, SmallChainsRunOnTheThreadsNcclLeavesThem) {
  const CostShape bc4 = shape(Op::kBroadcast, 32, 4, k229);
  auto share = [](const CostShape& s, Algorithm a, Protocol p, double bytes) {
    return pipeline_run(a, p, s, bytes).thread_share;
  };
  // 32 ranks: 512 threads need 128 KiB; 64 KiB runs 256, 32 KiB 128, below that 3 warps.
  EXPECT_DOUBLE_EQ(share(bc4, Algorithm::kRing, Protocol::kLL, 128 << 10), 1.0);
  EXPECT_DOUBLE_EQ(share(bc4, Algorithm::kRing, Protocol::kLL, 64 << 10), 256.0 / 512);
  EXPECT_DOUBLE_EQ(share(bc4, Algorithm::kRing, Protocol::kLL, 32 << 10), 128.0 / 512);
  EXPECT_DOUBLE_EQ(share(bc4, Algorithm::kRing, Protocol::kLL, 4096), 96.0 / 512);
  // 1 KiB is 128 lines: 96 threads take them in two turns where 512 would take one.
  EXPECT_DOUBLE_EQ(share(bc4, Algorithm::kRing, Protocol::kLL, 1024), 96.0 / 128);
  EXPECT_DOUBLE_EQ(share(bc4, Algorithm::kRing, Protocol::kLL, 512), 1.0);
  CostShape reduce = bc4;
  reduce.op = Op::kReduce;
  EXPECT_DOUBLE_EQ(share(reduce, Algorithm::kRing, Protocol::kLL, 4096), 96.0 / 512);
  // The data of a call alone takes 1 / share as long: on one node (8 ranks, no network stage)
  // 16 KiB runs 256 threads, 32 KiB 512, both one chunk: the same time for half the bytes.
  const double spb = 1e-11;
  const CostShape bc1 = shape(Op::kBroadcast, 8, 1, k229);
  EXPECT_DOUBLE_EQ(share(bc1, Algorithm::kRing, Protocol::kLL, 16 << 10), 0.5);
  EXPECT_NEAR(data_time_us(Algorithm::kRing, Protocol::kLL, bc1, spb, 16 << 10) /
                  data_time_us(Algorithm::kRing, Protocol::kLL, bc1, spb, 32 << 10),
              1.0, 1e-9);
  // Rings' loops: at powers of two of bytes per rank a slice has one line a thread, which the
  // full count also takes in one turn; 48 KiB on 32 ranks runs 128 threads on slices of 192
  // lines, two turns for some, where 512 threads take one.
  for (const Op op : {Op::kAllGather, Op::kAllReduce, Op::kReduceScatter}) {
    CostShape ring = bc4;
    ring.op = op;
    for (const double b : {1024.0, 4096.0, 65536.0})
      EXPECT_DOUBLE_EQ(share(ring, Algorithm::kRing, Protocol::kLL, b), 1.0) << op_name(op) << b;
    EXPECT_DOUBLE_EQ(share(ring, Algorithm::kRing, Protocol::kLL, 48 << 10), 128.0 / 192)
        << op_name(op);
  }
  // Trees keep all their threads from v2.22. Up to v2.21 a tree's step is its channel's chunk:
  // LL at 3 KiB runs 256 threads on 384 lines; Simple at 16 KiB 256 and the split's 4 warps,
  // 384 of 640, on 1,024 words.
  const CostShape tree = shape(Op::kAllReduce, 32, 4, k229);
  EXPECT_DOUBLE_EQ(share(tree, Algorithm::kTree, Protocol::kLL, 3072), 1.0);
  EXPECT_DOUBLE_EQ(share(tree, Algorithm::kTree, Protocol::kSimple, 16 << 10), 1.0);
  const CostShape tree18 = shape(Op::kAllReduce, 32, 4, k218);
  EXPECT_DOUBLE_EQ(share(tree18, Algorithm::kTree, Protocol::kLL, 3072), 256.0 / 384);
  EXPECT_DOUBLE_EQ(share(tree18, Algorithm::kTree, Protocol::kSimple, 16 << 10), 384.0 / 640);
  // CollNet Chain halves too (only NVLS and CollNet Direct are left out): 640 threads x 512 B
  // leave 160 KiB 320.
  EXPECT_DOUBLE_EQ(share(tree, Algorithm::kCollNetChain, Protocol::kSimple, 160 << 10), 0.5);
  // Simple's ring keeps a warp for its synchronisation: 16 KiB (below 512 x 64 B) runs 256 data
  // threads, 4 KiB 64 (3 warps with the sync warp), in 16-byte words.
  EXPECT_DOUBLE_EQ(share(bc4, Algorithm::kRing, Protocol::kSimple, 16 << 10), 256.0 / 512);
  EXPECT_DOUBLE_EQ(share(bc4, Algorithm::kRing, Protocol::kSimple, 4096), 64.0 / 256);
  // NCCL's tuner does not see it: its estimate stays a straight line in the bytes.
  auto tuner = [&](double b) {
    return tuner_time_us(Algorithm::kRing, Protocol::kLL, bc4, spb, b);
  };
  EXPECT_NEAR(tuner(131072) - tuner(65536), tuner(65536) - tuner(0), 1e-6);
}

// A broadcast's chain in time: 27 NVLink hops at NVLink's ring step latency and 4 network hops
// at the network's with LL's staging in host memory (4 nodes of 8, LL: 6.6 + 27 x 0.6 + 4 x
// (2.7 + staging) us); NCCL's own estimate, which picks the protocol, charges all 32 steps the
// network's (tuning.cc@v2.29.7-1:363-370).
TEST(NcclCost, BroadcastChainTimesEachHopAtItsLink) {
  const CostShape bc4 = shape(Op::kBroadcast, 32, 4, k229);
  const double staging = nccl::kLLNetStagingUs;
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kLL, bc4, LatencyUse::kTime),
              6.6 + 27 * 0.6 + 4 * (2.7 + staging), 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kLL, bc4, LatencyUse::kTuner), 6.6 + 32 * 2.7,
              1e-4);
  // Simple: the ring's own step latencies in time (its buffers in the GPU's memory: no staging),
  // Tree's Simple step on every step in NCCL's.
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kSimple, bc4, LatencyUse::kTime),
              8.4 + 27 * 3.4 + 4 * 14.0, 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kLL128, bc4, LatencyUse::kTime),
              14.0 + 27 * 1.9 + 4 * 4.0, 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kSimple, bc4, LatencyUse::kTuner),
              8.4 + 32 * 14.0, 1e-4);
  // One node: every hop NVLink, in both.
  const CostShape bc1 = shape(Op::kBroadcast, 8, 1, k229);
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kLL, bc1, LatencyUse::kTime), 6.6 + 7 * 0.6,
              1e-4);
  // A reduce runs the same chain the other way; the fabric's own hop latency is added to each
  // network hop.
  CostShape rd4 = shape(Op::kReduce, 32, 4, k229);
  rd4.net_hop_us = 1.5;
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kLL, rd4, LatencyUse::kTime),
              6.6 + 27 * 0.6 + 4 * (2.7 + 1.5 + staging), 1e-4);
  EXPECT_EQ(pipeline_run(Algorithm::kRing, Protocol::kLL128, rd4, 64 << 20).stages, 4);
  // Two nodes of one GPU: one hop, across the network, exposed as Tree's (ppn 1, v2.23+).
  const CostShape pair = shape(Op::kBroadcast, 2, 2, k229);
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kLL, pair, LatencyUse::kTime),
              6.6 + 5.0 + staging, 1e-4);
  EXPECT_EQ(pipeline_run(Algorithm::kRing, Protocol::kLL, pair, 1 << 20).stages, 1);
}

// Timed back to back (nccl-tests' 20 calls), a broadcast or reduce on one channel pipelines down
// its chain: the first call takes the chain, each further one NCCL's base latency and its bytes.
// On several channels, and for rings with a cycle (all_reduce), the calls do not pipeline.
TEST(NcclCost, BroadcastAndReduceOnOneChannelPipelineBackToBack) {
  for (const Op op : {Op::kBroadcast, Op::kReduce}) {
    SCOPED_TRACE(op_name(op));
    CostShape one = shape(op, 32, 4, k229), piped = one;
    piped.iters = 20;
    const double spb = 1e-11;  // 100 GB/s with Simple
    EXPECT_EQ(pipeline_run(Algorithm::kRing, Protocol::kLL, one, 1024).channels, 1);
    EXPECT_FALSE(back_to_back_chain(Algorithm::kRing, Protocol::kLL, one, 1024));
    EXPECT_TRUE(back_to_back_chain(Algorithm::kRing, Protocol::kLL, piped, 1024));
    const double alone = collective_time_us(Algorithm::kRing, Protocol::kLL, one, spb, 1024);
    const double stream = data_time_us(Algorithm::kRing, Protocol::kLL, piped, spb, 1024);
    EXPECT_LT(stream, data_time_us(Algorithm::kRing, Protocol::kLL, one, spb, 1024));
    // ring LL's baseLat (v2.29) or a network hop's two steps with LL's staging, the longer
    const double period = std::max(6.6, 2 * 2.7 + nccl::kLLNetStagingUs) + stream;
    EXPECT_NEAR(collective_time_us(Algorithm::kRing, Protocol::kLL, piped, spb, 1024),
                period + (alone - period) / 20, 1e-5);  // the table's floats
    EXPECT_GT(alone, 3 * period);
    // Many calls: a period each.
    piped.iters = 1000000;
    EXPECT_NEAR(collective_time_us(Algorithm::kRing, Protocol::kLL, piped, spb, 1024), period,
                1e-3);
    // 1 MiB runs 8 channels (ring LL's threshold x 32 ranks): one call's time.
    piped.iters = 20;
    EXPECT_GT(pipeline_run(Algorithm::kRing, Protocol::kLL, piped, 1 << 20).channels, 1);
    EXPECT_DOUBLE_EQ(collective_time_us(Algorithm::kRing, Protocol::kLL, piped, spb, 1 << 20),
                     collective_time_us(Algorithm::kRing, Protocol::kLL, one, spb, 1 << 20));
    // Where every channel runs the same ring (ring_same_channels: one node, one NIC a node),
    // no GPU is deep in another channel's chain: several channels pipeline too.
    CostShape same = piped;
    same.ring_same_channels = true;
    EXPECT_TRUE(back_to_back_chain(Algorithm::kRing, Protocol::kLL, same, 1 << 20));
    // The period is the longest of a GPU's, a network hop's (its proxy posts the next call's
    // receive once this one's data is consumed, and the send waits for it: two network steps,
    // the data's with LL's staging in host memory) and the host's issue.
    CostShape far = piped;
    far.net_hop_us = 10;  // 2 x (2.7 + 10) + staging us a hop, above the base latency
    const double far_one = collective_time_us(
        Algorithm::kRing, Protocol::kLL,
        [&] {
          CostShape c = far;
          c.iters = 1;
          return c;
        }(),
        spb, 1024);
    const double far_period = 2 * (2.7 + 10) + nccl::kLLNetStagingUs + stream;
    EXPECT_NEAR(collective_time_us(Algorithm::kRing, Protocol::kLL, far, spb, 1024),
                far_period + (far_one - far_period) / 20, 1e-4);
    CostShape host = piped;
    host.host_issue_us = 17.6;  // -g 4
    EXPECT_NEAR(collective_time_us(Algorithm::kRing, Protocol::kLL, host, spb, 1024),
                17.6 + (alone - 17.6) / 20, 1e-9);
  }
  CostShape ar = shape(Op::kAllReduce, 32, 4, k229), ar20 = ar;
  ar20.iters = 20;
  EXPECT_FALSE(back_to_back_chain(Algorithm::kRing, Protocol::kLL, ar20, 1024));
  EXPECT_DOUBLE_EQ(collective_time_us(Algorithm::kRing, Protocol::kLL, ar20, 1e-11, 1024),
                   collective_time_us(Algorithm::kRing, Protocol::kLL, ar, 1e-11, 1024));
}

TEST(NcclCost, PipelineFillsBroadcastChainsTreesAndNvls) {
  // Broadcast on 8 ranks, Simple, 16 channels: 512 KiB steps down a 7-hop chain. 64 MiB is
  // 4 MiB a channel = 8 chunks; the last leaves the root after 8 chunk times and arrives 6 later.
  const CostShape bc = shape(Op::kBroadcast, 8, 1, k229);
  const PipelineRun b = pipeline_run(Algorithm::kRing, Protocol::kSimple, bc, 64 << 20);
  EXPECT_EQ(b.stages, 7);
  EXPECT_DOUBLE_EQ(b.chunks, 8);
  EXPECT_DOUBLE_EQ(b.fill_factor(), (8 + 6) / 8.0);
  // 1 MiB: 64 KiB a channel, one chunk, stored and forwarded at each of the 7 hops.
  EXPECT_DOUBLE_EQ(pipeline_run(Algorithm::kRing, Protocol::kSimple, bc, 1 << 20).fill_factor(), 7);
  // LL and LL128 forward as they read (a line; LL128 a warp's 2 KiB): on one node the chain
  // adds only its hops' latency. Across 4 nodes of 8 its 4 network hops each hold a step (the
  // proxy sends a whole one): 4 stages, not 31.
  EXPECT_EQ(pipeline_run(Algorithm::kRing, Protocol::kLL128, bc, 64 << 20).stages, 1);
  const CostShape bc4 = shape(Op::kBroadcast, 32, 4, k229);
  EXPECT_EQ(pipeline_run(Algorithm::kRing, Protocol::kLL, bc4, 1 << 20).stages, 4);
  EXPECT_EQ(pipeline_run(Algorithm::kRing, Protocol::kLL128, bc4, 64 << 20).stages, 4);
  EXPECT_EQ(pipeline_run(Algorithm::kRing, Protocol::kSimple, bc4, 64 << 20).stages, 31);
  // A ring all_reduce's loops follow each other through the FIFO: no fill.
  EXPECT_DOUBLE_EQ(
      pipeline_run(Algorithm::kRing, Protocol::kSimple, shape(Op::kAllReduce, 8, 1, k229), 1 << 20)
          .fill_factor(),
      1);
  // Tree on 8 nodes x 8: depth 7 + 3 = 10, 20 hops at a third of a chunk's time each.
  const CostShape tr = shape(Op::kAllReduce, 64, 8, k229);
  const PipelineRun t = pipeline_run(Algorithm::kTree, Protocol::kSimple, tr, 1 << 30);
  EXPECT_EQ(t.stages, 20);
  EXPECT_DOUBLE_EQ(t.chunks, (1 << 30) / 16.0 / 524288);
  EXPECT_DOUBLE_EQ(t.fill_factor(), (t.chunks + 19.0 / 3) / t.chunks);
  // LL and LL128 trees forward over NVLink as they read, as the chain does: only the 2 x log2(8)
  // network hops hold steps; on one node none does.
  EXPECT_EQ(pipeline_run(Algorithm::kTree, Protocol::kLL, tr, 128 << 10).stages, 6);
  EXPECT_EQ(pipeline_run(Algorithm::kTree, Protocol::kLL128, tr, 4 << 20).stages, 6);
  EXPECT_EQ(pipeline_run(Algorithm::kTree, Protocol::kLL, shape(Op::kAllReduce, 16, 2, k229),
                         128 << 10)
                .stages,
            2);
  EXPECT_EQ(pipeline_run(Algorithm::kTree, Protocol::kLL128, shape(Op::kAllReduce, 8, 1, k229),
                         4 << 20)
                .stages,
            1);
  // NVLS on one node of 8: 16 MiB is under 8 x 128 x 64 KiB, so 32 KiB chunks; a loop is 8 of
  // them a channel, 4 loops, two stages, and each loop's stage waits one NVLink Simple step.
  const CostShape one = shape(Op::kAllReduce, 8, 1, k229);
  const PipelineRun nv = pipeline_run(Algorithm::kNvls, Protocol::kSimple, one, 16 << 20);
  EXPECT_DOUBLE_EQ(nv.chunk_bytes, 8 * 32768);
  EXPECT_DOUBLE_EQ(nv.chunks, 4);
  EXPECT_DOUBLE_EQ(nv.fill_factor(), 5 / 4.0);
  EXPECT_NEAR(nv.exposed_us(), 5 * 3.4, 1e-5);
  EXPECT_NEAR(data_time_us(Algorithm::kNvls, Protocol::kSimple, one, 1e-9, 16 << 20),
              (16 << 20) * 1e-3 * 5 / 4 + 5 * 3.4, 1e-4);
}

TEST(NcclCost, AlltoallPostingOverlapsData) {
  EXPECT_DOUBLE_EQ(alltoall_posting_us(8), 8 * nccl::kP2pPerPeerLatencyUs);
  // Small data: the posting of 15 network peers (22.5 us) is longer than the data.
  EXPECT_DOUBLE_EQ(alltoall_time_us(10, 15, 1), 10 + 15 * nccl::kP2pPerPeerLatencyUs);
  // Large data hides the posting.
  EXPECT_DOUBLE_EQ(alltoall_time_us(10, 15, 1000), 1010);
  // 2 nodes of 8: each rank has 8 peers over the network; its 7 NVLink peers cost no posting.
  // A network send runs Simple, however small (its shared buffers have no LL one), and costs
  // kP2pNetSendUs and the fabric's hop to cross.
  CostShape a2a = shape(Op::kAlltoall, 16, 2, k229);
  a2a.net_hop_us = 1;
  EXPECT_NEAR(collective_time_us(Algorithm::kP2p, Protocol::kSimple, a2a, 1e-9, 1e3),
              8.4 + nccl::kP2pNetSendUs + 1 + 8 * nccl::kP2pPerPeerLatencyUs, 1e-6);
  EXPECT_EQ(protocol_bandwidth(Algorithm::kP2p, Protocol::kLL, a2a, 47e9, 1e3), 0);
  // One node: no network peer, the data alone after the base and one NVLink step; its
  // 125-byte sends run LL (NVLink's LL step, 0.6 us), whose flags halve what NVLink carries.
  EXPECT_NEAR(collective_time_us(Algorithm::kP2p, Protocol::kLL, shape(Op::kAlltoall, 8, 1, k229),
                                 1e-9, 1e3),
              8.4 + 0.6 + 1 / nccl::kLLDataShare, 1e-4);
}

}  // namespace
// Network send/recv channels as NCCL counts them: a GPU with one 400G NIC asks for
// ceil(50 / 14) = 4 channels a peer; on 8 x 8 B200 (16 communicator channels, 64 ranks) v2.29
// halves them to 2 so that 64 peers fit one batch round (4 x ceil(64 / 8) = 32 > 16), on 2 nodes
// it keeps 4; v2.18 gives 2 everywhere. A big send then runs on every one of them, a small one on
// one; and a sendrecv's peer moves at most channels x 14 GB/s (the measured 8-node B200
// sendrecv: 26.1 GB/s at 256 MiB, nccl-public.csv).
// The search graph across nodes: a channel per NIC, doubled at 25 GB/s a channel or more unless
// Hopper+ runs more than 4 channels under 50 GB/s. One H100 with one 400G NIC: its 48 GB/s PCIe
// Gen5 channel is doubled (2 graph channels, 4 in the communicator: nccl issue 2409's single pair
// reaches 48.4 GB/s, which 2 p2p channels of 14 GB/s could not); 8 NICs a node are not; a 200G
// NIC behind PCIe Gen4 (24 GB/s) is not either.
TEST(NcclCost, SearchGraphDuplicatesFastFewChannels) {
  EXPECT_EQ(ring_graph_channels_across(1, 1, 50, 5, GpuGeneration::kHopper), 2);
  EXPECT_EQ(ring_graph_channels_across(8, 8, 50, 5, GpuGeneration::kHopper), 8);
  EXPECT_EQ(ring_graph_channels_across(4, 4, 50, 5, GpuGeneration::kBlackwell), 8);
  EXPECT_EQ(ring_graph_channels_across(8, 8, 25, 4, GpuGeneration::kAmpere), 8);
  EXPECT_EQ(ring_graph_channels_across(8, 8, 100, 6, GpuGeneration::kBlackwell), 16);
  // Four NICs behind one GPU share its link: 12 GB/s a channel, no doubling.
  EXPECT_EQ(ring_graph_channels_across(4, 1, 50, 5, GpuGeneration::kHopper), 4);
}

// NCCL_BUFFSIZE sets the Simple buffer a connection; a step is an eighth of it
// (init.cc@v2.29.7-1:764-770): a tree streams 2 MiB chunks from a 16 MiB buffer, LL and LL128
// keep theirs, and a point-to-point chunk stays within a step (:784): a 256 KiB buffer cuts the
// network's 128 KiB chunk to 32 KiB, so a 64 KiB send on 2 x 8 B200 goes as two 32 KiB parts on
// two channels, where it fits one chunk on one (16 ranks over 16 p2p channels: one channel an
// operation to start with, doubled while a part exceeds the chunk).
TEST(NcclCost, BuffsizeSetsTheSimpleStep) {
  CostShape s = shape(Op::kAllReduce, 16, 2, k229);
  EXPECT_EQ(step_data_bytes(Protocol::kSimple, s), 512 * 1024);
  const double big = 1 << 30;
  EXPECT_EQ(pipeline_run(Algorithm::kTree, Protocol::kSimple, s, big).chunk_bytes, 512 * 1024);
  s.simple_buffer_bytes = 16 << 20;
  EXPECT_EQ(step_data_bytes(Protocol::kSimple, s), 2 << 20);
  EXPECT_EQ(step_data_bytes(Protocol::kLL128, s), nccl::kStepDataBytes[nccl::kLL128]);
  EXPECT_EQ(pipeline_run(Algorithm::kTree, Protocol::kSimple, s, big).chunk_bytes, 2 << 20);

  CostShape p2p = shape(Op::kSendRecv, 16, 2, k229);
  p2p.generation = GpuGeneration::kBlackwell;
  p2p.p2p_local_nics = 1;
  p2p.p2p_nic_GBps = 50;
  ASSERT_EQ(p2p_channels_per_peer(p2p), 4);
  EXPECT_EQ(p2p_op_channels(p2p, 64 * 1024), 1);
  p2p.simple_buffer_bytes = 256 * 1024;
  EXPECT_EQ(p2p_op_channels(p2p, 64 * 1024), 2);
}

// From 2.29 the network p2p chunk is 256 KiB on Grace Blackwell trays ("GBx platforms",
// init.cc@v2.29.7-1:773-776): a 256 KiB send between two racks fits one chunk on one channel
// where elsewhere it goes as two 128 KiB parts on two; not on 2.28, not on Hopper, not inside
// one domain.
TEST(NcclCost, GraceBlackwellDoublesTheNetworkP2pChunkFrom229) {
  CostShape s = shape(Op::kSendRecv, 16, 2, k229);
  s.generation = GpuGeneration::kBlackwell;
  s.p2p_local_nics = 1;
  s.p2p_nic_GBps = 50;
  const double send = 256 * 1024;
  EXPECT_EQ(p2p_op_channels(s, send), 2);
  s.host_grace = true;
  EXPECT_EQ(p2p_op_channels(s, send), 1);
  CostShape v228 = s;
  v228.release = NcclRelease::kV2_28;
  EXPECT_EQ(p2p_op_channels(v228, send), 2);
  CostShape hopper = s;
  hopper.generation = GpuGeneration::kHopper;
  EXPECT_EQ(p2p_op_channels(hopper, send), 2);
  CostShape big_buffer_small = s;  // a 1 MiB buffer's 128 KiB step caps it again
  big_buffer_small.simple_buffer_bytes = 1 << 20;
  EXPECT_EQ(p2p_op_channels(big_buffer_small, send), 2);
  CostShape one_domain = s;  // NCCL's nNodes counts domains: on one, no doubling
  one_domain.domains = 1;
  CostShape one_domain_x86 = one_domain;
  one_domain_x86.host_grace = false;
  EXPECT_EQ(p2p_op_channels(one_domain, send), p2p_op_channels(one_domain_x86, send));
}

// Point-to-point inside one domain, as enqueue.cc@v2.29.7-1:886-906, 1109-1112 split it (v2.28:
// 821-900; v2.18: 601-609, 628-637): 32 p2p channels; a peer's halved until every rank has one;
// parts of at least an eighth of the 512 KiB NVLink chunk, doubled while over 32 chunks; LL by
// each release's rule; round r's parts from channel reverseBits(r) on.
TEST(NcclCost, DomainP2pSplitsAsNccl) {
  const double KiB = 1024, MiB = 1024 * KiB;
  auto split = [](long long ranks, NcclRelease r, double op, CostShape s = {}) {
    s.op = Op::kAlltoall;
    s.ranks = ranks;
    s.domains = 1;
    s.domain_gpus = static_cast<int>(ranks);
    s.release = r;
    return domain_p2p_split(s, op, 0, ranks);  // an alltoall: rounds 0 (itself) to N - 1
  };
  // A 16 MiB alltoall on 4 GPUs: 8 a send; rounds 0-3 start at channels 0, 16, 8, 24.
  DomainP2pSplit d = split(4, k229, 4 * MiB);
  EXPECT_EQ(d.per_op, 8);
  EXPECT_DOUBLE_EQ(d.part_bytes, 512 * KiB);
  EXPECT_DOUBLE_EQ(d.chunk_bytes, nccl::kP2pNvlChunkBytes);
  EXPECT_EQ(d.channels, 32);
  EXPECT_EQ(d.busiest, 1);
  EXPECT_FALSE(d.ll);
  // On 64 GPUs one a send; rounds 32 apart share a channel: 2 parts on each.
  d = split(64, k229, 256 * KiB);
  EXPECT_EQ(d.per_op, 1);
  EXPECT_EQ(d.channels, nccl::kDomainP2pChannels);
  EXPECT_EQ(d.busiest, 2);
  // 72 GPUs: rounds 0-7 come back a third time (64-71), so channels 0, 16, 8, ... carry 3.
  EXPECT_EQ(split(72, k229, 256 * KiB).busiest, 3);
  d = split(4, k229, 256 * KiB);  // a small send takes parts of 64 KiB: 4 of them
  EXPECT_EQ(d.per_op, 4);
  EXPECT_DOUBLE_EQ(d.part_bytes, 64 * KiB);
  EXPECT_EQ(d.channels, 16);
  d = split(8, k229, 2048 * MiB);  // 2 GiB a send: doubled from 4 up to all 32, 8 a channel
  EXPECT_EQ(d.per_op, 32);
  EXPECT_DOUBLE_EQ(d.part_bytes, 64 * MiB);
  EXPECT_EQ(d.busiest, 8);
  // v2.18 caps a send's channels where 8+ operations would share one: 2 on 64 GPUs.
  EXPECT_EQ(split(64, k218, 2048 * MiB).per_op, 2);
  EXPECT_EQ(split(64, k229, 2048 * MiB).per_op, 32);
  // v2.18 aligns a part up to 64 KiB: 600 KiB on 8 channels is 5 parts of 128 KiB.
  d = split(4, k218, 600 * KiB);
  EXPECT_EQ(d.per_op, 5);
  EXPECT_DOUBLE_EQ(d.part_bytes, 128 * KiB);
  // LL: v2.29 a send of at most its parts x 16 KiB; v2.22-v2.28 at most the peer's 32 channels
  // x 16 KiB, then split with LL's 64 KiB step; v2.18 a part of at most 16 KiB.
  EXPECT_TRUE(split(64, k229, 16 * KiB).ll);
  EXPECT_FALSE(split(64, k229, 17 * KiB).ll);
  EXPECT_FALSE(split(4, k229, 32 * KiB).ll);  // one part of 32 KiB
  const NcclRelease k228 = NcclRelease::kV2_28;
  d = split(64, k228, 256 * KiB);
  EXPECT_TRUE(d.ll);
  EXPECT_DOUBLE_EQ(d.chunk_bytes, nccl::kStepDataBytes[nccl::kLL]);
  d = split(8, k228, 512 * KiB);  // LL; 4 parts of 128 KiB (LL's smallest part is 8 KiB)
  EXPECT_TRUE(d.ll);
  EXPECT_EQ(d.per_op, 4);
  EXPECT_FALSE(split(8, k228, 513 * KiB).ll);
  EXPECT_TRUE(split(8, k218, 16 * KiB).ll);
  EXPECT_FALSE(split(8, k218, 17 * KiB).ll);
  CostShape small_buffer;  // NCCL_BUFFSIZE=1 MiB: a 128 KiB step bounds the chunk from v2.19
  small_buffer.simple_buffer_bytes = 1 * MiB;
  EXPECT_DOUBLE_EQ(split(4, k229, 4 * MiB, small_buffer).chunk_bytes, 128 * KiB);
  EXPECT_DOUBLE_EQ(split(4, k218, 4 * MiB, small_buffer).chunk_bytes, 512 * KiB);
  CostShape eight;  // NCCL_MAX_NCHANNELS=8: 8 p2p channels, 2 a peer on 4 GPUs
  eight.domain_p2p_channels = 8;
  EXPECT_EQ(split(4, k229, 4 * MiB, eight).per_op, 2);
}

// Blackwell's channels each copy kP2pDomainChannelGBsBlackwell inside the domain: a 1 MiB
// alltoall on 4 GPUs is 4 rounds (its own copy one) of 4 parts of 64 KiB, one a channel, so the
// call takes a part's time at that rate, under NVLink's; Hopper's runs at the flows' rate, and
// LL at half of it (its flags). The pipeline fills one chunk of each part (two copies), none for
// LL's.
TEST(NcclCost, BlackwellDomainChannelsCapPointToPoint) {
  CostShape s = shape(Op::kAlltoall, 4, 1, k229);
  s.generation = GpuGeneration::kBlackwell;
  const double nvlink = 680e9, bytes = 1 << 20, part = 64 * 1024;
  EXPECT_NEAR(protocol_bandwidth(Algorithm::kP2p, Protocol::kSimple, s, nvlink, bytes),
              bytes / (part / (nccl::kP2pDomainChannelGBsBlackwell * 1e9)), 1e3);
  EXPECT_DOUBLE_EQ(protocol_bandwidth(Algorithm::kP2p, Protocol::kSimple, s, nvlink, 1 << 30),
                   nvlink);
  CostShape hopper = s;
  hopper.generation = GpuGeneration::kHopper;
  EXPECT_DOUBLE_EQ(protocol_bandwidth(Algorithm::kP2p, Protocol::kSimple, hopper, 365e9, bytes),
                   365e9);
  // A 32 KiB alltoall's 8 KiB sends run LL, only LL: half the flows' rate, no Simple.
  EXPECT_DOUBLE_EQ(protocol_bandwidth(Algorithm::kP2p, Protocol::kLL, hopper, 365e9, 32 * 1024),
                   365e9 * nccl::kLLDataShare);
  EXPECT_EQ(protocol_bandwidth(Algorithm::kP2p, Protocol::kSimple, hopper, 365e9, 32 * 1024), 0);
  EXPECT_EQ(protocol_bandwidth(Algorithm::kP2p, Protocol::kLL, hopper, 365e9, bytes), 0);
  const PipelineRun run = pipeline_run(Algorithm::kP2p, Protocol::kSimple, s, bytes);
  EXPECT_EQ(run.stages, nccl::kP2pDomainCopyStages);
  EXPECT_DOUBLE_EQ(run.chunks, 1);
  EXPECT_DOUBLE_EQ(run.fill_factor(), 2);
  const PipelineRun ll = pipeline_run(Algorithm::kP2p, Protocol::kLL, s, 32 * 1024);
  EXPECT_EQ(ll.stages, 1);
  CostShape across = shape(Op::kAlltoall, 16, 2, k229);  // the network's own schedule
  EXPECT_EQ(pipeline_run(Algorithm::kP2p, Protocol::kSimple, across, bytes).stages, 1);
}

TEST(NcclCost, NetworkSendRecvRunsOnFewChannels) {
  CostShape s;
  s.op = Op::kSendRecv;
  s.ranks = 64;
  s.domains = 8;
  s.domain_gpus = 8;
  s.channels = 16;
  s.generation = GpuGeneration::kBlackwell;
  s.p2p_local_nics = 1;
  s.p2p_nic_GBps = 50;
  EXPECT_EQ(p2p_channels_per_peer(s), 2);
  EXPECT_EQ(p2p_op_channels(s, 256.0 * (1 << 20)), 2);
  EXPECT_EQ(p2p_op_channels(s, 32 * 1024), 1);
  const double bw =
      protocol_bandwidth(Algorithm::kP2p, Protocol::kSimple, s, 47e9, 256.0 * (1 << 20));
  EXPECT_NEAR(bw, 2 * nccl::kP2pNetChannelGBs * 1e9, 1e6);
  CostShape two = s;
  two.ranks = 16;
  two.domains = 2;
  EXPECT_EQ(p2p_channels_per_peer(two), 4);
  EXPECT_EQ(protocol_bandwidth(Algorithm::kP2p, Protocol::kSimple, two, 47e9, 1e9), 47e9);
  CostShape old = s;
  old.release = NcclRelease::kV2_18;
  EXPECT_EQ(p2p_channels_per_peer(old), 2);
  // v2.20-v2.28 start from 2 and halve while 2 x ranks > 4 x 16 channels: 2 up to 32 ranks, 1
  // from 64 on, where v2.29 still gives 4 and 2 (flapping-airplanes' 2.28.9 sendrecv measures
  // 34 GB/s at 2-4 nodes and 17 from 8 to 64, nccl-public.csv test rows).
  for (const auto& [ranks, want28, want29] :
       {std::tuple{16, 2, 4}, std::tuple{32, 2, 4}, std::tuple{64, 1, 2}, std::tuple{512, 1, 1}}) {
    CostShape mid = s;
    mid.ranks = ranks;
    mid.domains = ranks / 8;
    mid.release = NcclRelease::kV2_28;
    EXPECT_EQ(p2p_channels_per_peer(mid), want28) << ranks;
    mid.release = NcclRelease::kV2_29;
    EXPECT_EQ(p2p_channels_per_peer(mid), want29) << ranks;
  }
  // Inside one domain nothing changes.
  CostShape one = s;
  one.domains = 1;
  one.ranks = 8;
  EXPECT_EQ(protocol_bandwidth(Algorithm::kP2p, Protocol::kSimple, one, 300e9, 1e9), 300e9);
  // An alltoall's many peers each carry 1/N: the channels do not limit it.
  CostShape a2a = s;
  a2a.op = Op::kAlltoall;
  EXPECT_EQ(protocol_bandwidth(Algorithm::kP2p, Protocol::kSimple, a2a, 47e9, 1e9), 47e9);
}

// CollNet Chain (tuning.cc@v2.29.7-1:390-391, v2.18.6-1:233-234): 2 x (ppn - 1) NVLink steps and
// one network step; Simple only, no Direct factor.
TEST(NcclCost, CollNetChainLatencyAndBandwidthPerRelease) {
  const CostShape m18 = shape(Op::kAllReduce, 32, 4, k218),
                  m29 = shape(Op::kAllReduce, 32, 4, k229);
  EXPECT_NEAR(latency_us(Algorithm::kCollNetChain, Protocol::kSimple, m18), 2 * 7 * 4.75 + 14,
              1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kCollNetChain, Protocol::kSimple, m29), 2 * 7 * 2.8 + 30, 1e-4);
  EXPECT_EQ(protocol_bandwidth(Algorithm::kCollNetChain, Protocol::kSimple, m29, 40e9, 1e9), 40e9);
  EXPECT_EQ(protocol_bandwidth(Algorithm::kCollNetChain, Protocol::kLL, m29, 40e9, 1e9), 0);
  EXPECT_EQ(protocol_bandwidth(Algorithm::kCollNetChain, Protocol::kLL128, m29, 40e9, 1e9), 0);
}

// NCCL's tuner rates Direct x.85 from Hopper on, so with CollNet on it chooses Chain there for
// large messages; on Ampere (no x.85, a NIC per GPU) Direct's lower latency wins.
TEST(NcclCost, TheTunerPrefersChainFromHopperOnAndDirectOnAmpere) {
  CostShape h = shape(Op::kAllReduce, 32, 4, k229);
  h.graph_channels = 8;
  const double spb = 1.0 / 300e9, big = 1 << 30;
  EXPECT_LT(tuner_time_us(Algorithm::kCollNetChain, Protocol::kSimple, h, spb, big),
            tuner_time_us(Algorithm::kCollNet, Protocol::kSimple, h, spb, big));
  CostShape a = h;
  a.generation = GpuGeneration::kAmpere;
  EXPECT_GT(tuner_time_us(Algorithm::kCollNetChain, Protocol::kSimple, a, spb, big),
            tuner_time_us(Algorithm::kCollNet, Protocol::kSimple, a, spb, big));
}

// NCCL's tuner rates CollNet all_reduce by its graph's intra-node bandwidth, the NICs left out
// (tuning.cc@v2.29.7-1:285): where the NVLink part alone is known, the estimate takes it; the
// time still takes the flows.
TEST(NcclCost, TheTunerRatesCollNetByItsNvlinkPart) {
  CostShape s = shape(Op::kAllReduce, 32, 4, k229);
  const double spb = 1.0 / 300e9, big = 1 << 30;
  const double flows = tuner_time_us(Algorithm::kCollNetChain, Protocol::kSimple, s, spb, big);
  const double time = collective_time_us(Algorithm::kCollNetChain, Protocol::kSimple, s, spb, big);
  s.collnet_intra_seconds_per_byte = spb / 2;
  EXPECT_LT(tuner_time_us(Algorithm::kCollNetChain, Protocol::kSimple, s, spb, big), flows);
  EXPECT_LT(tuner_time_us(Algorithm::kCollNet, Protocol::kSimple, s, spb, big),
            tuner_time_us(Algorithm::kCollNet, Protocol::kSimple,
                          shape(Op::kAllReduce, 32, 4, k229), spb, big));
  EXPECT_DOUBLE_EQ(collective_time_us(Algorithm::kCollNetChain, Protocol::kSimple, s, spb, big),
                   time);
  s.op = Op::kAllGather;  // all_gather's rate has the network in it (ppn x min(intra, inter x .9))
  CostShape g = s;
  g.collnet_intra_seconds_per_byte = 0;
  EXPECT_DOUBLE_EQ(tuner_time_us(Algorithm::kCollNet, Protocol::kSimple, s, spb, big),
                   tuner_time_us(Algorithm::kCollNet, Protocol::kSimple, g, spb, big));
}

// Chain's chunk is at most 256 KiB and halves while a channel gets fewer than depth x 64, x 8,
// x 1 of them (enqueue.cc@v2.29.7-1:2147-2152); a chunk crosses 2(m - 1) NVLink hops and the
// network. Each loop pays the in-network operations the NIC issues for it: Chain's head serves
// its NIC's share of the channels (24 over 8 NICs: 3, one operation), Direct's every GPU all of
// them (24: three groups of 8).
TEST(NcclCost, CollNetChunksAndOperationsAsNcclIssuesThem) {
  CostShape s = shape(Op::kAllReduce, 32, 4, k229);
  s.channels = 24;
  s.collnet_nics = 8;
  const double big = 24.0 * (1 << 30);  // 1 GiB a channel
  const PipelineRun c = pipeline_run(Algorithm::kCollNetChain, Protocol::kSimple, s, big);
  EXPECT_DOUBLE_EQ(c.chunk_bytes, 256 * 1024);
  EXPECT_EQ(c.stages, 15);
  EXPECT_DOUBLE_EQ(c.net_op_us, collnet_op_us(4));
  // 24 MiB: 1 MiB a channel. 4 chunks < 8 x 64: 128 KiB, the first loop's floor; 8 < 8 x 8:
  // 64 KiB, the second's; 16 >= 8 leaves the third.
  const PipelineRun small = pipeline_run(Algorithm::kCollNetChain, Protocol::kSimple, s, 24 << 20);
  EXPECT_DOUBLE_EQ(small.chunk_bytes, 64 * 1024);
  EXPECT_EQ(small.channels, 24);
  // Below 24 x 640 x 512 bytes NCCL keeps a channel per 320 KiB (enqueue.cc@v2.29.7-1:1998-2003):
  // 2 MiB on 6.
  EXPECT_EQ(pipeline_run(Algorithm::kCollNetChain, Protocol::kSimple, s, 2 << 20).channels, 6);
  EXPECT_DOUBLE_EQ(c.stage_share, 1);  // neither path known: every hop at the chunk's pace
  // NIC-bound with NVLink at twice the NICs' rate: each of the 14 NVLink hops fills at half.
  CostShape paced = s;
  paced.collnet_net_seconds_per_byte = 2e-12;
  paced.collnet_intra_seconds_per_byte = 1e-12;
  EXPECT_DOUBLE_EQ(
      pipeline_run(Algorithm::kCollNetChain, Protocol::kSimple, paced, big).stage_share, 0.5);
  const PipelineRun d = pipeline_run(Algorithm::kCollNet, Protocol::kSimple, s, big);
  EXPECT_DOUBLE_EQ(d.net_op_us, 3 * collnet_op_us(4));
  EXPECT_DOUBLE_EQ(d.chunk_bytes, 8 * 524288.0);
  // One node: no network, no operation.
  const CostShape one = shape(Op::kAllReduce, 8, 1, k229);
  EXPECT_EQ(pipeline_run(Algorithm::kCollNetChain, Protocol::kSimple, one, big).net_op_us, 0);
}

// The NICs' path (their bytes, then the operations in series) paces a CollNet call only where
// it is the longer: NIC-bound Chain pays every operation, a call whose NICs have slack none.
TEST(NcclCost, InNetworkOperationsLengthenOnlyTheNicsPath) {
  CostShape s = shape(Op::kAllReduce, 32, 4, k229);
  s.channels = 24;
  s.collnet_nics = 8;
  const double bytes = 24.0 * (1 << 30), spb = 1.0 / 300e9;
  const PipelineRun c = pipeline_run(Algorithm::kCollNetChain, Protocol::kSimple, s, bytes);
  const double flow = data_time_us(Algorithm::kCollNetChain, Protocol::kSimple, s, spb, bytes);
  s.collnet_net_seconds_per_byte = spb;  // the NICs are the bottleneck
  EXPECT_NEAR(data_time_us(Algorithm::kCollNetChain, Protocol::kSimple, s, spb, bytes),
              flow + (c.chunks - 1) * collnet_op_us(4), 1e-6 * flow);
  s.collnet_net_seconds_per_byte = spb / 2;  // half the time on the NICs: slack for them
  EXPECT_DOUBLE_EQ(data_time_us(Algorithm::kCollNetChain, Protocol::kSimple, s, spb, bytes), flow);
}

// A profile's network message time: every slice a channel's network connection carries after
// the first loop's, in series with the bytes. Worked by hand: 4 x 8 GPUs on 32 channels, 8 GiB.
TEST(NcclCost, NetworkMessagesAreSlicesAfterTheFirstLoop) {
  const double bytes = 8.0 * (1 << 30), spb = 1.0 / 300e9, c = 4;
  auto extra = [&](Op op, Algorithm a, Protocol p, int domains) {
    CostShape s = shape(op, 32, domains, k229);
    s.channels = 32;
    const double none = data_time_us(a, p, s, spb, bytes);
    s.network_message_us = c;
    const PipelineRun run = pipeline_run(a, p, s, bytes);
    const double messages = network_messages_us(a, p, s, run, bytes);
    // In series with the bytes: the pipeline fills and drains them as it does the bytes.
    EXPECT_NEAR(data_time_us(a, p, s, spb, bytes) - none, messages * run.fill_factor(),
                1e-6 * none);
    return messages;
  };
  // all_reduce: a channel's 256 MiB in loops of 32 ranks x 2 MiB chunks, 4 loops; each loop
  // 2 x 31 steps of 2 slices (1 MiB): 3 loops after the first, 372 messages.
  EXPECT_NEAR(extra(Op::kAllReduce, Algorithm::kRing, Protocol::kSimple, 4), 3 * 62 * 2 * c, 1e-6);
  // all_gather: 31 steps a loop.
  EXPECT_NEAR(extra(Op::kAllGather, Algorithm::kRing, Protocol::kSimple, 4), 3 * 31 * 2 * c, 1e-6);
  // broadcast: 256 MiB a channel in 512 KiB steps, a message each: 511 after the first. Per
  // byte on the wire it pays twice what all_reduce pays (which moves 62/32 of its bytes).
  const double bc = extra(Op::kBroadcast, Algorithm::kRing, Protocol::kSimple, 4);
  EXPECT_NEAR(bc, 511 * c, 1e-6);
  // tree: each connection carries the channel's bytes in 512 KiB chunks.
  EXPECT_NEAR(extra(Op::kAllReduce, Algorithm::kTree, Protocol::kSimple, 4), 511 * c, 1e-6);
  // LL128 sends a step (576,000 B of data) a message: loops of 32 x 576,000 B, 15 of them
  // (NCCL runs whole loops), 14 after the first, 62 steps each.
  EXPECT_NEAR(extra(Op::kAllReduce, Algorithm::kRing, Protocol::kLL128, 4), 14 * 62 * c, 1e-6);
  // None on one node, for NVLS Tree, nor for a call of one loop.
  EXPECT_EQ(extra(Op::kAllReduce, Algorithm::kRing, Protocol::kSimple, 1), 0);
  CostShape s = shape(Op::kAllReduce, 32, 4, k229);
  s.channels = 32;
  s.network_message_us = c;
  EXPECT_EQ(network_messages_us(Algorithm::kNvlsTree, Protocol::kSimple, s,
                                pipeline_run(Algorithm::kNvlsTree, Protocol::kSimple, s, bytes),
                                bytes),
            0);
  EXPECT_EQ(network_messages_us(Algorithm::kRing, Protocol::kSimple, s,
                                pipeline_run(Algorithm::kRing, Protocol::kSimple, s, 64 << 20),
                                64 << 20),
            0);
  // A loop and a half is two loops: 62 steps x 2 slices after the first.
  const double b3 = 3.0 * (1 << 30);
  EXPECT_NEAR(network_messages_us(Algorithm::kRing, Protocol::kSimple, s,
                                  pipeline_run(Algorithm::kRing, Protocol::kSimple, s, b3), b3),
              62 * 2 * c, 1e-9);
}

}  // namespace gf

namespace gf {
namespace {

// NCCL 2.29.7's own tuning table and picks, as it printed them for two ranks on two "hosts"
// (NCCL_HOSTID differs) over Socket, one GPU each (tests/data/outputs/README.md): every latency
// the table prints must be the one latency_us charges for that communicator, to the table's
// 0.1 us; LL's bandwidth from Simple's; and, at the bandwidths it printed, the protocol and the
// channels of each call as NCCL chose them. Nothing of gpufabric's was fitted to this log.
class Nccl2297Table : public ::testing::Test {
 protected:
  void SetUp() override {
    auto log = parse_nccl_log(testing::output_fixture("nccl-2.29.7-tuning-socket-2rank.log"), "f");
    ASSERT_TRUE(log.ok()) << log.errors()[0].message;
    log_ = *log;
  }
  // The communicator: 2 ranks, 2 nodes of 1 GPU, compute capability 12.0 (Blackwell's row), the
  // 4 channels the picks use (channel{Lo..Hi} up to 3). One GPU a node: sameChannels.
  static CostShape shape(Op op) {
    CostShape s;
    s.op = op;
    s.ranks = 2;
    s.domains = 2;
    s.domain_gpus = 1;
    s.release = NcclRelease::kV2_29;
    s.generation = GpuGeneration::kBlackwell;
    s.channels = 4;
    s.ring_same_channels = ring_same_channels(2, 1, 1);
    return s;
  }
  const NcclLog::TunerEntry* cell(Op op, Algorithm a, Protocol p) const {
    for (const auto& e : log_.tuner)
      if (e.op == op && e.algorithm == a && e.protocol == p) return &e;
    return nullptr;
  }
  NcclLog log_;
};

TEST_F(Nccl2297Table, EveryPrintedLatencyIsTheTunersLatency) {
  int compared = 0;
  for (const auto& e : log_.tuner) {
    if (e.latency_us == 0) continue;  // no model: NVLS needs 2 channels, Tree runs all_reduce only
    const double ours = latency_us(e.algorithm, e.protocol, shape(e.op), LatencyUse::kTuner);
    EXPECT_NEAR(ours, e.latency_us, 0.05)
        << op_name(e.op) << " " << algorithm_name(e.algorithm) << "/" << protocol_name(e.protocol)
        << " (line " << e.line << ")";
    ++compared;
  }
  EXPECT_EQ(compared, 32);
  // Without sameChannels the broadcast is charged a step a rank: 6.6 + 2 x 2.7, not the 9.3
  // NCCL printed.
  CostShape other = shape(Op::kBroadcast);
  other.ring_same_channels = false;
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kLL, other, LatencyUse::kTuner), 12.0, 0.05);
}

TEST_F(Nccl2297Table, RingLLBandwidthFromSimple) {
  for (Op op : {Op::kBroadcast, Op::kReduce, Op::kAllGather, Op::kReduceScatter, Op::kAllReduce}) {
    const auto* simple = cell(op, Algorithm::kRing, Protocol::kSimple);
    const auto* ll = cell(op, Algorithm::kRing, Protocol::kLL);
    ASSERT_TRUE(simple && ll);
    const double ours = protocol_bandwidth(Algorithm::kRing, Protocol::kLL, shape(op),
                                           simple->bandwidth_GBs * 1e9, 1 << 20) /
                        1e9;
    EXPECT_NEAR(ours, ll->bandwidth_GBs, 0.05) << op_name(op);
  }
}

TEST_F(Nccl2297Table, EachCallsProtocolAndChannelsAsNcclChose) {
  // LL128 is off here (the table rates it 0): NCCL enables it only where the GPUs reach each
  // other over NVLink and a GPU's NIC is at most PXB away (tuning.cc@v2.29.7-1:481-494); these
  // ranks talk over Socket. So the choice is LL against Simple, at the Ring Simple bandwidth the
  // table printed.
  const double simple_GBs =
      cell(Op::kBroadcast, Algorithm::kRing, Protocol::kSimple)->bandwidth_GBs;
  const CostShape s = shape(Op::kBroadcast);
  int compared = 0;
  for (const auto& p : log_.picks) {
    ASSERT_TRUE(p.op);
    const double b = static_cast<double>(p.bytes);
    const double ll = tuner_time_us(Algorithm::kRing, Protocol::kLL, s, 1 / (simple_GBs * 1e9), b);
    const double simple =
        tuner_time_us(Algorithm::kRing, Protocol::kSimple, s, 1 / (simple_GBs * 1e9), b);
    const Protocol ours = ll <= simple ? Protocol::kLL : Protocol::kSimple;
    EXPECT_EQ(ours, p.protocol) << p.bytes << " bytes (line " << p.line << ")";
    EXPECT_EQ(pipeline_run(Algorithm::kRing, p.protocol, s, b).channels, p.channels)
        << p.bytes << " bytes";
    ++compared;
  }
  EXPECT_EQ(compared, 72);
}

}  // namespace
}  // namespace gf
