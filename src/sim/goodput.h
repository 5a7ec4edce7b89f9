// Expected goodput of a training run: how often a cluster of this size is interrupted (the
// failure statistics of a large run, by cause, scaled to the planned cluster), what each
// interruption costs with checkpoint/restart (the work since the last checkpoint, the restart),
// and the checkpoint interval that minimises it (Young's and Daly's optimum). Pure.
#pragma once

#include <string>
#include <vector>

namespace gf {

/// What an interruption cause scales with: the GPUs or the nodes (hosts).
enum class FailureScope { kGpu, kNode };

/// One cause of interruptions in the reference run.
struct FailureCause {
  const char* name;
  int interruptions;  ///< in the reference run
  FailureScope scope;
};

/// The reference run: Llama 3 405B pre-training, a 54-day snapshot on 16,384 H100 GPUs in
/// Grand Teton servers of 8 (Dubey et al. 2024, "The Llama 3 Herd of Models", §3.3.4 and
/// Table 5: 466 interruptions, 47 planned, 419 unexpected, by root cause).
constexpr double kReferenceGpus = 16384;
constexpr double kReferenceGpusPerNode = 8;
constexpr double kReferenceDays = 54;
/// Table 5's causes (the 419 unexpected) and the 47 planned interruptions (§3.3.4: automated
/// maintenance such as firmware upgrades). Scope is our reading: GPU, NIC, fabric, collective
/// and software faults grow with the GPUs (one 400G NIC per GPU there, the fabric sized to the
/// GPUs, a rank's bug or hang stops the job); host parts and maintenance with the nodes.
inline constexpr FailureCause kReferenceCauses[] = {
    {"faulty GPU", 148, FailureScope::kGpu},
    {"GPU HBM3 memory", 72, FailureScope::kGpu},
    {"software bug", 54, FailureScope::kGpu},
    {"network switch/cable", 35, FailureScope::kGpu},
    {"host maintenance", 32, FailureScope::kNode},
    {"GPU SRAM memory", 19, FailureScope::kGpu},
    {"GPU system processor", 17, FailureScope::kGpu},
    {"NIC", 7, FailureScope::kGpu},
    {"NCCL watchdog timeout", 7, FailureScope::kGpu},
    {"silent data corruption", 6, FailureScope::kGpu},
    {"GPU thermal interface and sensor", 6, FailureScope::kGpu},
    {"SSD", 3, FailureScope::kNode},
    {"power supply", 3, FailureScope::kNode},
    {"server chassis", 2, FailureScope::kNode},
    {"IO expansion board", 2, FailureScope::kNode},
    {"dependency", 2, FailureScope::kGpu},
    {"CPU", 2, FailureScope::kNode},
    {"system memory", 2, FailureScope::kNode},
    {"planned maintenance", 47, FailureScope::kNode},
};

/// Bytes a checkpoint holds per parameter with mixed-precision Adam: the 16-bit weights (2) and
/// the optimizer's fp32 master weights, momentum and variance (K = 12; Rajbhandari et al.,
/// "ZeRO", SC'20, §3.1); gradients are not saved.
constexpr double kCheckpointBytesPerParam = 14;
/// Storage write rate the checkpoint is written at, bytes/s: Llama 3's Tectonic, 2 TB/s
/// sustained (Dubey et al. 2024, §3.3.1; 7 TB/s peak). A default: give your storage's.
constexpr double kDefaultStorageWriteBps = 2e12;
/// Relaunching the job after an interruption (rescheduling, process start, NCCL
/// initialisation), before the checkpoint is read back: an assumption, not a measured figure;
/// give your own (GoodputOptions::relaunch_s).
constexpr double kDefaultRelaunchS = 600;

struct GoodputOptions {
  double gpus = 0, nodes = 0;
  double params = 0;      ///< model parameters (the checkpoint's size)
  double useful_s = 0;    ///< training time without interruptions (0: unknown)
  double interval_s = 0;  ///< checkpoint interval of compute; 0: Daly's optimum
  double storage_write_Bps = kDefaultStorageWriteBps;
  double storage_read_Bps = kDefaultStorageWriteBps;  ///< the restart reads it back
  double relaunch_s = kDefaultRelaunchS;
};

/// One cause's rate on the planned cluster.
struct GoodputCause {
  std::string name;
  double per_hour = 0;  ///< interruptions per hour of the job
};

struct Goodput {
  double interruptions_per_hour = 0;
  double mtbf_s = 0;  ///< mean time between interruptions of the job
  double checkpoint_bytes = 0, checkpoint_write_s = 0, restart_s = 0;
  double interval_s = 0;  ///< the interval used
  bool interval_given = false;
  double young_s = 0, daly_s = 0;  ///< optimum intervals
  double goodput = 0;              ///< useful time / wall time at interval_s
  double goodput_at_optimum = 0;   ///< at daly_s
  bool progresses = true;          ///< false: interruptions come faster than the job recovers
  double useful_s = 0, wall_s = 0, lost_s = 0, expected_interruptions = 0;
  std::vector<GoodputCause> causes;  ///< largest first
};

/// The goodput of a job on `gpus` GPUs in `nodes` nodes. Each interruption loses on average
/// half a checkpoint segment (the work since the last checkpoint, and that checkpoint's write
/// if it was under way) and the restart (relaunch + reading the checkpoint back); every segment
/// of `interval_s` compute also writes one checkpoint. Wall time W for useful time T:
/// W = T (1 + delta / tau) / (1 - (R + (tau + delta) / 2) / M), M the mean time between
/// interruptions (first order, as Young 1974 and Daly 2006 model it).
Goodput expected_goodput(const GoodputOptions& o);

/// Young's optimum checkpoint interval, sqrt(2 delta M) (J. W. Young, "A first order
/// approximation to the optimum checkpoint interval", CACM 17(9), 1974).
double young_interval_s(double write_s, double mtbf_s);
/// Daly's higher-order optimum: sqrt(2 delta M) [1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9]
/// - delta for delta < 2M, else M (J. T. Daly, "A higher order estimate of the optimum
/// checkpoint interval for restart dumps", FGCS 22(3), 2006).
double daly_interval_s(double write_s, double mtbf_s);

}  // namespace gf
