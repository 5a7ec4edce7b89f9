// What a command may use of the machine, and signs of life while it works.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "plan/plan.h"
#include "verify/parsers.h"

namespace gf::cli {

/// The share of the available memory a command plans to use; the rest is left to the system
/// and to what the estimates do not count.
constexpr double kUsableMemoryShare = 0.8;
/// A command that runs longer than this shows it is alive on stderr (a terminal only).
constexpr double kHeartbeatSeconds = 2;

/// Reads every tool output a command is given (check, calibrate --fit), each detected by its
/// content; unreadable ones are bad input. The size limit holds for all files together.
Result<std::vector<ToolOutput>> read_outputs(const std::vector<std::string>& paths);

/// Limits for load_and_plan from this machine's available memory.
LoadLimits load_limits(bool simulates);

/// load_and_plan of the spec at `path`, and where it does not load because it is a tool's output
/// (nccl-tests, perftest, iperf3 --json, ...), one error that says so, in place of the keys a
/// spec would have (an iperf3 JSON read as YAML names "start", "intervals" and "end").
Result<PlannedSpec> load_planned_spec(const std::string& path, const LoadLimits& limits = {});

/// While alive, prints "WHO: still working, N s" to stderr after kHeartbeatSeconds, then at each
/// doubling of the time, when stderr is a terminal (DESIGN: progress only on a terminal).
class Heartbeat {
 public:
  explicit Heartbeat(std::string who);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

 private:
  std::string who_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace gf::cli
