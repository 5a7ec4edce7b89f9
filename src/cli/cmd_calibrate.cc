// gpufabric calibrate: the simulator against published measurements, or (--fit) a profile of
// one cluster's factors fitted on its own nccl-tests outputs.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/flags.h"
#include "cli/resources.h"
#include "common/file.h"
#include "common/output.h"
#include "verify/calibration.h"
#include "verify/calibration_fit.h"
#include "verify/parsers.h"

namespace gf::cli {
namespace {

/// --folds: at least 2 (one fold would leave nothing out), at most 100.
constexpr int kMaxFolds = 100;

struct CalibrateFlags {
  std::string csv;
  std::vector<std::string> fit;
  std::string spec, out, algo = "auto";
  int nodes = 0, gpus_per_node = 0, folds = 5;
  bool json = false;
  bool summary = false;
};

int run_fit(const CalibrateFlags& f) {
  std::vector<Diagnostic> errs;
  if (!f.csv.empty())
    errs.push_back(Diagnostic::flag("CSV", "a calibration CSV and --fit are not read together",
                                    "give either the CSV or --fit FILE..."));
  if (f.spec.empty())
    errs.push_back(Diagnostic::flag("--spec",
                                    "--fit needs the spec of the cluster the runs "
                                    "were taken on",
                                    "add --spec SPEC"));
  if (f.out.empty())
    errs.push_back(
        Diagnostic::flag("-o", "--fit writes a profile: name its file", "add -o profile.yaml"));
  FitOptions o;
  o.nodes = f.nodes;
  o.gpus_per_node = f.gpus_per_node;
  o.folds = f.folds;
  if (f.algo != "auto") {
    if (auto a = parse_algorithm(f.algo))
      o.algorithm = *a;
    else
      errs.push_back(Diagnostic::flag("--algo", fmt::format("unknown algorithm '{}'", f.algo),
                                      "use auto, ring, tree, nvls, nvls_tree, collnet, pat or "
                                      "p2p"));
  }
  if (!errs.empty()) return fail(errs);
  Heartbeat alive("calibrate");
  const LoadLimits limits = load_limits(true);
  o.memory_bytes = limits.memory_bytes;
  auto loaded = load_planned_spec(f.spec, limits);
  if (!loaded) return fail(loaded.errors());
  auto files = read_outputs(f.fit);
  if (!files) return fail(files.errors());
  auto runs = read_fit_runs(loaded->plan, *files, o);
  if (!runs) return fail(runs.errors());
  auto r = fit_calibration(loaded->plan, loaded->catalog, *runs, o);
  if (!r) return fail(r.errors());
  const std::string yaml = fit_profile_yaml(*r, loaded->plan, f.spec);
  auto written = write_output_file(f.out, "-o", [&](std::ostream& os) { os << yaml; });
  if (!written) return fail(written.errors());
  if (f.json) {
    nlohmann::json j = fit_json(*r);
    j["profile"] = *written;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << fit_text(*r) << "Profile: " << *written << "\n";
  }
  return kExitOk;
}

int run(const CalibrateFlags& f) {
  if (!f.fit.empty()) return run_fit(f);
  if (f.csv.empty())
    return fail({Diagnostic::flag("CSV", "give a calibration CSV, or --fit FILE... --spec SPEC",
                                  "e.g. gpufabric calibrate data/calibration/nccl-public.csv")});
  for (const auto& [given, flag] : {std::pair{!f.spec.empty(), "--spec"},
                                    {!f.out.empty(), "-o"},
                                    {f.nodes != 0, "--nodes"},
                                    {f.gpus_per_node != 0, "--gpus-per-node"},
                                    {f.algo != "auto", "--algo"}})
    if (given) return fail({Diagnostic::flag(flag, "only read with --fit", "add --fit FILE...")});
  auto text = read_file_bounded(f.csv, kMaxSpecBytes);
  if (!text) return fail(text.errors());
  // A tool's output where the CSV goes (its first line no CSV header): say what it is and where
  // it goes, not which CSV column it lacks. A CSV's notes may quote a tool's lines.
  const std::string first = text->substr(0, text->find('\n'));
  const bool csv_header = std::count(first.begin(), first.end(), ',') >= 3;
  if (const OutputKind kind = csv_header ? OutputKind::kUnknown : detect_output_kind(*text);
      kind != OutputKind::kUnknown)
    return fail({Diagnostic::in_file(
        f.csv, "CSV",
        fmt::format("this is {} output, not a calibration CSV", output_kind_name(kind)),
        holds_nccl_tests_table({f.csv, *text, kind})
            ? "fit your cluster's factors on it: gpufabric calibrate --fit " + f.csv +
                  " --spec SPEC -o profile.yaml"
            : "give a CSV as data/calibration/nccl-public.csv lays it out")});
  if (is_training_csv(*text)) {
    auto t = calibrate_training(*text, f.csv);
    if (!t) return fail(t.errors());
    if (f.json)
      std::cout << training_json(*t).dump(2) << "\n";
    else
      std::cout << training_table(*t);
    return t->pass ? kExitOk : kExitFindings;
  }
  auto s = calibrate(*text, f.csv, load_limits(true).memory_bytes);
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
      "points); or, with --fit, fit your cluster's factors (link efficiencies, per-step network "
      "and NVLink latency, per-message network time, per-algorithm bandwidth factors) on its own "
      "nccl-tests outputs and write them as a profile that a spec applies with "
      "`calibration: FILE`.");
  a->add_option(
      "CSV", f->csv,
      "measurements in the nccl-public.csv format (source,hardware,nodes,gpus_per_node,"
      "nic,nics_per_node,fabric,nccl,collective,algo,bytes,busbw_gbs,time_us,note[,set]; set is "
      "fit or test, all fit without the column) or "
      "training runs (training-public.csv: gpu,params,...,tflops_per_gpu,iteration_s)");
  a->add_option("--fit", f->fit,
                "nccl-tests outputs (stdout as printed) of your cluster, any collectives, sizes "
                "and node counts: fit a calibration profile on them (needs --spec and -o)")
      ->expected(1, -1);
  a->add_option("--spec", f->spec, "with --fit: the spec of the cluster the runs were taken on");
  a->add_option("-o,--out", f->out, "with --fit: the profile file to write (YAML)")
      ->check(path_named());
  a->add_option("--nodes", f->nodes,
                "with --fit: nodes of the runs (default: the hosts of the '# Rank ... on HOST' "
                "lines; without them, or with some left out, the ranks over --gpus-per-node); "
                "at least the hosts the rank lines name (more where containers share one name)")
      ->check(CLI::Range(1, kMaxFlagNodes));
  a->add_option("--gpus-per-node", f->gpus_per_node,
                "with --fit: GPUs per node of a run whose output has no rank lines (default: "
                "the spec's)")
      ->check(CLI::Range(1, kMaxFlagGpusPerNode));
  complete_with(
      a->add_option("--algo", f->algo,
                    "auto | ring | tree | nvls | nvls_tree | collnet | collnet_chain | pat | p2p "
                    "(with --fit: the "
                    "NCCL_ALGO every run was forced to; auto: each file's NCCL_ALGO line, else "
                    "NCCL's choice)")
          ->capture_default_str(),
      [] {
        std::vector<std::string> v{"auto"};
        for (const auto& n : names_of(kAlgorithmNames)) v.push_back(n);
        return v;
      });
  a->add_option("--folds", f->folds,
                "with --fit from a single file: the folds of the k-fold cross-validation over its "
                "points (with several files each file is left out in turn)")
      ->check(CLI::Range(2, kMaxFolds))
      ->capture_default_str();
  a->add_flag("--json", f->json, "print the points and summary (with --fit: the fit) as JSON");
  a->add_flag("--summary", f->summary,
              "print only the per-set summary and targets, not every point");
  return {a, [f] { return run(*f); }};
}

}  // namespace gf::cli
