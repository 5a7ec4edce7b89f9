// gpufabric sweep: the design space of a spec, evaluated on every core.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/commands.h"
#include "cli/version.h"
#include "common/output.h"
#include "common/text.h"
#include "report/sweep_report.h"
#include "spec/spec.h"
#include "sweep/sweep.h"

#ifdef GPUFABRIC_WITH_MPI
#include <mpi.h>
#endif

namespace gf::cli {
namespace {

struct SweepFlags {
  std::string spec, out;
  std::vector<std::string> vary;
  int threads = 0;
  bool json = false, quiet = false;
};

// The processes of an MPI launch (`mpirun -np N gpufabric sweep ...`), or this one alone. MPI is
// initialised only under a launcher, so a plain run never touches it.
class World {
 public:
  World() {
#ifdef GPUFABRIC_WITH_MPI
    if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") ||
        std::getenv("PMI_SIZE")) {
      MPI_Init(nullptr, nullptr);
      MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
      MPI_Comm_size(MPI_COMM_WORLD, &size_);
      active_ = true;
    }
#endif
  }
  ~World() {
#ifdef GPUFABRIC_WITH_MPI
    if (active_) MPI_Finalize();
#endif
  }
  World(const World&) = delete;
  World& operator=(const World&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Ranks on this machine (to share its cores), from the launcher.
  static int local_size() {
    const char* s = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    return s ? std::max(1, std::atoi(s)) : 1;
  }
  /// Every rank's text, in rank order, on rank 0; empty elsewhere.
  std::vector<std::string> gather(const std::string& mine) const {
    if (!active_) return {mine};
    std::vector<std::string> out;
#ifdef GPUFABRIC_WITH_MPI
    int len = static_cast<int>(mine.size());
    std::vector<int> lens(static_cast<size_t>(size_)), offsets(static_cast<size_t>(size_));
    MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::string all;
    if (rank_ == 0) {
      long long at = 0;
      for (int r = 0; r < size_; ++r)
        offsets[static_cast<size_t>(r)] = static_cast<int>(at), at += lens[static_cast<size_t>(r)];
      all.resize(static_cast<size_t>(at));
    }
    MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, 0,
                MPI_COMM_WORLD);
    if (rank_ == 0)
      for (int r = 0; r < size_; ++r)
        out.push_back(all.substr(static_cast<size_t>(offsets[static_cast<size_t>(r)]),
                                 static_cast<size_t>(lens[static_cast<size_t>(r)])));
#endif
    return out;
  }

 private:
  int rank_ = 0, size_ = 1;
  bool active_ = false;
};

// Progress on stderr at most once a second (and at the end), for long sweeps.
class Progress {
 public:
  Progress(long long total, bool quiet, std::string who)
      : total_(total), quiet_(quiet), who_(std::move(who)) {}
  void operator()(long long done) {
    if (quiet_) return;
    const auto now = std::chrono::steady_clock::now();
    if (done < total_ && now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    const double s = std::chrono::duration<double>(now - start_).count();
    std::cerr << fmt::format("sweep{}: {}/{} designs ({:.0f}%), {:.1f} s\n", who_, done, total_,
                             100.0 * done / std::max(1LL, total_), s);
  }

 private:
  long long total_;
  bool quiet_;
  std::string who_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_ = start_;
};

// Sweeps beyond this are almost always a typo in --vary; split them or raise it here.
constexpr long long kMaxDesigns = 1'000'000;

int run(const SweepFlags& f) {
  World world;
  // Bad input is found alike on every rank; rank 0 alone says so, every rank exits 2.
  auto fail = [&](const std::vector<Diagnostic>& errs) {
    return world.rank() == 0 ? cli::fail(errs) : kExitBadInput;
  };
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
        errs.push_back(Diagnostic::flag("--vary", fmt::format("'{}' is varied twice", a->key),
                                        "give all its values in one --vary"));
    axes.push_back(*a);
  }
  if (!errs.empty()) return fail(errs);
  // The spec itself must be valid before anything is varied.
  auto base = load_spec(f.spec);
  if (!base) return fail(base.errors());
  // A value its key refuses on its own (nodes=abc, nodes=-2) is a typo in --vary, not a design
  // to list as invalid: refused before anything runs, each with the spec's reason.
  for (const auto& a : axes)
    for (const auto& value : a.values) {
      if (a.key == kPlacementAxis) continue;  // the sweep's own axis, checked by parse_vary
      auto one = load_spec(f.spec, {{a.key, value}});
      if (one) continue;
      for (const auto& e : one.errors())
        if (e.key == a.key) {
          errs.push_back(Diagnostic::flag(
              "--vary", fmt::format("{}={}: {}", a.key, quoted_excerpt(value), e.message),
              e.hint.empty() ? "give values the key takes" : e.hint));
          break;
        }
    }
  if (!errs.empty()) return fail(errs);
  const long long total = design_count(axes);
  if (total > kMaxDesigns)
    return fail(
        {Diagnostic::flag("--vary", fmt::format("{} designs is more than {}", total, kMaxDesigns),
                          "vary fewer keys or values, or split the sweep")});
  const int threads = f.threads > 0
                          ? f.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) /
                                            World::local_size());
  // Each rank evaluates its share of the designs; rank 0 gathers them all and writes.
  const auto [first, last] = design_share(total, world.rank(), world.size());
  Progress progress(
      last - first, f.quiet,
      world.size() > 1 ? fmt::format(" [rank {}/{}]", world.rank(), world.size()) : "");
  auto mine = evaluate_designs(f.spec, axes, first, last, threads, std::ref(progress));
  std::vector<DesignResult> designs;
  if (world.size() == 1) {
    designs = std::move(mine);
  } else {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& d : mine) j.push_back(design_to_json(d));
    const auto parts = world.gather(j.dump());
    if (world.rank() != 0) return kExitOk;
    for (const auto& part : parts)
      for (const auto& d : nlohmann::json::parse(part)) designs.push_back(design_from_json(d));
  }
  const SweepResult r = summarise_sweep(axes, std::move(designs), base->spec.constraints.goal,
                                        base->spec.constraints.budget_usd);
  bool any_valid = false;
  for (const auto& d : r.designs) any_valid = any_valid || d.ok;
  if (!any_valid)  // every combination failed: most likely a wrong key or value
    return fail({Diagnostic::in_file(
        f.spec, "--vary", "no combination is valid; the first: " + r.designs.front().error,
        "check the keys and values given to --vary")});
  auto json = sweep_json(r);
  json["gpufabric_version"] = build_version();
  auto written = write_outputs(f.out, {{"sweep.csv", sweep_csv(r)},
                                       {"sweep.json", json.dump(2) + "\n"},
                                       {"sweep.html", sweep_html(r, base->spec.name)}});
  if (!written) return fail(written.errors());
  if (f.json)
    std::cout << json.dump(2) << "\n";
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
                "or cluster.nodes=128,256; placement=packed,spread,random places the spec's "
                "jobs: (as jobs --placement); repeat for more keys")
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
