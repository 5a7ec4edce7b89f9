#include "cli/resources.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "common/file.h"
#include "common/memory.h"

namespace gf::cli {

Result<std::vector<ToolOutput>> read_outputs(const std::vector<std::string>& paths) {
  std::vector<ToolOutput> out;
  std::vector<Diagnostic> errs;
  std::size_t total = 0;
  for (const auto& p : paths) {
    // The limit holds for all files together, so many files cannot add up past it either.
    auto text = read_file_bounded(p, kMaxToolOutputBytes - std::min(total, kMaxToolOutputBytes));
    if (!text) {
      errs.push_back(text.errors().front());
      if (total > 0) errs.back().hint = "the files given together are over the limit";
      continue;
    }
    total += text->size();
    ToolOutput t{p, std::move(*text), OutputKind::kUnknown};
    t.kind = detect_output_kind(t.text);
    out.push_back(std::move(t));
  }
  if (!errs.empty()) return errs;
  return out;
}

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
