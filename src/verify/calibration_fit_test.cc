#include "verify/calibration_fit.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "common/file.h"
#include "sim/collective.h"
#include "sim/nccl_constants.h"
#include "topo/fabric.h"

namespace gf {
namespace {

namespace fs = std::filesystem;

const std::string kSource = GPUFABRIC_SOURCE_DIR;
const std::string kFixtures = kSource + "/tests/data/calfit/";

fs::path write_temp(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / "gf-calfit-test";
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return dir / name;
}

PlannedSpec planned(const std::string& path) {
  auto p = load_and_plan(path);
  EXPECT_TRUE(p) << (p ? "" : p.errors().front().message);
  return std::move(*p);
}

// `nodes` H100 nodes on InfiniBand, written as `name` and planned.
PlannedSpec planned_h100_ib(const std::string& name, int nodes) {
  return planned(write_temp(name, fmt::format("cluster: {{gpu: h100-sxm, nodes: {}, nic: cx7-400g}}\n"
                                              "fabric: {{technology: infiniband}}\n",
                                              nodes))
                     .string());
}

ToolOutput output_of(const std::string& path) {
  auto text = read_file_bounded(path, kMaxToolOutputBytes);
  EXPECT_TRUE(text) << path;
  ToolOutput t{path, text ? *text : "", OutputKind::kUnknown};
  t.kind = detect_output_kind(t.text);
  return t;
}

std::vector<FitRun> runs_of(const Plan& plan, const std::vector<std::string>& names) {
  std::vector<ToolOutput> files;
  for (const auto& n : names) files.push_back(output_of(kFixtures + n));
  auto runs = read_fit_runs(plan, files, {});
  EXPECT_TRUE(runs) << (runs ? "" : runs.errors().front().message);
  return runs ? *runs : std::vector<FitRun>{};
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

TEST(CalibrationProfile, ReadsTheFactors) {
  auto p = parse_calibration_profile(
      "profile: 1\nfactors:\n  scaleup_efficiency: 0.8\n  network_efficiency: 0.9\n"
      "  network_step_latency_us: 3.5\n  nvlink_step_latency_us: 0.75\n"
      "  network_message_us: 4.25\n  algorithms: {tree: 0.95, nvls: 1.1}\n"
      "fit: {anything: [1, 2]}\n",
      "p.yaml");
  ASSERT_TRUE(p) << p.errors().front().message;
  EXPECT_DOUBLE_EQ(*p->scaleup_efficiency, 0.8);
  EXPECT_DOUBLE_EQ(*p->network_efficiency, 0.9);
  EXPECT_DOUBLE_EQ(p->network_step_latency_us, 3.5);
  EXPECT_DOUBLE_EQ(p->nvlink_step_latency_us, 0.75);
  EXPECT_DOUBLE_EQ(p->network_message_us, 4.25);
  EXPECT_DOUBLE_EQ(p->algorithm_factor[1], 0.95);  // tree
  EXPECT_DOUBLE_EQ(p->algorithm_factor[2], 1.1);   // nvls
  EXPECT_DOUBLE_EQ(p->algorithm_factor[0], 1.0);   // ring: not given
  EXPECT_FALSE(p->identity());
  auto empty = parse_calibration_profile("factors: {}\n", "p.yaml");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->identity());
  EXPECT_TRUE(empty->fitted_gpu.empty());
  // What it was fitted on, for the spec that applies it to say so when it is other hardware.
  auto on = parse_calibration_profile(
      "profile: 1\ncluster: {spec: s.yaml, gpu: b200, nodes: 46, nic: cx7-400g}\nfactors: {}\n",
      "p.yaml");
  ASSERT_TRUE(on);
  EXPECT_EQ(on->fitted_gpu, "b200");
  EXPECT_EQ(on->fitted_nic, "cx7-400g");
}

// Each problem names the file, its line and the key.
TEST(CalibrationProfile, BadProfilesNameTheLineAndKey) {
  struct Case {
    std::string text, key, words;
    int line;
  };
  const Case cases[] = {
      {"factors:\n  netwrok_efficiency: 0.9\n", "factors.netwrok_efficiency", "network_efficiency",
       2},
      {"factors:\n  network_efficiency: 1.7\n", "factors.network_efficiency", "[0.05, 1]", 2},
      {"factors:\n  network_efficiency: fast\n", "factors.network_efficiency", "number", 2},
      {"factors:\n  network_step_latency_us: -3\n", "factors.network_step_latency_us", "[0, 1000]",
       2},
      {"factors:\n  network_message_us: 1e6\n", "factors.network_message_us", "[0, 1000]", 2},
      {"factors:\n  nvlink_step_latency_us: -1\n", "factors.nvlink_step_latency_us", "[0, 1000]",
       2},
      {"factors:\n  network_message_us: []\n", "factors.network_message_us", "single value", 2},
      {"factors:\n  algorithms:\n    trees: 0.9\n", "factors.algorithms.trees", "tree", 3},
      {"factors:\n  algorithms:\n    tree: 9\n", "factors.algorithms.tree", "[0.25, 4]", 3},
      {"profile: 1\n", "factors", "missing", 1},
      {"factors: [1, 2]\n", "factors", "map", 1},
      {"factors: {network_efficiency: .nan}\n", "factors.network_efficiency", "", 1},
      {"profile: 2\nfactors: {}\n", "profile", "reads format 1", 1},
  };
  for (const auto& c : cases) {
    auto p = parse_calibration_profile(c.text, "prof.yaml");
    ASSERT_FALSE(p) << c.text;
    const Diagnostic& d = p.errors().front();
    EXPECT_EQ(d.file, "prof.yaml") << c.text;
    EXPECT_EQ(d.line, c.line) << c.text;
    EXPECT_EQ(d.key, c.key) << c.text;
    EXPECT_NE((d.message + " " + d.hint).find(c.words), std::string::npos)
        << c.text << ": " << d.message << " / " << d.hint;
  }
  EXPECT_FALSE(parse_calibration_profile("", "prof.yaml"));
  EXPECT_FALSE(parse_calibration_profile("factors: {a: [}\n", "prof.yaml"));
}

// The spec's calibration: key, relative to the spec, reaches the simulator: a scale-out
// efficiency of half the model's halves a network-bound ring's bus bandwidth.
TEST(CalibrationProfile, TheSpecKeyReachesTheSimulator) {
  const std::string spec =
      "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\nfabric: {technology: infiniband}\n";
  const fs::path plain = write_temp("plain.yaml", spec);
  write_temp("half.yaml", "factors: {network_efficiency: 0.47}\n");
  const fs::path with = write_temp("with.yaml", spec + "calibration: half.yaml\n");
  auto busbw = [](const fs::path& p, int nodes = 0) {
    auto ps = load_and_plan(p.string());
    EXPECT_TRUE(ps) << (ps ? "" : ps.errors().front().message);
    const Fabric fab = Fabric::build(ps->plan, ps->catalog);
    SimOptions o;
    o.algorithm = Algorithm::kRing;
    o.nodes = nodes;
    auto m = CollectiveModel::build(fab, ps->plan, o);
    EXPECT_TRUE(m);
    return m->at(8.0 * (1 << 30)).busbw_gbs;
  };
  const double model = busbw(plain), half = busbw(with);
  EXPECT_NEAR(half / model, 0.5, 0.02) << model << " " << half;
  // A network message's time slows the ring across nodes, which the NICs pace, and not the one
  // node's, which sends none.
  write_temp("messages.yaml", "factors: {network_message_us: 5}\n");
  const fs::path msg = write_temp("msg.yaml", spec + "calibration: messages.yaml\n");
  EXPECT_LT(busbw(msg), 0.97 * model);
  EXPECT_DOUBLE_EQ(busbw(msg, 1), busbw(plain, 1));
  // An NVLink step's latency: one node's ring all_reduce has 14 NVLink steps, each that much
  // longer in the time (NCCL's estimate, which picks the protocol, does not know it).
  write_temp("nvlink.yaml", "factors: {nvlink_step_latency_us: 2}\n");
  const fs::path nvl = write_temp("nvl.yaml", spec + "calibration: nvlink.yaml\n");
  auto one_node_us = [](const fs::path& p, double bytes) {
    auto ps = load_and_plan(p.string());
    EXPECT_TRUE(ps) << (ps ? "" : ps.errors().front().message);
    const Fabric fab = Fabric::build(ps->plan, ps->catalog);
    SimOptions o;
    o.algorithm = Algorithm::kRing;
    o.nodes = 1;
    auto m = CollectiveModel::build(fab, ps->plan, o);
    EXPECT_TRUE(m);
    const SizeResult r = m->at(bytes);
    return std::pair{r.time_us, r.protocol};
  };
  EXPECT_NEAR(one_node_us(nvl, 1024).first - one_node_us(plain, 1024).first, 14 * 2.0, 1e-6);
  EXPECT_EQ(one_node_us(nvl, 1024).second, one_node_us(plain, 1024).second);

  // A bad profile: its own file, line and key; a missing one: the spec's key.
  write_temp("bad.yaml", "factors:\n  network_efficiency: 2\n");
  const fs::path bad = write_temp("bad-spec.yaml", spec + "calibration: bad.yaml\n");
  auto b = load_spec(bad.string());
  ASSERT_FALSE(b);
  EXPECT_NE(b.errors().front().file.find("bad.yaml"), std::string::npos);
  EXPECT_EQ(b.errors().front().line, 2);
  EXPECT_EQ(b.errors().front().key, "factors.network_efficiency");
  const fs::path missing = write_temp("missing-spec.yaml", spec + "calibration: nowhere.yaml\n");
  auto m = load_spec(missing.string());
  ASSERT_FALSE(m);
  EXPECT_EQ(m.errors().front().key, "calibration");
  EXPECT_EQ(m.errors().front().line, 3);
  EXPECT_NE(m.errors().front().message.find("nowhere.yaml"), std::string::npos);
}

// Planted factors are found again: runs simulated with a known profile, then fitted from the
// model's own defaults.
// A run of `op` forced to `algo` on `nodes` nodes of 8 GPUs, at the sizes from `from` to 8 GiB
// (x `factor` a step), its times still to be planted.
FitRun planted_run(const std::string& file, Op op, Algorithm algo, int nodes, double from,
                   double factor) {
  FitRun r;
  r.file = file;
  r.op = op;
  r.algorithm = algo;
  r.nodes = nodes;
  r.gpus_per_node = 8;
  for (double b : size_sweep(from, 8.0 * (1 << 30), factor)) {
    NcclTestsRow row;
    row.bytes = b;
    row.count = b / 4;
    r.rows.push_back(row);
  }
  return r;
}

// Sets every row's time to what `truth` predicts for it.
bool plant(const PlannedSpec& ps, std::vector<FitRun>& runs, const CalibrationProfile& truth) {
  auto t = predict_runs(ps.plan, ps.catalog, runs, truth);
  EXPECT_TRUE(t) << (t ? "" : t.errors().front().message);
  if (!t) return false;
  std::size_t n = 0;
  for (auto& r : runs)
    for (auto& row : r.rows) row.time_us = (*t)[n++];
  return true;
}

TEST(CalibrationFit, RecoversPlantedFactors) {
  PlannedSpec ps = planned_h100_ib("h100-8.yaml", 8);
  CalibrationProfile truth;
  truth.scaleup_efficiency = 0.74;
  truth.network_efficiency = 0.81;
  truth.network_step_latency_us = 6;
  truth.nvlink_step_latency_us = 1.5;
  truth.algorithm_factor[static_cast<int>(Algorithm::kTree)] = 0.87;
  std::vector<FitRun> runs;
  for (auto [op, algo, nodes] : {std::tuple{Op::kAllReduce, Algorithm::kRing, 8},
                                 {Op::kAllReduce, Algorithm::kRing, 4},
                                 {Op::kAllGather, Algorithm::kRing, 8},
                                 {Op::kAllReduce, Algorithm::kTree, 8},
                                 {Op::kAllGather, Algorithm::kRing, 1}})
    runs.push_back(planted_run(fmt::format("{}-{}-{}.out", op_name(op), algorithm_name(algo), nodes),
                               op, algo, nodes, 8, 4));
  ASSERT_TRUE(plant(ps, runs, truth));
  auto f = fit_calibration(ps.plan, ps.catalog, runs, {});
  ASSERT_TRUE(f) << f.errors().front().message;
  ASSERT_TRUE(f->profile.network_efficiency);
  EXPECT_NEAR(*f->profile.network_efficiency, 0.81, 0.81 * 0.01);
  // NVLink is told apart by the one-node run alone.
  ASSERT_TRUE(f->profile.scaleup_efficiency);
  EXPECT_NEAR(*f->profile.scaleup_efficiency, 0.74, 0.74 * 0.01);
  EXPECT_NEAR(f->profile.network_step_latency_us, 6, 0.5);
  EXPECT_NEAR(f->profile.nvlink_step_latency_us, 1.5, 0.15);
  EXPECT_NEAR(f->profile.algorithm_factor[static_cast<int>(Algorithm::kTree)], 0.87, 0.87 * 0.01);
  // Ring is the reference: its factor stays the model's.
  EXPECT_EQ(f->profile.algorithm_factor[static_cast<int>(Algorithm::kRing)], 1.0);
  EXPECT_LT(f->objective_after, 1e-4);
  EXPECT_GT(f->objective_before, 10 * f->objective_after);
  EXPECT_EQ(f->cv_method, "leave-one-file-out (5 files)");
  for (const auto& p : f->points) EXPECT_GT(p.cv_time_us, 0);
  // The profile it writes reads back as the same factors, whatever the files are called.
  f->runs[0].file = "odd \"name\"\xff.out";
  auto back = parse_calibration_profile(fit_profile_yaml(*f, ps.plan, "h100-8.yaml"), "p.yaml");
  ASSERT_TRUE(back) << back.errors().front().message;
  EXPECT_NEAR(*back->network_efficiency, *f->profile.network_efficiency, 1e-4);
  EXPECT_NEAR(*back->scaleup_efficiency, *f->profile.scaleup_efficiency, 1e-4);
  EXPECT_NEAR(back->network_step_latency_us, f->profile.network_step_latency_us, 1e-4);
  EXPECT_NEAR(back->nvlink_step_latency_us, f->profile.nvlink_step_latency_us, 1e-4);
  EXPECT_NEAR(back->algorithm_factor[static_cast<int>(Algorithm::kTree)],
              f->profile.algorithm_factor[static_cast<int>(Algorithm::kTree)], 1e-4);
}

// NVLink's step latency is fitted on the runs inside one domain only: a multi-node run's small
// calls, whose NVLink steps share their time with the network's (and a ring's hide under
// netOverhead's floor), do not pull it; its descent sees the one-node points alone. Here the
// 8-node ring's small calls show no NVLink latency at all (planted without it): fitted on every
// small point, the estimate falls to 0.95 us.
TEST(CalibrationFit, NvlinkLatencyIsFittedInsideOneDomain) {
  PlannedSpec ps = planned_h100_ib("h100-8.yaml", 8);
  CalibrationProfile one_node, across;
  one_node.nvlink_step_latency_us = 1.0;
  across.network_step_latency_us = 4;
  std::vector<FitRun> runs{planted_run("ring-1.out", Op::kAllReduce, Algorithm::kRing, 1, 8, 4)};
  ASSERT_TRUE(plant(ps, runs, one_node));
  std::vector<FitRun> ring8{planted_run("ring-8.out", Op::kAllReduce, Algorithm::kRing, 8, 8, 4)};
  ASSERT_TRUE(plant(ps, ring8, across));
  runs.push_back(ring8.front());
  auto f = fit_calibration(ps.plan, ps.catalog, runs, {});
  ASSERT_TRUE(f) << f.errors().front().message;
  EXPECT_NEAR(f->profile.nvlink_step_latency_us, 1.0, 0.02);
  // The multi-node run alone cannot tell it: not fitted, and the profile says why.
  std::vector<FitRun> multi(runs.begin() + 1, runs.end());
  auto g = fit_calibration(ps.plan, ps.catalog, multi, {});
  ASSERT_TRUE(g) << g.errors().front().message;
  EXPECT_EQ(g->profile.nvlink_step_latency_us, 0);
  bool said = false;
  for (const auto& p : g->parameters)
    if (p.name == "nvlink_step_latency_us")
      said = !p.fitted && p.why.find("one scale-up domain") != std::string::npos;
  EXPECT_TRUE(said);
}

// The validation the issue asks for: fitted on one collective's runs of one cluster (all_reduce
// ring, every node count published), the other collectives of the same cluster, which the fit
// never saw, land within 5 % median at large sizes. Two B200 clusters of together-nccl-tests:
// flapping-airplanes (the uncalibrated model is already within a few percent there) and use3a-ss
// (whose busbw falls with scale, where the model is 17 % too optimistic). The fixtures are the
// published rows in nccl-tests' layout (tests/data/calfit/make_fixtures.py says why).
struct HeldOut {
  double model_median = 0, fitted_median = 0;
  std::size_t points = 0;
};

// Fits `fit_files` of `spec`'s cluster and judges the fit on `held_out` from 32 MiB (`fitted`:
// the names of the factors the fit must have fitted, each and no other: `fitted_factors`).
HeldOut fit_and_judge(const std::string& spec, const std::vector<std::string>& fit_files,
                      const std::vector<std::string>& held_out,
                      const std::vector<std::string>& fitted_factors) {
  PlannedSpec ps = planned(kFixtures + spec);
  const auto fit_runs = runs_of(ps.plan, fit_files);
  auto f = fit_calibration(ps.plan, ps.catalog, fit_runs, {});
  EXPECT_TRUE(f) << (f ? "" : f.errors().front().message);
  if (!f) return {};
  for (const auto& p : f->parameters)
    EXPECT_EQ(p.fitted, std::count(fitted_factors.begin(), fitted_factors.end(), p.name) == 1)
        << spec << " " << p.name << ": " << p.why;
  const auto test_runs = runs_of(ps.plan, held_out);
  auto model = predict_runs(ps.plan, ps.catalog, test_runs, CalibrationProfile{});
  auto fitted = predict_runs(ps.plan, ps.catalog, test_runs, f->profile);
  EXPECT_TRUE(model && fitted);
  if (!model || !fitted) return {};
  std::vector<double> model_err, fitted_err;
  std::size_t n = 0;
  for (const auto& r : test_runs)
    for (const auto& row : r.rows) {
      const std::size_t i = n++;
      if (row.bytes < kFitLargeFromBytes) continue;
      // |busbw error| = |measured time / predicted time - 1|
      model_err.push_back(std::fabs(row.time_us / (*model)[i] - 1));
      fitted_err.push_back(std::fabs(row.time_us / (*fitted)[i] - 1));
    }
  return {median_of(model_err), median_of(fitted_err), fitted_err.size()};
}

HeldOut fit_and_hold_out(const std::string& spec, const std::string& prefix, int max_nodes,
                         const std::vector<std::string>& held_out,
                         const std::vector<std::string>& fitted_factors) {
  std::vector<std::string> fit_files;
  for (int n = 2; n <= max_nodes; n *= 2)
    fit_files.push_back(fmt::format("{}all_reduce-ring-{}n.out", prefix, n));
  if ((max_nodes & (max_nodes - 1)) != 0)  // the largest run is not a power of two
    fit_files.push_back(fmt::format("{}all_reduce-ring-{}n.out", prefix, max_nodes));
  return fit_and_judge(spec, fit_files, held_out, fitted_factors);
}

TEST(CalibrationFit, OneCollectiveFitsTheOthersOfTheCluster) {
  const HeldOut fa = fit_and_hold_out(
      "flapping-airplanes.yaml", "2026-05-12-", 64,
      {"2026-05-12-all_gather-ring-2n.out", "2026-05-12-all_gather-ring-4n.out",
       "2026-05-12-all_gather-ring-8n.out", "2026-05-12-all_gather-ring-16n.out",
       "2026-05-12-all_gather-ring-32n.out", "2026-05-12-all_gather-ring-64n.out",
       "2026-07-11-all_gather-ring-4n.out", "2026-07-11-reduce_scatter-ring-4n.out"},
      {"network_efficiency"});
  EXPECT_EQ(fa.points, 8u);
  EXPECT_LE(fa.fitted_median, 0.05) << "model " << fa.model_median;
  std::vector<std::string> u;
  for (int n : {2, 4, 8, 16, 32, 46})
    u.push_back(fmt::format("use3a-ss-2026-05-02-all_gather-ring-{}n.out", n));
  // Multi-node ring all_reduce is paced by the NICs: the network efficiency is what it measures,
  // and nothing else can be told from it (its one message size does not tell the messages' time
  // from the efficiency).
  const HeldOut us =
      fit_and_hold_out("use3a-ss.yaml", "use3a-ss-2026-05-02-", 46, u, {"network_efficiency"});
  EXPECT_EQ(us.points, 6u);
  EXPECT_LE(us.fitted_median, 0.05) << "model " << us.model_median;
  // Here the model alone is far off; the profile is what brings it in.
  EXPECT_GT(us.model_median, 0.10);
  // The figures the README quotes.
  std::printf(
      "held-out median |busbw error|: flapping-airplanes model %.1f %% fitted %.1f %% (%zu "
      "points); use3a-ss model %.1f %% fitted %.1f %% (%zu points)\n",
      100 * fa.model_median, 100 * fa.fitted_median, fa.points, 100 * us.model_median,
      100 * us.fitted_median, us.points);
}

// A network message's time is told from the network efficiency where the points show it: a
// broadcast's 512 KiB slices beside an all_reduce's 1 MiB ones, and the first loop's messages
// that NCCL's latency already charges. Planted (0.85, 4 us a message), the fit finds both. On a
// real all_reduce alone the data cannot tell them apart, and the time is left out, saying why.
TEST(CalibrationFit, AMessageTimeIsFittedWhereThePointsShowIt) {
  PlannedSpec ps = planned_h100_ib("h100-8-msg.yaml", 8);
  CalibrationProfile truth;
  truth.network_efficiency = 0.85;
  truth.network_message_us = 4;
  std::vector<FitRun> runs;
  for (Op op : {Op::kAllReduce, Op::kBroadcast})
    runs.push_back(planted_run(fmt::format("{}.out", op_name(op)), op, Algorithm::kRing, 8,
                               32 << 20, 2));
  ASSERT_TRUE(plant(ps, runs, truth));
  auto both = fit_calibration(ps.plan, ps.catalog, runs, {});
  ASSERT_TRUE(both) << both.errors().front().message;
  ASSERT_TRUE(both->profile.network_efficiency);
  EXPECT_NEAR(*both->profile.network_efficiency, 0.85, 0.85 * 0.03);
  EXPECT_NEAR(both->profile.network_message_us, 4, 4 * 0.15);
  // Voltage Park's all_reduce (verbatim, 4 x 8 H100): 0.36 us a message fits its points from
  // 32 MiB no better than the efficiency alone; the time is left out, and the line says why.
  PlannedSpec vp = planned(kFixtures + "voltage-park.yaml");
  auto one = fit_calibration(vp.plan, vp.catalog,
                             runs_of(vp.plan, {"vp-allreduce_20260224_225706.out"}), {});
  ASSERT_TRUE(one) << one.errors().front().message;
  EXPECT_EQ(one->profile.network_message_us, 0);
  int seen = 0;
  for (const auto& p : one->parameters)
    if (p.name == "network_message_us") {
      ++seen;
      EXPECT_FALSE(p.fitted);
      EXPECT_NE(p.why.find("does not improve the fit of the points of 32 MiB or more by the"),
                std::string::npos)
          << p.why;
    }
  EXPECT_EQ(seen, 1);
}

// The one run of `file`, read as a run of `nodes` nodes of 8 GPUs (checked; empty if unread).
std::vector<FitRun> one_run_of(const PlannedSpec& ps, const char* file, int nodes) {
  auto runs = runs_of(ps.plan, {file});
  EXPECT_EQ(runs.size(), 1u) << file;
  for (const auto& r : runs) {
    EXPECT_EQ(r.nodes, nodes) << file;
    EXPECT_EQ(r.gpus_per_node, 8) << file;
  }
  return runs;
}

// The fit of one Voltage Park log (4 nodes of 8).
Result<FitResult> fit_of_vp(const PlannedSpec& ps, const char* file) {
  const auto runs = one_run_of(ps, file, 4);
  EXPECT_EQ(runs.size(), 1u);
  return fit_calibration(ps.plan, ps.catalog, runs, {});
}

// Voltage Park's broadcast and reduce (verbatim nccl-tests outputs, 4 x 8 H100, 20 iterations:
// the banner says so and the run reads it) take 8-14 us a call up to 4 KiB, where one call
// down the 31-hop chain takes 35 us: back-to-back calls on one channel pipeline. Measured
// against the model (not fitted: no constant of this term is fitted, NCCL's base latency is
// the period's fixed part): within 1.7x at every size to 4 KiB, where one call alone is 2.5x
// and more.
TEST(CalibrationFit, BackToBackBroadcastAndReduceOnOneChannelPipeline) {
  PlannedSpec ps = planned(kFixtures + "voltage-park.yaml");
  const Fabric fabric = Fabric::build(ps.plan, ps.catalog);
  for (const char* file : {"vp-broadcast_20260224_225706.out", "vp-reduce_20260225_221049.out"}) {
    SCOPED_TRACE(file);
    const auto runs = one_run_of(ps, file, 4);
    ASSERT_EQ(runs.size(), 1u);
    const FitRun& r = runs[0];
    EXPECT_EQ(r.iters, 20);
    EXPECT_EQ(r.gpus_per_thread, 1);
    SimOptions o;
    o.op = r.op;
    o.iters = r.iters;
    auto piped = CollectiveModel::build(fabric, ps.plan, o);
    o.iters = 1;
    auto alone = CollectiveModel::build(fabric, ps.plan, o);
    ASSERT_TRUE(piped && alone);
    int judged = 0;
    for (const auto& row : r.rows) {
      if (row.bytes > 4096) continue;
      const double t = piped->at(row.bytes).time_us, one = alone->at(row.bytes).time_us;
      EXPECT_LE(std::max(t / row.time_us, row.time_us / t), 1.7) << row.bytes;
      EXPECT_GE(one / row.time_us, 2.5) << row.bytes;
      ++judged;
    }
    EXPECT_EQ(judged, 10);
    // From 256 KiB NCCL runs 2 channels or more: no pipelining, one call's time.
    EXPECT_DOUBLE_EQ(piped->at(256 << 10).time_us, alone->at(256 << 10).time_us);
  }
}

// A banner whose nGpus (-g) does not divide the node's GPUs is bad input naming the file and
// the key; a -z run's calls are timed alone.
TEST(CalibrationFit, TheBannerSetsTheRunsTiming) {
  PlannedSpec ps = planned(kFixtures + "voltage-park.yaml");
  auto text =
      read_file_bounded(kFixtures + "vp-broadcast_20260224_225706.out", kMaxToolOutputBytes);
  ASSERT_TRUE(text);
  std::string g3 = *text;
  g3.replace(g3.find("nGpus 1 "), 8, "nGpus 3 ");
  const fs::path p = write_temp("vp-broadcast-g3.out", g3);
  ToolOutput t{p.string(), g3, detect_output_kind(g3)};
  auto bad = read_fit_runs(ps.plan, {t}, {});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.errors().front().key, "nGpus");
  EXPECT_NE(bad.errors().front().message.find("does not divide the run's 8 GPUs"),
            std::string::npos);
  std::string z = *text;
  z.insert(z.find('\n', z.find("# nThread")) + 1,
           "# Blocking Enabled: wait and barrier after each inner iteration (-m) \n");
  ToolOutput tz{"vp-broadcast-z.out", z, detect_output_kind(z)};
  auto runs = read_fit_runs(ps.plan, {tz}, {});
  ASSERT_TRUE(runs) << runs.errors().front().message;
  EXPECT_EQ(runs->front().iters, 1);
}

// Each factor is searched over its own band only: on Voltage Park's broadcast the 17 points
// below 1 MiB (whose LL rate on one channel the model has too fast, README) would pull the
// network efficiency down to slow them, and the large sizes it is fitted for would miss
// (median 10.8 % with one objective over both bands, 3.6 % with each band its own).
TEST(CalibrationFit, EachFactorIsFittedOnItsOwnBand) {
  PlannedSpec ps = planned(kFixtures + "voltage-park.yaml");
  auto f = fit_of_vp(ps, "vp-broadcast_20260224_225706.out");
  ASSERT_TRUE(f) << f.errors().front().message;
  auto large = [](const std::vector<FitErrorGroup>& g) {
    for (const auto& e : g)
      if (e.band == "large") return e.median;
    return -1.0;
  };
  ASSERT_GT(large(f->model_errors), 0);
  EXPECT_LT(large(f->fit_errors), 0.05);
  EXPECT_LT(large(f->fit_errors), large(f->model_errors) / 3);
}

// A factor that stops at its bound says so and what to check: runs 20 % faster than the spec's
// links at their full rate (a spec with too few NICs, say) pin the network efficiency at 1.0;
// the same runs at the rate they were planted at (0.85) leave no note.
TEST(CalibrationFit, AFactorAtItsBoundSaysWhatToCheck) {
  PlannedSpec ps = planned_h100_ib("h100-4.yaml", 4);
  CalibrationProfile truth;
  truth.network_efficiency = 0.85;
  std::vector<FitRun> runs{
      planted_run("all_reduce.out", Op::kAllReduce, Algorithm::kRing, 4, 32.0 * (1 << 20), 2)};
  ASSERT_TRUE(plant(ps, runs, truth));
  auto network_why = [&](const std::vector<FitRun>& rs) {
    auto f = fit_calibration(ps.plan, ps.catalog, rs, {});
    EXPECT_TRUE(f) << f.errors().front().message;
    for (const auto& p : f->parameters)
      if (p.name == "network_efficiency") return std::pair{p.value, p.why};
    return std::pair{0.0, std::string()};
  };
  const auto [at, why] = network_why(runs);
  EXPECT_NEAR(at, 0.85, 0.01);
  EXPECT_EQ(why.find("bound"), std::string::npos) << why;
  for (auto& row : runs.front().rows) row.time_us *= 1 / (1.2 * 1.0 / 0.85);
  // Runs faster than the links at their full rate: no link is, so the efficiency is not
  // written (it would speed every other prediction on those links); the model's stays.
  const auto [fast, fast_why] = network_why(runs);
  EXPECT_NEAR(fast, nccl::kNetworkSimpleEfficiency, 1e-12);  // the model's, not fitted
  EXPECT_NE(fast_why.find("not fitted: the points took it to its bound 1, faster than the "
                          "scale-out links at their full rate, which no link is; left at the "
                          "model's 0.94"),
            std::string::npos)
      << fast_why;
  EXPECT_NE(fast_why.find("nics_per_node"), std::string::npos) << fast_why;
  // Small sizes faster than the model's latencies: the step time stops at 0 and says so.
  std::vector<FitRun> quick{
      planted_run("all_reduce.out", Op::kAllReduce, Algorithm::kRing, 4, 8, 8)};
  ASSERT_TRUE(plant(ps, quick, {}));
  for (auto& row : quick.front().rows)
    if (row.bytes < (1 << 20)) row.time_us *= 0.5;
  auto f = fit_calibration(ps.plan, ps.catalog, quick, {});
  ASSERT_TRUE(f) << f.errors().front().message;
  bool said = false;
  for (const auto& p : f->parameters)
    if (p.name == "network_step_latency_us") {
      EXPECT_LT(p.value, kFitAtBoundUs) << p.why;
      said = p.why.find("at its lower bound 0 us") != std::string::npos;
      EXPECT_TRUE(said) << p.why;
    }
  EXPECT_TRUE(said);
  // Small sizes alone measure no bandwidth: ring is not called the reference the link
  // efficiencies were measured through, it has no point that depends on its bandwidth.
  std::vector<FitRun> small = quick;
  std::erase_if(small.front().rows, [](const auto& row) { return row.bytes >= (1 << 20); });
  ASSERT_FALSE(small.front().rows.empty());
  auto s = fit_calibration(ps.plan, ps.catalog, small, {});
  ASSERT_TRUE(s) << s.errors().front().message;
  bool ring = false;
  for (const auto& p : s->parameters)
    if (p.name == "algorithms.ring") {
      ring = true;
      EXPECT_FALSE(p.fitted);
      EXPECT_EQ(p.why.find("reference"), std::string::npos) << p.why;
      EXPECT_NE(p.why.find("32 MiB or more"), std::string::npos) << p.why;
    }
  EXPECT_TRUE(ring);
  // With large sizes it is the reference.
  for (const auto& p : f->parameters) {
    if (p.name == "algorithms.ring") {
      EXPECT_NE(p.why.find("reference algorithm"), std::string::npos) << p.why;
    }
  }
}

// The fit keeps each run's flows to solve them again for every link efficiency it tries. With
// too little memory to keep them all (as much as the largest run's flows: room to build any run,
// not to keep that one) it routes the ones it cannot keep again instead, and fits the same
// profile: all four Voltage Park logs, every factor equal.
TEST(CalibrationFit, WithoutRoomToKeepTheFlowsTheFitIsTheSame) {
  PlannedSpec ps = planned(kFixtures + "voltage-park.yaml");
  const auto runs = runs_of(ps.plan, {"vp-allreduce_20260224_225706.out",
                                      "vp-allgather_20260224_225706.out",
                                      "vp-broadcast_20260224_225706.out",
                                      "vp-reduce_20260225_221049.out"});
  ASSERT_EQ(runs.size(), 4u);
  const Fabric fabric = Fabric::build(ps.plan, ps.catalog);
  size_t largest = 0;
  for (const FitRun& r : runs) {
    SimOptions o;
    o.op = r.op;
    o.nodes = r.nodes;
    o.keep_flows = true;
    auto m = CollectiveModel::build(fabric, ps.plan, o);
    ASSERT_TRUE(m);
    largest = std::max(largest, m->kept_flow_bytes());
    m->forget_flows();
    EXPECT_EQ(m->kept_flow_bytes(), 0u);
    EXPECT_FALSE(m->relink(fabric, CalibrationProfile{}));
  }
  FitOptions tight;
  tight.memory_bytes = static_cast<double>(largest);
  ASSERT_LT(tight.memory_bytes * kFitKeptFlowsShare, static_cast<double>(largest));
  auto kept = fit_calibration(ps.plan, ps.catalog, runs, {});
  auto routed = fit_calibration(ps.plan, ps.catalog, runs, tight);
  ASSERT_TRUE(kept) << kept.errors().front().message;
  ASSERT_TRUE(routed) << routed.errors().front().message;
  ASSERT_EQ(kept->parameters.size(), routed->parameters.size());
  for (size_t i = 0; i < kept->parameters.size(); ++i) {
    EXPECT_EQ(kept->parameters[i].fitted, routed->parameters[i].fitted)
        << kept->parameters[i].name;
    EXPECT_DOUBLE_EQ(kept->parameters[i].value, routed->parameters[i].value)
        << kept->parameters[i].name;
  }
  EXPECT_DOUBLE_EQ(kept->objective_after, routed->objective_after);
}

// A bandwidth factor is fitted on the sizes bandwidth dominates: Voltage Park's all_reduce
// (verbatim nccl-tests output, 4 x 8 H100) runs tree only below 1 MiB (LL, LL128), so tree gets
// no factor there, and the 1-16 MiB band the fit does not see is left as the model has it
// (a factor fitted on those latency-bound points had reached the bound, 4.0, and tripled it).
TEST(CalibrationFit, BandwidthFactorsAreFittedOnLargeSizesOnly) {
  PlannedSpec ps = planned(kFixtures + "voltage-park.yaml");
  auto f = fit_of_vp(ps, "vp-allreduce_20260224_225706.out");
  ASSERT_TRUE(f) << f.errors().front().message;
  bool tree_seen = false;
  for (const auto& p : f->parameters)
    if (p.name == "algorithms.tree") {
      tree_seen = true;
      EXPECT_FALSE(p.fitted) << p.value;
      EXPECT_NE(p.why.find("32 MiB or more"), std::string::npos) << p.why;
    }
  EXPECT_TRUE(tree_seen);
  std::vector<double> model_err, fit_err;
  for (const auto& p : f->points)
    if (p.band == "mid") {
      model_err.push_back(std::fabs(p.measured_time_us / p.model_time_us - 1));
      fit_err.push_back(std::fabs(p.measured_time_us / p.fitted_time_us - 1));
    }
  ASSERT_FALSE(model_err.empty());
  std::sort(model_err.begin(), model_err.end());
  std::sort(fit_err.begin(), fit_err.end());
  // The network efficiency the large sizes fit moves the mid sizes a little (3.8 % to 4.2 %
  // median with NCCL 2.24.3's table); a factor fitted on them had tripled their error.
  EXPECT_LE(fit_err[fit_err.size() / 2], model_err[model_err.size() / 2] + 0.02);
}

// Two points of 32 MiB or more tell at most two factors apart: a run cut at 64 MiB fitted the
// link efficiencies and an algorithm factor on them and read a 0 % error. The factors the most
// points move are kept, the rest say why they were not fitted.
TEST(CalibrationFit, NoMoreFactorsThanABandHasPoints) {
  PlannedSpec ps = planned_h100_ib("h100-8.yaml", 8);
  CalibrationProfile truth;
  truth.scaleup_efficiency = 0.7;
  truth.network_efficiency = 0.8;
  std::vector<FitRun> runs;
  for (auto [algo, nodes] : {std::pair{Algorithm::kRing, 4}, std::pair{Algorithm::kTree, 4}}) {
    runs.push_back(planted_run(fmt::format("all_reduce-{}-{}.out", algorithm_name(algo), nodes),
                               Op::kAllReduce, algo, nodes, 8, 2));
    auto& rows = runs.back().rows;
    rows.erase(std::remove_if(rows.begin(), rows.end(),
                              [](const NcclTestsRow& r) { return r.bytes > 32.0 * (1 << 20); }),
               rows.end());
  }
  ASSERT_TRUE(plant(ps, runs, truth));
  auto f = fit_calibration(ps.plan, ps.catalog, runs, {});
  ASSERT_TRUE(f) << f.errors().front().message;
  int large_points = 0;
  for (const auto& r : runs)
    for (const auto& row : r.rows) large_points += row.bytes >= 32.0 * (1 << 20) ? 1 : 0;
  ASSERT_EQ(large_points, 2);
  int fitted_large = 0;
  bool said = false;
  for (const auto& p : f->parameters) {
    const bool latency = p.name.find("latency") != std::string::npos;
    if (!latency && p.fitted) ++fitted_large;
    said = said || p.why.find("2 points of 32 MiB or more tell at most 2 factors apart") !=
                       std::string::npos;
  }
  EXPECT_LE(fitted_large, 2);
  EXPECT_TRUE(said);
}

// all_gather on NVLS across nodes is not simulated (NCCL needs CollNet for it): such a run is
// listed as skipped with the reason, not fitted as another algorithm.
TEST(CalibrationFit, RunsOfAlgorithmsNotModelledAreSkipped) {
  PlannedSpec ps = planned(kFixtures + "flapping-airplanes.yaml");
  auto runs =
      runs_of(ps.plan, {"2026-05-12-all_reduce-ring-8n.out", "2026-05-12-all_gather-nvls-8n.out"});
  auto f = fit_calibration(ps.plan, ps.catalog, runs, {});
  ASSERT_TRUE(f) << f.errors().front().message;
  ASSERT_EQ(f->skipped.size(), 1u);
  EXPECT_NE(f->skipped[0].file.find("all_gather-nvls-8n"), std::string::npos);
  EXPECT_NE(f->skipped[0].why.find("all_gather nvls is not simulated"), std::string::npos)
      << f->skipped[0].why;
  EXPECT_EQ(f->runs.size(), 1u);
  auto only = runs_of(ps.plan, {"2026-05-12-all_gather-nvls-8n.out"});
  EXPECT_FALSE(fit_calibration(ps.plan, ps.catalog, only, {}));
}

TEST(CalibrationFit, OneFileIsCrossValidatedByFolds) {
  PlannedSpec ps = planned(kFixtures + "flapping-airplanes.yaml");
  const auto runs = one_run_of(ps, "2026-05-12-all_reduce-ring-8n.out", 8);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].op, Op::kAllReduce);
  ASSERT_TRUE(runs[0].algorithm);
  EXPECT_EQ(*runs[0].algorithm, Algorithm::kRing);
  // This log holds one size: no fold can leave it out and fit on the rest (it read "2-fold over
  // the points" with one point); said, and its cross-validated errors are "-".
  ASSERT_EQ(runs[0].rows.size(), 1u);
  auto f = fit_calibration(ps.plan, ps.catalog, runs, {});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->cv_method, "none: one point, and leaving it out leaves nothing to fit on");
  const std::string text = fit_text(*f);
  EXPECT_NE(text.find("               -\n"), std::string::npos) << text;
  // A log of many sizes: k folds over its points, k at most the --folds asked.
  PlannedSpec vp = planned(kFixtures + "voltage-park.yaml");
  auto g = fit_of_vp(vp, "vp-allreduce_20260224_225706.out");
  ASSERT_TRUE(g) << g.errors().front().message;
  EXPECT_EQ(g->cv_method, "5-fold over the points (point i in fold i mod 5)");
}

