// Running the commands of the emulated fabric (ip, FRR daemons, vtysh, ping, iperf3): argv
// vectors, never a shell, with a deadline and captured output.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace gf {

struct CommandResult {
  int exit_code = -1;  ///< -1 when it could not be started or was killed at the deadline
  bool timed_out = false;
  std::string out, err;
  bool ok() const { return exit_code == 0; }
  /// "ip netns add x: <first line of stderr>" for error messages.
  std::string describe(const std::vector<std::string>& argv) const;
};

/// Runs argv[0] (looked up in PATH) and waits for it, at most `timeout_s` seconds, after which
/// it is killed. Output is collected until the command exits; a daemon it leaves behind that
/// still holds the pipes does not hold up the call.
CommandResult run_command(const std::vector<std::string>& argv, double timeout_s = 30);

/// A command running in the background (iperf3 -s): started with start(), ended by finish().
class BackgroundCommand {
 public:
  explicit BackgroundCommand(const std::vector<std::string>& argv);
  ~BackgroundCommand();  ///< kills it if it still runs
  BackgroundCommand(const BackgroundCommand&) = delete;
  BackgroundCommand& operator=(const BackgroundCommand&) = delete;
  bool started() const { return pid_ > 0; }
  /// Waits up to `timeout_s` for it to exit by itself, then kills it; returns its result.
  CommandResult finish(double timeout_s);

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
};

/// The whole text of /proc/PID/cmdline with NULs as spaces; "" when there is no such process.
std::string process_cmdline(pid_t pid);
/// Sends SIGTERM to `pid`, waits up to `timeout_s` for it to go, then SIGKILL. True if it is
/// gone.
bool end_process(pid_t pid, double timeout_s = 3);

}  // namespace gf
