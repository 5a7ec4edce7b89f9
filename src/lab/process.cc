#include "lab/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "common/file.h"

namespace gf {
namespace {

using Clock = std::chrono::steady_clock;

/// Exit status of a child that could not exec (as shells use).
constexpr int kExecFailed = 127;
/// How often a wait looks again.
constexpr std::chrono::milliseconds kPollInterval{20};

// Forks argv; the child's stdout goes to out[1] and its stderr to err[1] (the same pipe when
// they are equal). Returns the pid, or -1.
pid_t spawn(const std::vector<std::string>& argv, int out_w, int err_w) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid != 0) return pid;
  // Child: stdin from /dev/null, output to the pipes, then exec.
  const int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, STDIN_FILENO);
  dup2(out_w, STDOUT_FILENO);
  dup2(err_w, STDERR_FILENO);
  execvp(args[0], args.data());
  // Only async-signal-safe calls between fork and _exit.
  static constexpr char kCannotRun[] = ": cannot run it (is it installed?)\n";
  (void)!write(STDERR_FILENO, args[0], std::strlen(args[0]));
  (void)!write(STDERR_FILENO, kCannotRun, sizeof kCannotRun - 1);
  _exit(kExecFailed);
}

void drain(int fd, std::string& into) {
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return;
    into.append(buf, static_cast<size_t>(n));
  }
}

int pipe_cloexec_nonblock(int fds[2]) { return pipe2(fds, O_CLOEXEC | O_NONBLOCK); }

// Reads fds until `pid` exits or the deadline passes (then kills it). Fills `r`.
void collect(pid_t pid, const std::vector<std::pair<int, std::string*>>& fds, double timeout_s,
             CommandResult& r) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  std::vector<pollfd> pfds;
  for (const auto& [fd, _] : fds) pfds.push_back({fd, POLLIN, 0});
  for (;;) {
    poll(pfds.data(), pfds.size(), static_cast<int>(kPollInterval.count()));
    for (const auto& [fd, into] : fds) drain(fd, *into);
    int status = 0;
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      for (const auto& [fd, into] : fds) drain(fd, *into);
      r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      return;
    }
    if (Clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      for (const auto& [fd, into] : fds) drain(fd, *into);
      r.timed_out = true;
      r.exit_code = -1;
      return;
    }
  }
}

}  // namespace

std::string CommandResult::describe(const std::vector<std::string>& argv) const {
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  if (timed_out) return cmd + ": did not finish in time";
  std::string why = err.empty() ? out : err;
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  if (const auto nl = why.rfind('\n'); nl != std::string::npos) why = why.substr(nl + 1);
  return cmd + ": " + (why.empty() ? "exit code " + std::to_string(exit_code) : why);
}

CommandResult run_command(const std::vector<std::string>& argv, double timeout_s) {
  CommandResult r;
  int out[2], err[2];
  if (argv.empty() || pipe_cloexec_nonblock(out) != 0) return r;
  if (pipe_cloexec_nonblock(err) != 0) {
    close(out[0]);
    close(out[1]);
    return r;
  }
  const pid_t pid = spawn(argv, out[1], err[1]);
  close(out[1]);
  close(err[1]);
  if (pid > 0) collect(pid, {{out[0], &r.out}, {err[0], &r.err}}, timeout_s, r);
  close(out[0]);
  close(err[0]);
  return r;
}

BackgroundCommand::BackgroundCommand(const std::vector<std::string>& argv) {
  int fds[2];
  if (argv.empty() || pipe_cloexec_nonblock(fds) != 0) return;
  pid_ = spawn(argv, fds[1], fds[1]);
  close(fds[1]);
  out_fd_ = fds[0];
  if (pid_ <= 0) {
    close(out_fd_);
    out_fd_ = -1;
  }
}

BackgroundCommand::~BackgroundCommand() {
  if (pid_ > 0) finish(0);
}

CommandResult BackgroundCommand::finish(double timeout_s) {
  CommandResult r;
  if (pid_ <= 0) return r;
  collect(pid_, {{out_fd_, &r.out}}, timeout_s, r);
  close(out_fd_);
  pid_ = -1;
  out_fd_ = -1;
  return r;
}

std::string process_cmdline(pid_t pid) {
  auto read = read_file_bounded("/proc/" + std::to_string(pid) + "/cmdline", kMaxSpecBytes);
  std::string s = read ? std::move(*read) : std::string();
  for (char& c : s)
    if (c == '\0') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

namespace {
// Gone, or a zombie waiting for its parent (not ours) to reap it.
bool process_gone(pid_t pid) {
  if (kill(pid, 0) != 0) return true;
  auto read = read_file_bounded("/proc/" + std::to_string(pid) + "/stat", kMaxCounterFileBytes);
  const std::string stat = read ? read->substr(0, read->find('\n')) : std::string();
  const auto close_paren = stat.rfind(')');
  return close_paren == std::string::npos || close_paren + 2 >= stat.size() ||
         stat[close_paren + 2] == 'Z';
}
}  // namespace

bool end_process(pid_t pid, double timeout_s) {
  if (pid <= 0) return true;
  if (process_gone(pid)) return true;
  kill(pid, SIGTERM);
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (Clock::now() < deadline) {
    if (process_gone(pid)) return true;
    std::this_thread::sleep_for(kPollInterval);
  }
  kill(pid, SIGKILL);
  for (int i = 0; i < 50 && !process_gone(pid); ++i) std::this_thread::sleep_for(kPollInterval);
  return process_gone(pid);
}

}  // namespace gf
