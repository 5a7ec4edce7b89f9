// The RoCE QoS settings of a fabric, one source of truth: the marking, ECN, PFC and headroom
// values the switch and host configurations write (config/eos, sonic, nvue, hosts) and the
// packet-level engine (qos) simulates, and the DCQCN parameters of the NICs, which no
// configuration sets (the NICs run their firmware defaults). Each value has its unit and source.
#pragma once

#include <string>

#include "catalog/catalog.h"

namespace gf {

/// RoCE traffic marking (guide §4.2): RoCE data in DSCP 26 (lossless, PFC priority 3), CNPs in
/// DSCP 48. The verbs traffic class is the IP ToS byte: DSCP << 2, plus ECT(0) = 2 so that
/// switches may mark ECN instead of dropping (106 is the value NVIDIA's RoCE guides use).
constexpr int kRoceDscp = 26;
constexpr int kRocePriority = 3;
constexpr int kCnpDscp = 48;
constexpr int kRoceTrafficClass = (kRoceDscp << 2) | 2;
/// CNPs leave switches by a strict-priority queue (traffic class 6).
constexpr int kCnpQueue = 6;
/// ECN marking on the RoCE queue: from 150 KiB, every packet by 1.5 MiB, at most 20 % (the
/// ranges NVIDIA and Arista RoCE guides start from; tune with the fabric's RTT).
constexpr int kEcnMinKiB = 150;
constexpr int kEcnMaxKiB = 1536;
constexpr int kEcnMarkPercent = 20;
/// The same thresholds in bytes, the unit of SONiC's WRED_PROFILE and NVUE's congestion-control.
constexpr long long kEcnMinBytes = kEcnMinKiB * 1024LL;
constexpr long long kEcnMaxBytes = kEcnMaxKiB * 1024LL;
/// PFC watchdog: a queue paused this long is stuck (a storm); drop, recover after as long.
constexpr int kPfcWatchdogMs = 200;
/// NCCL_IB_QPS_PER_CONNECTION with ecmp-multi-qp: more QPs, more UDP source ports for ECMP.
constexpr int kQpsPerConnectionMultiQp = 4;

/// SONiC's MTU for RoCE ports (9100, the SONiC default jumbo size).
constexpr int kSonicMtu = 9100;
/// LOSSLESS_TRAFFIC_PATTERN small_packet_percentage: sonic-buildimage 202311
/// files/build_templates/buffers_config.j2 writes 100 (every packet small, the worst case).
constexpr int kSmallPacketPercentage = 100;
/// The signal's speed in a cable, m/s: sonic-swss 202311 cfgmgr/buffer_headroom_mellanox.lua's
/// speed_of_light (about 2/3 of c, fibre and copper alike).
constexpr double kSignalSpeedMps = 198000000;

/// Pause quanta (512 bit times each) a peer may still send after a PAUSE frame, by speed
/// (IEEE 802.3 Annex 31B.3.7, as buffer_headroom_mellanox.lua tabulates them).
int pfc_pause_quanta(double gbps);

/// The lossless priority group's profile in the traditional buffer model, for one port speed
/// and cable length. xoff, the headroom, is SONiC's own formula (sonic-swss 202311
/// cfgmgr/buffer_headroom_mellanox.lua, the one headroom formula SONiC ships), in bytes:
///   xoff = mtu + (mtu + 2 x cable x speed / v / 8 + mac_phy + peer_response) x occupancy,
/// rounded up to 1 KiB, with v = 1.98e8 m/s, mac_phy = 0.8 KiB, peer_response = the pause quanta
/// of the speed (IEEE 802.3 Annex 31B.3.7: 905 at 400G and 800G) x 512 bits, and occupancy the
/// worst-case cell use of small packets (cell / 64 bytes for cells over 128 bytes, all traffic
/// small). size, xon, xon_offset and dynamic_th are the platform's (catalog lossless_pg).
struct LosslessProfile {
  double cable_m = 0;  ///< the CABLE_LENGTH it is for (a length of pg_profile_lookup.ini)
  long long xon = 0, xoff = 0, size = 0, xon_offset = 0;
  int dynamic_th = 0;
  std::string name;  ///< pg_lossless_<speed Mb/s>_<cable>m_profile, buffermgrd's own naming
};
LosslessProfile sonic_lossless_profile(const SonicPlatform& platform, double gbps, double cable_m);
/// The CABLE_LENGTH of a run of `length_m` in the traditional model: the shortest length of the
/// platform's pg_profile_lookup.ini that is at least as long (so buffermgrd finds it), else
/// the run rounded up to a metre.
double sonic_cable_length(const SonicPlatform& platform, double length_m);

/// RoCE v2 on the wire (IBTA InfiniBand Architecture Specification Vol. 1 Annex A17, RoCEv2):
/// the path MTU NCCL uses (4096, the largest IB MTU; the 9000-byte host MTU carries it) and
/// the bytes each packet adds: Ethernet header 14 + FCS 4, IPv4 20, UDP 8, BTH 12, ICRC 4; and
/// what every Ethernet frame costs on the line besides: preamble and SFD 8, inter-frame gap 12
/// (IEEE 802.3 clause 4.4.2).
constexpr int kRoceMtuBytes = 4096;
constexpr int kRoceHeaderBytes = 14 + 4 + 20 + 8 + 12 + 4;
constexpr int kEthernetGapBytes = 8 + 12;
/// A RoCE ACK/NAK or a CNP: headers, AETH 4 (or 16 reserved bytes in a CNP), padded to the
/// 64-byte Ethernet minimum.
constexpr int kRoceControlBytes = 64;
/// Payload bytes per byte on the line for full packets: 4096 / 4178 = 0.980.
constexpr double kRocePayloadEfficiency =
    static_cast<double>(kRoceMtuBytes) / (kRoceMtuBytes + kRoceHeaderBytes + kEthernetGapBytes);

/// WRED ECN marking of the RoCE queue (SONiC WRED_PROFILE green_min/max_threshold and
/// green_drop_probability; EOS random-detect ecn): no mark below kmin, probability rising
/// linearly to pmax at kmax, every packet above kmax.
struct EcnSettings {
  bool enabled = true;
  double kmin_bytes = kEcnMinKiB * 1024.0;
  double kmax_bytes = kEcnMaxKiB * 1024.0;
  double pmax = kEcnMarkPercent / 100.0;
};

/// DCQCN at a RoCE NIC (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
/// SIGCOMM 2015, §3): the reaction point (sender) and notification point (receiver).
struct DcqcnParams {
  std::string source;
  double g = 0;                        ///< alpha's gain: alpha = (1 - g) alpha + g on a CNP
  double alpha_update_s = 0;           ///< alpha decays by (1 - g) every period without a CNP
  double initial_alpha = 1;            ///< alpha of a flow's first CNP
  double rate_reduce_period_s = 0;     ///< at most one rate decrease per period
  double min_dec_factor = 0;           ///< a decrease keeps at least this share of the rate
  double min_rate_bps = 0;             ///< the rate never goes below (bits/s)
  double time_reset_s = 0;             ///< the rate-increase timer
  double byte_reset_bytes = 0;         ///< the rate-increase byte counter
  int fast_recovery_stages = 0;        ///< F: stages of fast recovery before additive increase
  double ai_rate_bps = 0;              ///< additive increase step of the target rate (bits/s)
  double hai_rate_bps = 0;             ///< hyper increase step (bits/s)
  double min_time_between_cnps_s = 0;  ///< the receiver sends at most one CNP per QP per period
  /// On a cut, the target rate becomes the current rate: always (clamp_tgt_rate, the paper's
  /// rule), or only when the rate was raised since the last cut (ConnectX's default): a run of
  /// cuts then keeps the target the rate had before the congestion, and fast recovery returns
  /// to it.
  bool clamp_target_always = false;
};
/// NVIDIA ConnectX-4 and later firmware defaults (NVIDIA DOCA 3.4 documentation, "DCQCN CC
/// Parameters": dce_tcp_g 1019/1024, dce_tcp_rtt 1 us, initial_alpha_value 1023/1024,
/// rate_reduce_monitor_period 4 us, rpg_min_dec_fac 50 %, rpg_min_rate 1 Mb/s,
/// rpg_time_reset 300 us, rpg_byte_reset 32767 x 64 B (2 MiB; Spirent's RoCE DCQCN profile
/// default, ByteResetInMb 2, agrees), rpg_threshold 1, rpg_ai_rate 5 Mb/s,
/// rpg_hai_rate 50 Mb/s, min_time_between_cnps 4 us; clamp_tgt_rate 0 and
/// clamp_tgt_rate_after_time_inc 1, which the same page and the mlx5 driver's
/// cong_control_r_roce_ecn_rp fields name: the target follows a cut only after an increase).
/// Checked against a ConnectX-4 Lx's own `mlxconfig -d ... q` (firmware defaults, published in
/// skyao's notes "配置 CX-4 网卡以开启 SR-IOV", 2021-01-18): CLAMP_TGT_RATE False,
/// CLAMP_TGT_RATE_AFTER_TIME_INC True, RPG_TIME_RESET 300, RPG_BYTE_RESET 32767,
/// RPG_THRESHOLD 1, RPG_AI_RATE 5, RPG_HAI_RATE 50, RPG_MIN_DEC_FAC 50, RPG_MIN_RATE 1,
/// DCE_TCP_G 1019, DCE_TCP_RTT 1, RATE_REDUCE_MONITOR_PERIOD 4, INITIAL_ALPHA_VALUE 1023,
/// MIN_TIME_BETWEEN_CNPS 4, CNP_DSCP 48 and CNP_802P_PRIO 6 (the CNP marking kCnpDscp and
/// kCnpQueue configure), every one as here; RPG_GD 11 (the decrease step when alpha is not
/// used) and RPG_MAX_RATE 0 (line rate) are not modelled. The hosts gpufabric configures run
/// these: hosts/*/roce-qos.sh sets no DCQCN value.
DcqcnParams dcqcn_nvidia_defaults();
/// The DCQCN paper's parameters (§5: g = 1/256, alpha timer 55 us, rate timer 55 us, byte
/// counter 10 MB, F = 5, R_AI 40 Mb/s, a CNP every 50 us at most), with the NVIDIA firmware's
/// decrease bounds. R_HAI, which the paper's text does not give, is 200 Mb/s as in the paper's
/// first author's own simulator (bobzhuyb/ns3-rdma, mix/config.txt: RATE_AI 40Mb/s,
/// RATE_HAI 200Mb/s, CNP_INTERVAL 50, ALPHA_RESUME_INTERVAL 55, DCTCP_GAIN 0.00390625 = 1/256,
/// FAST_RECOVERY_TIMES 5, CLAMP_TARGET_RATE 1, all as here; its RP_TIMER 60 and BYTE_COUNTER
/// 300000 are that simulation's, not the paper's 55 us and 10 MB, kept here).
DcqcnParams dcqcn_paper();
/// The paper's ECN marking (§5: Kmin 5 KB, Kmax 200 KB, Pmax 1 %).
EcnSettings ecn_paper();

/// HPCC at a RoCE NIC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019, §3,
/// Algorithm 1): every switch stamps INT (queue length, bytes sent, time, link rate) on each data
/// packet as it leaves an egress; the receiver echoes it in a per-packet ACK; the sender
/// estimates each hop's utilisation U = qlen / (B x T) + txRate / B, takes the most loaded hop,
/// smooths it over the base RTT T, and sets its window W = W_c / (U / eta) + W_AI (U >= eta, or
/// after max_stage additive steps) else W_c + W_AI, with W_c updated once per RTT and the pacing
/// rate W / T. Values from the authors' ns-3 simulator (alibaba-edu/High-Precision-Congestion-
/// Control, simulation/src/point-to-point/model/rdma-hw.cc RdmaHw::GetTypeId, UpdateRateHp, and
/// simulation/run.py's "hp" configuration).
struct HpccParams {
  std::string source;
  double eta = 0;            ///< target utilisation (TargetUtil, U_TARGET)
  int max_stage = 0;         ///< additive steps before a multiplicative one (MiThresh)
  double ai_rate_share = 0;  ///< W_AI / (line rate x T): R_AI as a share of the line rate
  double min_rate_bps = 0;   ///< the pacing rate never goes below (MIN_RATE)
  int int_bytes = 0;         ///< the INT header every data packet and ACK carries
  int max_hops = 0;          ///< hops the INT header holds (IntHeader::maxHop)
  bool fast_react = true;    ///< react on every ACK, W_c once per RTT (FAST_REACT)
};
/// The paper's HPCC: eta 95 % (rdma-hw.cc TargetUtil default 0.95; run.py --utgt 95), maxStage
/// 5 (the paper's setting and rdma-hw.cc MiThresh default 5; the first author's project page,
/// liyuliang001.github.io/projects/hpcc, says the paper's simulations ran maxStage 0 and the 5
/// printed for them is a typo; run.py's --mi defaults to 0),
/// R_AI 10 Mb/s per 25 Gb/s of line rate (run.py, hp: ai = 10 * bw / 25 Mb/s; W_AI = R_AI x T),
/// a floor of 1 Gb/s (run.py's config template, MIN_RATE 1000Mb/s), fast reaction on
/// (run.py, hp: FAST_REACT 1), and INT of 5 hops of 8 bytes plus a 2-byte hop count = 42 bytes
/// (simulation/src/network/utils/int-header.h: IntHop is two 32-bit words, maxHop 5,
/// uint16_t nhop).
HpccParams hpcc_paper();

/// The PFC thresholds of a lossless ingress priority group (SONiC's traditional model with the
/// dynamic threshold): the group pauses its upstream when its shared-buffer use passes
/// 2^dynamic_th x the free shared buffer, resumes xon_offset below that point, and holds what
/// arrives after the pause in `headroom_bytes` (the profile's xoff).
struct PfcThresholds {
  bool enabled = true;
  double headroom_bytes = 0;
  double xon_offset_bytes = 0;
  double dynamic_alpha = 1;  ///< 2^dynamic_th
};
/// The thresholds for a port of `gbps` on a cable of `cable_m` of a switch (its SONiC platform
/// when the catalog has one; the formula with one-byte cells otherwise).
PfcThresholds pfc_thresholds(const Switch& sw, double gbps, double cable_m);
/// What the headroom must hold after a pause is sent: the round trip of the cable at the line
/// rate, the frame in flight at each end, the MAC/PHY delay and the peer's response time
/// (the same terms as the formula without the cell occupancy), bytes.
double pfc_round_trip_bytes(double gbps, double cable_m);

}  // namespace gf
