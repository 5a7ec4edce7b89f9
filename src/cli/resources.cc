#include "cli/resources.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <regex>
#include <sstream>

#include "common/file.h"
#include "common/memory.h"

namespace gf::cli {

Result<PlannedSpec> load_planned_spec(const std::string& path, const LoadLimits& limits) {
  auto loaded = load_and_plan(path, limits);
  if (loaded) return loaded;
  constexpr std::size_t kSniffBytes = 1 << 20;  // enough of any tool's output to tell its kind
  auto text = read_file_bounded(path, kSniffBytes);
  if (!text) return loaded;
  const OutputKind kind = detect_output_kind(*text);
  if (kind == OutputKind::kUnknown) return loaded;
  // A text that quotes a few NCCL log lines (a README, notes) is not a log: one whose lines are
  // mostly NCCL's is (kMinLogLineShare of them at least).
  if (kind == OutputKind::kNcclLog) {
    constexpr double kMinLogLineShare = 0.1;
    static const std::regex log_line(R"([^\s:]+:\d+:\d+ \[\d+\] NCCL (INFO|WARN))");
    std::size_t lines = 0, nccl = 0;
    std::istringstream in(*text);
    for (std::string l; std::getline(in, l);) {
      if (l.find_first_not_of(" \t\r") == std::string::npos) continue;
      ++lines;
      if (std::regex_search(l, log_line)) ++nccl;
    }
    if (static_cast<double>(nccl) < kMinLogLineShare * static_cast<double>(lines)) return loaded;
  }
  return Diagnostic::in_file(
      path, "SPEC", fmt::format("this is {} output, not a cluster spec", output_kind_name(kind)),
      "give the spec (YAML) the cluster was planned from, e.g. examples/seed-70b-1024.yaml; "
      "tools' outputs go to check, diagnose or calibrate --fit");
}

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
