// Model constants of NCCL's collectives: latencies, protocol efficiencies, channel counts.
// One table, each figure with its unit and source (as NCCL's tuning.cc keeps them). Latencies in microseconds.
#pragma once

namespace gf::nccl {

enum Algo { kTree, kRing, kCollNetDirect, kCollNetChain, kNvls, kNvlsTree, kPat, kNumAlgos };
enum Proto { kLL, kLL128, kSimple, kNumProtos };
enum Hw { kNvlink, kPci, kNet, kNumHw };

// NCCL src/graph/tuning.cc (v2.28) baseLatencies, us: fixed cost of a collective per
// algorithm and protocol.
inline constexpr float kBaseLatencyUs[kNumAlgos][kNumProtos] = {
    {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4},  // Tree, Ring
    {0, 0, 0},        {0, 0, 0},         // CollNet Direct, Chain
    {0, 0, 0},        {0, 0, 0},         // NVLS, NVLS Tree
    {8.0, 8.0, 8.0},                     // PAT
};

// NCCL src/graph/tuning.cc (v2.28) hwLatencies, us: cost of one step over each kind of hop.
inline constexpr float kHwLatencyUs[kNumHw][kNumAlgos][kNumProtos] = {
    /* NVLink */ {{0.6, 1.25, 4.0},
                  {0.6, 1.9, 3.4},
                  {0, 0, 3.7},
                  {0, 0, 2.8},
                  {0, 0, 25},
                  {0, 0, 25},
                  {0, 0, 4.0}},
    /* PCI */
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
    /* Net */
    {{5.0, 8.5, 14},
     {2.7, 4.0, 14.0},
     {0, 0, 31},
     {0, 0, 30},
     {0, 0, 18},
     {0, 0, 20.9},
     {0, 0, 14}},
};

// Protocol bandwidth relative to Simple (NCCL tuning.cc: ring LL x1/4 across nodes (x1/3 in a
// node for gather-type collectives), tree LL x1/3.8, LL128 x0.92 ring / x0.915 tree).
inline constexpr double kRingLLFactor = 1.0 / 4.0;
inline constexpr double kRingLLFactorIntra = 1.0 / 3.0;
inline constexpr double kTreeLLFactor = 1.0 / 3.8;
inline constexpr double kRingLL128Factor = 0.92;
inline constexpr double kTreeLL128Factor = 0.915;
// NCCL tuning.cc: tree bandwidth x0.9 of the link model; CollNet x0.9.
inline constexpr double kTreeFactor = 0.9;
inline constexpr double kCollNetFactor = 0.9;
// NCCL tuning.cc nvlsEfficiency: share of NVLink bandwidth NVLS reaches (Hopper; Blackwell 0.74).
inline constexpr double kNvlsEfficiencyHopper = 0.85;
inline constexpr double kNvlsEfficiencyBlackwell = 0.74;

// Achievable fraction of raw link bandwidth with the Simple protocol.
// NVLink: nccl-tests #212 (maintainer): 8xH100 ring ~370 GB/s busbw on 450 GB/s NVLink4,
// "~20% protocol overhead".
inline constexpr double kScaleUpSimpleEfficiency = 0.82;
// Network: nccl-tests #119, #290 (maintainers): 46-48 GB/s busbw per 400G NIC, 92-96% of line
// rate; the midpoint.
inline constexpr double kNetworkSimpleEfficiency = 0.94;

// NCCL builds two channels per NIC for rings across nodes (the ring graph's channels are
// duplicated, src/graph/connect.cc), and uses up to 16+ channels over NVLink in a node.
inline constexpr int kRingChannelsPerNic = 2;
inline constexpr int kIntraDomainChannels = 16;
// Channels per tree across nodes (two binary trees, each over every NIC).
inline constexpr int kTreeChannelsPerNic = 2;
// NCCL_IB_QPS_PER_CONNECTION commonly set for RoCE ECMP fabrics (Meta SIGCOMM'24 uses several
// QPs per connection to raise hash entropy).
inline constexpr int kQpsPerConnection = 4;
// Adaptive routing / packet spraying spreads a flow over at most this many equal paths in the
// model (beyond it the extra evenness changes nothing measurable).
inline constexpr int kSprayWays = 64;
// Alltoall already spreads over thousands of connections; fewer sprayed paths per connection
// give the same evenness at a fraction of the cost.
inline constexpr int kSprayWaysP2p = 4;
// Point-to-point (alltoall, sendrecv) cost per peer, us: NCCL posts one send and one receive
// per peer per channel; estimate from nccl-tests alltoall small-size times (~25 us on 8 GPUs).
inline constexpr double kP2pPerPeerLatencyUs = 1.5;
inline constexpr double kP2pBaseLatencyUs = 8.4;  // as Ring/Simple base latency

}  // namespace gf::nccl
