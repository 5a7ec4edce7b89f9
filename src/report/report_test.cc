// The HTML report: its sections, the topology diagram, offline-ness and size.
#include "report/report.h"

#include <gtest/gtest.h>

#include <regex>

#include "../../tests/support.h"
#include "common/file.h"
#include "report/sweep_report.h"
#include "verify/parsers.h"

namespace gf {
namespace {

using testing::load_example;

const std::string& file_of(const std::vector<OutputFile>& files, const std::string& name) {
  for (const auto& f : files)
    if (f.first == name) return f.second;
  static const std::string none;
  ADD_FAILURE() << "no " << name;
  return none;
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(Report, SeedExampleHasEverySection) {
  auto files = make_report(load_example("seed-70b-1024.yaml"), {});
  ASSERT_TRUE(files.ok()) << format_diagnostics(files.errors());
  std::vector<std::string> names;
  for (const auto& f : *files) names.push_back(f.first);
  EXPECT_EQ(names, (std::vector<std::string>{"report.html", "step.json", "plan.json", "plan.md",
                                             "bom.csv", "cabling.csv", "simulate.json"}));
  const std::string& html = file_of(*files, "report.html");
  for (const char* part : {"<svg id=\"topology\"", "id=\"chart-busbw\"", "id=\"chart-step\"",
                           "Bill of materials", "What if", "Warnings", "one spine fails",
                           "href=\"plan.md\"", "as NCCL chooses", "ring (simulated)"})
    EXPECT_NE(html.find(part), std::string::npos) << part;
  EXPECT_TRUE(html.find("PASS") != std::string::npos || html.find("FAIL") != std::string::npos);
}

// The verdict is step's: a layout that does not fit in memory fails, and the page says by how
// much (it had said PASS beside a step.json with fits: false).
TEST(Report, ALayoutThatDoesNotFitInMemoryFails) {
  auto fits = make_report(load_example("llama3-70b-h100-512.yaml"), {});
  ASSERT_TRUE(fits.ok()) << format_diagnostics(fits.errors());
  const std::string& ok = file_of(*fits, "report.html");
  EXPECT_NE(ok.find("Verdict: <b class=\"pass\">PASS</b>"), std::string::npos);
  EXPECT_NE(ok.find("<b>Memory per GPU</b>"), std::string::npos);
  EXPECT_NE(ok.find("<b class=\"pass\">fits</b>"), std::string::npos);
  auto big =
      make_report(testing::load_example_edited("llama3-70b-h100-512.yaml", "tp: 8, pp: 4, dp: 16",
                                               "tp: 2, pp: 4, dp: 64"),
                  {});
  ASSERT_TRUE(big.ok()) << format_diagnostics(big.errors());
  const std::string& html = file_of(*big, "report.html");
  EXPECT_NE(html.find("Verdict: <b class=\"fail\">FAIL</b>"), std::string::npos);
  EXPECT_NE(html.find("does not fit: the layout cannot run"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(file_of(*big, "step.json"))["memory"]["fits"].get<bool>());
}

// The what-if table gives alltoall beside all_reduce: a spine's loss leaves the lab's rings on
// their rails (unchanged) but takes its share of every alltoall (it crosses the top tier).
TEST(Report, WhatIfShowsTheAlltoallASpineFailureCosts) {
  auto files = make_report(load_example("roce-lab-16.yaml"), {});
  ASSERT_TRUE(files.ok()) << format_diagnostics(files.errors());
  const std::string& html = file_of(*files, "report.html");
  EXPECT_NE(html.find("<th>alltoall busbw</th>"), std::string::npos);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      html, m, std::regex("the fabric routes around it: all_reduce unchanged, alltoall -(\\d+)%")))
      << html.substr(html.find("What if"), 1500);
  EXPECT_GT(std::stoi(m[1]), 20);  // measured 44
}

TEST(Report, RecordsTheVersionItIsGiven) {
  const auto seed = load_example("seed-70b-1024.yaml");
  auto files = make_report(seed, {}, false, "9.8.7 (revision abc123)");
  ASSERT_TRUE(files.ok());
  EXPECT_NE(file_of(*files, "report.html").find("Made by gpufabric 9.8.7 (revision abc123)."),
            std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(file_of(*files, "plan.json"))["gpufabric_version"],
            "9.8.7 (revision abc123)");
  // Without one, neither says anything of a version.
  auto plain = make_report(seed, {});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(file_of(*plain, "report.html").find("Made by gpufabric"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(file_of(*plain, "plan.json")).contains("gpufabric_version"));
}

TEST(Report, OpensOffline) {
  auto files = make_report(load_example("seed-70b-1024.yaml"), {});
  ASSERT_TRUE(files.ok());
  const std::string& html = file_of(*files, "report.html");
  // Nothing the browser would fetch: no external scripts, styles, images or frames.
  const std::regex external(R"((src|href)\s*=\s*["']?(https?:)?//)", std::regex::icase);
  EXPECT_FALSE(std::regex_search(html, external));
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("<iframe"), std::string::npos);
  // The charting libraries are inlined.
  EXPECT_GE(count(html, "<script>"), 5);
  EXPECT_NE(html.find("vegaEmbed"), std::string::npos);
}

TEST(Report, MeasuredRunsAreOverlaid) {
  auto text =
      read_file_bounded(GPUFABRIC_SOURCE_DIR "/tests/data/outputs/nccl-tests-2node-allreduce.txt",
                        kMaxToolOutputBytes);
  ASSERT_TRUE(text.ok());
  auto run = parse_nccl_tests(*text, "dir/run.txt");
  ASSERT_TRUE(run.ok());
  const PlannedSpec seed = load_example("seed-70b-1024.yaml");
  const MeasuredRun m = measured_run(*run, "dir/run.txt", seed.plan.gpus_per_node);
  EXPECT_EQ(m.nodes, 2);
  auto files = make_report(seed, {m, m});
  ASSERT_TRUE(files.ok());
  const std::string& html = file_of(*files, "report.html");
  // Every measured point is drawn (0.00 GB/s at 8 B too), and the same job is simulated beside
  // it once: all_reduce on the run's 2 nodes, not only on the whole cluster.
  EXPECT_EQ(count(html, "\"series\":\"measured: run.txt (2 nodes)\""),
            2 * static_cast<int>(m.series.points.size()));
  EXPECT_GT(count(html, "\"series\":\"all_reduce on 2 nodes (simulated)\""), 20);
  EXPECT_GT(count(html, "\"series\":\"all_reduce on 128 nodes, as NCCL chooses\""), 20);
  EXPECT_EQ(count(html, "\"source\":\"measured\""), 2 * static_cast<int>(m.series.points.size()));
}

TEST(Report, MeasuredRunLargerThanThePlanIsAnError) {
  const PlannedSpec seed = load_example("seed-70b-1024.yaml");
  MeasuredRun big;
  big.file = "huge.txt";
  big.nodes = seed.plan.nodes + 1;
  big.series.points = {{1 << 30, 100}};
  auto files = make_report(seed, {big});
  ASSERT_FALSE(files.ok());
  EXPECT_NE(format_diagnostics(files.errors()).find("huge.txt"), std::string::npos);
  big.nodes = 2;
  big.op = "all_scatter";
  files = make_report(seed, {big});
  ASSERT_FALSE(files.ok());
  EXPECT_NE(format_diagnostics(files.errors()).find("unknown collective 'all_scatter'"),
            std::string::npos);
}

TEST(Report, TopologyIsSummarisedForLargeFabrics) {
  const PlannedSpec big = load_example("roce-16k.yaml");
  const std::string svg = topology_svg(big.plan);
  ASSERT_EQ(svg.rfind("<svg id=\"topology\"", 0), 0u);
  // One scalable unit drawn, never one box per switch of a 16,384-GPU fabric.
  EXPECT_LT(count(svg, "<rect"), 200);
  EXPECT_LT(big.plan.leaf_total, count(svg, "<rect") * 100);  // sanity: the fabric is large
  EXPECT_NE(svg.find(std::to_string(big.plan.leaf_total)), std::string::npos);
}

TEST(Report, TopologyShowsTheOtherNetworksSideBySide) {
  const PlannedSpec n = load_example("networks-dgx-256.yaml");
  ASSERT_TRUE(n.plan.networks.has_value());
  const std::string svg = topology_svg(n.plan);
  EXPECT_NE(svg.find("other networks (isolation: physical"), std::string::npos);
  for (const auto& net : n.plan.networks->nets) {
    EXPECT_NE(svg.find(std::string(">") + network_kind_name(net.kind) + "</text>"),
              std::string::npos)
        << network_kind_name(net.kind);
    EXPECT_NE(svg.find(net.sw.id), std::string::npos) << net.sw.id;
  }
  // The OOB switches' uplinks into the in-band network (the SuperPOD RA's design) are said.
  const PlannedSpec ra = load_example("networks-superpod-h100-4su.yaml");
  ASSERT_TRUE(ra.plan.networks && ra.plan.networks->find(NetworkKind::kOob)->uplinks_to_inband);
  EXPECT_NE(topology_svg(ra.plan).find("uplinks into the in-band leaves"), std::string::npos);
  // Without networks: the compute fabric alone, as before.
  EXPECT_EQ(topology_svg(load_example("seed-70b-1024.yaml").plan).find("other networks"),
            std::string::npos);
}

TEST(Report, SixteenThousandGpusFitsInFiveMegabytes) {
  auto files = make_report(load_example("roce-16k.yaml"), {});
  ASSERT_TRUE(files.ok()) << format_diagnostics(files.errors());
  EXPECT_LE(file_of(*files, "report.html").size(), 5u * 1000 * 1000);
}

// --configs: the configurations beside the report, summarised and linked.
TEST(Report, ConfigurationsOnRequest) {
  auto plain = make_report(load_example("roce-lab-64.yaml"), {});
  ASSERT_TRUE(plain.ok());
  for (const auto& f : *plain) EXPECT_NE(f.first.rfind("configs/", 0), 0u) << f.first;
  auto files = make_report(load_example("roce-lab-64.yaml"), {}, true);
  ASSERT_TRUE(files.ok()) << format_diagnostics(files.errors());
  EXPECT_FALSE(file_of(*files, "configs/frr/spine01.conf").empty());
  EXPECT_FALSE(file_of(*files, "configs/hosts/node001/netplan.yaml").empty());
  const std::string& html = file_of(*files, "report.html");
  EXPECT_NE(html.find("<h2>Configurations</h2>"), std::string::npos);
  EXPECT_NE(html.find("4 switches with a /32 loopback each, 16 routed links"), std::string::npos);
  EXPECT_NE(html.find("href=\"configs/frr/\""), std::string::npos);
  auto ib = make_report(load_example("seed-70b-1024.yaml"), {}, true);
  ASSERT_TRUE(ib.ok());
  EXPECT_FALSE(file_of(*ib, "configs/opensm/opensm.conf").empty());
  EXPECT_NE(file_of(*ib, "report.html").find("routing engine ar_ftree"), std::string::npos);
}

// A RoCE fabric in the packet engine's range gets the QoS section: the default qos run's
// verdicts, its queue and pause charts (over the run's trace) and qos.json beside the report;
// InfiniBand says in the notes why it has none.
TEST(Report, RoceHasAQosSectionWithQueueAndPauseCharts) {
  auto files = make_report(load_example("roce-lab-64.yaml"), {});
  ASSERT_TRUE(files.ok()) << format_diagnostics(files.errors());
  const std::string& html = file_of(*files, "report.html");
  for (const char* part :
       {"<h2>RoCE QoS at packet level</h2>", "id=\"chart-qos-queue\"", "id=\"chart-qos-pause\"",
        "alltoall of 64 MiB per rank over 64 GPUs", "no cyclic buffer dependency", "\"queue_kib\"",
        "\"paused_pct\"", "href=\"qos.json\""})
    EXPECT_NE(html.find(part), std::string::npos) << part;
  const auto qos = nlohmann::json::parse(file_of(*files, "qos.json"));
  EXPECT_EQ(qos["verdicts"].size(), 5u);
  auto ib = make_report(load_example("seed-70b-1024.yaml"), {});
  ASSERT_TRUE(ib.ok());
  const std::string& ib_html = file_of(*ib, "report.html");
  EXPECT_EQ(ib_html.find("chart-qos-queue"), std::string::npos);
  EXPECT_NE(ib_html.find("No RoCE QoS section: infiniband has no PFC"), std::string::npos);
}

TEST(Report, SingleSwitchClusterHasNoSpineRow) {
  auto files = make_report(load_example("roce-lab-64.yaml"), {});
  ASSERT_TRUE(files.ok()) << format_diagnostics(files.errors());
  const std::string& html = file_of(*files, "report.html");
  EXPECT_NE(html.find("<svg id=\"topology\""), std::string::npos);
  EXPECT_NE(html.find("one leaf fails"), std::string::npos);
}

// On a single switch the report's failure row is the switch's, and says nothing runs until it is
// replaced; it had advised restarting with the ports of a rail left out, as for a rail leaf.
TEST(Report, ASingleSwitchsFailureStopsEverything) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "gf_report_single";
  fs::create_directories(dir);
  std::ofstream(dir / "spec.yaml") << "name: single\ncluster: {gpu: h100-sxm, nodes: 8, nic: "
                                      "cx7-400g}\nfabric: {technology: infiniband, topology: "
                                      "single, switch: qm9700}\n";
  auto planned = load_and_plan((dir / "spec.yaml").string());
  fs::remove_all(dir);
  ASSERT_TRUE(planned.ok()) << format_diagnostics(planned.errors());
  auto files = make_report(*planned, {});
  ASSERT_TRUE(files.ok()) << format_diagnostics(files.errors());
  const std::string& html = file_of(*files, "report.html");
  EXPECT_NE(html.find("the switch fails"), std::string::npos);
  EXPECT_NE(html.find("only switch: every node is cut off"), std::string::npos);
  EXPECT_EQ(html.find("cut off from a rail"), std::string::npos);
}

// A valid sweep design with a step: its values, capex and days to train.
DesignResult sweep_design(int index, double capex, double days) {
  DesignResult d;
  d.index = index;
  d.values = {{"k", std::to_string(index)}};
  d.ok = d.has_step = d.constraints_met = d.within_budget = true;
  d.capex_usd = capex;
  d.time_to_train_s = days * 86400;
  return d;
}

// Values wider than the column's 44 characters widen it: every row's capex ends where the
// header's does.
TEST(SweepReport, TheTableLinesUpLongValues) {
  std::vector<DesignResult> ds{sweep_design(0, 10e6, 10), sweep_design(1, 12e6, 9)};
  ds[1].values = {{"fabric.technology", "infiniband"},
                  {"constraints.min_gpu_utilization", "0.6"},
                  {"constraints.max_comm_fraction", "0.35"}};
  const std::string table = sweep_table(summarise_sweep({}, ds, Goal::kTime, 0));
  std::vector<size_t> ends;
  for (size_t at = 0; at < table.size();) {
    const size_t eol = table.find('\n', at);
    const std::string line = table.substr(at, eol - at);
    at = eol + 1;
    if (line.empty()) break;
    // The capex column: "capex" in the header, "$..." in a row; where it ends.
    const size_t capex = line.find(ends.empty() ? "capex" : "$");
    ASSERT_NE(capex, std::string::npos) << line;
    ends.push_back(line.find(' ', capex));
  }
  ASSERT_EQ(ends.size(), 3u) << table;
  EXPECT_EQ(ends[1], ends[0]) << table;
  EXPECT_EQ(ends[2], ends[0]) << table;
  // A key with one value in every design is named once, above the table, not on each row.
  for (auto& d : ds) d.values = {{"k", std::to_string(d.index)}, {"shared.key", "0.6"}};
  const std::string shared = sweep_table(summarise_sweep({}, ds, Goal::kTime, 0));
  EXPECT_EQ(shared.rfind("every design: shared.key=0.6\n", 0), 0u) << shared;
  EXPECT_GT(shared.find("shared.key", shared.find('\n')), shared.find("\nbest:")) << shared;
}

// With goal time, a design within kSweepTimeTie of the fastest is as fast as the model can
// tell: the cheaper wins (the README's sweep chose an InfiniBand design $2.2M dearer for 20 s
// in 5.14 days); a design slower by more stays behind the fastest.
TEST(SweepReport, NearlyTiedTimesGoToTheCheaperDesign) {
  std::vector<DesignResult> ds{sweep_design(0, 12e6, 10), sweep_design(1, 10e6, 10.05)};
  const SweepResult tie = summarise_sweep({}, ds, Goal::kTime, 0);
  EXPECT_EQ(tie.best, 1);
  EXPECT_NE(tie.why.find("the cheapest within 1% of the shortest time"), std::string::npos)
      << tie.why;
  EXPECT_NE(tie.why.find("runner-up: design 1"), std::string::npos) << tie.why;
  ds[1] = sweep_design(1, 10e6, 11);
  const SweepResult apart = summarise_sweep({}, ds, Goal::kTime, 0);
  EXPECT_EQ(apart.best, 0);
  EXPECT_NE(apart.why.find("the shortest time of the 2"), std::string::npos) << apart.why;
}

// A run shorter than a day reads in the clock's units, not "0.0 d"; days from one day up.
TEST(SweepReport, ShortRunsReadInHours) {
  std::vector<DesignResult> ds{sweep_design(0, 10e6, 1.13 / 24), sweep_design(1, 12e6, 2.5)};
  const std::string table = sweep_table(summarise_sweep({}, ds, Goal::kTime, 0));
  EXPECT_EQ(table.find("0.0 d"), std::string::npos) << table;
  EXPECT_NE(table.find("1.13 h"), std::string::npos) << table;
  EXPECT_NE(table.find("2.5 d"), std::string::npos) << table;
}

// Each design's MFU and memory per GPU: in the table (MFU, "?" where the model's FLOPs are not
// known), the CSV and the JSON (null MFU); a design without a step has neither.
TEST(SweepReport, DesignsShowTheirMfuAndMemory) {
  std::vector<DesignResult> ds{sweep_design(0, 10e6, 10), sweep_design(1, 12e6, 9),
                               sweep_design(2, 11e6, 9.5)};
  ds[0].mfu = 0.4123;
  ds[0].memory_bytes = 70.5 * 1073741824.0;
  ds[2].has_step = false;
  const SweepResult r = summarise_sweep({}, ds, Goal::kTime, 0);
  const std::string table = sweep_table(r);
  EXPECT_NE(table.find(" mfu  verdict"), std::string::npos) << table;
  EXPECT_NE(table.find("41.2%  ok"), std::string::npos) << table;
  EXPECT_NE(table.find("     ?  ok"), std::string::npos) << table;
  const std::string csv = sweep_csv(r);
  EXPECT_NE(csv.find(",gpu_utilization,mfu,memory_gib,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",0.4123,70.50,"), std::string::npos) << csv;
  const auto j = sweep_json(r);
  EXPECT_DOUBLE_EQ(j["designs"][0]["mfu"].get<double>(), 0.4123);
  EXPECT_TRUE(j["designs"][1]["mfu"].is_null());
  EXPECT_FALSE(j["designs"][2].contains("mfu"));
  EXPECT_EQ(design_from_json(design_to_json(ds[0])).mfu, ds[0].mfu);
  EXPECT_EQ(design_from_json(design_to_json(ds[0])).memory_bytes, ds[0].memory_bytes);
}

// A design that misses the step's constraints says which (it had read "misses constraints"),
// with value and limit in sweep.json.
TEST(SweepReport, ADesignNamesTheConstraintsItMisses) {
  std::vector<DesignResult> ds{sweep_design(0, 10e6, 10), sweep_design(1, 12e6, 9)};
  ds[1].constraints_met = false;
  ds[1].missed = {
      "max_comm_fraction: 0.369 (limit 0.3)",
      "min_gpu_utilization: 0.630 (limit 0.8, the default: set constraints.min_gpu_utilization)"};
  const SweepResult r = summarise_sweep({}, ds, Goal::kTime, 0);
  const std::string table = sweep_table(r);
  EXPECT_NE(table.find("misses max_comm_fraction and min_gpu_utilization, pareto\n"),
            std::string::npos)
      << table;
  EXPECT_EQ(
      sweep_json(r)["designs"][1]["missed"][1],
      "min_gpu_utilization: 0.630 (limit 0.8, the default: set constraints.min_gpu_utilization)");
  EXPECT_EQ(design_from_json(design_to_json(ds[1])).missed, ds[1].missed);
}

}  // namespace
}  // namespace gf

namespace gf {
TEST(Report, HasAHeatMapOfLinkUtilisationPerTier) {
  auto files = make_report(load_example("seed-70b-1024.yaml"), {});
  ASSERT_TRUE(files.ok()) << format_diagnostics(files.errors());
  const std::string& html = file_of(*files, "report.html");
  EXPECT_NE(html.find("<h2>Link utilisation per tier</h2>"), std::string::npos);
  EXPECT_NE(html.find("\"chart-links\""), std::string::npos);
  // One row per tier of the fabric: NVLink, PCIe, NIC-leaf and leaf-spine on the seed.
  for (const char* tier : {"\"scale_up\"", "\"pcie\"", "\"nic_leaf\"", "\"leaf_spine\""})
    EXPECT_NE(html.find(tier), std::string::npos) << tier;
}
}  // namespace gf
