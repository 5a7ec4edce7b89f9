// A calibration profile: the factors `gpufabric calibrate --fit` measured on one cluster, which a
// spec applies with `calibration: profile.yaml`. Each factor multiplies or adds to one term of
// the simulator's model (sim/flow_builder.cc, sim/collective.cc); an absent one leaves it as the
// model has it.
#pragma once

#include <array>
#include <optional>
#include <string>

#include "common/diag.h"

namespace gf {

/// The algorithms a profile may carry a bandwidth factor for, in the order of sim's Algorithm
/// enum (sim/nccl_cost.h; collective.cc checks the two agree at compile time). The spec layer is
/// below sim, so the names are repeated here rather than included.
inline constexpr const char* kProfileAlgorithmNames[] = {
    "ring", "tree", "nvls", "nvls_tree", "collnet", "collnet_chain", "pat", "p2p"};
inline constexpr int kProfileAlgorithms = 8;

/// Bounds a profile's factors must lie in: an efficiency is a share of a link's rate (above 1
/// would beat the wire); an algorithm factor scales a modelled bandwidth within 4x either way;
/// a per-step latency is at most a millisecond (an order above any NCCL step, tuning.cc).
constexpr double kMinProfileEfficiency = 0.05;
constexpr double kMaxProfileEfficiency = 1.0;
constexpr double kMinAlgorithmFactor = 0.25;
constexpr double kMaxAlgorithmFactor = 4.0;
constexpr double kMaxStepLatencyUs = 1000;
/// A network message's own time is at most a millisecond too: two orders above the largest
/// per-message cost a published run shows (a few us, data/calibration/README.md).
constexpr double kMaxNetworkMessageUs = 1000;

/// One cluster's measured factors; the defaults change nothing.
struct CalibrationProfile {
  std::string file;  ///< where it was read from ("" when built in memory)
  /// Share of an NVLink (scale-up) link's rate the Simple protocol reaches; nullopt: the model's
  /// for the GPU's generation (sim/nccl_cost.h scale_up_simple_efficiency). NVLS follows it by its
  /// ratio to the model's value (nvls_link_share): 0.82 on a Blackwell cluster is 0.82 / 0.755 of
  /// the model's NVLink, and of its NVLS.
  std::optional<double> scaleup_efficiency;
  /// Share of a scale-out link's (NIC, leaf, spine) rate Simple reaches; nullopt: the model's
  /// (kNetworkSimpleEfficiency).
  std::optional<double> network_efficiency;
  /// Latency this cluster adds to every step that crosses the network, us (proxy, NIC and
  /// switch time beyond NCCL's tables and the fabric's hop latency).
  double network_step_latency_us = 0;
  /// Latency this cluster adds to every NVLink step (inside a scale-up domain), us, beyond
  /// NCCL's hwLat[NVLINK] and, in a rack, the model's switch-tray step (kRackNvlinkStepUs):
  /// charged in the time, not in NCCL's estimate of it, which steers its choice without it.
  double nvlink_step_latency_us = 0;
  /// Time each network message holds its connection beyond its bytes, us: NCCL's proxy posts one
  /// send a slice of a channel's connection (transport/net.cc@v2.29.7-1:1281-1346). Charged in
  /// series with the bytes of ring and tree calls the scale-out links pace, for every message
  /// after the first loop's (those are NCCL's step latency; sim's network_messages_us). 0: none
  /// (the model's: NCCL's tables have no such term).
  double network_message_us = 0;
  /// Per algorithm (kProfileAlgorithmNames order), the factor on its modelled bandwidth.
  std::array<double, kProfileAlgorithms> algorithm_factor{1, 1, 1, 1, 1, 1, 1, 1};
  /// What the profile says it was fitted on (its `cluster:` GPU and NIC ids; "" when it does not
  /// say): a spec of other hardware is told so where the profile is applied.
  std::string fitted_gpu, fitted_nic;

  /// True when the profile changes nothing.
  bool identity() const;
};

/// Reads a profile's YAML (`file` names it in messages): `factors:` with scaleup_efficiency,
/// network_efficiency, network_step_latency_us, nvlink_step_latency_us, network_message_us and
/// algorithms: {NAME: factor}; the fit's report
/// (`fit:`, `cross_validation:`, `fitted_on:`) is kept for the reader and not interpreted, but
/// for `cluster:`'s gpu and nic, and `profile:` (the format) must be 1. Every problem is an error
/// with the line and the key.
Result<CalibrationProfile> parse_calibration_profile(const std::string& text,
                                                     const std::string& file);

}  // namespace gf
