// NCCL's cost model, pure: the collectives, algorithms and protocols as closed sets, and the
// latency and bandwidth terms NCCL's tuner (src/graph/tuning.cc) charges for them. The flows
// that give the bandwidth side its seconds per byte are built in flow_builder.h; this file is
// arithmetic over nccl_constants.h and the shape of the communicator only.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common/enum_names.h"
#include "spec/spec.h"

namespace gf {

enum class Op { kAllReduce, kAllGather, kReduceScatter, kAlltoall, kBroadcast, kReduce, kSendRecv };
/// kCollNet is CollNet Direct (NCCL_ALGO=CollnetDirect), kCollNetChain CollNet Chain.
enum class Algorithm { kRing, kTree, kNvls, kNvlsTree, kCollNet, kCollNetChain, kPat, kP2p };
enum class Protocol { kLL, kLL128, kSimple };

inline constexpr EnumName<Op> kOpNames[] = {{Op::kAllReduce, "all_reduce"},
                                            {Op::kAllGather, "all_gather"},
                                            {Op::kReduceScatter, "reduce_scatter"},
                                            {Op::kAlltoall, "alltoall"},
                                            {Op::kBroadcast, "broadcast"},
                                            {Op::kReduce, "reduce"},
                                            {Op::kSendRecv, "sendrecv"}};
inline constexpr EnumName<Algorithm> kAlgorithmNames[] = {
    {Algorithm::kRing, "ring"},       {Algorithm::kTree, "tree"},
    {Algorithm::kNvls, "nvls"},       {Algorithm::kNvlsTree, "nvls_tree"},
    {Algorithm::kCollNet, "collnet"}, {Algorithm::kCollNetChain, "collnet_chain"},
    {Algorithm::kPat, "pat"},         {Algorithm::kP2p, "p2p"}};
/// As NCCL_ALGO spells them (enqueue.cc's parser, which ignores case); point-to-point has none.
inline constexpr EnumName<Algorithm> kNcclAlgoNames[] = {{Algorithm::kRing, "Ring"},
                                                         {Algorithm::kTree, "Tree"},
                                                         {Algorithm::kNvls, "NVLS"},
                                                         {Algorithm::kNvlsTree, "NVLSTree"},
                                                         {Algorithm::kCollNet, "CollnetDirect"},
                                                         {Algorithm::kCollNetChain, "CollnetChain"},
                                                         {Algorithm::kPat, "PAT"}};
/// As NCCL_PROTO spells them (parse_protocol ignores case).
inline constexpr EnumName<Protocol> kProtocolNames[] = {
    {Protocol::kLL, "LL"}, {Protocol::kLL128, "LL128"}, {Protocol::kSimple, "Simple"}};

inline const char* op_name(Op op) { return name_of(kOpNames, op); }  ///< all_reduce, ...
/// alltoall and sendrecv: NCCL's grouped sends and receives (Algorithm::kP2p), not a collective
/// algorithm's, with the protocol its send rule gives each send.
inline bool is_point_to_point(Op op) { return op == Op::kAlltoall || op == Op::kSendRecv; }
inline const char* algorithm_name(Algorithm a) { return name_of(kAlgorithmNames, a); }
inline const char* protocol_name(Protocol p) { return name_of(kProtocolNames, p); }
inline std::vector<std::string> op_names() { return names_of(kOpNames); }
inline std::optional<Op> parse_op(const std::string& s) { return parse_name(kOpNames, s); }
/// An algorithm's name in any case; "sharp" and "collnet_direct" are also CollNet Direct
/// (NCCL_ALGO=CollNet runs SHARP as CollNet Direct or Chain, whichever the tuner prefers).
std::optional<Algorithm> parse_algorithm(const std::string& s);
/// LL, LL128 or Simple in any case (NCCL_PROTO is case-insensitive).
std::optional<Protocol> parse_protocol(const std::string& s);

/// nccl-tests' bus bandwidth factor for `ranks` (nccl-tests PERFORMANCE.md).
double bus_factor(Op op, long long ranks);
/// What a ring moves per rank per payload byte: all_reduce 2(N-1)/N (reduce-scatter then
/// all-gather), all_gather and reduce_scatter (N-1)/N, broadcast and reduce 1 (a pipeline).
double ring_traffic_factor(Op op, long long ranks);

/// Whether a release's tables have Blackwell rows (v2.25 on; v2.25-v2.27's are Hopper's doubled);
/// the 2.18 to 2.24 tables run Blackwell as Hopper.
bool release_has_blackwell(NcclRelease r);
/// A release's MAXCHANNELS: 32 up to v2.24 (device.h@v2.24.3-1), 64 from v2.25.
int release_max_channels(NcclRelease r);
/// Whether a release has PAT (v2.23 on).
bool release_has_pat(NcclRelease r);

/// The GPU generation NCCL's tables are indexed by (its compute-capability index).
enum class GpuGeneration { kVolta, kAmpere, kHopper, kBlackwell };

/// What the Simple protocol's SM copies achieve on a generation's NVLink, as a share of its raw
/// rate (nccl::kScaleUpSimpleEfficiency; Blackwell: kScaleUpSimpleEfficiencyBlackwell).
double scale_up_simple_efficiency(GpuGeneration g);
/// NVLS's scale-up capacity over the Simple capacity of the generation: NVLS moves data with
/// multimem loads and stores that the switch reduces and multicasts, not with the SMs' copies,
/// so the Blackwell copy figure does not apply: NVLink's protocol share as measured on H100
/// (kScaleUpSimpleEfficiency) times NCCL's nvlsEfficiency (tuning.cc@v2.29.7-1:135-140), over
/// scale_up_simple_efficiency(g). Applied to the capacities at the efficiency in use, so a
/// calibration profile's scaleup_efficiency moves NVLS by its ratio to the generation's value.
double nvls_link_share(GpuGeneration g);

/// How a release runs NVLS and NVLS Tree on a communicator (nvls.cc, enqueue.cc).
struct NvlsTuning {
  int channels = 16;                 ///< comm->nvlsChannels
  double chunk_bytes = 131072;       ///< NVLS's largest chunk (comm->nvlsChunkSize)
  double tree_chunk_bytes = 131072;  ///< NVLS Tree's largest chunk
};
/// NVLS's channels and chunks: Hopper's 16 channels, or the release's for Blackwell on one NVLink
/// domain or across; 128 KiB chunks, NVLS Tree's the release's (ReleaseTerms::
/// nvls_tree_chunk_bytes) and 64 KiB from 4 domains on; from v2.30, Blackwell across domains
/// by its NICs (ncclNvlsTreeSm100Tuning, nvls.cc@v2.30.7-1:164-245). `domain_gpus`: GPUs a
/// domain (NCCL's minLocalRanks); `nic_path_GBps`: a GPU's path to its NIC as NCCL rates it
/// (comm->minNetBw, nic_path_GBps; 0: not known, and v2.30's tuning then keeps its defaults);
/// `nic_on_gpu_switch`: the NIC shares the GPU's PCIe switch (PATH_PXB or closer), not the CPU's
/// C2C (PATH_P2C, NicAttach::kCpuC2c).
NvlsTuning nvls_tuning(NcclRelease r, GpuGeneration g, int domains, int domain_gpus,
                       double nic_path_GBps, bool nic_on_gpu_switch);
/// The path from a GPU to its NIC as NCCL's topology rates it, GB/s (ncclTopoGetMinNetBw,
/// topo.cc@v2.30.7-1:379-398): the lower of the NIC's rate and the PCIe x16 link's
/// (`pcie_gen`: the lower of the GPU's and the NIC's), 48 for a 400G NIC on Gen5.
double nic_path_GBps(double nic_GBps, int pcie_gen);

/// The communicator a cost is charged for.
struct CostShape {
  Op op = Op::kAllReduce;
  long long ranks = 0;    ///< GPUs
  int domains = 1;        ///< scale-up domains the ranks span (NCCL's nodes; NVL72 racks)
  int domain_gpus = 1;    ///< GPUs per domain
  double net_hop_us = 0;  ///< the fabric's own latency of one node-to-node hop (switches, wire):
                          ///< gpufabric's term; NCCL's latencyInter is the NET plugin's, 0 for IB
  NcclRelease release = kNewestNccl;
  GpuGeneration generation = GpuGeneration::kHopper;
  int channels = 16;  ///< the communicator's channels for the algorithm (comm->nChannels; the
                      ///< tuner's per-channel caps count the search graph's, half of them)
  /// The topology search graph's channels, which the tuner's per-channel caps multiply
  /// (graphs[a]->nChannels; NCCL_MIN/MAX_NCHANNELS do not change them); 0: channels / 2.
  int graph_channels = 0;
  /// The ring graph replays its first channel (graph->sameChannels, printed by NCCL_DEBUG_SUBSYS=
  /// GRAPH): NCCL's tuner then charges a broadcast or reduce one step's latency, not one a rank
  /// (tuning.cc@v2.29.7-1:363-370, v2.18.6-1:209-216). See ring_same_channels.
  bool ring_same_channels = false;
  /// A calibration profile's measured factor on this algorithm's bandwidth (1: the model's). It
  /// scales the time the data takes on the links and through a rack's switch reduction
  /// (rack_reduce_us), not NCCL's own estimate (NCCL's tuner does not know it) nor NVLS's SM
  /// copies (PipelineRun::copy_us).
  double bandwidth_factor = 1;
  /// A calibration profile's measured time each network message holds its connection beyond its
  /// bytes, us (0: none); set only where the ranks span domains and the scale-out links pace the
  /// flows. See network_messages_us.
  double network_message_us = 0;
  /// Point-to-point across domains: the NICs local to a GPU and one NIC's rate, GB/s (0: not
  /// known, no per-channel limit). They set the channels a network peer gets.
  int p2p_local_nics = 0;
  double p2p_nic_GBps = 0;
  /// Point-to-point inside one domain: NCCL's p2p channels (0: nccl::kDomainP2pChannels;
  /// NCCL_MIN/MAX_NCHANNELS move them, FlowBuilder::domain_p2p_channels).
  int domain_p2p_channels = 0;
  /// A GPU's path to its NIC as NCCL rates it, GB/s (nic_path_GBps; 0: not known).
  double nic_path_GBps = 0;
  /// A GPU's NVLinks to its node's NVSwitches (0: not known, or none): with the release's rate
  /// of one link they are the NVLink NCCL's topology search shares among a graph's channels
  /// (ring_search_graph, nvls_search_graph).
  int nvlinks = 0;
  /// The GPUs' host is Grace (HostCpu::kGrace, ARM): NCCL 2.29+ doubles the network p2p chunk
  /// of Blackwell there (ReleaseTerms::p2p_net_chunk_doubled_on_grace).
  bool host_grace = false;
  /// The GPUs' hosts are x86 with AMD CPUs (cluster.host_cpu: amd; Intel otherwise): across nodes
  /// NCCL's tuner takes LL's bandwidth cap from its AMD row of llMaxBws and a network post
  /// overhead of 2 us, not 1 (tuning.cc@v2.29.7-1:215-220, 253-255; v2.18.6-1:111-118, 144).
  bool host_amd = false;
  /// The scale-up domain spans several nodes' trays (multi-node NVLink, NVL72): each NVLink
  /// step of the time costs nccl::kRackNvlinkStepUs more than NCCL's table.
  bool nvlink_across_trays = false;
  /// The domain's GPUs reach each other over PCIe (ScaleUpTech::kPcie): NCCL's intra-node hops
  /// take its PCI latency row, and LL128 is off between them (tuning.cc's typeIntra rule).
  bool scaleup_pcie = false;
  /// A calibration profile's latency added to every NVLink step of the time, us (its
  /// nvlink_step_latency_us; 0: none), as the rack's step is: not to NCCL's estimate.
  double nvlink_hop_us = 0;
  /// NCCL_BUFFSIZE: the Simple protocol's buffer a connection, bytes (0: NCCL's 4 MiB). Its
  /// eighth is the Simple step the pipeline streams (step_data_bytes).
  double simple_buffer_bytes = 0;
  /// The NIC hangs off the CPU the GPU reaches over NVLink-C2C (NicAttach::kCpuC2c, Grace
  /// Blackwell): the release's path type for it decides LL128 between domains and NVLS's tuning
  /// (ReleaseTerms::c2c_nic_is_p2c).
  bool nic_via_cpu_c2c = false;
  /// NCCL_PROTO leaves LL128 enabled (--proto LL128): NCCL then runs it where its LL128 switch
  /// would not (protoEnable 1, not 2: tuning.cc@v2.29.7-1:413-423, 480-481).
  bool ll128_forced = false;
  /// The NICs of a domain (0: one per GPU): CollNet's, whose in-network reductions the heads
  /// issue, and NVLS's heads across domains (nvls_heads).
  int collnet_nics = 0;
  /// CollNet: the seconds a payload byte takes on the NICs' path to the in-network reduction
  /// alone, from the flow model (0: not known; no operation cost is charged).
  double collnet_net_seconds_per_byte = 0;
  /// CollNet all_reduce: the seconds a payload byte takes on its NVLink part alone (0: not
  /// known): Chain's fill, and the rate NCCL's tuner gives CollNet (its graph's bwIntra).
  double collnet_intra_seconds_per_byte = 0;
  /// Calls timed back to back, as nccl-tests times `iters` of them (-n) and reports their mean
  /// (1: one call alone). A broadcast or reduce on one channel pipelines across them
  /// (back_to_back_chain).
  int iters = 1;
  /// The host's time to issue one call on every GPU its thread drives, us (nccl-tests -g x
  /// nccl::kHostIssueUsPerGpu): back-to-back calls are at least this far apart.
  double host_issue_us = 0;
};

/// One of NCCL's topology search graphs as NCCL's tuner reads it (graphs[a]->nChannels, bwIntra,
/// bwInter: GB/s a channel inside a node and between nodes); no channels where gpufabric does
/// not know it.
struct SearchGraph {
  int channels = 0;
  double intra_GBps = 0, inter_GBps = 0;
  bool known() const { return channels > 0; }
};
/// NCCL's ring graph across nodes, where each of a node's NICs has a GPU of its own (not an
/// NVL72 rack), from v2.20: a channel a NIC at the highest search speed
/// (nccl::kSearchSpeedsInter...) the GPU's path to its NIC allows, which the GPUs' NVLink carries
/// (a channel enters a node at one GPU and leaves it at another: N - 1 NVLink hops over N GPUs).
/// The tuner takes channels x speed; NCCL may list the same product as twice the channels at half
/// the speed (ncclTopoDupChannels: 8 x 24 for 4 NICs of 400G on 8 H100). NCCL's own search,
/// compiled from search.cc@v2.20.5-1 to @v2.30.7-1 and run on the node, finds 8 x 48 GB/s on 8 x
/// H100 or B200 with 8 x 400G NICs, 8 x 24 on A100 with 200G (v2.19.4 and v2.18.6: 8 x 45 on
/// H100, which this leaves to the flows, as it does a NIC path twice the fastest speed).
SearchGraph ring_search_graph(const CostShape& s);
/// NCCL's NVLS graph across such nodes: a head a NIC (nvls_heads); inside the node the highest
/// search speed at which every GPU's NVLink carries each head's traffic once and its own twice
/// (ncclTopoSearchTryNvls, search.cc@v2.24.3-1:386-417: heads + 1 shares), within the path to the
/// NIC; between nodes, raised from that while under twice it and within the path to the NIC
/// (search.cc@v2.24.3-1:1103-1106; v2.18 raises bwIntra instead and bwInter stays at it). 8 heads
/// of 40 / 48 GB/s on H100 with 400G NICs (v2.18: 40 / 40), 48 / 48 on B200 from v2.27 (the same
/// search, run).
SearchGraph nvls_search_graph(const CostShape& s);
/// The NVLS heads NCCL's tuner needs for NVLS Tree: 2 from v2.28 (nccl::kNvlsTreeMinHeadsV2_28).
int nvls_tree_min_heads(NcclRelease r);
/// NCCL's tuner rate of NVLS Tree all_reduce across nodes, B/s of payload, from its NVLS graph
/// (0: the graph is not known, or fewer heads than nvls_tree_min_heads): v2.18 heads x (bwIntra on
/// 2 nodes, else bwInter) x .7 n / 2(n-1) (tuning.cc@v2.18.6-1:174-198); v2.20-v2.27 heads x
/// min(bwIntra, bwInter, halved from 3 nodes) x 5/6 (tuning.cc@v2.24.3-1:247, 287; @v2.27.7-1:275,
/// 324); v2.28 on heads x min(bwIntra x the NVLS efficiency x (heads - 1) / heads x 2, bwInter,
/// doubled on 2 nodes, the cap per head) x N / nsteps (tuning.cc@v2.29.7-1:286-300, 349).
double nvls_tree_tuner_Bps(const CostShape& s);

/// NVLS's heads (nvls.nHeads, the NVLS graph's channels), at most NCCL_MAX_NVLS_ARITY, 32
/// (search.cc@v2.29.7-1:1065): on one domain every GPU up to that (:1070-1072 force the most:
/// 32 of an NVL72 rack's 72); across domains one a NIC with a GPU of its own, at most the
/// domain's GPUs (:695-712, the NIC:GPU pairs the search tries).
int nvls_heads(const CostShape& s);

/// The ring (and tree) graph's channels across nodes, as NCCL's topology search leaves them: a
/// channel per NIC at the bandwidth its path allows (the NIC's rate; the GPU's PCIe link as NCCL
/// rates it, width x speed / 80, shared by the GPU's NICs), doubled by ncclTopoDupChannels when
/// a channel carries 25 GB/s or more, except from Hopper on below 50 GB/s with more than 4
/// channels (search.cc@v2.29.7-1:962-975, the same in v2.18.6-1). `pcie_gen`: the lower of the
/// GPU's and the NIC's.
int ring_graph_channels_across(int nics_per_node, int gpus_per_node, double nic_GBps, int pcie_gen,
                               GpuGeneration generation);

/// Whether NCCL's ring search keeps sameChannels: it tries first to replay channel 0's GPU order
/// on every channel, each channel on the next NIC (search.cc@v2.29.7-1:1044-1045, 715-719,
/// 679), and drops the replay only when that reaches less bandwidth (1131-1136). Inside one
/// node, with one NIC a node or one GPU a node every channel's path is channel 0's, and the
/// replay stands; with several NICs a node each NIC's channel enters at the NIC's own GPU, which
/// a replayed order does not, and the search keeps the channels that differ. (NCCL 2.29.7 on two
/// one-GPU nodes prints Broadcast Ring/LL at 6.6 + 2.7 us, one step: tests/data/outputs/
/// nccl-2.29.7-tuning-socket-2rank.log.)
bool ring_same_channels(int domains, int gpus_per_domain, int nics_per_domain);

/// The channels NCCL gives one network peer of a multi-node communicator
/// (comm->p2pnChannelsPerPeer): v2.29 max(local NICs, ceil(their GB/s / 14)), cut while the
/// peers do not fit one batch round (paths.cc@v2.29.7-1:853-905); v2.18 two
/// (paths.cc@v2.18.6-1:667-724). Powers of two, at most the communicator's p2p channels.
int p2p_channels_per_peer(const CostShape& s);

/// The channels one network send of `bytes` runs on (enqueue.cc@v2.29.7-1:1109-1112 and
/// 891-898; v2.18.6-1:630-637 and 601-609): parts of half a chunk to a chunk, doubling up to the
/// peer's channels.
int p2p_op_channels(const CostShape& s, double bytes);

/// Point-to-point inside one scale-up domain as NCCL splits it (enqueue.cc@v2.29.7-1:886-906,
/// 1109-1112; v2.28.9-1:821-900; v2.18.6-1:601-609, 628-637, 667-668): each send on `per_op`
/// channels, from the peer's channels halved until every rank has one (v2.18 also caps them
/// where 8+ operations would share a channel), doubled while a part exceeds 32 chunks; LL where
/// the release's rule (ReleaseTerms::p2p_ll_rule) says. Round r's parts go to channels
/// reverseBits(r) + 0, 1, ... (ncclP2pChannelBaseForRound, ncclP2pChannelForPart:
/// include/channel.h and device.h@v2.29.7-1; v2.18's mirrored p2pChannels the same).
struct DomainP2pSplit {
  int per_op = 1;          ///< channels (parts) one send runs on
  double part_bytes = 0;   ///< bytes one part streams
  double chunk_bytes = 0;  ///< the chunk the parts move in (NVLink's, or LL's step)
  int channels = 1;        ///< channels the call's parts occupy
  int busiest = 1;         ///< parts on the busiest of them
  bool ll = false;         ///< NCCL runs the sends LL
};
/// `op_bytes`: one send's; rounds `first_round` to `first_round + rounds - 1` of NCCL's p2p
/// schedule (alltoall: every peer from round 0, its own local copy; sendrecv: round 1).
DomainP2pSplit domain_p2p_split(const CostShape& s, double op_bytes, int first_round,
                                long long rounds);

/// What a latency is for: the tuner's estimate, with the release's own terms, to choose as
/// NCCL chooses; or the time, with the terms NCCL later corrected (see latency_us).
enum class LatencyUse { kTuner, kTime };

/// Fixed time of one collective, us: NCCL's base latency of the algorithm and protocol plus
/// its per-step hardware latency over every step the algorithm takes (tuning.cc), and the
/// fabric's hop latency on the steps that cross the network; the time (kTime) adds, on LL's
/// network steps, LL's staging in host memory (nccl::kLLNetStagingUs).
double latency_us(Algorithm a, Protocol p, const CostShape& s, LatencyUse use = LatencyUse::kTuner);

/// The bandwidth (algorithm bandwidth, bytes/s of payload) of a protocol on an algorithm for a
/// message of `bytes`, from the Simple protocol's `simple_Bps` as the flow model found it:
/// NCCL's ratios and caps per protocol, tree's per-size correction (tuning.cc). 0 where NCCL
/// does not run that protocol with that algorithm.
double protocol_bandwidth(Algorithm a, Protocol p, const CostShape& s, double simple_Bps,
                          double bytes);

/// The time an alltoall spends posting a send and a receive to each of `network_peers` (the
/// peers outside the rank's scale-up domain), us. A GPU's kernel serves its NVLink peers on
/// all its channels at once (up to 8 point-to-point operations a channel, enqueue.cc@v2.29.7-1:
/// 1016-1025); the network peers go one after another through the rank's proxy thread
/// (proxy.cc). It overlaps the data: an alltoall takes the longer of the two.
double alltoall_posting_us(long long network_peers);
/// An alltoall's time, us: its fixed latency, then the posting or the data, whichever is longer.
double alltoall_time_us(double fixed_us, long long network_peers, double data_us);
/// The host's time to issue one call on the `gpus_per_thread` GPUs one thread drives (nccl-tests
/// -g), us: kHostIssueUsPerGpu a GPU, and for point-to-point the send and the receive to each
/// peer NCCL plans on the host first (kHostP2pTaskUs each: an alltoall's 2 x `ranks`, itself
/// included; a sendrecv's 2). Back-to-back calls go no faster than this.
double host_issue_us(Op op, long long ranks, int gpus_per_thread);

/// The data one step of protocol `p` carries a channel, bytes: LL's and LL128's fixed
/// (kStepDataBytes), Simple's buffSizes[SIMPLE] / NCCL_STEPS (init.cc@v2.29.7-1:764-770), 512 KiB
/// unless NCCL_BUFFSIZE sets the buffer (CostShape::simple_buffer_bytes).
double step_data_bytes(Protocol p, const CostShape& s);

/// How NCCL's enqueue.cc runs one call of `bytes` (its nBytes): the channels it keeps for that
/// size, the chunk each channel streams and the stages a chunk passes in sequence
/// (docs/nccl-model-reference.md sections 2.2, 2.3 and 4.3).
struct PipelineRun {
  int channels = 1;        ///< channels of this call (fewer than the communicator's when small)
  int comm_channels = 1;   ///< the communicator's (the flow model's bandwidth is for all of them)
  /// The share of a channel's full rate its threads carry: NCCL halves a small call's threads a
  /// channel (call_threads), and a channel moves data at the pace of its threads (1: all of them).
  double thread_share = 1;
  /// The threads a channel moves data with (call_threads; 0 where not modelled: NVLS, CollNet
  /// Direct, point-to-point).
  int threads = 0;
  double chunk_bytes = 0;  ///< data bytes one channel streams as a unit (a chunk; a whole loop
                           ///< of N or nHeads chunks for rings, NVLS and CollNet)
  double chunks = 1;       ///< chunks (or loops) each channel streams
  int stages = 1;          ///< dependent stages a chunk crosses (1: no fill beyond the latency)
  /// A step's synchronisation that no FIFO hides, us: NVLS has none between its reduce and
  /// multicast stages, so each loop of each stage waits for it (0 elsewhere).
  double exposed_step_us = 0;
  /// The share of a chunk's steady-state time one stage takes: 1 where the busiest link carries
  /// each chunk once (a chain, NVLS); 1/3 for trees, whose busiest link (an inner node's) carries
  /// three chunk transfers (two children's, the parent's) for the one a stage moves.
  double stage_share = 1;
  /// The pipeline's time over its steady-state time: (chunks + (stages - 1) x share) / chunks.
  double fill_factor() const { return (chunks + (stages - 1) * stage_share) / chunks; }
  /// The exposed steps' time, us: one per chunk slot of the pipeline.
  double exposed_us() const { return (chunks + stages - 1) * exposed_step_us; }
  /// The share of the algorithm's bandwidth the call carries: its channels of the
  /// communicator's, each at its threads' pace.
  double rate_share() const { return static_cast<double>(channels) / comm_channels * thread_share; }
  /// CollNet (and NVLS across domains, which runs over it): the in-network operations a loop
  /// issues at one NIC, in order, each costing collnet_op_us in series with the NIC's bytes
  /// (0 elsewhere). data_time_us paces the call by the NIC's path where it is the longer, each
  /// loop after the first paying them (the first is the network step of latency_us).
  double net_op_us = 0;
  /// NVLS all_reduce inside one Blackwell rack: what one channel's scatter (and gather) thread
  /// group spends copying its bytes, us: nHeads chunks a loop, one after the other, each a fixed
  /// cost and its bytes at a thread group's copy rate (nccl_constants.h kNvlsCopyChunkUs). The
  /// call's data takes at least this (0 elsewhere).
  double copy_us = 0;
};
PipelineRun pipeline_run(Algorithm a, Protocol p, const CostShape& s, double bytes);

/// NVLS and NVLS Tree all_reduce in an NVL72 rack (s.nvlink_across_trays): the rack's NVLink
/// switches reduce every GPU's `bytes` (each head's multimem.ld_reduce reads its chunk from all
/// of them), at most nccl::kRackNvlsReduceTBs together; the call's data takes at least
/// s.domain_gpus x bytes at that rate, us. Each rack reduces its own GPUs. 0 elsewhere. A
/// calibration profile's factor on NVLS or NVLS Tree (s.bandwidth_factor) scales it in the time,
/// as it scales the links.
double rack_reduce_us(Algorithm a, const CostShape& s, double bytes);
/// Whether the call's channels' thread blocks (their copies through the connections' buffers,
/// nccl::kChannelCopyGBsAmpere) pace its data, not the links.
bool block_copy_paces(Algorithm a, Protocol p, const CostShape& s, double seconds_per_byte,
                      double bytes);
/// Whether that reduction, not the links or the SMs' copies, paces the call's data.
bool rack_reduce_paces(Algorithm a, Protocol p, const CostShape& s, double seconds_per_byte,
                       double bytes);

/// The time one in-network reduction holds a NIC beyond its bytes on `domains` nodes, us:
/// nccl::kCollNetOpBaseUs + nccl::kCollNetOpPerDoublingUs x log2(domains) (nccl_constants.h).
double collnet_op_us(int domains);

/// The time a call's network messages add beyond their bytes, us: s.network_message_us (a
/// calibration profile's) for every message a channel's network connection carries after the
/// first loop's, whose cost is in NCCL's step latency. NCCL's proxy posts one send a slice of a
/// connection (transport/net.cc@v2.29.7-1:1281-1346): ring Simple all_reduce, all_gather and
/// reduce_scatter slice 2 steps (1 MiB), broadcast, reduce and trees 1 step (512 KiB), LL and
/// LL128 one step (32 KiB and 576,000 B of data). So per byte a Simple broadcast pays twice what
/// an all_reduce does. Ring and tree only (CollNet has its operations' cost,
/// collnet_op_us; NVLS Tree's network hops and point-to-point are not charged); 0 on one
/// domain.
double network_messages_us(Algorithm a, Protocol p, const CostShape& s, const PipelineRun& run,
                           double bytes);

/// NCCL's own estimate of one (algorithm, protocol) at `bytes`, us (tuning.cc's
/// ncclTopoGetAlgoTime): the fixed latency (ring Simple's plateau factor once the message is
/// large enough) plus the data at protocol_bandwidth over every channel. NCCL chooses the
/// algorithm and protocol by it; infinity where the protocol does not run.
/// `seconds_per_byte`: Simple, from the flow model.
double tuner_time_us(Algorithm a, Protocol p, const CostShape& s, double seconds_per_byte,
                     double bytes);
/// The time the call takes, us: the same fixed latency, and the data as the pipeline moves it:
/// on the channels NCCL keeps for this size (each at its share of the bandwidth, as
/// tuning.cc@v2.18.6-1:389 rescales), with the fill and drain of chunks through the stages of
/// broadcast chains, trees and NVLS (pipeline_run).
double collective_time_us(Algorithm a, Protocol p, const CostShape& s, double seconds_per_byte,
                          double bytes);
/// The data part of collective_time_us, us: what one rank spends moving the call's bytes where
/// back-to-back calls pipeline (back_to_back_chain), else the data with the pipeline's fill.
double data_time_us(Algorithm a, Protocol p, const CostShape& s, double seconds_per_byte,
                    double bytes);

/// A broadcast or reduce ring on one channel, or on channels that all run the same ring
/// (s.ring_same_channels), timed over s.iters > 1 calls: the calls pipeline down the chain.
/// Each GPU runs one kernel a call on its stream, and its kernel ends once it has forwarded its
/// part: the next call starts there while the last one is still on its way down (nccl-tests
/// issues its iters back to back and synchronises once, common.cu@v2.19.6:729-783). A chain has
/// no cycle (no rank waits for data of its own call from downstream), so a call costs the
/// chain's period (collective_time_us), not the chain. Where the channels' rings differ they
/// do not pipeline: each channel's ring enters a node at another NIC's GPU
/// (search.cc@v2.29.7-1:678, 729-731), so in the root's node every GPU but the root is early in
/// one channel's chain and late in another's, and the call's one kernel (a block a channel)
/// ends only at the late one, holding the next call back.
bool back_to_back_chain(Algorithm a, Protocol p, const CostShape& s, double bytes);

/// The protocol NCCL's tuner picks for `a` at `bytes`: the least tuner_time_us (the first of
/// LL, LL128, Simple on a tie; `only`: that one), its estimate and the time the call then takes
/// (collective_time_us); both infinity where no protocol runs.
struct ProtocolPick {
  Protocol protocol = Protocol::kSimple;
  double estimate_us = std::numeric_limits<double>::infinity();
  double time_us = std::numeric_limits<double>::infinity();
};
ProtocolPick pick_protocol(Algorithm a, const CostShape& s, double seconds_per_byte, double bytes,
                           std::optional<Protocol> only = std::nullopt);

}  // namespace gf