// gpufabric simulate prints the first 8 rank lines, then '#  ... ranks 8 to N-2 on nodes 2 to
// M', then the last: the hosts it names are not the run's, so its nodes are the ranks over the
// GPUs a node. --nodes, given, counts them where the rank lines name fewer hosts (one host name
// on every container); more hosts than --nodes is another run's output, an error.
TEST(CalibrationFit, RankLinesLeftOutCountTheRanksNotTheHosts) {
  PlannedSpec ps = planned(kFixtures + "flapping-airplanes.yaml");
  ToolOutput t = output_of(kFixtures + "2026-05-12-all_reduce-ring-8n.out");
  const size_t from = t.text.find("#  Rank   8 ");
  const size_t to = t.text.find("#  Rank  63 ");
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  t.text.replace(from, to - from, "#  ... ranks 8 to 62 on nodes 2 to 8\n");
  auto runs = read_fit_runs(ps.plan, {t}, {});
  ASSERT_TRUE(runs) << runs.errors().front().message;
  EXPECT_EQ((*runs)[0].nodes, 8);
  EXPECT_EQ((*runs)[0].gpus_per_node, 8);
  FitOptions o;
  o.nodes = 4;
  auto four =
      read_fit_runs(ps.plan, {output_of(kFixtures + "2026-05-12-all_reduce-ring-8n.out")}, o);
  ASSERT_FALSE(four);
  EXPECT_EQ(four.errors().front().message, "--nodes 4, but the run's rank lines name 8 hosts");
  // Every rank on one host name (containers that share it): --nodes counts the nodes.
  ToolOutput same = output_of(kFixtures + "2026-05-12-all_reduce-ring-8n.out");
  static const std::regex on_host(R"(( on )\S+( device))");
  same.text = std::regex_replace(same.text, on_host, "$1pod$2");
  o.nodes = 8;
  auto eight = read_fit_runs(ps.plan, {same}, o);
  ASSERT_TRUE(eight) << eight.errors().front().message;
  EXPECT_EQ((*eight)[0].nodes, 8);
  EXPECT_EQ((*eight)[0].gpus_per_node, 8);
}

