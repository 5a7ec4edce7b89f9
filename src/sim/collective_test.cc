// Known behaviours of NCCL collectives on real fabrics (../shared/MODELING.md), reproduced by
// modelling: these tests fail if the simulator stops modelling them.
#include "sim/collective.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "sim/nccl_constants.h"

namespace gf {
namespace {

struct Setup {
  Catalog cat;
  Plan plan;
};

Setup setup(const std::string& yaml) {
  Setup s{*builtin_catalog(), {}};
  auto spec = parse_spec(yaml, "t.yaml");
  EXPECT_TRUE(spec.ok()) << format_diagnostics(spec.errors());
  EXPECT_TRUE(validate_spec(*spec, s.cat).empty());
  auto p = make_plan(*spec, s.cat);
  EXPECT_TRUE(p.ok()) << format_diagnostics(p.errors());
  s.plan = *p;
  return s;
}

SizeResult run(const Setup& s, SimOptions o, double bytes, Fabric* fabric = nullptr) {
  const Fabric f = fabric ? *fabric : Fabric::build(s.plan, s.cat);
  auto m = CollectiveModel::build(f, s.plan, o);
  EXPECT_TRUE(m.ok()) << format_diagnostics(m.errors());
  return m->at(bytes);
}

constexpr double kGiB = 1024.0 * 1024 * 1024;

std::string ib(const char* gpu, int nodes, const char* nic, const char* sw) {
  return fmt::format(
      "cluster: {{gpu: {}, nodes: {}, nic: {}}}\nfabric: {{technology: infiniband, switch: {}, "
      "in_network_reduction: off}}\n",
      gpu, nodes, nic, sw);
}
// The same on qm9700 switches with SHARP on.
std::string sharp_ib(const char* gpu, int nodes, const char* nic = "cx7-400g") {
  return fmt::format(
      "cluster: {{gpu: {}, nodes: {}, nic: {}}}\nfabric: {{technology: infiniband, switch: "
      "qm9700, in_network_reduction: on}}\n",
      gpu, nodes, nic);
}

}  // namespace

TEST(Collective, FourHundredGigNicGives46To48PerNic) {
  for (int nodes : {3, 4, 8, 16}) {
    const auto s = setup(ib("h100-sxm", nodes, "cx7-400g", "qm9700"));
    SimOptions o;
    o.algorithm = Algorithm::kRing;
    const double per_nic = run(s, o, 8 * kGiB).busbw_gbs / 8;
    // From 16 nodes on the ring's 2(N-1) step latencies start to show even at 8 GiB.
    EXPECT_GE(per_nic, nodes < 16 ? 46.0 : 45.0) << nodes;
    EXPECT_LE(per_nic, 48.0) << nodes;
  }
}

TEST(Collective, TreeIsCappedPerGraphChannel) {
  // NCCL's tree bus bandwidth is at most nChannels x perChMaxTreeBw of the search's graph (one
  // channel per NIC here): Ampere, 2 nodes, 8 x 23.6 GB/s, under what the ring reaches, so the
  // tuner keeps the ring on 2 DGX A100 (nccl #812's "2-node runs use tree" predates the caps).
  const auto s = setup(ib("a100-sxm-80g", 2, "cx6-200g", "qm8700"));
  EXPECT_EQ(run(s, {}, 8 * kGiB).algorithm, Algorithm::kRing);
  // Blackwell from 4 nodes on: 8 x 24 GB/s, about half of the ring's bus bandwidth, at every
  // node count (tuning.cc@v2.29.7-1:188-193).
  SimOptions tree, ring;
  tree.algorithm = Algorithm::kTree;
  ring.algorithm = Algorithm::kRing;
  for (int nodes : {4, 16}) {
    const auto b = setup(ib("b200", nodes, "cx7-400g", "qm9700"));
    const double t = run(b, tree, 32 * kGiB).busbw_gbs, r = run(b, ring, 32 * kGiB).busbw_gbs;
    const double ranks = nodes * 8.0;
    EXPECT_NEAR(t, 8 * 24.0 * 0.5 * 2 * (ranks - 1) / ranks, 8 * 24.0 * 0.03) << nodes;
    EXPECT_LT(t, 0.6 * r) << nodes;
  }
  // NVLS Tree on 2 nodes runs each node's NICs both ways at once: above their line rate.
  SimOptions nt;
  nt.algorithm = Algorithm::kNvlsTree;
  EXPECT_GT(run(setup(ib("b200", 2, "cx7-400g", "qm9700")), nt, 32 * kGiB).busbw_gbs, 400);
}

// NCCL 2.30 on 16 B200 nodes of 400G NICs: NVLS Tree's tuner cap per head from 3 nodes is 80
// GB/s (tuning.cc@v2.30.7-1:210; 2.29: 43.8), so the tuner takes NVLS Tree over Ring for large
// messages where 2.29 keeps Ring. Its NVLS Tree runs 24 channels there (nvls.cc@v2.30.7-1:
// 164-200; 2.29: 32), which moves its time at mid sizes.
TEST(Collective, Nccl230TakesNvlsTreeOnLargeBlackwellMessages) {
  const auto b = setup(ib("b200", 16, "cx7-400g", "qm9700"));
  SimOptions v229, v230;
  v229.nccl = NcclRelease::kV2_29;
  v230.nccl = NcclRelease::kV2_30;
  EXPECT_EQ(run(b, v229, 32 * kGiB).algorithm, Algorithm::kRing);
  EXPECT_EQ(run(b, v230, 32 * kGiB).algorithm, Algorithm::kNvlsTree);
  v229.algorithm = v230.algorithm = Algorithm::kNvlsTree;
  EXPECT_NE(run(b, v229, 64 << 20).time_us, run(b, v230, 64 << 20).time_us);
}

// A GB200 tray's GPUs reach each other through the rack's switch trays (its NVLink domain is
// 72 GPUs, a node 4): its 512 KiB ring LL all_reduce takes 6 x kRackNvlinkStepUs more than the
// same tray would were its domain the node alone.
TEST(Collective, TraysOfARackPayTheSwitchTraysStep) {
  const auto gb = setup(ib("gb200", 1, "cx7-400g", "qm9700"));
  auto at = [&gb](int domain_gpus) {
    Plan plan = gb.plan;
    plan.gpu.scaleup_domain_gpus = domain_gpus;
    SimOptions o;
    o.algorithm = Algorithm::kRing;
    o.protocol = Protocol::kLL;
    auto m = CollectiveModel::build(Fabric::build(plan, gb.cat), plan, o);
    EXPECT_TRUE(m.ok()) << format_diagnostics(m.errors());
    return m.ok() ? m->at(512 * 1024).time_us : 0.0;
  };
  EXPECT_NEAR(at(72) - at(4), 6 * nccl::kRackNvlinkStepUs, 1e-6);
}

// NVLS on one NVL72 rack has 32 heads, NCCL_MAX_NVLS_ARITY, not 72 (search.cc@v2.29.7-1:1065):
// a head carries (1 + 1/32) x S each way, where a ring's GPU sends 2(n - 1)/n x S; the
// fabric's NVLS rate is then 2 x 71/72 / (1 + 1/32) x NVLS's share of the ring's
// (nvls_link_share: NVLS does not take Blackwell's SM-copy efficiency).
TEST(Collective, NvlsOnOneRackHas32Heads) {
  const auto gb = setup(ib("gb200", 18, "cx7-400g", "qm9700"));  // 1 NVL72 rack
  const Fabric f = Fabric::build(gb.plan, gb.cat);
  auto m = CollectiveModel::build(f, gb.plan, SimOptions{});
  ASSERT_TRUE(m.ok()) << format_diagnostics(m.errors());
  double ring = 0, nvls = 0;
  for (const auto& a : m->algorithms()) {
    if (a.algorithm == Algorithm::kRing) ring = a.seconds_per_byte;
    if (a.algorithm == Algorithm::kNvls) nvls = a.seconds_per_byte;
  }
  ASSERT_GT(ring, 0);
  ASSERT_GT(nvls, 0);
  EXPECT_NEAR(ring / nvls,
              2 * 71.0 / 72 / (1 + 1.0 / 32) * nvls_link_share(GpuGeneration::kBlackwell), 1e-3);
  EXPECT_EQ(m->at(8 * kGiB).algorithm, Algorithm::kNvls);
  // All 72 GPUs' data through the rack's switch reduction paces it there (rack_reduce_us).
  EXPECT_EQ(m->at(8 * kGiB).bottleneck, "rack NVLS reduction");
}

// Point-to-point inside one domain, through the collective: each peer's send runs on the
// parts NCCL cuts it into and places on its channels (domain_p2p_split), whose 512 KiB chunks
// cross two copies.
// - One GB200 tray (4 GPUs), 1 MiB: 4 rounds x 4 parts of 64 KiB, one a channel, each at
//   kP2pDomainChannelGBsBlackwell, under NVLink's rate; one chunk a part: twice a part's time.
//   At 16 GiB the rank's own copy (round 0) puts a fourth part on every channel.
// - One NVL72 rack (72 GPUs), 16 MiB: one part of 233 KiB a send; rounds 0-7 come back at 32
//   and 64, so 3 parts on the busiest channel, still under NVLink's rate: twice their time.
// - Hopper has no cap; one H100 node's 16 MiB sends are 4 parts of 512 KiB (x2), its 16 GiB
//   sends 32 parts of 64 MiB (x129/128): the data's time a byte differs by 2 / (129/128).
TEST(Collective, DomainAlltoallRunsOnNcclsPartsAPeer) {
  auto model = [](const char* gpu, int nodes) {
    const auto g = setup(ib(gpu, nodes, "cx7-400g", "qm9700"));
    SimOptions o;
    o.op = Op::kAlltoall;
    return CollectiveModel::build(Fabric::build(g.plan, g.cat), g.plan, o);
  };
  auto data_us = [](const SizeResult& r) { return r.time_us - r.latency_us; };
  const double MiB = 1 << 20, rate = nccl::kP2pDomainChannelGBsBlackwell * 1e9;
  auto tray = model("gb200", 1);
  ASSERT_TRUE(tray.ok()) << format_diagnostics(tray.errors());
  EXPECT_NEAR(data_us(tray->at(MiB)), 2 * (MiB / 16) / rate * 1e6, 1e-3);
  // At 16 GiB every round covers all 32 channels (32 parts of 128 MiB a send), the rank's own
  // copy too: 4 parts a channel, 256 chunks each, under NVLink's rate for 3/4 of the bytes.
  const double big = 16.0 * kGiB, part = big / 4 / 32;
  EXPECT_NEAR(data_us(tray->at(big)), 4 * part / rate * 1e6 * 257 / 256, 1e-3 * big / MiB);
  auto rack = model("gb200", 18);
  ASSERT_TRUE(rack.ok()) << format_diagnostics(rack.errors());
  EXPECT_NEAR(data_us(rack->at(16 * MiB)), 2 * 3 * (16 * MiB / 72) / rate * 1e6, 1e-3);
  auto node = model("h100-sxm", 1);
  ASSERT_TRUE(node.ok()) << format_diagnostics(node.errors());
  EXPECT_NEAR(
      data_us(node->at(16 * MiB)) / (16 * MiB) / (data_us(node->at(16.0 * kGiB)) / (16.0 * kGiB)),
      2 / (129.0 / 128), 1e-3);
}

// A pipeline's sends run on its stages' communicator: with 9 stages in one NVL72 rack NCCL
// halves a peer's 32 channels to 2 (2 x 9 <= 32), where a pair alone keeps 16. A 32 MiB send
// is then 2 parts of 16 MiB (32 chunks each, x33/32) at 2 channels' rate, not 16 parts of
// 2 MiB (x5/4) at 16: the latency is the same, the data's time differs by that much.
TEST(Collective, PipelineSendsTakeTheirCommunicatorsChannels) {
  const auto gb = setup(ib("gb200", 18, "cx7-400g", "qm9700"));  // 1 NVL72 rack
  const Fabric f = Fabric::build(gb.plan, gb.cat);
  auto pair = GroupCollective::build(f, gb.plan, Op::kSendRecv, {{0, 4}});
  auto stages = GroupCollective::build(f, gb.plan, Op::kSendRecv, {{0, 4}}, {}, nullptr, 9);
  ASSERT_TRUE(pair.ok()) << format_diagnostics(pair.errors());
  ASSERT_TRUE(stages.ok()) << format_diagnostics(stages.errors());
  const double S = 32.0 * (1 << 20), R = nccl::kP2pDomainChannelGBsBlackwell * 1e9;
  EXPECT_NEAR(stages->seconds(S) - pair->seconds(S), S * (33.0 / 32 / (2 * R) - 1.25 / (16 * R)),
              1e-9);
}

// On one node the flows' rate is the NVLink's times what moves data there: the SMs' copies of
// ring reach kScaleUpSimpleEfficiencyBlackwell of Blackwell's 900 GB/s and kScaleUpSimple
// Efficiency of Hopper's 450; NVLS, whose switch moves the data, keeps NVLink's share as H100
// measured it times NCCL's nvlsEfficiency on both (nvls_link_share).
TEST(Collective, BlackwellCopiesReachLessOfNvlinkThanNvls) {
  auto rates = [](const char* gpu) {
    const auto g = setup(ib(gpu, 1, "cx7-400g", "qm9700"));
    auto m = CollectiveModel::build(Fabric::build(g.plan, g.cat), g.plan, SimOptions{});
    std::pair<double, double> ring_nvls{0, 0};
    if (!m.ok()) {
      ADD_FAILURE() << format_diagnostics(m.errors());
      return ring_nvls;
    }
    for (const auto& a : m->algorithms()) {
      if (a.algorithm == Algorithm::kRing) ring_nvls.first = 1 / a.seconds_per_byte;
      if (a.algorithm == Algorithm::kNvls) ring_nvls.second = 1 / a.seconds_per_byte;
    }
    return ring_nvls;
  };
  const auto [b200_ring, b200_nvls] = rates("b200");
  const auto [h100_ring, h100_nvls] = rates("h100-sxm");
  ASSERT_GT(h100_ring, 0);
  ASSERT_GT(h100_nvls, 0);
  EXPECT_NEAR(
      b200_ring / h100_ring,
      900 * nccl::kScaleUpSimpleEfficiencyBlackwell / (450 * nccl::kScaleUpSimpleEfficiency), 1e-3);
  EXPECT_NEAR(b200_nvls / h100_nvls,
              900 * nccl::kNvlsEfficiencyBlackwell / (450 * nccl::kNvlsEfficiencyHopper), 1e-3);
}

// A pipeline send between two racks (a group of 2, as the step's and replay's pp_sendrecv) on
// Grace Blackwell trays: from 2.29 its network chunk is 256 KiB, so a 256 KiB send takes parts of
// 128 KiB on 2 channels where an x86 host's takes 4 of 64 KiB (NcclCost.GraceBlackwellDoubles
// TheNetworkP2pChunkFrom229): 2 x 14 GB/s, under the NIC's rate. The group collective passes the
// host on; on 2.28 the two hosts run alike.
TEST(Collective, GraceBlackwellSendsBetweenRacksInBiggerChunksFrom229) {
  const auto gb = setup(ib("gb200", 36, "cx7-400g", "qm9700"));  // 2 NVL72 racks
  auto send = [&gb](NcclRelease r, HostCpu host) {
    Plan plan = gb.plan;
    plan.nccl = r;
    plan.gpu.host_cpu = host;
    const Fabric f = Fabric::build(plan, gb.cat);
    auto g = GroupCollective::build(f, plan, Op::kSendRecv, {{0, 72}});
    EXPECT_TRUE(g.ok()) << format_diagnostics(g.errors());
    return g.ok() ? g->seconds(256 * 1024) : 0.0;
  };
  EXPECT_GT(send(NcclRelease::kV2_29, HostCpu::kGrace), send(NcclRelease::kV2_29, HostCpu::kX86));
  EXPECT_DOUBLE_EQ(send(NcclRelease::kV2_28, HostCpu::kGrace),
                   send(NcclRelease::kV2_28, HostCpu::kX86));
}

// One A100 a node: the GPU's two channels carry all of its network traffic, each one thread
// block that takes a ring's steps one after the other. Where the block both sends and receives
// (all_gather, reduce_scatter, all_reduce, sendrecv, alltoall) its copies pace the call below the
// NIC; broadcast, which moves a chunk once a hop, reaches the NIC. With 8 GPUs a node the same
// NICs carry 16 channels and the blocks are not the bound. Hopper has no such figure.
TEST(Collective, AmpereThreadBlocksPaceOneGpuANode) {
  auto one_gpu = [](const char* gpu, const char* nic) {
    return setup(
        fmt::format("cluster: {{gpu: {}, nodes: 2, gpus_per_node: 1, nic: {}, nics_per_node: 1}}\n"
                    "fabric: {{technology: infiniband, in_network_reduction: off}}\n",
                    gpu, nic));
  };
  const auto a100 = one_gpu("a100-sxm-80g", "cx6-200g");
  auto busbw = [](const gf::Setup& s, Op op, double bytes) {
    SimOptions o;
    o.op = op;
    return run(s, o, bytes);
  };
  const double nic_GBps = 200.0 / 8;
  const SizeResult bcast = busbw(a100, Op::kBroadcast, kGiB);
  EXPECT_GT(bcast.busbw_gbs, 0.9 * nic_GBps);
  // Two ranks: all_gather moves each chunk once a step (2 blocks x the block's rate, busbw half
  // the algbw), all_reduce 3 chunk-steps for 2 chunks (4/3 of it).
  const SizeResult ag = busbw(a100, Op::kAllGather, kGiB);
  EXPECT_NEAR(ag.busbw_gbs, nccl::kChannelCopyGBsAmpere, 0.02 * nccl::kChannelCopyGBsAmpere);
  EXPECT_LT(ag.busbw_gbs, 0.75 * bcast.busbw_gbs);
  const SizeResult ar = busbw(a100, Op::kAllReduce, kGiB);
  if (ar.algorithm == Algorithm::kRing) {
    EXPECT_NEAR(ar.busbw_gbs / ag.busbw_gbs, 4.0 / 3.0, 0.03);
  }
  EXPECT_LT(busbw(a100, Op::kAlltoall, kGiB).busbw_gbs, 0.75 * bcast.busbw_gbs);
  EXPECT_LT(busbw(a100, Op::kSendRecv, kGiB).busbw_gbs, 0.75 * bcast.busbw_gbs);
  // Eight A100s a node on 8 NICs: the NICs, not the blocks.
  const auto a100x8 = setup(ib("a100-sxm-80g", 2, "cx6-200g", "qm8700"));
  SimOptions o;
  o.op = Op::kAllGather;
  o.algorithm = Algorithm::kRing;
  const SizeResult ag8 = run(a100x8, o, 4 * kGiB);
  EXPECT_GT(ag8.busbw_gbs / 8, 0.9 * bcast.busbw_gbs) << ag8.busbw_gbs;
  // H100 with the same shape: no block figure, the NIC's rate.
  const auto h100 = one_gpu("h100-sxm", "cx7-400g");
  EXPECT_GT(busbw(h100, Op::kAllGather, kGiB).busbw_gbs, 0.9 * 400.0 / 8);
}

// PCIe cards (catalog scaleup tech: pcie): NCCL runs no LL128 between GPUs that meet over PCIe
// (tuning.cc's typeIntra <= PATH_NVB) and takes its PCI row's hop latency; one card a node has
// no such hop and keeps LL128 across nodes.
TEST(Collective, PcieCardsRunNoLl128InsideANode) {
  auto spec = [](const char* gpu, int nodes) {
    return setup(
        fmt::format("cluster: {{gpu: {}, nodes: {}, nic: cx6-200g, nics_per_node: 4}}\n"
                    "fabric: {{technology: infiniband, in_network_reduction: off}}\n",
                    gpu, nodes));
  };
  const auto pcie = spec("a100-pcie-40g", 4), sxm = spec("a100-sxm-80g", 4);
  SimOptions o;
  o.algorithm = Algorithm::kRing;
  bool sxm_ll128 = false;
  for (const double bytes : {1048576.0, 4194304.0, 16777216.0}) {
    EXPECT_NE(run(pcie, o, bytes).protocol, Protocol::kLL128) << bytes;
    sxm_ll128 = sxm_ll128 || run(sxm, o, bytes).protocol == Protocol::kLL128;
  }
  EXPECT_TRUE(sxm_ll128);
  // NCCL's PCI hop is slower than its NVLink hop: one node's small call takes longer.
  const auto pcie1 = spec("a100-pcie-40g", 1), sxm1 = spec("a100-sxm-80g", 1);
  EXPECT_GT(run(pcie1, o, 8).latency_us, run(sxm1, o, 8).latency_us);
  // A card's one x16 link carries its traffic to the node's other GPUs and to the NICs alike:
  // two cards and two NICs a node run at most the link's rate (counted apart: 39 GB/s).
  const auto pcie22 = setup(
      "cluster: {gpu: a100-pcie-40g, nodes: 2, gpus_per_node: 2, nic: cx6-200g, "
      "nics_per_node: 2}\nfabric: {technology: infiniband, in_network_reduction: off}\n");
  const double x16 = pcie22.plan.gpu.scaleup_gbs_per_gpu;
  for (const Op op : {Op::kAllReduce, Op::kAllGather, Op::kAlltoall}) {
    SimOptions any;
    any.op = op;
    EXPECT_LE(run(pcie22, any, 4 * kGiB).busbw_gbs, 1.01 * x16) << op_name(op);
  }
  // One card a node has no PCIe hop between GPUs: LL128 runs across nodes.
  const auto one = setup(
      "cluster: {gpu: a100-pcie-40g, nodes: 4, gpus_per_node: 1, nic: cx6-200g, "
      "nics_per_node: 1}\nfabric: {technology: infiniband, in_network_reduction: off}\n");
  bool one_ll128 = false;
  for (const double bytes : {1048576.0, 4194304.0, 16777216.0, 67108864.0})
    one_ll128 = one_ll128 || run(one, o, bytes).protocol == Protocol::kLL128;
  EXPECT_TRUE(one_ll128);
}

// GB200's NICs hang off Grace (catalog nic_attach: cpu-c2c): NCCL up to 2.26 rates that path
// PATH_PHB and runs no LL128 between racks; 2.27 rates it PATH_P2C and does
// (docs/nccl-model-reference.md §3).
TEST(Collective, GraceBlackwellRunsLl128BetweenRacksFrom227) {
  const auto gb = setup(ib("gb200", 72, "cx7-400g", "qm9700"));  // 4 NVL72 racks
  SimOptions v226, v227;
  v226.nccl = NcclRelease::kV2_26;
  v227.nccl = NcclRelease::kV2_27;
  v226.algorithm = v227.algorithm = Algorithm::kRing;
  EXPECT_NE(run(gb, v226, 16 << 20).protocol, Protocol::kLL128);
  EXPECT_EQ(run(gb, v227, 16 << 20).protocol, Protocol::kLL128);
  // Forced, as NCCL_PROTO=LL128, it runs on 2.26 too, faster than NCCL's own pick there.
  const double unforced = run(gb, v226, 16 << 20).time_us;
  v226.protocol = Protocol::kLL128;
  const SizeResult forced = run(gb, v226, 16 << 20);
  EXPECT_EQ(forced.protocol, Protocol::kLL128);
  EXPECT_LT(forced.time_us, unforced);
  // B200's NICs sit on the GPUs' PCIe switches: LL128 between nodes on 2.26.
  const auto b = setup(ib("b200", 32, "cx7-400g", "qm9700"));
  SimOptions b226;
  b226.nccl = NcclRelease::kV2_26;
  b226.algorithm = Algorithm::kRing;
  EXPECT_EQ(run(b, b226, 16 << 20).protocol, Protocol::kLL128);
  // The step's, jobs' and replay's group collectives (a data-parallel ring of one GPU a rack)
  // follow the same switch: on B200 2.26 and 2.27 ring alike, on GB200 2.26 is slower.
  auto group = [](const decltype(gb)& s, NcclRelease r) {
    Plan plan = s.plan;
    plan.nccl = r;
    const Fabric f = Fabric::build(plan, s.cat);
    auto g = GroupCollective::build(f, plan, Op::kAllReduce, {{0, 72, 144, 216}});
    EXPECT_TRUE(g.ok()) << format_diagnostics(g.errors());
    return g->seconds(16 << 20);
  };
  EXPECT_GT(group(gb, NcclRelease::kV2_26), group(gb, NcclRelease::kV2_27));
  EXPECT_DOUBLE_EQ(group(b, NcclRelease::kV2_26), group(b, NcclRelease::kV2_27));
}

// One GPU with four 400G NICs (nccl-tests issue 232's nodes): every NIC's GPUDirect traffic
// crosses the GPU's one PCIe Gen5 x16 link, so the GPU moves at most that link's rate however
// many NICs it has; with a NIC per GPU the NICs' line rate is the limit again.
TEST(Collective, AGpusNicsShareItsOnePcieLink) {
  const auto one = setup(
      "cluster: {gpu: h100-sxm, nodes: 2, gpus_per_node: 1, nic: cx7-400g, nics_per_node: 4}\n"
      "fabric: {technology: roce, in_network_reduction: off}\n");
  const Fabric f = Fabric::build(one.plan, one.cat);
  const int shared = f.gpu_pcie_to_nic(f.nic(0, 0));
  ASSERT_GE(shared, 0);
  for (int rail = 1; rail < 4; ++rail) EXPECT_EQ(f.gpu_pcie_to_nic(f.nic(0, rail)), shared);
  EXPECT_NE(f.gpu_pcie_to_nic(f.nic(1, 0)), shared);  // the other node's GPU has its own
  const double x16 = f.links()[static_cast<size_t>(shared)].bytes_per_s / 1e9;
  EXPECT_LT(x16, 4 * 50.0 / 2);  // under half of the four NICs' line rate
  SimOptions tree;
  tree.algorithm = Algorithm::kTree;
  // 2 ranks: all_reduce's bus bandwidth is its algorithm bandwidth, each GPU's bytes once each
  // way through its PCIe link.
  const double busbw = run(one, tree, kGiB).busbw_gbs;
  EXPECT_LE(busbw, x16 * 1.001);
  EXPECT_GT(busbw, 0.8 * x16);
  // One NIC per GPU: no shared link, and the ring runs near the NICs' rate.
  const auto dgx = setup(ib("h100-sxm", 2, "cx7-400g", "qm9700"));
  const Fabric g = Fabric::build(dgx.plan, dgx.cat);
  EXPECT_EQ(g.gpu_pcie_to_nic(g.nic(0, 0)), -1);
}

// NCCL_MAX_NCHANNELS keeps the first channels (connect.cc@v2.29.7-1:433-445): across nodes a
// ring channel is a NIC's, so 4 channels on 8 NICs leave half of them idle and halve the bus
// bandwidth; NCCL_MIN_NCHANNELS copies channels over the same NICs, which adds no bandwidth.
TEST(Collective, MaxChannelsBelowTheNicsLeavesNicsIdle) {
  const auto s = setup(ib("h100-sxm", 4, "cx7-400g", "qm9700"));
  SimOptions ring;
  ring.algorithm = Algorithm::kRing;
  const double full = run(s, ring, 8 * kGiB).busbw_gbs;
  SimOptions four = ring;
  four.max_channels = 4;
  EXPECT_NEAR(run(s, four, 8 * kGiB).busbw_gbs, full / 2, full * 0.03);
  SimOptions many = ring;
  many.min_channels = 32;
  EXPECT_NEAR(run(s, many, 8 * kGiB).busbw_gbs, full, full * 0.02);
  // Min copies the channels max kept: 3 kept, copied to 16, still three NICs' worth.
  SimOptions three = ring;
  three.max_channels = 3;
  three.min_channels = 16;
  EXPECT_LT(run(s, three, 8 * kGiB).busbw_gbs, full * 3.2 / 8);
  // Trees: 8 channels are the first tree over all 8 graph channels (NICs), not both trees over
  // four of them; 4 channels, four NICs.
  SimOptions tree;
  tree.algorithm = Algorithm::kTree;
  SimOptions tree8 = tree, tree4 = tree;
  tree8.max_channels = 8;
  tree4.max_channels = 4;
  const double t8 = run(s, tree8, 8 * kGiB).busbw_gbs, t4 = run(s, tree4, 8 * kGiB).busbw_gbs;
  EXPECT_NEAR(t8, 2 * t4, t4 * 0.05);
}

TEST(Collective, NvlsReaches480OnlyForLargeSizes) {
  const auto s = setup(ib("h100-sxm", 1, "cx7-400g", "qm9700"));
  SimOptions o;
  o.algorithm = Algorithm::kNvls;
  EXPECT_NEAR(run(s, o, 8 * kGiB).busbw_gbs, 480, 480 * 0.05);
  EXPECT_LT(run(s, o, 16.0 * (1 << 20)).busbw_gbs, 400);
  EXPECT_LT(run(s, o, 1 << 20).busbw_gbs, 100);
  // Auto picks NVLS at large sizes on one H100 node, ring or LL for tiny ones.
  EXPECT_EQ(run(s, {}, 8 * kGiB).algorithm, Algorithm::kNvls);
  EXPECT_NE(run(s, {}, 8).protocol, Protocol::kSimple);
}

// H800 is H100 with 8 of its 18 NVLink links (catalog/gpus.yaml): on one node the rate of ring
// and NVLS follows the links, NCCL's own rule (8 x SM90_NVLINK_BW, topo.h), and the latency
// does not; H20 keeps all 18 links and runs as H100 does.
TEST(Collective, H800sNvlinkIsEightOfH100sEighteenLinks) {
  const auto h100 = setup(ib("h100-sxm", 1, "cx7-400g", "qm9700"));
  const auto h800 = setup(ib("h800-sxm", 1, "cx7-400g", "qm9700"));
  const auto h20 = setup(ib("h20", 1, "cx7-400g", "qm9700"));
  for (Algorithm a : {Algorithm::kRing, Algorithm::kNvls}) {
    SimOptions o;
    o.algorithm = a;
    const double ratio = run(h800, o, 8 * kGiB).busbw_gbs / run(h100, o, 8 * kGiB).busbw_gbs;
    // The bytes' time scales with the links; the fixed latency, the same on both, is a larger
    // share of H100's shorter call.
    EXPECT_GE(ratio, 200.0 / 450.0) << algorithm_name(a);
    EXPECT_LE(ratio, 200.0 / 450.0 * 1.05) << algorithm_name(a);
    EXPECT_NEAR(run(h20, o, 8 * kGiB).busbw_gbs, run(h100, o, 8 * kGiB).busbw_gbs, 1e-6);
  }
  SimOptions ring;
  ring.algorithm = Algorithm::kRing;
  EXPECT_NEAR(run(h800, ring, 8).time_us, run(h100, ring, 8).time_us, 0.01);
}

// NCCL_NVLS_ENABLE=0 takes NVLS out of the choice; across nodes NCCL disables NVLS without
// CollNet, and its switch changes nothing there.
TEST(Collective, NvlsEnableSwitchesNvlsOutOfTheChoice) {
  const auto one = setup(ib("h100-sxm", 1, "cx7-400g", "qm9700"));
  SimOptions off;
  off.nvls_enable = false;
  EXPECT_EQ(run(one, {}, 8 * kGiB).algorithm, Algorithm::kNvls);
  EXPECT_EQ(run(one, off, 8 * kGiB).algorithm, Algorithm::kRing);
  const Fabric f = Fabric::build(one.plan, one.cat);
  off.algorithm = Algorithm::kNvls;
  auto m = CollectiveModel::build(f, one.plan, off);
  ASSERT_TRUE(m.ok());
  for (const auto& a : m->algorithms()) {
    if (a.algorithm == Algorithm::kNvls) {
      EXPECT_FALSE(a.available);
      EXPECT_NE(a.unavailable_reason.find("NCCL_NVLS_ENABLE=0"), std::string::npos);
    }
  }
  const auto four = setup(ib("b200", 4, "cx7-400g", "qm9700"));
  SimOptions nvls;
  nvls.algorithm = Algorithm::kNvls;
  const Fabric f4 = Fabric::build(four.plan, four.cat);
  auto m4 = CollectiveModel::build(f4, four.plan, nvls);
  ASSERT_TRUE(m4.ok());
  for (const auto& a : m4->algorithms()) {
    if (a.algorithm == Algorithm::kNvls) {
      EXPECT_NE(a.unavailable_reason.find("only with CollNet"), std::string::npos);
    }
  }
}

// From NCCL 2.28 the tuner skips NVLS Tree on fewer than 2 NVLS heads (tuning.cc@v2.29.7-1:
// 288-289): B200 nodes of one NIC run it on 2.27, not on 2.29.
TEST(Collective, NvlsTreeNeedsTwoHeadsFrom228) {
  const auto one_nic = setup(
      "cluster: {gpu: b200, nodes: 4, nic: cx7-400g, nics_per_node: 1}\n"
      "fabric: {technology: infiniband, switch: qm9700, in_network_reduction: off}\n");
  const Fabric f = Fabric::build(one_nic.plan, one_nic.cat);
  for (NcclRelease r : {NcclRelease::kV2_27, NcclRelease::kV2_29}) {
    SimOptions o;
    o.nccl = r;
    auto m = CollectiveModel::build(f, one_nic.plan, o);
    ASSERT_TRUE(m.ok());
    for (const auto& a : m->algorithms())
      if (a.algorithm == Algorithm::kNvlsTree) {
        EXPECT_EQ(a.available, r == NcclRelease::kV2_27) << nccl_release_name(r);
        if (r == NcclRelease::kV2_29) {
          EXPECT_NE(a.unavailable_reason.find("2 heads or more"), std::string::npos);
        }
      }
  }
}

// NVLS all_gather / reduce_scatter on one node (NCCL 2.19+): a GPU's busier link direction
// carries the whole output (all_gather: the switch's multicast writes into it; reduce_scatter:
// the switch's reads of it), so at large sizes the bus bandwidth is (m - 1)/m of what the
// NVLS-scaled link gives; a ring's is the link's. Auto keeps the ring there. Across nodes
// without CollNet, and in NCCL 2.18, NCCL refuses it.
// Why NVLS cannot run with `o` ("" when it can).
std::string nvls_unavailable(const Fabric& f, const Plan& plan, const SimOptions& o) {
  auto m = CollectiveModel::build(f, plan, o);
  EXPECT_TRUE(m.ok());
  if (!m.ok()) return "";
  for (const auto& a : m->algorithms())
    if (a.algorithm == Algorithm::kNvls) return a.unavailable_reason;
  return "";
}

// A node of H100's 4-GPU board has no NVSwitch (catalog scaleup.direct_board_gpus): NVLS does
// not run on it, and auto all_reduce takes Tree or Ring; 4 GPUs a node of the 8-GPU board's
// domain on a GPU without such a board, and 8 a node, keep NVLS.
TEST(Collective, TheDirectLinkBoardHasNoNvls) {
  auto spec = [](const char* gpu, int gpn) {
    return fmt::format(
        "cluster: {{gpu: {}, nodes: 2, gpus_per_node: {}, nic: cx6-200g, nics_per_node: {}}}\n"
        "fabric: {{technology: infiniband, in_network_reduction: off}}\n",
        gpu, gpn, gpn);
  };
  SimOptions o;
  o.op = Op::kAllReduce;
  // Why NVLS Tree, NVLS across nodes without CollNet, cannot run ("" when it can).
  auto nvls_tree_unavailable = [&](const gf::Setup& s) {
    auto m = CollectiveModel::build(Fabric::build(s.plan, s.cat), s.plan, o);
    EXPECT_TRUE(m.ok());
    if (!m.ok()) return std::string();
    for (const auto& a : m->algorithms())
      if (a.algorithm == Algorithm::kNvlsTree) return a.unavailable_reason;
    return std::string();
  };
  const auto h100 = setup(spec("h100-sxm", 4));
  EXPECT_NE(nvls_tree_unavailable(h100).find("the 4-GPU board links its GPUs directly"),
            std::string::npos)
      << nvls_tree_unavailable(h100);
  for (double bytes : {4.0 * 1024 * 1024, 256.0 * 1024 * 1024}) {
    const SizeResult r = run(h100, o, bytes);
    EXPECT_NE(r.algorithm, Algorithm::kNvlsTree) << bytes;
    EXPECT_NE(r.algorithm, Algorithm::kNvls) << bytes;
  }
  EXPECT_EQ(nvls_tree_unavailable(setup(spec("h100-sxm", 8))), "");
  EXPECT_EQ(nvls_tree_unavailable(setup(spec("b200", 4))), "");  // no direct-link board
  // 4 GPUs of an 8-GPU NVSwitch board, as the spec says (cluster.scaleup_board): NVLS runs.
  std::string dgx = spec("h100-sxm", 4);
  dgx.replace(dgx.find("nics_per_node: 4"), 16, "nics_per_node: 4, scaleup_board: nvswitch");
  EXPECT_EQ(nvls_tree_unavailable(setup(dgx)), "");
  // A board the catalog does not have is the spec's error at the key.
  for (const auto& [gpu, gpn] : {std::pair{"h100-sxm", 8}, std::pair{"b200", 4}}) {
    std::string direct = spec(gpu, gpn);
    const std::string npn = fmt::format("nics_per_node: {}", gpn);
    direct.replace(direct.find(npn), npn.size(), npn + ", scaleup_board: direct");
    auto parsed = parse_spec(direct, "d.yaml");
    ASSERT_TRUE(parsed.ok()) << format_diagnostics(parsed.errors());
    const auto errs = validate_spec(*parsed, *builtin_catalog());
    ASSERT_EQ(errs.size(), 1U) << gpu;
    EXPECT_EQ(errs[0].key, "cluster.scaleup_board");
  }
  // A value outside the closed set is refused where it is read, with the names it takes.
  std::string typo = spec("h100-sxm", 4);
  typo.replace(typo.find("nics_per_node: 4"), 16, "nics_per_node: 4, scaleup_board: direkt");
  auto bad = parse_spec(typo, "t.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(format_diagnostics(bad.errors())
                .find("cluster.scaleup_board: 'direkt' is not one of auto | nvswitch | direct"),
            std::string::npos)
      << format_diagnostics(bad.errors());
}

// NCCL's tuner rates an AMD host's LL below an Intel host's across nodes (llMaxBws' AMD row, 22.5
// against 39 GB/s at 2 nodes; tuning.cc@v2.29.7-1:171-172, 253-255): on 2 x 4 H100 behind 4 x 200G
// a 512 KiB all_gather runs LL on Intel hosts and LL128 on AMD ones (Snellius' AMD hosts measure
// 39.8 us there, nccl-public.csv line 414: LL's 28.7 us was 28 % short, LL128's 35.0 is 12 %).
// The vendor steers the choice only: a protocol forced runs alike on both hosts, and on one node,
// where NCCL reads the GPU's row, nothing changes.
TEST(Collective, AnAmdHostSteersNcclAwayFromLlAcrossNodes) {
  auto spec = [](int nodes, const char* host) {
    return fmt::format(
        "cluster: {{gpu: h100-sxm, nodes: {}, gpus_per_node: 4, nic: cx6-200g, nics_per_node: 4, "
        "nccl: 2.22.3, host_cpu: {}}}\n"
        "fabric: {{technology: infiniband, in_network_reduction: off}}\n",
        nodes, host);
  };
  SimOptions o;
  o.op = Op::kAllGather;
  const double bytes = 512 * 1024;
  const auto intel = setup(spec(2, "intel")), amd = setup(spec(2, "amd"));
  EXPECT_FALSE(intel.plan.host_amd);
  EXPECT_TRUE(amd.plan.host_amd);
  const SizeResult i = run(intel, o, bytes), a = run(amd, o, bytes);
  EXPECT_EQ(i.protocol, Protocol::kLL);
  EXPECT_EQ(a.protocol, Protocol::kLL128);
  SimOptions ll = o;
  ll.protocol = Protocol::kLL;
  EXPECT_DOUBLE_EQ(run(intel, ll, bytes).time_us, run(amd, ll, bytes).time_us);
  const SizeResult i1 = run(setup(spec(1, "intel")), o, bytes),
                   a1 = run(setup(spec(1, "amd")), o, bytes);
  EXPECT_EQ(i1.protocol, a1.protocol);
  EXPECT_DOUBLE_EQ(i1.time_us, a1.time_us);
  // auto is Intel on x86; a Grace GPU's host is the catalog's, not the spec's to name.
  EXPECT_FALSE(setup(spec(2, "auto")).plan.host_amd);
  auto gb = parse_spec(
      "cluster: {gpu: gb200, nodes: 18, nic: cx7-400g, host_cpu: amd}\n"
      "fabric: {technology: infiniband}\n",
      "g.yaml");
  ASSERT_TRUE(gb.ok()) << format_diagnostics(gb.errors());
  const auto errs = validate_spec(*gb, *builtin_catalog());
  ASSERT_EQ(errs.size(), 1U) << format_diagnostics(errs);
  EXPECT_EQ(errs[0].key, "cluster.host_cpu");
  EXPECT_NE(errs[0].message.find("Grace"), std::string::npos) << errs[0].message;
  auto typo = parse_spec(spec(2, "epyc"), "t.yaml");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(format_diagnostics(typo.errors())
                .find("cluster.host_cpu: 'epyc' is not one of auto | intel | amd"),
            std::string::npos)
      << format_diagnostics(typo.errors());
}

// Two planes split each 400G NIC into two 200G ports, which NCCL merges into one device and
// drives together (NCCL_IB_MERGE_NICS): the rings, trees, CollNet's reductions and alltoall's
// connections carry half of every hop on each plane, so a non-blocking fabric of two planes runs as fast as one. (Each
// channel on one plane used to put CollNet's every NIC on one port: half the busbw.)
TEST(Collective, TwoPlanesCarryHalfOfEveryHopEach) {
  auto spec = [](int planes) {
    return fmt::format(
        "cluster: {{gpu: h100-sxm, nodes: 32, nic: cx7-400g}}\n"
        "fabric: {{technology: infiniband, switch: qm9700, in_network_reduction: on, planes: "
        "{}}}\n",
        planes);
  };
  const auto one = setup(spec(1)), two = setup(spec(2));
  for (Op op : {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kBroadcast})
    for (Algorithm a : {Algorithm::kRing, Algorithm::kTree, Algorithm::kCollNet,
                        Algorithm::kCollNetChain, Algorithm::kNvlsTree}) {
      if (op != Op::kAllReduce && a != Algorithm::kRing) continue;
      SimOptions o;
      o.op = op;
      o.algorithm = a;
      const SizeResult r1 = run(one, o, kGiB), r2 = run(two, o, kGiB);
      EXPECT_NEAR(r2.busbw_gbs, r1.busbw_gbs, 0.02 * r1.busbw_gbs)
          << op_name(op) << " " << algorithm_name(a);
    }
  // alltoall's connections too (each drew one plane by its hash: the busier port paced the call,
  // 47.3 -> 38.0 GB/s on the seed's 128 nodes).
  SimOptions a2a;
  a2a.op = Op::kAlltoall;
  const SizeResult r1 = run(one, a2a, kGiB), r2 = run(two, a2a, kGiB);
  EXPECT_NEAR(r2.busbw_gbs, r1.busbw_gbs, 0.02 * r1.busbw_gbs);
}

// One GPU runs no collective: the spec's cluster is what to change, not a --nodes flag the user
// never gave (which a --nodes of 1 GPU still is).
TEST(Collective, OneGpuIsTheSpecsErrorUnlessNodesWasGiven) {
  const auto one = setup(
      "cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 1, nic: cx7-400g, nics_per_node: 1}\n"
      "fabric: {technology: infiniband}\n");
  SimOptions o;
  auto m = CollectiveModel::build(Fabric::build(one.plan, one.cat), one.plan, o);
  ASSERT_FALSE(m.ok());
  const std::string text = format_diagnostics(m.errors());
  EXPECT_NE(text.find("the cluster has 1 GPU: a collective needs at least 2"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("--nodes"), std::string::npos) << text;
  o.nodes = 1;
  auto flagged = CollectiveModel::build(Fabric::build(one.plan, one.cat), one.plan, o);
  ASSERT_FALSE(flagged.ok());
  EXPECT_EQ(flagged.errors()[0].key, "--nodes");
}

TEST(Collective, NvlsGathersOnOneNodeAndRefusesAcross) {
  const auto s = setup(ib("h100-sxm", 1, "cx7-400g", "qm9700"));
  for (Op op : {Op::kAllGather, Op::kReduceScatter}) {
    SimOptions nv, ring;
    nv.op = ring.op = op;
    nv.algorithm = Algorithm::kNvls;
    ring.algorithm = Algorithm::kRing;
    const SizeResult n = run(s, nv, 8 * kGiB), r = run(s, ring, 8 * kGiB);
    EXPECT_EQ(n.algorithm, Algorithm::kNvls);
    // The data alone gives 7/8 x the NVLS efficiency; each loop's wait on the last one's flags
    // (pipeline_run's exposed step) takes a few percent more.
    const double ratio = n.busbw_gbs / r.busbw_gbs, data = 7.0 / 8 * nccl::kNvlsEfficiencyHopper;
    EXPECT_LT(ratio, data) << op_name(op);
    EXPECT_GT(ratio, 0.9 * data) << op_name(op);
    SimOptions any;
    any.op = op;
    EXPECT_EQ(run(s, any, 8 * kGiB).algorithm, Algorithm::kRing) << op_name(op);
    // NCCL 2.18 runs only the ring for them (tuning.cc@v2.18.6-1:168-169).
    nv.nccl = NcclRelease::kV2_18;
    const Fabric f = Fabric::build(s.plan, s.cat);
    EXPECT_NE(nvls_unavailable(f, s.plan, nv).find("NCCL 2.19+"), std::string::npos);
  }
  const auto two = setup(ib("h100-sxm", 2, "cx7-400g", "qm9700"));
  SimOptions nv;
  nv.op = Op::kAllGather;
  nv.algorithm = Algorithm::kNvls;
  const Fabric f2 = Fabric::build(two.plan, two.cat);
  EXPECT_NE(nvls_unavailable(f2, two.plan, nv).find("only through CollNet"), std::string::npos);
}

// Across nodes with SHARP and a NIC per GPU, NVLS all_gather / reduce_scatter run over CollNet
// (device/all_gather.h@v2.29.7-1:319-395, "NVLS + IB SHARP"): NVLink carries the one-node
// loads, each GPU's NIC its rail's share. On 4 H100 nodes of 8 x 400G the NICs (8 x 50 GB/s a
// node) have more room than NVLS's NVLink share, so the bus bandwidth is near one node's; with
// 4 NICs a node (no NIC per GPU) NCCL refuses it, and says why.
TEST(Collective, NvlsGathersAcrossNodesOverCollNet) {
  // 4 H100 nodes with SHARP and `nics` NICs of `nic` a node.
  auto sharp = [](const std::string& nic, int nics) {
    return setup(
        fmt::format("cluster: {{gpu: h100-sxm, nodes: 4, nic: {}, nics_per_node: {}}}\n"
                    "fabric: {{technology: infiniband, switch: qm9700, "
                    "in_network_reduction: on}}\n",
                    nic, nics));
  };
  const auto s = sharp("cx7-400g", 8), one = setup(ib("h100-sxm", 1, "cx7-400g", "qm9700"));
  SimOptions nv;
  nv.algorithm = Algorithm::kNvls;
  for (Op op : {Op::kAllGather, Op::kReduceScatter}) {
    nv.op = op;
    const SizeResult multi = run(s, nv, 8 * kGiB), alone = run(one, nv, 8 * kGiB);
    EXPECT_EQ(multi.algorithm, Algorithm::kNvls) << op_name(op);
    EXPECT_NEAR(multi.algbw_gbs / alone.algbw_gbs, 1.0, 0.08) << op_name(op);
  }
  // 8 x 200G: the NICs' 8 x 25 GB/s a node is under NVLS's share, and paces it.
  nv.op = Op::kAllGather;
  const SizeResult paced = run(sharp("cx6-200g", 8), nv, 8 * kGiB);
  EXPECT_LT(paced.algbw_gbs, 8 * 25.0);
  EXPECT_LT(paced.algbw_gbs, 0.8 * run(one, nv, 8 * kGiB).algbw_gbs);
  const auto four = sharp("cx7-400g", 4);
  const Fabric f4 = Fabric::build(four.plan, four.cat);
  EXPECT_NE(nvls_unavailable(f4, four.plan, nv).find("1:1 GPU:NIC"), std::string::npos);
}

// With CollNet on and several GPUs a node the communicator adds half its channels, copies of
// the first, before NCCL_MAX_NCHANNELS and NCCL_MIN_NCHANNELS apply (connect.cc@v2.29.7-1:
// 457-462, 483-492): 8 x 400G B200 nodes keep 16 without SHARP and run 24 with it; capped at 8
// they run 8, raised to 32 they run 32; one GPU a node adds none.
TEST(Collective, CollNetAddsHalfTheChannelsBeforeTheLimits) {
  auto b200 = [](bool sharp, int gpus) {
    return setup(fmt::format(
        "cluster: {{gpu: b200, nodes: 4, gpus_per_node: {0}, nic: cx7-400g, nics_per_node: {0}}}\n"
        "fabric: {{technology: infiniband, switch: qm9700, in_network_reduction: {1}}}\n",
        gpus, sharp ? "on" : "off"));
  };
  auto channels = [](const auto& s, int min_ch, int max_ch) {
    const Fabric f = Fabric::build(s.plan, s.cat);
    SimOptions o;
    o.min_channels = min_ch;
    o.max_channels = max_ch;
    auto m = CollectiveModel::build(f, s.plan, o);
    EXPECT_TRUE(m.ok());
    return m.ok() ? m->comm_channels() : 0;
  };
  const auto on = b200(true, 8), off = b200(false, 8);
  EXPECT_EQ(channels(off, 0, 0), 16);
  EXPECT_EQ(channels(on, 0, 0), 24);
  EXPECT_EQ(channels(on, 0, 8), 8);
  EXPECT_EQ(channels(on, 32, 0), 32);
  EXPECT_EQ(channels(b200(true, 1), 0, 0), channels(b200(false, 1), 0, 0));
}

// NVLS all_reduce over CollNet on B200: the NVLink side would carry more than the 8 x 400G NICs,
// so the NICs' path paces it, and on it every loop's in-network operations are paid in series
// with the bytes (collnet_op_us, fitted on CollNet Chain; no published NVLS-over-SHARP run
// checks this). With the operations the NICs' share of the line drops by their time's share.
TEST(Collective, NvlsOverCollNetOnB200IsPacedByTheNicsPath) {
  const auto s = setup(sharp_ib("b200", 8));
  SimOptions nv;
  nv.algorithm = Algorithm::kNvls;
  const SizeResult r = run(s, nv, 16 * kGiB);
  EXPECT_EQ(r.algorithm, Algorithm::kNvls);
  const Fabric f = Fabric::build(s.plan, s.cat);
  auto m = CollectiveModel::build(f, s.plan, nv);
  ASSERT_TRUE(m.ok());
  double net_spb = 0, flow_spb = 0;
  for (const auto& a : m->algorithms())
    if (a.algorithm == Algorithm::kNvls) {
      net_spb = a.network_seconds_per_byte;
      flow_spb = a.seconds_per_byte;
    }
  ASSERT_GT(net_spb, 0);
  // The NICs alone would give 1/net_spb; the flows (NVLink too) no less than that here.
  const double nics_alone = 1e-9 / net_spb;
  EXPECT_NEAR(1e-9 / flow_spb, nics_alone, 0.02 * nics_alone);
  EXPECT_LT(r.algbw_gbs, 0.9 * nics_alone);
  EXPECT_GT(r.algbw_gbs, 0.6 * nics_alone);
  // NCCL's tuner rates CollNet Chain by its NVLink part, where B200's NVLink outruns the NICs
  // that pace NVLS: with both on, `auto` runs Chain at large sizes; on H100, whose NVLS is
  // NVLink-bound, NVLS stays.
  EXPECT_EQ(run(s, {}, 16 * kGiB).algorithm, Algorithm::kCollNetChain);
  EXPECT_EQ(run(setup(sharp_ib("h100-sxm", 8)), {}, 16 * kGiB).algorithm, Algorithm::kNvls);
}

// CollNet Chain runs all_reduce only and needs what Direct needs (SHARP on, a reduction tree);
// NCCL refuses CollNet with more than 8 GPUs a node and NVLS's all_gather with more than 32:
// an NVL72 rack, one node to NCCL, gets neither.
TEST(Collective, CollNetChainAndTheArityLimits) {
  const std::string sharp = sharp_ib("b200", 4);
  const auto s = setup(sharp);
  const Fabric f = Fabric::build(s.plan, s.cat);
  auto reason = [](const Fabric& fab, const Plan& plan, Op op, Algorithm a) {
    SimOptions o;
    o.op = op;
    auto m = CollectiveModel::build(fab, plan, o);
    EXPECT_TRUE(m.ok());
    if (m.ok())
      for (const auto& x : m->algorithms())
        if (x.algorithm == a) return x.available ? std::string() : x.unavailable_reason;
    return std::string("?");
  };
  EXPECT_EQ(reason(f, s.plan, Op::kAllReduce, Algorithm::kCollNetChain), "");
  EXPECT_EQ(reason(f, s.plan, Op::kAllGather, Algorithm::kCollNetChain), "all_reduce only");
  const auto off = setup(ib("b200", 4, "cx7-400g", "qm9700"));
  const Fabric f_off = Fabric::build(off.plan, off.cat);
  EXPECT_NE(reason(f_off, off.plan, Op::kAllReduce, Algorithm::kCollNetChain)
                .find("in-network reduction is off"),
            std::string::npos);
  const auto rack = setup(sharp_ib("gb200", 36));
  const Fabric fr = Fabric::build(rack.plan, rack.cat);
  for (Algorithm a : {Algorithm::kCollNet, Algorithm::kCollNetChain})
    EXPECT_NE(reason(fr, rack.plan, Op::kAllReduce, a).find("at most 8 GPUs a node"),
              std::string::npos)
        << algorithm_name(a);
  EXPECT_NE(reason(fr, rack.plan, Op::kAllGather, Algorithm::kNvls).find("at most 32 GPUs"),
            std::string::npos);
}

// NVLS all_reduce across nodes runs over CollNet: with SHARP on, NVLS is available on 16 H100
// nodes, its time is paced by the NVSwitch (NVLink at the NVLS efficiency, as on one node) or the
// NICs' shares to the reduction root, whichever is slower, and it beats CollNet Direct, whose
// NCCL terms take x.85 and the GPU/NIC factor; without SHARP it is refused with the reason.
TEST(Collective, NvlsRunsAcrossNodesOverCollNet) {
  const std::string sharp = sharp_ib("h100-sxm", 16);
  const auto s = setup(sharp);
  SimOptions nv, one_node;
  nv.algorithm = Algorithm::kNvls;
  const SizeResult multi = run(s, nv, 8 * kGiB);
  EXPECT_EQ(multi.algorithm, Algorithm::kNvls);
  const auto single = setup(ib("h100-sxm", 1, "cx7-400g", "qm9700"));
  const SizeResult alone = run(single, nv, 8 * kGiB);
  // Bus bandwidth 2(N-1)/N x algbw: the same NVLink-bound algbw as one node's, within a few %.
  EXPECT_NEAR(multi.algbw_gbs / alone.algbw_gbs, 1.0, 0.05);
  EXPECT_EQ(run(s, {}, 8 * kGiB).algorithm, Algorithm::kNvls);
  SimOptions cn;
  cn.algorithm = Algorithm::kCollNet;
  EXPECT_GT(multi.busbw_gbs, run(s, cn, 8 * kGiB).busbw_gbs);
  const auto off = setup(ib("h100-sxm", 16, "cx7-400g", "qm9700"));
  const Fabric f = Fabric::build(off.plan, off.cat);
  EXPECT_NE(nvls_unavailable(f, off.plan, nv).find("in-network reduction is off"),
            std::string::npos);
}

// CollNet Direct all_gather (NCCL 2.19+): each head's NIC carries its rail's shards through the
// in-network tree, at NCCL's x.9 on the network (tuning.cc@v2.29.7-1:316); it needs a NIC per
// GPU and is refused otherwise, and in 2.18.
TEST(Collective, CollNetGathersWithANicPerGpu) {
  const std::string sharp = sharp_ib("b200", 4);
  const auto s = setup(sharp);
  SimOptions cn;
  cn.op = Op::kAllGather;
  cn.algorithm = Algorithm::kCollNet;
  const SizeResult r = run(s, cn, 32 * kGiB);
  EXPECT_EQ(r.algorithm, Algorithm::kCollNet);
  // 8 NICs a node at 400G: algbw at most 8 x 50 GB/s x .9; busbw (n-1)/n of it.
  EXPECT_LT(r.algbw_gbs, 8 * 50 * nccl::kCollNetDirectGatherNetFactor);
  EXPECT_GT(r.algbw_gbs, 0.8 * 8 * 50 * nccl::kCollNetDirectGatherNetFactor);
  const Fabric f = Fabric::build(s.plan, s.cat);
  SimOptions old = cn;
  old.nccl = NcclRelease::kV2_18;
  auto m = CollectiveModel::build(f, s.plan, old);
  ASSERT_TRUE(m.ok());
  for (const auto& a : m->algorithms()) {
    if (a.algorithm == Algorithm::kCollNet) {
      EXPECT_NE(a.unavailable_reason.find("NCCL 2.19+"), std::string::npos);
    }
  }
  const auto four = setup(
      "cluster: {gpu: b200, nodes: 4, nic: cx7-400g, nics_per_node: 4}\nfabric: {technology: "
      "infiniband, switch: qm9700, in_network_reduction: on}\n");
  const Fabric f4 = Fabric::build(four.plan, four.cat);
  auto m4 = CollectiveModel::build(f4, four.plan, cn);
  ASSERT_TRUE(m4.ok());
  for (const auto& a : m4->algorithms()) {
    if (a.algorithm == Algorithm::kCollNet) {
      EXPECT_NE(a.unavailable_reason.find("a NIC per GPU"), std::string::npos)
          << a.unavailable_reason;
    }
  }
}

// nccl-tests -g N: one host thread issues every call on N GPUs, so back-to-back calls are at
// least N host issues apart; with one GPU a process the floor is below any collective's time.
TEST(Collective, OneThreadDrivingEightGpusSetsAHostFloor) {
  const auto s = setup(ib("h100-sxm", 1, "cx7-400g", "qm9700"));
  SimOptions g8;
  g8.gpus_per_thread = 8;
  const SizeResult alone = run(s, {}, 128), driven = run(s, g8, 128);
  EXPECT_LT(alone.time_us, 8 * nccl::kHostIssueUsPerGpu);
  EXPECT_DOUBLE_EQ(driven.time_us, 8 * nccl::kHostIssueUsPerGpu);
  EXPECT_EQ(driven.bottleneck, "host launch");
  EXPECT_GT(driven.latency_us, alone.latency_us);
  // At 1 GiB the GPUs are the bound: the same time either way.
  EXPECT_DOUBLE_EQ(run(s, g8, kGiB).time_us, run(s, {}, kGiB).time_us);
}

// An alltoall is a send and a receive to every rank, each planned on the host before the kernel
// runs (nccl_constants.h kHostP2pTaskUs): on a whole NVL72 rack at 512 KiB that planning, not the
// GPUs, paces back-to-back calls; on one tray it stays under the GPUs' time.
TEST(Collective, AnAlltoallsHostPlanningGrowsWithItsRanks) {
  SimOptions a2a;
  a2a.op = Op::kAlltoall;
  const SizeResult rack = run(setup(ib("gb200", 18, "cx7-400g", "qm9700")), a2a, 512 * 1024);
  EXPECT_DOUBLE_EQ(rack.time_us, host_issue_us(Op::kAlltoall, 72, 1));
  EXPECT_EQ(rack.bottleneck, "host launch");
  const SizeResult tray = run(setup(ib("gb200", 1, "cx7-400g", "qm9700")), a2a, 512 * 1024);
  EXPECT_GT(tray.time_us, host_issue_us(Op::kAlltoall, 4, 1));
  EXPECT_NE(tray.bottleneck, "host launch");
  EXPECT_GT(rack.time_us, tray.time_us);
}

TEST(Collective, EcmpCollisionsMultiQpAndAdaptiveRouting) {
  // A non-blocking RoCE Clos of top-of-rack leaves: every ring hop between racks crosses a
  // spine, hashed per flow.
  const auto s = setup(
      "cluster: {gpu: h100-sxm, nodes: 128, nic: cx7-400g}\nfabric: {technology: roce, switch: "
      "sn5600, rail_optimized: false}\n");
  auto busbw = [&](LoadBalancing lb) {
    SimOptions o;
    o.algorithm = Algorithm::kRing;
    o.load_balancing = lb;
    return run(s, o, 8 * kGiB);
  };
  const SizeResult ecmp = busbw(LoadBalancing::kEcmp), qp = busbw(LoadBalancing::kEcmpMultiQp),
                   ar = busbw(LoadBalancing::kAdaptive);
  EXPECT_LT(ecmp.busbw_gbs, 0.85 * ar.busbw_gbs);
  EXPECT_GT(qp.busbw_gbs, ecmp.busbw_gbs * 1.1);
  EXPECT_GE(ar.busbw_gbs, qp.busbw_gbs * 0.999);
  // The collision factor is against a perfect spread in every mode: per-flow ECMP's few QPs
  // collide most, 4 QPs a connection less, adaptive routing not at all.
  EXPECT_GT(ecmp.ecmp_collision, 1.5);
  EXPECT_LT(qp.ecmp_collision, ecmp.ecmp_collision);
  EXPECT_LT(ar.ecmp_collision, qp.ecmp_collision);
  EXPECT_NEAR(ar.ecmp_collision, 1.0, 1e-6);
}

// A small three-tier fabric (64 nodes, 2 pods, 40-port switches), not rail-optimized: every
// alltoall connection between pods is hashed at a leaf and at a spine.
Setup three_tier(const char* seed) {
  return setup(fmt::format(
      "cluster: {{gpu: h100-sxm, nodes: 64, nic: cx6-200g}}\nfabric: {{technology: infiniband, "
      "switch: qm8700, topology: clos3, rail_optimized: false, in_network_reduction: off, "
      "ecmp_hash: {{seed: {}}}}}\n",
      seed));
}

SizeResult alltoall(const Setup& s, LoadBalancing lb) {
  SimOptions o;
  o.op = Op::kAlltoall;
  o.load_balancing = lb;
  return run(s, o, kGiB);
}

// One seed at every switch polarizes the spines' uplinks (the flows a leaf hashed to a spine
// all leave it by one uplink); a seed per switch spreads them.
TEST(Collective, OneSeedPolarizesTheSpinesAndSeedsPerSwitchDoNot) {
  const SizeResult same = alltoall(three_tier("same"), LoadBalancing::kEcmp);
  const SizeResult own = alltoall(three_tier("per_switch"), LoadBalancing::kEcmp);
  EXPECT_GT(same.ecmp_collision, 4.0);
  EXPECT_LT(own.ecmp_collision, 2.5);
  EXPECT_EQ(same.bottleneck, "spine-core uplinks");
  EXPECT_GT(own.busbw_gbs, 1.8 * same.busbw_gbs);
}

// Several QPs per connection give the switches more source ports to hash: links are loaded
// more evenly and the alltoall is faster; adaptive routing is never slower than hashing.
TEST(Collective, MultiQpSpreadsMoreEvenlyAndAdaptiveIsNoSlower) {
  const auto s = three_tier("per_switch");
  const SizeResult one = alltoall(s, LoadBalancing::kEcmp);
  const SizeResult qps = alltoall(s, LoadBalancing::kEcmpMultiQp);
  const SizeResult ar = alltoall(s, LoadBalancing::kAdaptive);
  EXPECT_LT(qps.ecmp_collision, one.ecmp_collision);
  EXPECT_GT(qps.busbw_gbs, one.busbw_gbs);
  EXPECT_LE(ar.time_us, one.time_us);
  EXPECT_LE(ar.time_us, qps.time_us * 1.001);
}

// Adaptive routing sends each part of a flow over the least-loaded port of every switch: the
// links of each switch carry even shares, so the collision factor is 1 whatever the hash seed,
// for a ring's flows as for a tree's, whose inner nodes carry more than the leaves' (no
// collision: each switch is held to its own even share). Hashing the same flows collides.
TEST(Collective, AdaptiveRoutingBalancesEverySwitchWhateverTheSeed) {
  const auto s = three_tier("per_switch");
  for (const Algorithm a : {Algorithm::kRing, Algorithm::kTree}) {
    SCOPED_TRACE(algorithm_name(a));
    SimOptions o;
    o.algorithm = a;
    double first = 0;
    for (const uint64_t seed : {1, 2, 3}) {
      o.seed = seed;
      o.load_balancing = LoadBalancing::kAdaptive;
      const SizeResult ar = run(s, o, kGiB);
      EXPECT_NEAR(ar.ecmp_collision, 1.0, 1e-6);
      if (seed == 1) first = ar.busbw_gbs;
      EXPECT_DOUBLE_EQ(ar.busbw_gbs, first);
      o.load_balancing = LoadBalancing::kEcmp;
      EXPECT_GT(run(s, o, kGiB).ecmp_collision, 1.2);
    }
  }
  // An alltoall's connections, each in 4 parts: balanced as well, where hashing them collides.
  EXPECT_NEAR(alltoall(s, LoadBalancing::kAdaptive).ecmp_collision, 1.0, 1e-6);
  EXPECT_GT(alltoall(s, LoadBalancing::kEcmp).ecmp_collision, 1.2);
}

// Where no switch-to-switch link carries a collective (one node; every node under one leaf) there
// is no collision factor (0, printed "-"); across spines there is, and it is at least 1.
TEST(Collective, NoCollisionFactorWithoutSwitchToSwitchTraffic) {
  SimOptions o;
  EXPECT_EQ(run(setup(ib("h100-sxm", 1, "cx7-400g", "qm9700")), o, kGiB).ecmp_collision, 0);
  EXPECT_EQ(run(setup(ib("h100-sxm", 2, "cx7-400g", "qm9700")), o, kGiB).ecmp_collision, 0);
  const SizeResult spines = run(three_tier("per_switch"), o, kGiB);
  EXPECT_GE(spines.ecmp_collision, 1.0);
}

// An in-network reduction's flows go to their switch, one link up from each leaf, whatever the
// load balancing: no mode spreads them, so none reads a collision (its links' bytes are alike).
TEST(Collective, InNetworkReductionFlowsAreNoCollision) {
  const auto s = setup(sharp_ib("h100-sxm", 64));
  for (const Algorithm a : {Algorithm::kCollNet, Algorithm::kCollNetChain}) {
    SCOPED_TRACE(algorithm_name(a));
    SimOptions o;
    o.algorithm = a;
    for (const LoadBalancing lb :
         {LoadBalancing::kEcmp, LoadBalancing::kEcmpMultiQp, LoadBalancing::kAdaptive}) {
      o.load_balancing = lb;
      const SizeResult r = run(s, o, kGiB);
      EXPECT_EQ(r.algorithm, a);
      EXPECT_NEAR(r.ecmp_collision, 1.0, 1e-6);
    }
  }
}

// NCCL's tuner picks by its closed form; where the pipeline makes its pick slow (tree LL's fill
// at 128 KiB on 8 nodes: LL's low rate over the tree's 2 x log2(8) network stages, which LL128's
// rate crosses faster) the size reports the faster choice, which NCCL_PROTO would force; never
// where the choice was forced already. NCCL 2.28: from v2.29 the scheduler's cells of 32 KiB of
// traffic leave LL128 8 of its 16 channels at 128 KiB, and LL is not slower there.
TEST(Collective, ReportsAChoiceFasterThanTheTunersPick) {
  const auto s = setup(
      "cluster: {gpu: h100-sxm, nodes: 8, nic: cx7-400g, nccl: '2.28'}\n"
      "fabric: {technology: roce, topology: clos2, switch: arista-7060x6}\n");
  const Fabric f = Fabric::build(s.plan, s.cat);
  auto with_choice = [&](SimOptions o, double bytes) {
    auto m = CollectiveModel::build(f, s.plan, o);
    EXPECT_TRUE(m.ok()) << format_diagnostics(m.errors());
    SizeResult r = m->at(bytes);
    m->add_faster_choice(r);
    return r;
  };
  const SizeResult r = with_choice({}, 128 * 1024);
  EXPECT_EQ(r.algorithm, Algorithm::kTree);
  EXPECT_EQ(r.protocol, Protocol::kLL);
  ASSERT_GT(r.faster_time_us, 0);
  EXPECT_EQ(r.faster_protocol, Protocol::kLL128);
  EXPECT_LT(r.faster_time_us, r.time_us * (1 - kFasterChoiceShare));
  SimOptions forced;
  forced.protocol = Protocol::kLL;
  EXPECT_EQ(with_choice(forced, 128 * 1024).faster_time_us, 0);
  // Where the pick is the fastest, nothing.
  EXPECT_EQ(with_choice({}, 8 * kGiB).faster_time_us, 0);
}

// Sendrecv across nodes under 2.21-2.28 runs on the peer's 2 p2p channels (14 GB/s each, under
// the 400G NIC's rate): they, not the NIC's link, pace it, and --explain says so.
TEST(Collective, SendrecvAcrossNodesIsPacedByItsChannels) {
  const auto s = setup(
      "cluster: {gpu: h100-sxm, nodes: 2, nic: cx7-400g, nccl: '2.28'}\n"
      "fabric: {technology: infiniband, switch: qm9700, in_network_reduction: off}\n");
  SimOptions o;
  o.op = Op::kSendRecv;
  const SizeResult r = run(s, o, kGiB);
  EXPECT_EQ(r.bottleneck, "p2p channels");
  EXPECT_LT(r.busbw_gbs, 47.0);
  // Inside one node NVLink paces it.
  const SizeResult one = run(setup(ib("h100-sxm", 1, "cx7-400g", "qm9700")), o, kGiB);
  EXPECT_NE(one.bottleneck, "p2p channels");
}

TEST(Collective, OversubscriptionLowersCrossUnitBandwidth) {
  auto alltoall = [&](const char* ratio) {
    const auto s = setup(
        fmt::format("cluster: {{gpu: h100-sxm, nodes: 128, nic: cx7-400g}}\nfabric: {{technology: "
                    "infiniband, switch: qm9700, oversubscription: {}}}\n",
                    ratio));
    SimOptions o;
    o.op = Op::kAlltoall;
    return run(s, o, kGiB).busbw_gbs;
  };
  const double full = alltoall("1"), half = alltoall("\"2:1\"");
  EXPECT_LT(half, full * 0.8);
  EXPECT_GT(half, full * 0.4);
}

TEST(Collective, AlltoallFollowsNodesOverNodesMinusOne) {
  // nccl-tests #130: busbw ~ N/(N-1) x per-GPU network bandwidth, N = nodes.
  const auto s = setup(ib("h100-sxm", 4, "cx7-400g", "qm9700"));
  SimOptions o;
  o.op = Op::kAlltoall;
  const double busbw = run(s, o, 8 * kGiB).busbw_gbs;
  EXPECT_NEAR(busbw, 4.0 / 3.0 * 47.0, 47.0 * 0.1);
}

// Posting a send and a receive per peer overlaps the data: at 1 GiB on 512 nodes (4,096 ranks,
// 6 ms of posting to the 4,088 network peers) the alltoall still runs at the per-GPU network
// bandwidth, while a tiny one pays the posting in full.
TEST(Collective, AlltoallPostingOverlapsTheData) {
  const auto s = setup(ib("h100-sxm", 512, "cx7-400g", "qm9700"));
  SimOptions o;
  o.op = Op::kAlltoall;
  EXPECT_NEAR(run(s, o, kGiB).busbw_gbs, 47.0, 47.0 * 0.1);
  EXPECT_GE(run(s, o, 8).time_us, alltoall_posting_us(511 * 8));
}

// On a non-blocking three-tier fabric (1,024 nodes, 8 pods: the per-leaf-pair aggregation)
// alltoall still runs at the per-GPU network bandwidth: the aggregate takes every uplink of the
// source leaf, so the spine-core links are loaded evenly.
TEST(Collective, AlltoallOnThreeTiersRunsAtThePerGpuBandwidth) {
  const auto s = setup(ib("h100-sxm", 1024, "cx7-400g", "qm9700"));
  ASSERT_EQ(s.plan.topo.kind, TopologyKind::kClos3);
  SimOptions o;
  o.op = Op::kAlltoall;
  const SizeResult r = run(s, o, kGiB);
  EXPECT_NEAR(r.busbw_gbs, 47.0, 47.0 * 0.1);
  EXPECT_GE(r.ecmp_collision, 1.0);
  EXPECT_LT(r.ecmp_collision, 1.15);
}

TEST(Collective, FailedLinksChangeTheResult) {
  const auto s = setup(ib("h100-sxm", 64, "cx7-400g", "qm9700"));
  SimOptions o;
  o.op = Op::kAlltoall;
  Fabric f = Fabric::build(s.plan, s.cat);
  const double before = run(s, o, kGiB, &f).busbw_gbs;
  // Fail three quarters of the uplinks of every leaf.
  for (size_t i = 0; i < f.links().size(); ++i)
    if (f.is_uplink(static_cast<int>(i)) && i % 8 < 6) f.fail_link(static_cast<int>(i));
  const double after = run(s, o, kGiB, &f).busbw_gbs;
  EXPECT_LT(after, before * 0.75);
}

TEST(Collective, EveryOperationRuns) {
  const auto s = setup(ib("h100-sxm", 4, "cx7-400g", "qm9700"));
  for (const auto& name : op_names()) {
    SimOptions o;
    o.op = *parse_op(name);
    const SizeResult r = run(s, o, 64.0 * (1 << 20));
    EXPECT_GT(r.busbw_gbs, 1) << name;
    EXPECT_TRUE(std::isfinite(r.time_us)) << name;
  }
  // PAT on one GPU per node (NCCL's domain for it).
  const auto one = setup(
      "cluster: {gpu: h100-sxm, nodes: 16, gpus_per_node: 1, nic: cx7-400g, nics_per_node: 1}\n");
  SimOptions o;
  o.op = Op::kAllGather;
  o.algorithm = Algorithm::kPat;
  EXPECT_GT(run(one, o, kGiB).busbw_gbs, 30);
}

TEST(Collective, SharpCarriesEachByteOnce) {
  const auto s = setup(sharp_ib("h100-sxm", 8));
  SimOptions o;
  o.algorithm = Algorithm::kCollNet;
  const double sharp = run(s, o, 8 * kGiB).busbw_gbs;
  // CoreWeave: 386.6 GB/s on 8 x 8 H100 with SHARP (MODELING.md); NCCL's CollNet Direct terms
  // (x.85 on Hopper, no constant of gpufabric's) put it 10 % under.
  EXPECT_NEAR(sharp, 386.6, 386.6 * 0.15);
}

// calibrate --fit solves the same flows under many link efficiencies: a model whose kept flows
// are solved again (relink) is the model a fresh build with the new profile gives, for every
// algorithm (the in-network ones' NIC path and NVLink part alone, PAT's steps, NVLS's share of
// NVLink, CollNet Chain's copy of Direct) and every size; and it is not the old one. Without room
// to keep them a build keeps none and is the model it would be without keeping.
TEST(Collective, RelinkedFlowsGiveTheFreshBuildsModel) {
  CalibrationProfile other;
  other.network_efficiency = 0.7;
  other.scaleup_efficiency = 0.9;
  other.network_step_latency_us = 3;
  other.algorithm_factor[static_cast<int>(Algorithm::kTree)] = 1.1;
  const auto sharp = setup(sharp_ib("b200", 4));
  const auto plain = setup(ib("h100-sxm", 4, "cx7-400g", "qm9700"));
  const auto one = setup(
      "cluster: {gpu: h100-sxm, nodes: 8, gpus_per_node: 1, nic: cx7-400g, nics_per_node: 1}\n");
  const auto node = setup(ib("h100-sxm", 1, "cx7-400g", "qm9700"));
  // A profile that leaves the efficiencies to the model: relinked, the NVLink's capacity is the
  // GPU generation's (Blackwell's here), as a fresh build's.
  CalibrationProfile ring_only;
  ring_only.algorithm_factor[static_cast<int>(Algorithm::kRing)] = 1.1;
  const auto blackwell = setup(ib("b200", 1, "cx7-400g", "qm9700"));
  struct Case {
    const gf::Setup* s;
    Op op;
    std::optional<Algorithm> algo;
    const CalibrationProfile* profile = nullptr;  // nullptr: `other`
  };
  const std::vector<Case> cases = {{&sharp, Op::kAllReduce, {}},
                                   {&sharp, Op::kAllGather, {}},
                                   {&plain, Op::kAllReduce, {}},
                                   {&plain, Op::kBroadcast, {}},
                                   {&plain, Op::kAlltoall, {}},
                                   {&plain, Op::kSendRecv, {}},
                                   {&one, Op::kAllGather, Algorithm::kPat},
                                   {&node, Op::kAllReduce, {}},
                                   {&node, Op::kAllGather, {}},
                                   {&blackwell, Op::kAllGather, {}, &ring_only}};
  for (const Case& c : cases) {
    const CalibrationProfile& profile = c.profile ? *c.profile : other;
    const std::string what = fmt::format("{} on {} nodes", op_name(c.op), c.s->plan.nodes);
    const Fabric f = Fabric::build(c.s->plan, c.s->cat);
    SimOptions o;
    o.op = c.op;
    o.algorithm = c.algo;
    o.calibration = CalibrationProfile{};
    auto plain_model = CollectiveModel::build(f, c.s->plan, o);
    ASSERT_TRUE(plain_model.ok()) << what;
    EXPECT_FALSE(plain_model->relink(f, profile)) << what << ": no flows kept";
    o.keep_flows = true;
    // No room to keep them (a byte): none kept, the model as without keep_flows.
    o.kept_flows_budget_bytes = 1;
    auto tight = CollectiveModel::build(f, c.s->plan, o);
    ASSERT_TRUE(tight.ok()) << what;
    EXPECT_EQ(tight->kept_flow_bytes(), 0u) << what;
    EXPECT_FALSE(tight->relink(f, profile)) << what;
    EXPECT_DOUBLE_EQ(tight->at(kGiB).time_us, plain_model->at(kGiB).time_us) << what;
    o.kept_flows_budget_bytes = 0;
    auto kept = CollectiveModel::build(f, c.s->plan, o);
    ASSERT_TRUE(kept.ok()) << what;
    EXPECT_GT(kept->kept_flow_bytes(), 0u) << what;
    const CollectiveModel before = *kept;
    ASSERT_TRUE(kept->relink(f, profile)) << what;
    o.keep_flows = false;
    o.calibration = profile;
    auto fresh = CollectiveModel::build(f, c.s->plan, o);
    ASSERT_TRUE(fresh.ok()) << what;
    ASSERT_EQ(kept->algorithms().size(), fresh->algorithms().size()) << what;
    for (size_t i = 0; i < fresh->algorithms().size(); ++i) {
      const AlgorithmModel& a = kept->algorithms()[i];
      const AlgorithmModel& b = fresh->algorithms()[i];
      const std::string alg = what + " " + algorithm_name(b.algorithm);
      EXPECT_EQ(a.algorithm, b.algorithm) << alg;
      EXPECT_EQ(a.available, b.available) << alg;
      EXPECT_DOUBLE_EQ(a.seconds_per_byte, b.seconds_per_byte) << alg;
      EXPECT_DOUBLE_EQ(a.network_seconds_per_byte, b.network_seconds_per_byte) << alg;
      EXPECT_DOUBLE_EQ(a.intra_seconds_per_byte, b.intra_seconds_per_byte) << alg;
      EXPECT_EQ(a.bottleneck, b.bottleneck) << alg;
      EXPECT_DOUBLE_EQ(a.bottleneck_utilization, b.bottleneck_utilization) << alg;
      EXPECT_EQ(a.network_paced, b.network_paced) << alg;
      EXPECT_DOUBLE_EQ(a.ecmp_collision, b.ecmp_collision) << alg;
    }
    int changed = 0;
    for (double bytes : size_sweep(1024, 8 * kGiB, 4)) {
      const SizeResult r = kept->at(bytes), w = fresh->at(bytes), was = before.at(bytes);
      EXPECT_DOUBLE_EQ(r.time_us, w.time_us) << what << " at " << bytes;
      EXPECT_EQ(r.algorithm, w.algorithm) << what << " at " << bytes;
      EXPECT_EQ(r.protocol, w.protocol) << what << " at " << bytes;
      EXPECT_EQ(r.bottleneck, w.bottleneck) << what << " at " << bytes;
      changed += r.time_us != was.time_us;
    }
    EXPECT_GT(changed, 0) << what << ": the new efficiencies change the times";
  }
}

TEST(Collective, SizeSweepLikeNcclTests) {
  const auto v = size_sweep(8, 8 * kGiB, 2);
  EXPECT_EQ(v.size(), 31u);
  EXPECT_DOUBLE_EQ(v.back(), 8 * kGiB);
}

}  // namespace gf

namespace gf {

TEST(Collective, AlltoallBeyondItsMemoryBudgetIsRefusedWithTheFigure) {
  // 2,048 nodes: large enough for the leaf-pair alltoall, whose flows are estimated up front.
  const auto s = setup(ib("h100-sxm", 2048, "cx7-400g", "qm9700"));
  const Fabric f = Fabric::build(s.plan, s.cat);
  SimOptions o;
  o.op = Op::kAlltoall;
  o.memory_budget_bytes = 1 << 20;
  auto refused = CollectiveModel::build(f, s.plan, o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.errors()[0].message.find("alltoall on 16384 GPUs needs about"),
            std::string::npos)
      << refused.errors()[0].message;
  // Every other algorithm is budgeted as its flows grow: a ring on a tiny budget is refused too.
  SimOptions ring;
  ring.memory_budget_bytes = 1 << 10;
  auto ring_refused = CollectiveModel::build(f, s.plan, ring);
  ASSERT_FALSE(ring_refused.ok());
  EXPECT_NE(ring_refused.errors()[0].message.find("needs more than the 1 KiB"), std::string::npos)
      << ring_refused.errors()[0].message;
  o.memory_budget_bytes = size_t{8} << 30;  // ample: the same build runs
  EXPECT_TRUE(CollectiveModel::build(f, s.plan, o).ok());
}

}  // namespace gf

namespace gf {
namespace {

// The ring's traffic per link, for a payload of `bytes` (kPayload scaled).
LinkLoad ring_load(const Setup& s, const Fabric& f, int nodes) {
  SimOptions o;
  o.algorithm = Algorithm::kRing;
  o.link_load_of = Algorithm::kRing;
  o.nodes = nodes;
  auto m = CollectiveModel::build(f, s.plan, o);
  EXPECT_TRUE(m.ok()) << format_diagnostics(m.errors());
  EXPECT_NE(m->link_load(), nullptr);
  return m.ok() && m->link_load() ? *m->link_load() : LinkLoad{};
}

double ring_seconds_per_byte(const Setup& s, const Fabric& f, int nodes) {
  SimOptions o;
  o.nodes = nodes;
  auto m = CollectiveModel::build(f, s.plan, o);
  EXPECT_TRUE(m.ok());
  for (const auto& a : m->algorithms())
    if (a.algorithm == Algorithm::kRing) return a.seconds_per_byte;
  return 0;
}

}  // namespace

TEST(LinkLoad, OneDomainRingPutsTheRingFactorOnEveryNvlinkHop) {
  // 8 GPUs on one NVSwitch: every channel's ring crosses each GPU's link up and down once, each
  // channel carrying its share of 2(N-1)/N x the payload.
  const auto s = setup(ib("h100-sxm", 4, "cx7-400g", "qm9700"));
  const Fabric f = Fabric::build(s.plan, s.cat);
  const LinkLoad load = ring_load(s, f, 1);
  const double factor = 2.0 * 7 / 8;
  for (int g = 0; g < 8; ++g) {
    EXPECT_NEAR(load.bytes[f.gpu_up(g)], load.payload_bytes * factor, 1e-6 * load.payload_bytes);
    EXPECT_NEAR(load.bytes[f.gpu_down(g)], load.payload_bytes * factor, 1e-6 * load.payload_bytes);
  }
  // Bytes x hops: 8 hops of two links each, nothing elsewhere.
  EXPECT_NEAR(load.total_bytes(), load.payload_bytes * factor * 16, 1e-6 * load.payload_bytes);
}

TEST(LinkLoad, RingAcrossNodesCrossesEveryNodeBoundaryOnceAChannel) {
  const auto s = setup(ib("h100-sxm", 4, "cx7-400g", "qm9700"));
  const Fabric f = Fabric::build(s.plan, s.cat);
  const LinkLoad load = ring_load(s, f, 4);
  const double factor = 2.0 * 31 / 32;
  double nic_up = 0, nic_down = 0;
  for (size_t l = 0; l < f.links().size(); ++l)
    if (f.links()[l].cls == LinkClass::kNicLeaf) {
      (std::string(link_direction(f, static_cast<int32_t>(l))) == "up" ? nic_up : nic_down) +=
          load.bytes[l];
    }
  // Every channel leaves each of the 4 domains once, through one NIC, and enters the next.
  EXPECT_NEAR(nic_up, load.payload_bytes * factor * 4, 1e-6 * load.payload_bytes);
  EXPECT_NEAR(nic_down, load.payload_bytes * factor * 4, 1e-6 * load.payload_bytes);
  // Two channels per NIC: every NIC link is crossed by two flows, and the hottest is a NIC link
  // or PCIe (the ring's network side), the most a link carries being its channels' share.
  const auto order = links_hottest_first(f, load);
  ASSERT_FALSE(order.empty());
  EXPECT_EQ(load.flows[f.nic_to_leaf(f.nic(0, 0), 0)], 2);
  const auto heat = tier_heat(f, load, kGiB, 1e-3);
  long long busy = 0;
  for (const auto& h : heat) busy += h.busy;
  EXPECT_EQ(busy, static_cast<long long>(order.size()));
}

TEST(LinkLoad, ADegradedLinkSlowsTheRingsCrossingItByItsRatio) {
  // A ring channel is one flow over all its hops: the slowest hop paces it, and NCCL splits the
  // data evenly over the channels, so the collective ends with the channels through the slow
  // link. Half the NIC link's rate: the two channels of that NIC run at half the rate they had,
  // the ring takes twice as long; rings that do not cross it are untouched.
  const auto s = setup(ib("h100-sxm", 4, "cx7-400g", "qm9700"));
  Fabric f = Fabric::build(s.plan, s.cat);
  const double base4 = ring_seconds_per_byte(s, f, 4), base2 = ring_seconds_per_byte(s, f, 2);
  const int up = f.nic_to_leaf(f.nic(3, 5), 0);  // node 4, rail 5
  f.set_capacity(up, f.links()[up].bytes_per_s / 2);
  f.set_capacity(Fabric::reverse(up), f.links()[Fabric::reverse(up)].bytes_per_s / 2);
  EXPECT_NEAR(ring_seconds_per_byte(s, f, 4) / base4, 2.0, 1e-9);
  EXPECT_DOUBLE_EQ(ring_seconds_per_byte(s, f, 2), base2);  // nodes 1-2 only
  // A quarter of the rate: four times.
  f.set_capacity(up, f.links()[up].bytes_per_s / 2);
  EXPECT_NEAR(ring_seconds_per_byte(s, f, 4) / base4, 4.0, 1e-9);
}

}  // namespace gf

namespace gf {

TEST(LinkLoad, EveryLinkIsNamedAsCablingCsvNamesItsCable) {
  // The fabric's cable links and cabling.csv come from one walk of the cabling plan; every
  // directed link's ends must be one row of cabling.csv, read either way.
  for (const char* yaml : {
           "cluster: {gpu: h100-sxm, nodes: 128, nic: cx7-400g}\n"
           "fabric: {technology: infiniband, switch: qm9700}\n",
           "cluster: {gpu: h100-sxm, nodes: 64, nic: cx7-400g}\n"
           "fabric: {technology: roce, switch: sn5600, planes: 2}\n",
           "cluster: {gpu: h100-sxm, nodes: 512, nic: cx7-400g}\n"
           "fabric: {technology: roce, switch: sn5600, topology: clos3}\n",
       }) {
    const auto s = setup(yaml);
    const Fabric f = Fabric::build(s.plan, s.cat);
    const LinkNames names(s.plan, s.cat, f);
    std::set<std::string> rows;
    std::stringstream csv(cabling_csv(s.plan, s.cat));
    std::string line;
    std::getline(csv, line);  // header
    while (std::getline(csv, line)) {
      std::vector<std::string> c;
      std::stringstream ls(line);
      for (std::string x; std::getline(ls, x, ',');) c.push_back(x);
      ASSERT_EQ(c.size(), 9u) << line;
      rows.insert(c[0] + " " + c[6] + " " + c[2] + " " + c[7]);  // device, port name, both ends
    }
    int checked = 0;
    for (size_t l = 0; l < f.links().size(); ++l) {
      const LinkClass cls = f.links()[l].cls;
      if (cls == LinkClass::kScaleUp || cls == LinkClass::kPcie) continue;
      const LinkEnd a = names.from(static_cast<int32_t>(l)), b = names.to(static_cast<int32_t>(l));
      const bool listed = rows.count(a.device + " " + a.port + " " + b.device + " " + b.port) ||
                          rows.count(b.device + " " + b.port + " " + a.device + " " + a.port);
      EXPECT_TRUE(listed) << yaml << a.device << ":" << a.port << " -> " << b.device << ":"
                          << b.port;
      if (!listed) break;
      ++checked;
    }
    EXPECT_GT(checked, 0);
  }
}

// Each size says the channels and threads NCCL's enqueue gives the call (SizeResult; --json's
// channels and threads_per_channel): a small broadcast runs one channel of 3 warps, a large one
// every channel at full threads; NVLS leaves threads out.
TEST(Collective, EachSizeSaysItsChannelsAndThreads) {
  auto run = [](const auto& s, const SimOptions& o, double bytes) {
    auto m = CollectiveModel::build(Fabric::build(s.plan, s.cat), s.plan, o);
    EXPECT_TRUE(m.ok()) << format_diagnostics(m.errors());
    SizeResult r = m->at(bytes);
    m->add_call_shape(r);
    return r;
  };
  const auto s = setup(ib("h100-sxm", 4, "cx7-400g", "qm9700"));
  SimOptions o;
  o.op = Op::kBroadcast;
  const SizeResult small = run(s, o, 4096);
  EXPECT_EQ(small.protocol, Protocol::kLL);
  EXPECT_EQ(small.channels, 1);
  EXPECT_EQ(small.threads, 96);
  const SizeResult large = run(s, o, kGiB);
  EXPECT_GT(large.channels, 1);
  EXPECT_EQ(large.threads, large.protocol == Protocol::kLL128 ? 640 : 512);
  o.op = Op::kAllReduce;
  o.algorithm = Algorithm::kNvls;
  const SizeResult nvls = run(setup(ib("h100-sxm", 1, "cx7-400g", "qm9700")), o, kGiB);
  EXPECT_EQ(nvls.algorithm, Algorithm::kNvls);
  EXPECT_GT(nvls.channels, 0);
  EXPECT_EQ(nvls.threads, 0);
}

// A ring's channels alternate over the NICs its group's GPUs sit on in any of its nodes: a
// group that starts at GPU 4 of a node with two NICs (GPUs 4-7 on the second) still runs two
// channels a NIC over both, as its whole nodes do (it ran two, on the first node's one NIC).
TEST(Collective, AGroupStartingPartwayThroughANodeUsesEveryNic) {
  const auto s = setup(
      "cluster: {gpu: h100-sxm, nodes: 3, nic: cx7-400g, nics_per_node: 2}\n"
      "fabric: {technology: infiniband, switch: qm9700}\n");
  const Fabric f = Fabric::build(s.plan, s.cat);
  std::vector<int> g;
  for (int i = 4; i < 20; ++i) g.push_back(i);
  FlowSet fs;
  const GroupFlows flows = group_flows(f, s.plan.load_balancing, Op::kAllReduce, {g}, 1 << 30, fs);
  EXPECT_EQ(flows.channels, 2 * nccl::kRingChannelsPerNic);
}

}  // namespace gf
