// gpufabric calibrate: the simulator against published measurements.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "common/file.h"
#include "verify/calibration.h"

namespace gf::cli {
namespace {

struct CalibrateFlags {
  std::string csv;
  bool json = false;
  bool summary = false;
};

int run(const CalibrateFlags& f) {
  auto text = read_file_bounded(f.csv, kMaxSpecBytes);
  if (!text) return fail(text.errors());
  if (is_training_csv(*text)) {
    auto t = calibrate_training(*text, f.csv);
    if (!t) return fail(t.errors());
    if (f.json)
      std::cout << training_json(*t).dump(2) << "\n";
    else
      std::cout << training_table(*t);
    return t->pass ? kExitOk : kExitFindings;
  }
  auto s = calibrate(*text, f.csv);
  if (!s) return fail(s.errors());
  if (f.json)
    std::cout << calibration_json(*s).dump(2) << "\n";
  else if (f.summary)
    std::cout << calibration_summary_table(*s);
  else
    std::cout << calibration_table(*s);
  return s->pass ? kExitOk : kExitFindings;
}

}  // namespace

Command add_calibrate(CLI::App& root) {
  auto f = std::make_shared<CalibrateFlags>();
  CLI::App* a = root.add_subcommand(
      "calibrate",
      "Simulate every published measurement in a calibration CSV (nccl-tests results, or "
      "training runs) and report the error of each, the fit and the test set apart, per "
      "collective, algorithm and size band (exit 1 when the test set misses a target or has no "
      "points).");
  a->add_option(
       "CSV", f->csv,
       "measurements in the nccl-public.csv format (source,hardware,nodes,gpus_per_node,"
       "nic,nics_per_node,fabric,nccl,collective,algo,bytes,busbw_gbs,time_us,note[,set]; set is "
       "fit or test, all fit without the column) or "
       "training runs (training-public.csv: gpu,params,...,tflops_per_gpu,iteration_s)")
      ->required();
  a->add_flag("--json", f->json, "print the points and summary as JSON");
  a->add_flag("--summary", f->summary,
              "print only the per-set summary and targets, not every point");
  return {a, [f] { return run(*f); }};
}

}  // namespace gf::cli
