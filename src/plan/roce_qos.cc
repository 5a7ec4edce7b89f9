#include "plan/roce_qos.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gf {
namespace {

constexpr int kKiB = 1024;
// The constants of sonic-swss 202311 cfgmgr/buffer_headroom_mellanox.lua (roce_qos.h gives the
// formula): the smallest packet, and the MAC and PHY delay, 0.8 KiB in NVIDIA's ASIC table
// (platform/mellanox/asic_table.j2, every Spectrum); Broadcom publishes none for the Tomahawks,
// so the same figure is used.
constexpr double kMinimalPacketBytes = 64;
constexpr double kMacPhyDelayBytes = 0.8 * kKiB;

long long round_up(double bytes, int unit) {
  return static_cast<long long>(std::ceil(bytes / unit)) * unit;
}

// The propagation terms of the headroom (the formula's bracket): a frame, the cable both ways,
// the MAC/PHY delay and the peer's response.
double headroom_propagation_bytes(double gbps, double cable_m) {
  const double cable_bytes = 2 * cable_m * gbps * 1e9 / kSignalSpeedMps / 8;
  const double peer_response = pfc_pause_quanta(gbps) * 512.0 / 8;
  return kSonicMtu + cable_bytes + kMacPhyDelayBytes + peer_response;
}

}  // namespace

int pfc_pause_quanta(double gbps) {
  if (gbps >= 400) return 905;
  if (gbps >= 200) return 453;
  if (gbps >= 100) return 394;
  if (gbps >= 50) return 147;
  if (gbps >= 40) return 118;
  if (gbps >= 25) return 80;
  return 67;
}

double sonic_cable_length(const SonicPlatform& platform, double length_m) {
  for (double l : platform.cable_lengths_m)
    if (l >= length_m) return l;
  return std::ceil(length_m);
}

LosslessProfile sonic_lossless_profile(const SonicPlatform& platform, double gbps, double cable_m) {
  const SonicLosslessPg pg = platform.lossless_pg.value_or(SonicLosslessPg{});
  const double cell = std::max(1, pg.cell_bytes);
  const double worst =
      cell > 2 * kMinimalPacketBytes ? cell / kMinimalPacketBytes : 2 * cell / (1 + cell);
  const double occupancy = (100 - kSmallPacketPercentage + kSmallPacketPercentage * worst) / 100.0;
  const double propagation = headroom_propagation_bytes(gbps, cable_m);
  LosslessProfile p;
  p.cable_m = cable_m;
  p.xoff = round_up(kSonicMtu + propagation * occupancy, kKiB);
  p.xon = static_cast<long long>(pg.xon);
  p.size = static_cast<long long>(pg.size);
  p.xon_offset = static_cast<long long>(pg.xon_offset);
  p.dynamic_th = pg.dynamic_th;
  p.name = fmt::format("pg_lossless_{:.0f}_{:g}m_profile", gbps * 1000, cable_m);
  return p;
}

double pfc_round_trip_bytes(double gbps, double cable_m) {
  return kSonicMtu + headroom_propagation_bytes(gbps, cable_m);
}

// Where the catalog has no SONiC platform (no pg_profile_lookup.ini xon_offset): an estimate,
// two of SONiC's jumbo frames (2 x 9100 bytes) rounded up to 1 KiB.
constexpr double kDefaultXonOffsetBytes = 18432;

PfcThresholds pfc_thresholds(const Switch& sw, double gbps, double cable_m) {
  const SonicPlatform platform = sw.sonic.value_or(SonicPlatform{});
  const double cable = sw.sonic ? sonic_cable_length(platform, cable_m) : std::ceil(cable_m);
  const LosslessProfile p = sonic_lossless_profile(platform, gbps, cable);
  PfcThresholds t;
  t.headroom_bytes = static_cast<double>(p.xoff);
  t.xon_offset_bytes =
      p.xon_offset > 0 ? static_cast<double>(p.xon_offset) : kDefaultXonOffsetBytes;
  t.dynamic_alpha = std::ldexp(1.0, p.dynamic_th);
  return t;
}

DcqcnParams dcqcn_nvidia_defaults() {
  DcqcnParams d;
  d.source = "NVIDIA ConnectX firmware defaults (DOCA 3.4, DCQCN CC Parameters)";
  d.g = (1024.0 - 1019.0) / 1024.0;   // dce_tcp_g 1019: alpha = 1019/1024 alpha + 5/1024
  d.alpha_update_s = 1e-6;            // dce_tcp_rtt
  d.initial_alpha = 1023.0 / 1024.0;  // initial_alpha_value
  d.rate_reduce_period_s = 4e-6;      // rate_reduce_monitor_period
  d.min_dec_factor = 0.5;             // rpg_min_dec_fac 50 %
  d.min_rate_bps = 1e6;               // rpg_min_rate
  d.time_reset_s = 300e-6;            // rpg_time_reset
  d.byte_reset_bytes = 32767 * 64.0;  // rpg_byte_reset 32767, in 64-byte units: 2 MiB
  d.fast_recovery_stages = 1;         // rpg_threshold
  d.ai_rate_bps = 5e6;                // rpg_ai_rate
  d.hai_rate_bps = 50e6;              // rpg_hai_rate
  d.min_time_between_cnps_s = 4e-6;   // min_time_between_cnps
  return d;
}

DcqcnParams dcqcn_paper() {
  DcqcnParams d = dcqcn_nvidia_defaults();
  d.source = "DCQCN paper (Zhu et al., SIGCOMM 2015, section 5)";
  d.g = 1.0 / 256;
  d.alpha_update_s = 55e-6;
  d.initial_alpha = 1;
  // The rate is cut at most once per CNP interval (HPCC's ns-3 runs the paper's DCQCN so:
  // alibaba-edu/High-Precision-Congestion-Control simulation/run.py, dcqcn_paper, t_dec 50).
  d.rate_reduce_period_s = 50e-6;
  d.time_reset_s = 55e-6;
  d.byte_reset_bytes = 10e6;
  d.fast_recovery_stages = 5;
  d.ai_rate_bps = 40e6;
  d.hai_rate_bps = 200e6;  // RATE_HAI of the paper's author's ns3-rdma (roce_qos.h)
  d.min_time_between_cnps_s = 50e-6;
  d.clamp_target_always = true;  // the paper's RP: R_T = R_C on every cut
  return d;
}

HpccParams hpcc_paper() {
  HpccParams h;
  h.source = "HPCC paper (Li et al., SIGCOMM 2019) and its authors' ns-3 simulator";
  h.eta = 0.95;
  h.max_stage = 5;
  h.ai_rate_share = 10e6 / 25e9;
  h.min_rate_bps = 1e9;
  h.max_hops = 5;
  h.int_bytes = h.max_hops * 8 + 2;
  h.fast_react = true;
  return h;
}

EcnSettings ecn_paper() {
  EcnSettings e;
  e.kmin_bytes = 5e3;
  e.kmax_bytes = 200e3;
  e.pmax = 0.01;
  return e;
}

}  // namespace gf
