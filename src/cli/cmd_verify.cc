// gpufabric check, diagnose and doctor: real measurements against the plan and the guide.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/resources.h"
#include "common/file.h"
#include "plan/plan.h"
#include "spec/spec.h"
#include "units/units.h"
#include "verify/acceptance.h"
#include "verify/check.h"
#include "verify/diagnose.h"
#include "verify/doctor.h"

namespace gf::cli {
namespace {

/// --tolerance: below 1, since a tolerance of 1 would accept a run that moved nothing.
constexpr double kMaxTolerance = 0.99;

/// Folders below a results folder: its layout is two or three deep (burn-in/pass-2/...).
constexpr int kMaxResultsDepth = 4;
/// The top folders of the acceptance runbook's results layout (verify/acceptance.h).
const std::string kResultsFolders[] = {"link-tests", "burn-in", "counters", "nccl"};

// Every regular file under a results folder, named relative to it; the limit holds for all
// together. Links are not followed (a results folder is written by the runbook's scripts).
Result<std::vector<ResultFile>> read_results_folder(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<ResultFile> out;
  std::vector<Diagnostic> errs;
  std::size_t total = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
  if (ec) return Diagnostic::in_file(dir, "RESULTS", "cannot read the folder: " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) return Diagnostic::in_file(dir, "RESULTS", "cannot read the folder: " + ec.message());
    if (it.depth() >= kMaxResultsDepth) {
      it.disable_recursion_pending();
      continue;
    }
    // Only the runbook's folders are read: whatever else lies beside them is not a result.
    // Lexically: fs::relative would follow a link to wherever it points.
    const std::string rel = it->path().lexically_relative(dir).generic_string();
    const std::string top = rel.substr(0, rel.find('/'));
    if (top == rel || !std::count(std::begin(kResultsFolders), std::end(kResultsFolders), top))
      continue;
    const bool link = it->is_symlink(ec);
    if (!link && it->is_directory(ec)) continue;
    // Inside them, what is not a plain file (a link, a FIFO, a device) is named, not taken for a
    // missing result: the runbook's scripts write plain files.
    if (link || !it->is_regular_file(ec)) {
      errs.push_back(Diagnostic::in_file(
          it->path().string(), "RESULTS",
          link ? "a link: results are read from plain files only (links are not followed)"
               : "not a plain file: the runbook's scripts write plain files here",
          "copy the result into the folder as a file"));
      continue;
    }
    const std::string path = it->path().string();
    auto text = read_file_bounded(path, kMaxToolOutputBytes - std::min(total, kMaxToolOutputBytes));
    if (!text) {
      errs.push_back(text.errors().front());
      if (total > 0) errs.back().hint = "the files of the folder together are over the limit";
      break;
    }
    total += text->size();
    out.push_back({rel, std::move(*text)});
  }
  if (!errs.empty()) return errs;
  std::sort(out.begin(), out.end(),
            [](const ResultFile& a, const ResultFile& b) { return a.path < b.path; });
  return out;
}

// The burn-in passes a results folder holds: burn-in/pass-2 ... pass-N give N - 1.
int burn_in_passes_in(const std::vector<ResultFile>& files) {
  int last = 1;
  for (const auto& f : files) {
    int n = 0;
    if (std::sscanf(f.path.c_str(), "burn-in/pass-%d/", &n) == 1 && n > last && n < 1000) last = n;
  }
  return last - 1;
}

// The burn-in passes the runbook behind a results folder planned: --burn-in-passes, else what
// its scripts wrote (kResultsPlanFile), else acceptance's default, said on stderr. Never what
// the folder happens to hold: a pass not run would then be a pass not planned.
Result<int> planned_burn_in_passes(const std::string& dir, int flag,
                                   const std::vector<ResultFile>& files, bool quiet) {
  namespace fs = std::filesystem;
  int passes = flag;
  const fs::path at = fs::path(dir) / kResultsPlanFile;
  std::error_code ec;
  if (passes < 0 && fs::exists(fs::symlink_status(at, ec))) {
    constexpr std::size_t kMaxPlanFileBytes = 64 * 1024;
    auto text = read_file_bounded(at.string(), kMaxPlanFileBytes);
    if (!text) return text.errors();
    auto n = parse_results_plan(*text, at.string());
    if (!n) return n.errors();
    passes = *n;
  }
  if (passes < 0) {
    passes = AcceptanceOptions{}.burn_in_passes;
    if (!quiet)
      std::cerr << fmt::format(
          "note: {} has no {} (each script of the runbook writes it): expecting acceptance's "
          "default of {} burn-in passes; give --burn-in-passes N for a runbook of another "
          "count\n",
          dir, kResultsPlanFile, passes);
  }
  if (const int held = burn_in_passes_in(files); held > passes)
    return Diagnostic::in_file(
        (fs::path(dir) / fmt::format("burn-in/pass-{}", held + 1)).string(), "RESULTS",
        fmt::format("results of burn-in pass {}, where the runbook planned {} pass{} (passes 2 "
                    "to {})",
                    held + 1, passes, passes == 1 ? "" : "es", passes + 1),
        flag >= 0 ? "give the --burn-in-passes the runbook was written with"
                  : "give check --burn-in-passes N, N the runbook's count, or move the "
                    "results of another runbook away");
  return passes;
}

bool has_error(const std::vector<Finding>& fs) {
  for (const auto& f : fs)
    if (f.severity == Severity::kError) return true;
  return false;
}

struct CheckFlags {
  std::string spec;
  std::vector<std::string> files;
  double tolerance = kDefaultBusbwTolerance;
  int burn_in_passes = -1;  ///< -1: the results folder's plan file, else acceptance's default
  bool json = false;
};

struct DiagnoseFlags {
  std::vector<std::string> files;
  std::string line_rate, spec;
  bool json = false;
};

struct DoctorFlags {
  std::string sysfs = "/sys";
  bool json = false;
};

}  // namespace

