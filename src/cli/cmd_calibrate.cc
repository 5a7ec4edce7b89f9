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
};

int run(const CalibrateFlags& f) {
  auto text = read_file_bounded(f.csv, kMaxSpecBytes);
  if (!text) return fail(text.errors());
  if (is_training_csv(*text)) {
    auto t = calibrate_training(*text, f.csv);
    if (!t) return fail(t.errors());
    std::cout << training_table(*t);
    return t->pass ? kExitOk : kExitFindings;
  }
  auto s = calibrate(*text, f.csv);
  if (!s) return fail(s.errors());
  if (f.json)
    std::cout << calibration_json(*s).dump(2) << "\n";
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
      "training runs) and report the error of each (exit 1 when the accuracy limits are "
      "missed).");
  a->add_option("CSV", f->csv,
                "measurements in the nccl-public.csv format (source,hardware,nodes,gpus_per_node,"
                "nic,nics_per_node,fabric,nccl,collective,algo,bytes,busbw_gbs,time_us,note) or "
                "training runs (training-public.csv: gpu,params,...,tflops_per_gpu,iteration_s)")
      ->required();
  a->add_flag("--json", f->json, "print the points and summary as JSON");
  return {a, [f] { return run(*f); }};
}

}  // namespace gf::cli
