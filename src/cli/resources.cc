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
    const auto start = std::chrono::steady_clock::now();
    const auto period = std::chrono::duration<double>(kHeartbeatSeconds);
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, period, [this] { return done_; })) {
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::fputs(fmt::format("\r{}: working, {:.0f} s", who_, s).c_str(), stderr);
      printed_ = true;
    }
    if (printed_) std::fputs("\n", stderr);
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