// A log cut after a whole row parses, but the fit says the run may be cut (no nccl-tests footer).
TEST(CalibrationFit, ARunCutAfterARowIsNoted) {
  PlannedSpec ps = planned(kFixtures + "flapping-airplanes.yaml");
  const ToolOutput whole = output_of(kFixtures + "2026-05-12-all_reduce-ring-8n.out");
  ToolOutput cut = whole;
  cut.text = cut.text.substr(0, cut.text.find("# Out of bounds"));
  auto w = read_fit_runs(ps.plan, {whole}, {});
  auto c = read_fit_runs(ps.plan, {cut}, {});
  ASSERT_TRUE(w && c);
  EXPECT_TRUE((*w)[0].complete);
  EXPECT_FALSE((*c)[0].complete);
  FitResult r;
  r.runs = *c;
  EXPECT_NE(fit_text(r).find("has no '# Avg bus bandwidth' line"), std::string::npos);
  EXPECT_EQ(fit_json(r)["runs"][0]["complete"], false);
}

TEST(CalibrationFit, RunsTheSpecCannotHoldAreBadInput) {
  PlannedSpec ps = planned(kFixtures + "flapping-airplanes.yaml");
  const PlannedSpec small = planned(write_temp("b200-4.yaml",
                                               "cluster: {gpu: b200, nodes: 4, nic: cx7-400g}\n"
                                               "fabric: {technology: infiniband}\n")
                                        .string());
  const ToolOutput eight = output_of(kFixtures + "2026-05-12-all_reduce-ring-8n.out");
  auto too_many = read_fit_runs(small.plan, {eight}, {});
  ASSERT_FALSE(too_many);
  EXPECT_NE(too_many.errors().front().message.find("8 nodes; the spec has 4"), std::string::npos);
  // Another cluster's GPUs (the rank lines name them), or one output given twice, would fit
  // the wrong points or count them twice.
  auto other = read_fit_runs(planned_h100_ib("h100-8.yaml", 8).plan, {eight}, {});
  ASSERT_FALSE(other);
  EXPECT_NE(other.errors().front().message.find(
                "the run's rank lines name NVIDIA B200; the spec's GPUs are h100-sxm"),
            std::string::npos)
      << other.errors().front().message;
  ToolOutput copy = eight;
  copy.file = "copy.out";
  auto twice = read_fit_runs(ps.plan, {eight, copy}, {});
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.errors().front().file, "copy.out");
  EXPECT_NE(twice.errors().front().message.find("the same output as"), std::string::npos);
  const fs::path garbage = write_temp("garbage.out", "hello\n");
  auto g = read_fit_runs(ps.plan, {output_of(garbage.string())}, {});
  ASSERT_FALSE(g);
  EXPECT_EQ(g.errors().front().file, garbage.string());
  // No rank lines: the nodes come from --nodes, else the run cannot be placed.
  const std::string table =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "  1073741824     268435456     float     sum      -1   5000.0  214.75  402.65      0   "
      "5000.0  214.75  402.65      0\n";
  const fs::path bare = write_temp("all_reduce_perf.out", table);
  auto no_nodes = read_fit_runs(ps.plan, {output_of(bare.string())}, {});
  ASSERT_FALSE(no_nodes);
  EXPECT_NE(no_nodes.errors().front().hint.find("--nodes"), std::string::npos);
  FitOptions o;
  o.nodes = 2;
  auto with_nodes = read_fit_runs(ps.plan, {output_of(bare.string())}, o);
  ASSERT_TRUE(with_nodes);
  EXPECT_EQ((*with_nodes)[0].nodes, 2);
  EXPECT_EQ((*with_nodes)[0].op, Op::kAllReduce);  // from the file's name
  const fs::path forced =
      write_temp("chain-all_reduce_perf.out", "# NCCL_ALGO=CollnetChain\n" + table);
  auto chain = read_fit_runs(ps.plan, {output_of(forced.string())}, o);
  ASSERT_TRUE(chain) << format_diagnostics(chain.errors());
  EXPECT_EQ((*chain)[0].algorithm, Algorithm::kCollNetChain);
  const fs::path unknown = write_temp("bogus-all_reduce_perf.out", "# NCCL_ALGO=Bogus\n" + table);
  auto bogus = read_fit_runs(ps.plan, {output_of(unknown.string())}, o);
  ASSERT_FALSE(bogus);
  EXPECT_NE(bogus.errors().front().message.find("Bogus"), std::string::npos);
}

}  // namespace
}  // namespace gf
