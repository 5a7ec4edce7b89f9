// gpufabric calibrate: the simulator against published measurements.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "verify/calibration.h"

namespace gf::cli {
namespace {

struct CalibrateFlags {
  std::string csv;
  bool json = false;
};

int run(const CalibrateFlags& f) {
  std::ifstream in(f.csv, std::ios::binary);
  if (!in) return fail({{f.csv, 0, 0, "", "cannot read the calibration file", "check the path"}});
  std::stringstream ss;
  ss << in.rdbuf();
  if (is_training_csv(ss.str())) {
    auto t = calibrate_training(ss.str(), f.csv);
    if (!t) return fail(t.errors());
    std::cout << training_table(*t);
    return t->pass ? kExitOk : kExitFindings;
  }
  auto s = calibrate(ss.str(), f.csv);
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