Command add_check(CLI::App& root) {
  auto f = std::make_shared<CheckFlags>();
  CLI::App* a = root.add_subcommand(
      "check",
      "Compare nccl-tests, perftest and iperf3 results with what the simulator expects of the "
      "planned fabric (exit 1 when below expectation); given a results folder of `gpufabric "
      "acceptance`'s runbook, judge every link test, nccl-tests run and burn-in counter and name "
      "the suspect cable.");
  a->add_option("SPEC", f->spec, "the cluster spec the measurements were taken on")->required();
  a->add_option("FILES", f->files,
                "nccl-tests outputs, perftest outputs, iperf3 --json files; or one results "
                "folder laid out as the acceptance runbook says (link-tests/, burn-in/, "
                "counters/, nccl/)")
      ->required();
  a->add_option("--tolerance", f->tolerance,
                "fraction below the expected bus bandwidth still accepted, in [0, 1)")
      ->check(finite_in(0, kMaxTolerance))
      ->capture_default_str();
  a->add_option("--burn-in-passes", f->burn_in_passes,
                "with a results folder: the burn-in passes of the runbook it follows (default: "
                "what its scripts wrote in RESULTS/acceptance-plan.txt, else acceptance's 3); "
                "every planned pass's results are expected")
      ->check(CLI::Range(0, kMaxBurnInPasses));
  a->add_flag("--json", f->json, "print the comparison as JSON");
  return {a, [f]() -> int {
            Heartbeat alive("check");
            auto loaded = load_planned_spec(f->spec, load_limits(true));
            if (!loaded) return fail(loaded.errors());
            const Plan* plan = &loaded->plan;
            std::error_code ec;
            const bool folder = std::any_of(f->files.begin(), f->files.end(), [&](auto& p) {
              return std::filesystem::is_directory(p, ec);
            });
            if (!folder && f->burn_in_passes >= 0)
              return fail({Diagnostic::flag("--burn-in-passes",
                                            "applies to a results folder of the acceptance "
                                            "runbook, and none was given",
                                            "give the folder, or leave the flag out")});
            if (folder && f->files.size() > 1)
              return fail({Diagnostic::flag("FILES", "a results folder is read alone",
                                            "give either the folder or files")});
            if (folder) {
              auto files = read_results_folder(f->files.front());
              if (!files) return fail(files.errors());
              AcceptanceOptions o;
              o.tolerance = f->tolerance;
              auto passes =
                  planned_burn_in_passes(f->files.front(), f->burn_in_passes, *files, f->json);
              if (!passes) return fail(passes.errors());
              o.burn_in_passes = *passes;
              auto a = plan_acceptance(*loaded, o);
              if (!a) return fail(a.errors());
              auto r = check_acceptance(*loaded, *a, *files);
              if (!r) {  // name the files as the user can open them
                std::vector<Diagnostic> errs = r.errors();
                for (auto& d : errs)
                  if (d.file == ".")
                    d.file = f->files.front();
                  else if (!d.file.empty())
                    d.file = (std::filesystem::path(f->files.front()) / d.file).string();
                return fail(errs);
              }
              std::cout << (f->json ? acceptance_result_json(*r).dump(2) + "\n"
                                    : acceptance_result_text(*r));
              return r->pass ? kExitOk : kExitFindings;
            }
            auto files = read_outputs(f->files);
            if (!files) return fail(files.errors());
            auto r = check_measurements(*plan, loaded->catalog, *files, f->tolerance);
            if (!r) return fail(r.errors());
            std::cout << (f->json ? check_json(*r).dump(2) + "\n" : check_text(*r));
            return r->pass() ? kExitOk : kExitFindings;
          }};
}

