#include "cli/resources.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "common/memory.h"

namespace gf::cli {

LoadLimits load_limits(bool simulates) {
  return LoadLimits{available_memory_bytes() * kUsableMemoryShare, simulates};
}

Heartbeat::Heartbeat(std::string who) : who_(std::move(who)) {
  if (!isatty(STDERR_FILENO)) return;
  thread_ = std::thread([this] {
    // Whole lines (an error printed meanwhile never shares one), at 2, 4, 8, ... s.
    const auto start = std::chrono::steady_clock::now();
    auto next = std::chrono::duration<double>(kHeartbeatSeconds);
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_until(lock, start + next, [this] { return done_; })) {
      std::fputs(fmt::format("{}: still working, {:.0f} s\n", who_, next.count()).c_str(), stderr);
      next *= 2;
    }
  });
}

Heartbeat::~Heartbeat() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

}  // namespace gf::cli
