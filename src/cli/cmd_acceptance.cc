// gpufabric acceptance: the runbook of the day the cluster is cabled (guide §5): link tests over
// every cable, nccl-tests at growing scale, a burn-in, and what each result must be.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/resources.h"
#include "common/output.h"
#include "plan/plan.h"
#include "verify/acceptance.h"

namespace gf::cli {
namespace {

/// --qps and the durations: beyond these a flag is a typo, not a test plan (the passes:
/// kMaxBurnInPasses).
constexpr int kMaxQps = 64;
constexpr int kMaxDurationS = 24 * 3600;

struct AcceptanceFlags {
  std::string spec, out;
  AcceptanceOptions options;
  bool json = false;
};

int run(const AcceptanceFlags& f) {
  Heartbeat alive("acceptance");
  auto loaded = load_planned_spec(f.spec, load_limits(true));
  if (!loaded) return fail(loaded.errors());
  auto a = plan_acceptance(*loaded, f.options);
  if (!a) return fail(a.errors());
  if (!f.out.empty()) {
    const std::vector<OutputFile> files = acceptance_files(*loaded, *a);
    // Its script folders are the runbook's own: an earlier runbook's scripts that this one does
    // not have (a round or a pass fewer) go, so that `for s in link-tests/*.sh` runs this plan.
    std::vector<std::string> retired;
    auto written = write_outputs(f.out, files, top_folders(files), &retired);
    if (!written) return fail(written.errors());
    if (!f.json) {
      std::cerr << "wrote " << written->size() << " files into " << f.out << "\n";
      note_retired(std::cerr, f.out, retired);
    }
  }
  std::cout << (f.json ? acceptance_json(*a).dump(2) + "\n" : acceptance_text(*a));
  return kExitOk;
}

}  // namespace

Command add_acceptance(CLI::App& root) {
  auto f = std::make_shared<AcceptanceFlags>();
  CLI::App* a = root.add_subcommand(
      "acceptance",
      "The acceptance runbook: ib_write_bw/ib_write_lat link tests over every cable in the "
      "fewest parallel rounds, nccl-tests at growing scale with the simulated busbw, a burn-in "
      "with error counters; `check SPEC RESULTS/` reads the results back.");
  a->add_option("SPEC", f->spec, "the cluster spec (YAML)")->required();
  a->add_option("-o,--out", f->out,
                "write runbook.md, link-tests.csv, expected.json and the scripts of every step "
                "(link-tests/, burn-in/, nccl/) into this folder")
      ->check(path_named());
  a->add_option("--qps", f->options.qps, "QPs per ib_write_bw test (-q); one flow label: one path")
      ->check(CLI::Range(1, kMaxQps))
      ->capture_default_str();
  a->add_option("--duration", f->options.duration_s, "seconds per ib_write_bw link test (-D)")
      ->check(CLI::Range(1, kMaxDurationS))
      ->capture_default_str();
  a->add_option("--burn-in-passes", f->options.burn_in_passes,
                "burn-in passes of the link tests, each paired differently (0: none)")
      ->check(CLI::Range(0, kMaxBurnInPasses))
      ->capture_default_str();
  a->add_option("--burn-in-duration", f->options.burn_in_duration_s,
                "seconds per ib_write_bw test in the burn-in")
      ->check(CLI::Range(1, kMaxDurationS))
      ->capture_default_str();
  a->add_option("--tolerance", f->options.tolerance,
                "fraction below the simulated nccl-tests busbw still accepted, in [0, 1), as the "
                "runbook states it (check's --tolerance judges)")
      ->check(finite_in(0, 0.99))
      ->capture_default_str();
  a->add_flag("--json", f->json,
              "print expected.json on stdout: the counts of cables, tests and rounds, and the "
              "nccl-tests expectations (each test is in link-tests.csv)");
  return {a, [f] { return run(*f); }};
}

}  // namespace gf::cli