Command add_diagnose(CLI::App& root) {
  auto f = std::make_shared<DiagnoseFlags>();
  CLI::App* a = root.add_subcommand(
      "diagnose",
      "Explain what is wrong from NCCL logs, nccl-tests, perftest, iperf3, nvidia-smi topo -m, "
      "ibv_devinfo, ethtool -S and ip -d link outputs (exit 1 on an error finding).");
  a->add_option("FILES", f->files, "tool outputs, each detected by its content")->required();
  a->add_option("--line-rate", f->line_rate,
                "NIC port rate RDMA results are judged against, e.g. 400G (default: the spec's, "
                "or the nearest standard rate)");
  a->add_option("--spec", f->spec,
                "the cluster spec: its NIC rate judges RDMA results, nccl-tests results are "
                "compared with the simulated fabric as check compares them (a finding more "
                "than its default 15 % below), and the rails it names "
                "(addressing.host_netdevs) are checked in ip link output (up, MTU 9000)");
  a->add_flag("--json", f->json, "print the findings as JSON");
  return {a, [f]() -> int {
            double rate = 0;
            std::optional<PlannedSpec> planned;
            if (!f->spec.empty()) {
              auto loaded = load_planned_spec(f->spec, load_limits(false));
              if (!loaded) return fail(loaded.errors());
              planned = std::move(*loaded);
              rate = planned->plan.nic.rate_gbps / planned->plan.topo.planes;
            }
            std::vector<Diagnostic> errs;
            if (auto r = quantity_flag("--line-rate", f->line_rate, units::parse_bitrate, 1,
                                       kMaxFlagBitsPerSecond, false, errs))
              rate = *r / 1e9;
            if (!errs.empty()) return fail(errs);
            auto files = read_outputs(f->files);
            if (!files) return fail(files.errors());
            auto r = diagnose(
                *files, rate, planned ? &planned->plan : nullptr,
                planned ? &planned->catalog : nullptr,
                planned ? planned->spec.addressing.host_netdevs : std::vector<std::string>{});
            if (!r) return fail(r.errors());
            std::cout << (f->json ? findings_json(*r).dump(2) + "\n" : findings_text(*r));
            return has_error(*r) ? kExitFindings : kExitOk;
          }};
}

Command add_doctor(CLI::App& root) {
  auto f = std::make_shared<DoctorFlags>();
  CLI::App* a = root.add_subcommand(
      "doctor",
      "Inspect this host for the usual mistakes: MTUs, RDMA devices, memlock, NCCL variables "
      "(exit 1 on an error finding; missing hardware is reported, not failed).");
  a->add_option("--sysfs", f->sysfs, "root of the sysfs tree to read (a recorded copy for tests)")
      ->capture_default_str();
  a->add_flag("--json", f->json, "print the findings as JSON");
  return {a, [f]() -> int {
            std::error_code ec;
            if (!std::filesystem::is_directory(f->sysfs, ec))
              return fail({Diagnostic::in_file(
                  f->sysfs, "--sysfs",
                  std::filesystem::exists(f->sysfs, ec) ? "is not a folder" : "no such folder",
                  "give the root of a sysfs tree, e.g. /sys")});
            const auto r = doctor(f->sysfs);
            std::cout << (f->json ? findings_json(r).dump(2) + "\n" : findings_text(r));
            return has_error(r) ? kExitFindings : kExitOk;
          }};
}

}  // namespace gf::cli
