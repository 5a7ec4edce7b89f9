// gpufabric sweep: the design space of a spec, evaluated on every core.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/commands.h"
#include "report/output.h"
#include "report/sweep_report.h"
#include "spec/spec.h"
#include "sweep/sweep.h"

namespace gf::cli {
namespace {

struct SweepFlags {
  std::string spec, out;
  std::vector<std::string> vary;
  int threads = 0;
  bool json = false, quiet = false;
};

// Progress on stderr at most once a second (and at the end), for long sweeps.
class Progress {
 public:
  Progress(long long total, bool quiet) : total_(total), quiet_(quiet) {}
  void operator()(long long done) {
    if (quiet_) return;
    const auto now = std::chrono::steady_clock::now();
    if (done < total_ && now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    const double s = std::chrono::duration<double>(now - start_).count();
    std::cerr << fmt::format("sweep: {}/{} designs ({:.0f}%), {:.1f} s\n", done, total_,
                             100.0 * done / total_, s);
  }

 private:
  long long total_;
  bool quiet_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_ = start_;
};

// Sweeps beyond this are almost always a typo in --vary; split them or raise it here.
constexpr long long kMaxDesigns = 1'000'000;

int run(const SweepFlags& f) {
  std::vector<SweepAxis> axes;
  std::vector<Diagnostic> errs;
  for (const auto& v : f.vary) {
    auto a = parse_vary(v);
    if (!a) {
      errs.insert(errs.end(), a.errors().begin(), a.errors().end());
      continue;
    }
    for (const auto& b : axes)
      if (b.key == a->key)
        errs.push_back({"", 0, 0, "--vary", fmt::format("'{}' is varied twice", a->key),
                        "give all its values in one --vary"});
    axes.push_back(*a);
  }
  if (!errs.empty()) return fail(errs);
  // The spec itself must be valid before anything is varied.
  auto base = load_spec(f.spec);
  if (!base) return fail(base.errors());
  const long long total = design_count(axes);
  if (total > kMaxDesigns)
    return fail({{"", 0, 0, "--vary", fmt::format("{} designs is more than {}", total, kMaxDesigns),
                  "vary fewer keys or values, or split the sweep"}});
  const int threads = f.threads > 0
                          ? f.threads
                          : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  Progress progress(total, f.quiet);
  auto designs = evaluate_designs(f.spec, axes, 0, total, threads, std::ref(progress));
  const SweepResult r = summarise_sweep(axes, std::move(designs), base->spec.constraints.goal,
                                        base->spec.constraints.budget_usd);
  bool any_valid = false;
  for (const auto& d : r.designs) any_valid = any_valid || d.ok;
  if (!any_valid)  // every combination failed: most likely a wrong key or value
    return fail(
        {{f.spec, 0, 0, "--vary", "no combination is valid; the first: " + r.designs.front().error,
          "check the keys and values given to --vary"}});
  auto written = write_outputs(f.out, {{"sweep.csv", sweep_csv(r)},
                                       {"sweep.json", sweep_json(r).dump(2) + "\n"},
                                       {"sweep.html", sweep_html(r, base->spec.name)}});
  if (!written) return fail(written.errors());
  if (f.json)
    std::cout << sweep_json(r).dump(2) << "\n";
  else
    std::cout << sweep_table(r)
              << "written: " << (std::filesystem::path(f.out) / "sweep.{csv,json,html}").string()
              << "\n";
  return kExitOk;
}

}  // namespace

Command add_sweep(CLI::App& root) {
  auto f = std::make_shared<SweepFlags>();
  CLI::App* a = root.add_subcommand(
      "sweep",
      "Evaluate the cross-product of spec keys (plan, simulate, step): sweep.csv, sweep.json, "
      "the cost-time Pareto frontier and the best design for the spec's goal and budget.");
  a->add_option("SPEC", f->spec, "the cluster spec (YAML) the designs start from")->required();
  a->add_option("--vary", f->vary,
                "KEY=V1,V2,... a spec key and its values, e.g. fabric.technology=roce,infiniband "
                "or cluster.nodes=128,256; repeat for more keys")
      ->allow_extra_args(false)
      ->required();
  a->add_option("-o,--out", f->out, "folder for sweep.csv, sweep.json and sweep.html")->required();
  a->add_option("--threads", f->threads, "worker threads (default: every core)")
      ->check(CLI::Range(1, 1024));
  a->add_flag("--json", f->json, "print sweep.json instead of the table");
  a->add_flag("-q,--quiet", f->quiet, "no progress lines on stderr");
  return {a, [f] { return run(*f); }};
}

}  // namespace gf::cli
