// NCCL's cost terms one by one, against the formula of src/graph/tuning.cc worked by hand from
// the tables in nccl_constants.h (nothing here was fitted).
#include "sim/nccl_cost.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/nccl_constants.h"

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

// 16 GPUs in 2 domains of 8, 1 us of fabric per network hop.
constexpr CostShape kTwoNodes{Op::kAllReduce, 16, 2, 8, 1.0};

TEST(NcclCost, RingLatencyCountsIntraAndInterSteps) {
  // all_reduce: 2(N-1) = 30 steps, 2(n-1) = 2 of them between domains.
  // Simple: 8.4 + 28 x 3.4 (NVLink) + 2 x (14 (net) + 1) = 133.6 us.
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kSimple, kTwoNodes), 133.6, 1e-4);
  // LL across nodes: the NVLink step x1.8 (tuning.cc): 6.6 + 28 x 1.08 + 2 x (2.7 + 1).
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kLL, kTwoNodes), 44.24, 1e-4);
  // all_gather: N-1 = 15 steps, n-1 = 1 between domains: 8.4 + 14 x 3.4 + 15.
  CostShape ag = kTwoNodes;
  ag.op = Op::kAllGather;
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kSimple, ag), 71.0, 1e-4);
  // One domain: every step over NVLink, no fabric hop, no LL penalty: 6.6 + 7 x 0.6.
  const CostShape one{Op::kAllGather, 8, 1, 8, 5.0};
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kLL, one), 10.8, 1e-4);
  // broadcast pipelines through every rank: N steps.
  CostShape bc = one;
  bc.op = Op::kBroadcast;
  EXPECT_NEAR(latency_us(Algorithm::kRing, Protocol::kSimple, bc), 8.4 + 8 * 3.4, 1e-4);
}

TEST(NcclCost, TreeLatencyIsChainPlusLogDepth) {
  // Up and down: 2 x ((8 - 1) x 4.0 + ceil(log2 2) x (14 + 1)) + 8.4.
  EXPECT_NEAR(latency_us(Algorithm::kTree, Protocol::kSimple, kTwoNodes), 94.4, 1e-4);
  CostShape many = kTwoNodes;
  many.domains = 5;  // ceil(log2 5) = 3 levels
  EXPECT_NEAR(latency_us(Algorithm::kTree, Protocol::kSimple, many),
              8.4 + 2 * (7 * 4.0 + 3 * 15.0), 1e-4);
}

TEST(NcclCost, OtherAlgorithmsLatency) {
  EXPECT_NEAR(latency_us(Algorithm::kNvls, Protocol::kSimple, kTwoNodes), 25.0, 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kNvlsTree, Protocol::kSimple, kTwoNodes), 25 + 2 * 21.9,
              1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kCollNet, Protocol::kSimple, kTwoNodes), 3.7 + 31 + 2, 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kPat, Protocol::kSimple, kTwoNodes), 8.0 + 4 * 15.0, 1e-4);
  EXPECT_NEAR(latency_us(Algorithm::kP2p, Protocol::kSimple, kTwoNodes), 8.4 + 15.0, 1e-4);
}

TEST(NcclCost, ProtocolFactors) {
  EXPECT_EQ(protocol_factor(Algorithm::kRing, Protocol::kSimple, Op::kAllReduce, 2), 1.0);
  EXPECT_EQ(protocol_factor(Algorithm::kRing, Protocol::kLL, Op::kAllReduce, 2),
            nccl::kRingLLFactor);
  EXPECT_EQ(protocol_factor(Algorithm::kRing, Protocol::kLL, Op::kAllGather, 1),
            nccl::kRingLLFactorIntra);
  EXPECT_EQ(protocol_factor(Algorithm::kTree, Protocol::kLL128, Op::kAllReduce, 2),
            nccl::kTreeLL128Factor);
  EXPECT_EQ(protocol_factor(Algorithm::kNvls, Protocol::kLL, Op::kAllReduce, 1), 0.0);
  EXPECT_EQ(protocol_factor(Algorithm::kP2p, Protocol::kLL128, Op::kAlltoall, 2), 0.0);
}

TEST(NcclCost, CollectiveTimeAddsLatencyAndData) {
  // 1 GB at 1 ns/byte on Simple: latency + 1e6 us.
  const double t = collective_time_us(Algorithm::kRing, Protocol::kSimple, kTwoNodes, 1e-9, 1e9);
  EXPECT_NEAR(t, 133.6 + 1e6, 1e-3);
  // LL moves the same data at a quarter of Simple's bandwidth.
  const double ll = collective_time_us(Algorithm::kRing, Protocol::kLL, kTwoNodes, 1e-9, 1e9);
  EXPECT_NEAR(ll, 44.24 + 4e6, 1e-2);
  EXPECT_TRUE(std::isinf(collective_time_us(Algorithm::kNvls, Protocol::kLL, kTwoNodes, 1e-9, 1)));
}

TEST(NcclCost, AlltoallPostingOverlapsData) {
  EXPECT_DOUBLE_EQ(alltoall_posting_us(9), 8 * nccl::kP2pPerPeerLatencyUs);
  // Small data: the posting of 15 peers (22.5 us) is longer than the data.
  EXPECT_DOUBLE_EQ(alltoall_time_us(10, 16, 1), 10 + 15 * nccl::kP2pPerPeerLatencyUs);
  // Large data hides the posting.
  EXPECT_DOUBLE_EQ(alltoall_time_us(10, 16, 1000), 1010);
  CostShape a2a = kTwoNodes;
  a2a.op = Op::kAlltoall;
  EXPECT_NEAR(collective_time_us(Algorithm::kP2p, Protocol::kSimple, a2a, 1e-9, 1e3),
              23.4 + 15 * nccl::kP2pPerPeerLatencyUs, 1e-6);
}

}  // namespace
}  // namespace gf
