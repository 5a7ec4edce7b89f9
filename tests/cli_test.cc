// The command line as users and scripts see it: output, exit codes, files.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "acceptance_results.h"
#include "common/csv.h"
#include "common/output.h"
#include "plan/plan.h"

namespace {

namespace fs = std::filesystem;

struct CmdResult {
  int code = -1;
  std::string out, err;
};

// Runs gpufabric with `args` (shell words) from the source folder.
CmdResult gpufabric(const std::string& args) {
  const fs::path err_file = fs::temp_directory_path() / ("gf_err_" + std::to_string(getpid()));
  const std::string cmd = std::string("cd ") + GPUFABRIC_SOURCE_DIR + " && " + GPUFABRIC_BIN + " " +
                          args + " 2>" + err_file.string();
  CmdResult r;
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_file);
  std::stringstream ss;
  ss << e.rdbuf();
  r.err = ss.str();
  fs::remove(err_file);
  return r;
}

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("gf_test_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  return d;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

fs::path write_temp(const std::string& name, const std::string& text) {
  fs::path p = fs::temp_directory_path() / ("gf_" + std::to_string(getpid()) + "_" + name);
  std::ofstream(p) << text;
  return p;
}

TEST(Cli, EstimateReproducesTheGuide) {
  CmdResult r = gpufabric(
      "estimate --params 70B --precision bf16 --gpus 1024 --link 400G --compute-time 10s "
      "--steps 100000 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["traffic_bytes_simple"].get<double>(), 2.8e11);
  EXPECT_NEAR(j["traffic_factor"].get<double>(), 1.998, 0.001);
  EXPECT_NEAR(j["comm_time_s"].get<double>(), 5.6, 0.05);
  EXPECT_NEAR(j["comm_fraction"].get<double>(), 0.36, 0.005);
  EXPECT_DOUBLE_EQ(j["link_bytes_per_s"].get<double>(), 5e10);
  for (const char* k : {"params", "bytes_per_param", "gpus", "collective", "payload_bytes",
                        "traffic_bytes", "compute_time_s", "steps", "comm_hours"})
    EXPECT_TRUE(j.contains(k)) << k;

  // Without a compute time or steps, the figures that need them are null, not 0; a run's
  // communication under an hour is not "0.0 h".
  CmdResult bare = gpufabric("estimate --params 70B --gpus 8 --nic cx7-400g --steps 10 --json");
  ASSERT_EQ(bare.code, 0) << bare.err;
  const auto b = nlohmann::json::parse(bare.out);
  for (const char* k : {"compute_time_s", "comm_fraction", "total_hours"})
    EXPECT_TRUE(b[k].is_null()) << k;
  EXPECT_GT(b["comm_hours"].get<double>(), 0);
  // A compute time of 0 is refused, not read as none given.
  CmdResult zero = gpufabric("estimate --params 70B --gpus 8 --nic cx7-400g --compute-time 0s");
  EXPECT_EQ(zero.code, 2);
  EXPECT_NE(zero.err.find("--compute-time"), std::string::npos) << zero.err;
  CmdResult bt = gpufabric("estimate --params 70B --gpus 8 --nic cx7-400g --steps 10");
  EXPECT_NE(bt.out.find("49 s of communication in 10 steps"), std::string::npos) << bt.out;
  CmdResult t = gpufabric("estimate --params 175B --precision fp16 --gpus 1024 --nic cx7-400g");
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("350 GB"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("guide's rule"), std::string::npos) << t.out;
  // A link efficiency shows as a share of the line rate, which keeps its own figure.
  CmdResult eff = gpufabric("estimate --params 70B --gpus 1024 --link 400G --link-efficiency 0.9");
  ASSERT_EQ(eff.code, 0) << eff.err;
  EXPECT_NE(eff.out.find("  link             400 Gbps x 0.9 = 45 GB/s usable\n"), std::string::npos)
      << eff.out;

  for (auto [secs, hours] : {std::pair{"1s", "27.8 h"}, std::pair{"10s", "277.8 h"}}) {
    CmdResult m = gpufabric(std::string("estimate --params 70B --gpus 1024 --comm-time ") + secs +
                            " --steps 100000");
    ASSERT_EQ(m.code, 0) << m.err;
    EXPECT_NE(m.out.find(hours), std::string::npos) << m.out;
    EXPECT_NE(m.out.find("(given with --comm-time)"), std::string::npos) << m.out;
    EXPECT_EQ(m.out.find("guide's rule: "), std::string::npos) << m.out;  // not the given time
  }
  // A given time and a link: the link's own time and the rate the given one needs, beside it.
  CmdResult both =
      gpufabric("estimate --params 70B --gpus 8 --link 400G --comm-time 1s --compute-time 10s");
  ASSERT_EQ(both.code, 0) << both.err;
  EXPECT_NE(both.out.find("comm per step    1 s (given with --comm-time)\n  at the link      "
                          "4.9 s (guide's rule: 5.6 s); the given 1 s needs 245 GB/s a GPU, "
                          "4.9x the link's usable 50 GB/s\n"),
            std::string::npos)
      << both.out;
}

TEST(Cli, VersionSaysTheReleaseAndTheRevision) {
  CmdResult r = gpufabric("--version");
  EXPECT_EQ(r.code, 0);
  // "gpufabric 0.1.0 (revision 2e841d9)", "(revision 2e841d9-dirty)", or "(revision unknown)"
  // from a tarball.
  const std::string head = "gpufabric " GPUFABRIC_VERSION " (revision ";
  ASSERT_EQ(r.out.rfind(head, 0), 0u) << r.out;
  const std::string revision = r.out.substr(head.size(), r.out.size() - head.size() - 2);
  EXPECT_EQ(r.out.substr(r.out.size() - 2), ")\n") << r.out;
  EXPECT_FALSE(revision.empty());
  EXPECT_EQ(revision.find_first_not_of(
                "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ._+-"),
            std::string::npos)
      << revision;
  EXPECT_NE(gpufabric("--help").out.find("--version"), std::string::npos);
}

TEST(Cli, CompletionScriptIsBash) {
  CmdResult r = gpufabric("completion bash");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("complete -F _gpufabric gpufabric"), std::string::npos);
  EXPECT_NE(r.out.find("'simulate --op') echo 'all_reduce"), std::string::npos);
  r = gpufabric("completion zsh");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty());
}

TEST(Cli, BadFlagsExitTwoWithAMessage) {
  CmdResult r = gpufabric("estimate --params 70B --gpus 1024 --link 400");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--link: '400' has no unit"), std::string::npos) << r.err;
  r = gpufabric("estimate --params 70B --gpus 1024 --nic cx7");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("did you mean 'cx7-400g'"), std::string::npos) << r.err;
  r = gpufabric("plan --frobnicate examples/seed-70b-1024.yaml");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--help"), std::string::npos) << r.err;
  r = gpufabric("teleport");
  EXPECT_EQ(r.code, 2);
  r = gpufabric("");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty());
  // An optional output named with empty text was read as not given: the command wrote nothing
  // and said nothing (plan -o "" exit 0). Now every such flag refuses it.
  for (const char* cmd :
       {"plan examples/seed-70b-1024.yaml -o ''", "step examples/seed-70b-1024.yaml -o ''",
        "qos examples/roce-lab-64.yaml -o ''", "simulate examples/seed-70b-1024.yaml --links ''",
        "what-if examples/seed-70b-1024.yaml --fail switch:spine01 --links ''",
        "acceptance examples/seed-70b-1024.yaml -o ''"}) {
    r = gpufabric(cmd);
    EXPECT_EQ(r.code, 2) << cmd;
    EXPECT_TRUE(r.out.empty()) << cmd;
    EXPECT_NE(r.err.find("an empty name: give a folder or file, or leave the flag out"),
              std::string::npos)
        << cmd << ": " << r.err;
  }
}

TEST(Cli, HelpListsEveryFlag) {
  CmdResult r = gpufabric("estimate --help");
  EXPECT_EQ(r.code, 0);
  for (const char* f : {"--params", "--precision", "--gpus", "--link", "--nic", "--compute-time",
                        "--comm-time", "--steps", "--collective", "--json", "--link-efficiency"})
    EXPECT_NE(r.out.find(f), std::string::npos) << f;
  r = gpufabric("plan --help");
  EXPECT_EQ(r.code, 0);
  for (const char* f : {"SPEC", "--out", "--json"}) EXPECT_NE(r.out.find(f), std::string::npos);
  r = gpufabric("simulate --help");
  EXPECT_EQ(r.code, 0);
  for (const char* f : {"SPEC", "--op", "-b", "-e", "-f", "--algo", "--proto", "--nodes",
                        "--load-balancing", "--nccl", "--seed", "--explain", "--json"})
    EXPECT_NE(r.out.find(f), std::string::npos) << f;
  const std::vector<std::pair<std::string, std::vector<std::string>>> more{
      {"report", {"SPEC", "--out", "--measured"}},
      {"sweep", {"SPEC", "--vary", "--out", "--threads", "--json", "--quiet"}},
      {"configs", {"SPEC", "--out", "--target"}},
      {"step", {"SPEC", "--out", "--json", "--no-sensitivity", "--no-concurrency"}},
      {"completion", {"SHELL", "bash"}}};
  for (const auto& [cmd, flags] : more) {
    r = gpufabric(cmd + " --help");
    EXPECT_EQ(r.code, 0) << cmd;
    for (const auto& f : flags) EXPECT_NE(r.out.find(f), std::string::npos) << cmd << " " << f;
  }
}

TEST(Cli, PlanWritesItsFiles) {
  const fs::path dir = temp_dir("plan");
  CmdResult r = gpufabric("plan examples/seed-70b-1024.yaml -o " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("InfiniBand"), std::string::npos);
  for (const char* f : {"plan.json", "plan.md", "bom.csv", "cabling.csv"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  std::ifstream pj(dir / "plan.json");
  auto j = nlohmann::json::parse(pj);
  EXPECT_EQ(j["gpus"], 1024);
  EXPECT_EQ(j["topology"]["kind"], "clos2");
  EXPECT_EQ(j["switches"]["total"], j["switches"]["leaf"].get<int>() +
                                        j["switches"]["spine"].get<int>() +
                                        j["switches"]["core"].get<int>());
  EXPECT_GT(j["bom"]["capex_usd"].get<double>(), 0);
  EXPECT_EQ(j["gpufabric_version"].get<std::string>().rfind(GPUFABRIC_VERSION " (revision ", 0), 0u)
      << j["gpufabric_version"];
  std::ifstream cab(dir / "cabling.csv");
  long long lines = 0;
  for (std::string l; std::getline(cab, l);) ++lines;
  EXPECT_EQ(lines, j["links"]["total"].get<long long>() + 1);
  // No temporary files left behind.
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos);
  fs::remove_all(dir);

  CmdResult js = gpufabric("plan examples/roce-lab-64.yaml --json");
  ASSERT_EQ(js.code, 0);
  auto k = nlohmann::json::parse(js.out);
  EXPECT_EQ(k["technology"], "roce");
  EXPECT_EQ(k["gpufabric_version"], j["gpufabric_version"]);
}

TEST(CliReport, WritesTheReportAndItsCompanions) {
  const fs::path dir = temp_dir("report");
  CmdResult r = gpufabric("report examples/seed-70b-1024.yaml -o " + dir.string() +
                          " --measured tests/data/outputs/nccl-tests-2node-allreduce.txt");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "report: " + (dir / "report.html").string() + "\n");
  for (const char* f : {"report.html", "step.json", "plan.json", "plan.md", "bom.csv",
                        "cabling.csv", "simulate.json"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  std::ifstream sj(dir / "step.json");
  EXPECT_GT(nlohmann::json::parse(sj)["step_time_s"].get<double>(), 0);
  const std::string version = gpufabric("--version").out;  // "gpufabric 0.1.0 (revision ...)\n"
  std::ifstream pj(dir / "plan.json");
  const std::string recorded = nlohmann::json::parse(pj)["gpufabric_version"];
  EXPECT_EQ("gpufabric " + recorded + "\n", version);
  std::ifstream html(dir / "report.html");
  const std::string page((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("Made by gpufabric " + recorded), std::string::npos);
  // The measured run is judged as check judges it (its two sizes of 1 GiB and up pass there).
  EXPECT_NE(page.find("<b>Measured runs</b> (--measured), judged as <code>gpufabric check</code> "
                      "judges them: 2 sizes of 1 GiB or more, 0 more than 15% below"),
            std::string::npos);
  EXPECT_NE(page.find("Verdict: <b class=\"pass\">PASS</b>.</li><li><b>Why"), std::string::npos);
  // Another spec's report in the same folder: the step.json it does not make stays as it was,
  // and the note names it.
  CmdResult other = gpufabric("report examples/b200-ib-46-calibrated.yaml -o " + dir.string());
  ASSERT_EQ(other.code, 0) << other.err;
  EXPECT_TRUE(fs::exists(dir / "step.json"));
  EXPECT_NE(other.err.find((dir / "step.json").string() + " is not this report's"),
            std::string::npos)
      << other.err;
  fs::remove_all(dir);
}

TEST(CliReport, BadMeasuredFileExitsTwoAndWritesNothing) {
  const fs::path dir = temp_dir("report_bad");
  const fs::path cut =
      write_temp("cut.txt", "# nccl-tests\n#  out-of-place  in-place\n       8   2 float sum");
  for (const std::string& measured : {cut.string(), std::string("/nonexistent/run.txt")}) {
    CmdResult r = gpufabric("report examples/seed-70b-1024.yaml -o " + dir.string() +
                            " --measured " + measured);
    EXPECT_EQ(r.code, 2) << measured;
    EXPECT_TRUE(r.out.empty());
    EXPECT_NE(r.err.find(measured), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir));
  }
  fs::remove(cut);
  // Another GPU's run (its rank lines say B200; the spec is H100): refused, as check refuses it.
  std::ifstream h100(std::string(GPUFABRIC_SOURCE_DIR) +
                     "/tests/data/outputs/nccl-tests-2node-allreduce.txt");
  std::stringstream ss;
  ss << h100.rdbuf();
  std::string b200 = ss.str();
  for (size_t at = b200.find("NVIDIA H100 80GB HBM3"); at != std::string::npos;
       at = b200.find("NVIDIA H100 80GB HBM3", at))
    b200.replace(at, 21, "NVIDIA B200");
  const fs::path other = write_temp("b200.txt", b200);
  CmdResult wrong = gpufabric("report examples/seed-70b-1024.yaml -o " + dir.string() +
                              " --measured " + other.string());
  EXPECT_EQ(wrong.code, 2) << wrong.err;
  EXPECT_NE(wrong.err.find(other.string()), std::string::npos) << wrong.err;
  EXPECT_NE(wrong.err.find("B200"), std::string::npos) << wrong.err;
  EXPECT_FALSE(fs::exists(dir));
  fs::remove(other);
  CmdResult no_out = gpufabric("report examples/seed-70b-1024.yaml");
  EXPECT_EQ(no_out.code, 2);
  EXPECT_NE(no_out.err.find("--out"), std::string::npos) << no_out.err;
}

TEST(CliSweep, WritesEveryDesignAndTheBest) {
  const fs::path dir = temp_dir("sweep");
  CmdResult r = gpufabric(
      "sweep examples/seed-70b-1024.yaml --vary cluster.nic=cx7-400g,cx8-800g "
      "--vary cluster.nodes=96,128 --threads 2 -o " +
      dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("best: "), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("sweep: 4/4 designs (100%)"), std::string::npos) << r.err;
  for (const char* f : {"sweep.csv", "sweep.json", "sweep.html"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  std::ifstream js(dir / "sweep.json");
  auto j = nlohmann::json::parse(js);
  ASSERT_EQ(j["designs"].size(), 4u);
  // nodes=96 does not fit the spec's dp: reported and skipped, not fatal.
  EXPECT_FALSE(j["designs"][0]["valid"].get<bool>());
  EXPECT_NE(j["designs"][0]["error"].get<std::string>().find("parallelism.dp"), std::string::npos);
  EXPECT_TRUE(j["designs"][1]["valid"].get<bool>());
  EXPECT_EQ(j["designs"][3]["values"]["cluster.nic"], "cx8-800g");
  EXPECT_GE(j["pareto"].size(), 1u);
  EXPECT_FALSE(j["why"].get<std::string>().empty());
  EXPECT_EQ(j["gpufabric_version"].get<std::string>().rfind(GPUFABRIC_VERSION " (revision ", 0), 0u)
      << j["gpufabric_version"];
  std::ifstream in(dir / "sweep.csv");
  std::stringstream text;
  text << in.rdbuf();
  const gf::CsvTable csv(text.str());
  ASSERT_EQ(csv.rows(), 4u);
  // The invalid design computed nothing: its figures are empty cells, not zeros.
  for (const char* col : {"gpus", "capex_usd", "busbw_gbs", "step_time_s", "cost_to_train_usd",
                          "constraints_met", "within_budget"}) {
    ASSERT_TRUE(csv.has(col)) << col;
    EXPECT_EQ(csv.at(0, col), "") << col;
    EXPECT_NE(csv.at(1, col), "") << col;
  }
  fs::remove_all(dir);
}

TEST(CliSweep, BadVaryExitsTwoAndWritesNothing) {
  const fs::path dir = temp_dir("sweep_bad");
  for (const std::string& vary :
       {std::string("cluster.nic"), std::string("cluster.nicc=cx7-400g,cx8-800g"),
        std::string("cluster.nic=cx7-400g --vary cluster.nic=cx8-800g"),
        // A value its key refuses on its own: a typo, not a design to list as invalid.
        std::string("cluster.nodes=128,-2,abc")}) {
    CmdResult r =
        gpufabric("sweep examples/seed-70b-1024.yaml -q --vary " + vary + " -o " + dir.string());
    EXPECT_EQ(r.code, 2) << vary;
    EXPECT_TRUE(r.out.empty()) << vary;
    EXPECT_NE(r.err.find("--vary"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir));
  }
}

TEST(CliConfigs, WritesTheAddressPlanAndFrrConfigs) {
  const fs::path dir = temp_dir("configs");
  CmdResult r = gpufabric("configs examples/roce-lab-64.yaml -o " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("4 switches, 16 routed links, 16 host addresses"), std::string::npos)
      << r.out;
  // By default what does not fit the fabric is named after the summary.
  EXPECT_NE(r.out.find("\nnot written: opensm (configures an InfiniBand subnet manager; the "
                       "fabric is RoCE)\n"),
            std::string::npos)
      << r.out;
  for (const char* f : {"ip-plan.csv", "frr/spine01.conf", "frr/spine02.conf",
                        "frr/su01-r0-leaf.conf", "frr/su01-r1-leaf.conf"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  // Another fabric's configs into the same folder: the configs an earlier run wrote for
  // switches this fabric does not have go, unless edited since; a file gpufabric never wrote
  // is named on stderr and left where it was.
  fs::remove_all(dir);
  ASSERT_EQ(gpufabric("configs examples/roce-lab-16.yaml --target frr -o " + dir.string()).code, 0);
  std::ofstream(dir / "frr" / "old-leaf.conf") << "hostname old-leaf\n";
  std::ofstream(dir / "frr" / "su02-r1-leaf.conf", std::ios::app) << "! my change\n";
  CmdResult again = gpufabric("configs examples/roce-lab-64.yaml --target frr -o " + dir.string());
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_NE(again.err.find("removed from " + dir.string() +
                           " 1 file an earlier run wrote there and this one does not "
                           "(frr/su02-r0-leaf.conf): it is no longer part of this plan\n"),
            std::string::npos)
      << again.err;
  EXPECT_NE(again.err.find("note: 2 files in " + dir.string() +
                           " are not this run's (an earlier run's: frr/su02-r1-leaf.conf; not "
                           "gpufabric's: frr/old-leaf.conf), left as they were; remove them"),
            std::string::npos)
      << again.err;
  EXPECT_TRUE(fs::exists(dir / "frr" / "old-leaf.conf"));
  EXPECT_FALSE(fs::exists(dir / "frr" / "su02-r0-leaf.conf"));
  EXPECT_TRUE(fs::exists(dir / "frr" / "su02-r1-leaf.conf"));
  fs::remove_all(dir);
  // InfiniBand: the subnet manager's configuration and the cabling plan.
  CmdResult ib = gpufabric("configs examples/seed-70b-1024.yaml -o " + dir.string());
  ASSERT_EQ(ib.code, 0) << ib.err;
  EXPECT_NE(ib.out.find("routing engine ar_ftree,ftree,updn"), std::string::npos) << ib.out;
  for (const char* f : {"opensm/opensm.conf", "opensm/partitions.conf", "cabling.csv"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  EXPECT_FALSE(fs::exists(dir / "frr"));
  EXPECT_NE(ib.out.find("\nnot written: frr, eos, sonic, nvue, host, ansible (configures "
                        "Ethernet (RoCE) switches or hosts; the fabric is InfiniBand)\n"),
            std::string::npos)
      << ib.out;
  fs::remove_all(dir);
  // Asked for, an Ethernet target on InfiniBand is skipped with a warning on stderr...
  CmdResult ib_some =
      gpufabric("configs examples/seed-70b-1024.yaml --target opensm,nvue -o " + dir.string());
  ASSERT_EQ(ib_some.code, 0) << ib_some.err;
  EXPECT_NE(ib_some.err.find("warning: --target nvue skipped (fabric.technology): configures "
                             "Ethernet (RoCE) switches or hosts; the fabric is InfiniBand\n"),
            std::string::npos)
      << ib_some.err;
  EXPECT_TRUE(fs::exists(dir / "opensm/opensm.conf"));
  EXPECT_FALSE(fs::exists(dir / "nvue"));
  EXPECT_EQ(ib_some.out.find("not written"), std::string::npos) << ib_some.out;
  fs::remove_all(dir);
  // ... and when nothing asked for fits, that is bad input: each target named, nothing written.
  CmdResult ib_none =
      gpufabric("configs examples/seed-70b-1024.yaml --target eos,sonic -o " + dir.string());
  EXPECT_EQ(ib_none.code, 2);
  EXPECT_NE(ib_none.err.find("error: fabric.technology: --target eos: "), std::string::npos)
      << ib_none.err;
  EXPECT_NE(ib_none.err.find("error: fabric.technology: --target sonic: "), std::string::npos)
      << ib_none.err;
  EXPECT_FALSE(fs::exists(dir));
  CmdResult bad = gpufabric("configs examples/roce-lab-64.yaml --target junos -o " + dir.string());
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--target"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir));
  // A list with an item missing is refused, not read as the items it has.
  for (const char* list : {"frr,", ",frr", "frr,,eos"}) {
    CmdResult gap = gpufabric(std::string("configs examples/roce-lab-64.yaml --target ") + list +
                              " -o " + dir.string());
    EXPECT_EQ(gap.code, 2) << list;
    EXPECT_NE(gap.err.find("has an empty item"), std::string::npos) << gap.err;
    EXPECT_FALSE(fs::exists(dir)) << list;
  }
  // --target picks folders; one that does not fit the fabric names fabric.technology.
  CmdResult some =
      gpufabric("configs examples/roce-lab-64.yaml --target eos,host -o " + dir.string());
  ASSERT_EQ(some.code, 0) << some.err;
  EXPECT_NE(some.out.find(": ip-plan.csv, eos/, hosts/\n"), std::string::npos) << some.out;
  EXPECT_TRUE(fs::exists(dir / "eos/spine01.cfg"));
  EXPECT_TRUE(fs::exists(dir / "hosts/node001/netplan.yaml"));
  for (const char* absent : {"frr", "sonic", "nvue", "ansible"})
    EXPECT_FALSE(fs::exists(dir / absent));
  fs::remove_all(dir);
  CmdResult wrong =
      gpufabric("configs examples/roce-lab-64.yaml --target opensm -o " + dir.string());
  EXPECT_EQ(wrong.code, 2);
  EXPECT_NE(wrong.err.find("fabric.technology"), std::string::npos) << wrong.err;
  EXPECT_FALSE(fs::exists(dir));
  CmdResult mixed =
      gpufabric("configs examples/roce-lab-64.yaml --target eos,opensm -o " + dir.string());
  ASSERT_EQ(mixed.code, 0) << mixed.err;
  EXPECT_NE(mixed.err.find("warning: --target opensm skipped (fabric.technology): configures an "
                           "InfiniBand subnet manager; the fabric is RoCE\n"),
            std::string::npos)
      << mixed.err;
  EXPECT_NE(mixed.out.find(": ip-plan.csv, eos/\n"), std::string::npos) << mixed.out;
  EXPECT_FALSE(fs::exists(dir / "opensm"));
  fs::remove_all(dir);
}

// Golden files: every target's output for the lab spec, byte for byte. After an intended
// change, regenerate with: build/gpufabric configs examples/roce-lab-64.yaml -o
// tests/data/golden/roce-lab-64 (after removing it) and review the diff.
TEST(CliConfigs, MatchesTheGoldenFiles) {
  const fs::path dir = temp_dir("configs_golden");
  CmdResult r = gpufabric("configs examples/roce-lab-64.yaml -o " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const fs::path golden = fs::path(GPUFABRIC_SOURCE_DIR) / "tests/data/golden/roce-lab-64";
  CmdResult d = gpufabric("true; diff -r -x " + std::string(gf::kOutputRecord) + " " +
                          golden.string() + " " + dir.string() + " >&2; echo $?");
  EXPECT_EQ(d.out, "0\n") << d.err.substr(0, 3000);
  fs::remove_all(dir);
}

// The lab's bad input: no machine state is touched (the lab itself runs in tests/lab_test.sh).
TEST(CliLab, BadInputIsExitTwoWithTheKey) {
  CmdResult ib = gpufabric("lab up examples/seed-70b-1024.yaml");
  EXPECT_EQ(ib.code, 2);
  EXPECT_NE(ib.err.find("fabric.technology"), std::string::npos) << ib.err;
  CmdResult big = gpufabric("lab up examples/roce-16k.yaml");
  EXPECT_EQ(big.code, 2);
  EXPECT_NE(big.err.find("cluster.nodes"), std::string::npos) << big.err;
  EXPECT_NE(big.err.find("roce-lab-16"), std::string::npos) << big.err;
  CmdResult verb = gpufabric("lab start examples/roce-lab-16.yaml");
  EXPECT_EQ(verb.code, 2);
  CmdResult frr = gpufabric("lab up examples/roce-lab-16.yaml --frr-dir /nonexistent");
  EXPECT_EQ(frr.code, 2);
  EXPECT_NE(frr.err.find("--frr-dir"), std::string::npos) << frr.err;
  CmdResult missing = gpufabric("lab check examples/no-such.yaml");
  EXPECT_EQ(missing.code, 2);
}

// The lab example under a name of this test's own, so no user's lab is ever addressed.
fs::path lab_spec(const std::string& name) {
  std::ifstream in(fs::path(GPUFABRIC_SOURCE_DIR) / "examples/roce-lab-16.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const std::string from = "name: roce-lab-16";
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos);
  if (at != std::string::npos) text.replace(at, from.size(), "name: " + name);
  return write_temp(name + ".yaml", text);
}

// The lab removes only what it made: a folder without its mark, a system folder or a kernel
// file system as --state-dir is bad input that names the flag, and nothing is removed. (Refused
// before the lab looks for root; namespaces are tested in tests/lab_test.sh.)
TEST(CliLab, StateDirItDidNotMakeIsRefused) {
  const std::string name = "important";
  const fs::path spec = lab_spec(name);
  const fs::path state = temp_dir("lab_state");
  fs::create_directories(state / name);
  std::ofstream(state / name / "f") << "x\n";
  CmdResult down = gpufabric("lab down " + spec.string() + " --state-dir " + state.string());
  EXPECT_EQ(down.code, 2) << down.out << down.err;
  EXPECT_NE(down.err.find("--state-dir"), std::string::npos) << down.err;
  EXPECT_NE(down.err.find((state / name).string()), std::string::npos) << down.err;
  EXPECT_TRUE(fs::exists(state / name / "f"));
  fs::remove_all(state);
  fs::remove(spec);
}

TEST(CliLab, SystemFoldersAreNotStateDirs) {
  const std::string name = "clitest-" + std::to_string(getpid());
  const fs::path spec = lab_spec(name);
  const fs::path scratch = temp_dir("lab_sys");
  fs::create_directories(scratch);
  fs::create_directory_symlink("/etc", scratch / "etc-link");
  std::ofstream(scratch / "file") << "x\n";
  // `down` here: without the refusal, as root, it would only find nothing to remove.
  const std::vector<std::string> refused{"/",
                                         "/etc",
                                         "/etc/",
                                         "/tmp/../home",
                                         (scratch / "etc-link").string(),
                                         (scratch / "file").string()};
  for (const auto& dir : refused) {
    CmdResult r = gpufabric("lab down " + spec.string() + " --state-dir " + dir);
    EXPECT_EQ(r.code, 2) << dir << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("--state-dir"), std::string::npos) << dir << ": " << r.err;
  }
  // `up` where nothing can be made: the flag is named (not -o) and it is bad input.
  const std::vector<std::string> unmakeable{"/proc/x", (scratch / "file" / "x").string()};
  for (const auto& dir : unmakeable) {
    CmdResult r = gpufabric("lab up " + spec.string() + " --state-dir " + dir);
    EXPECT_EQ(r.code, 2) << dir << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("error: --state-dir: "), std::string::npos) << dir << ": " << r.err;
    EXPECT_EQ(r.err.find("-o:"), std::string::npos) << dir << ": " << r.err;
  }
  EXPECT_TRUE(fs::exists("/etc/passwd"));
  fs::remove_all(scratch);
  fs::remove(spec);
}

TEST(Cli, AFolderIsNotASpec) {
  const fs::path dir = temp_dir("spec_folder");
  fs::create_directories(dir);
  CmdResult r = gpufabric("plan " + dir.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("is a folder, not a spec file"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

// An address pool too small for the planned fabric is refused by plan as by configs, at the
// pool's line, with the prefix that would hold it; nothing is written.
TEST(Cli, PlanRefusesAnAddressPoolConfigsWouldRefuse) {
  std::ifstream in("examples/roce-lab-16.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "  loopbacks: 10.0.0.0/16";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "  loopbacks: 10.0.0.0/30");
  const fs::path spec = write_temp("pools.yaml", text);
  const fs::path dir = temp_dir("pools");
  for (const char* cmd : {"plan", "configs"}) {
    CmdResult r = gpufabric(std::string(cmd) + " " + spec.string() + " -o " + dir.string());
    EXPECT_EQ(r.code, 2) << cmd;
    EXPECT_NE(r.err.find(spec.string() + ":26:14: error: addressing.loopbacks: 10.0.0.0/30 holds 4 "
                                         "addresses; the loopbacks of 6 switches take 6 (give it "
                                         "a /29 or larger, e.g. 10.0.0.0/29, apart from the "
                                         "other pools)"),
              std::string::npos)
        << cmd << ": " << r.err;
    EXPECT_FALSE(fs::exists(dir)) << cmd;
  }
  fs::remove(spec);
  // A default pool too small (roce-16k-moe at twice the GPUs: 65,536 routed links for the default
  // 10.1.0.0/16) is configs' error alone, which says to write the key; plan needs no addresses.
  std::ifstream big_in("bench/specs/roce-16k-moe.yaml");
  std::string big((std::istreambuf_iterator<char>(big_in)), std::istreambuf_iterator<char>());
  ASSERT_NE(big.find("  gpus: 16384"), std::string::npos);
  big.replace(big.find("  gpus: 16384"), 13, "  gpus: 32768");
  ASSERT_EQ(big.find("addressing:"), std::string::npos);
  const fs::path bigspec = write_temp("pools-default.yaml", big);
  EXPECT_EQ(gpufabric("plan " + bigspec.string()).code, 0);
  CmdResult c = gpufabric("configs " + bigspec.string() + " -o " + dir.string());
  EXPECT_EQ(c.code, 2);
  EXPECT_NE(c.err.find("error: addressing.links: the default 10.1.0.0/16 holds 65536 addresses; "
                       "the /31s of 65536 routed links take 131072 (addressing.links is not in "
                       "the spec: write it there; give it a /15 or larger"),
            std::string::npos)
      << c.err;
  EXPECT_FALSE(fs::exists(dir));
  fs::remove(bigspec);
}

TEST(Cli, InvalidSpecNamesFileLineKeyAndWritesNothing) {
  const fs::path spec = write_temp("bad.yaml",
                                   "name: bad\ncluster:\n  gpu: h100-sxm\n  nodes: 16\n  nic: "
                                   "cx7-400g\nfabric:\n  swich: qm9700\n  planes: 0\n");
  const fs::path dir = temp_dir("bad");
  CmdResult r = gpufabric("plan " + spec.string() + " -o " + dir.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find(spec.string() + ":7:3: error: fabric.swich: unknown key (did you mean "
                                       "'switch'?)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(":8:11: error: fabric.planes"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir));
  fs::remove(spec);

  CmdResult missing = gpufabric("plan /nonexistent/spec.yaml");
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/spec.yaml: error: cannot read the spec file"),
            std::string::npos)
      << missing.err;
}

TEST(Cli, EveryExampleIsValid) {
  for (const auto& e : fs::directory_iterator(fs::path(GPUFABRIC_SOURCE_DIR) / "examples")) {
    if (e.path().extension() != ".yaml") continue;
    CmdResult r = gpufabric("plan " + e.path().string() + " --json");
    EXPECT_EQ(r.code, 0) << e.path() << r.err;
  }
}

// The example of a user's own server quote: its catalog file says the quote includes eight
// NICs, and the BOM's server line is the quote less them.
TEST(Cli, AQuotedServerIsPricedWithoutTheNicsItIncludes) {
  CmdResult r = gpufabric("plan examples/h200-quoted-256.yaml --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  double nic_usd = 0;
  for (const auto& it : j["bom"]["items"])
    if (it["category"] == "nic") nic_usd = it["unit_usd"].get<double>();
  ASSERT_GT(nic_usd, 0);
  bool server = false;
  for (const auto& it : j["bom"]["items"])
    if (it["category"] == "compute") {
      server = true;
      EXPECT_NEAR(it["unit_usd"].get<double>(), 350000 - 8 * nic_usd, 1e-6);
      EXPECT_NE(it["source"].get<std::string>().find("placeholder: your vendor's quote"),
                std::string::npos)
          << it["source"];
      EXPECT_NE(it["source"].get<std::string>().find("less the NICs it includes (8 x cx7-400g)"),
                std::string::npos)
          << it["source"];
    }
  EXPECT_TRUE(server);
}

TEST(Cli, UserCatalogOverridesPrices) {
  const fs::path cat = write_temp("cat.yaml",
                                  "switches:\n  - id: qm9700\n    technology: infiniband\n    "
                                  "ports: 64\n    port_speed: 400G\n    ports_per_cage: 2\n    "
                                  "latency_ns: 130\n    price_usd: 1\n    power_w: 1\n    "
                                  "source: test\n");
  const fs::path spec =
      write_temp("cat_spec.yaml",
                 "cluster: {gpu: h100-sxm, nodes: 16, nic: cx7-400g}\nfabric: {technology: "
                 "infiniband, switch: qm9700}\ncatalog: [" +
                     cat.filename().string() + "]\n");
  CmdResult r = gpufabric("plan " + spec.string() + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const auto& it : j["bom"]["items"])
    if (it["category"] == "switch") {
      EXPECT_EQ(it["unit_usd"], 1);
    }
  fs::remove(cat);
  fs::remove(spec);
}

}  // namespace

namespace {

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string l; std::getline(ss, l);) out.push_back(l);
  return out;
}

TEST(CliSimulate, PrintsTheNcclTestsTable) {
  CmdResult r = gpufabric("simulate examples/seed-70b-1024.yaml");
  ASSERT_EQ(r.code, 0) << r.err;
  int rows = 0;
  bool footer = false, start = false, end = false;
  for (const auto& l : lines_of(r.out)) {
    if (l.rfind("# Collective test starting: all_reduce_perf", 0) == 0) start = true;
    if (l.rfind("# Avg bus bandwidth    : ", 0) == 0) footer = true;
    if (l.rfind("# Collective test concluded: all_reduce_perf", 0) == 0) end = true;
    if (l.empty() || l[0] == '#') continue;
    std::stringstream ss(l);
    std::vector<std::string> f;
    for (std::string w; ss >> w;) f.push_back(w);
    ASSERT_EQ(f.size(), 13u) << l;
    EXPECT_EQ(f[2], "float");
    EXPECT_EQ(f[3], "sum");
    EXPECT_EQ(f[4], "-1");
    EXPECT_EQ(f[8], "N/A");
    EXPECT_GT(std::stod(f[5]), 0);  // time
    ++rows;
  }
  EXPECT_EQ(rows, 31);  // 8 B to 8 GiB, x2
  EXPECT_TRUE(start && footer && end);
}

// nccl-tests runs no size whose send and receive buffers the GPU cannot hold: -e above what an
// 80 GiB H100 holds (80 - 4 reserved - 1 GiB, halved) is lowered to it, and said as nccl-tests
// says it; -b above it comes down with it.
TEST(CliSimulate, SizesAboveTheGpusMemoryAreLoweredAsNcclTestsDoes) {
  CmdResult r = gpufabric("simulate examples/llama3-70b-h100-512.yaml -b 16G -e 1T");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("#\n# Reducing maxBytes to 40265318400 due to memory limitation\n#\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("maxBytes 1099511627776 step"), std::string::npos);  // the header's, asked
  CmdResult j = gpufabric("simulate examples/llama3-70b-h100-512.yaml -b 64G -e 1T --json");
  ASSERT_EQ(j.code, 0) << j.err;
  auto json = nlohmann::json::parse(j.out);
  EXPECT_EQ(json["reduced_max_bytes"].get<double>(), 40265318400.0);
  ASSERT_EQ(json["results"].size(), 1u);  // -b lowered to the cap: one size
  EXPECT_LE(json["results"][0]["bytes"].get<double>(), 40265318400.0);
  CmdResult fits = gpufabric("simulate examples/llama3-70b-h100-512.yaml -b 1G -e 32G --json");
  ASSERT_EQ(fits.code, 0) << fits.err;
  auto fj = nlohmann::json::parse(fits.out);
  EXPECT_TRUE(fj["reduced_max_bytes"].is_null());
  EXPECT_EQ(fj["results"].size(), 6u);
}

// An output folder's files are replaced only where gpufabric wrote them and they still hold what
// it wrote: a user's file, or one they edited, in the way is refused and nothing is written.
// A system folder is no output folder: plan -o / had written plan.md, bom.csv, cabling.csv and
// the outputs' record into the root. Refused before anything is written, as the lab's
// --state-dir is; a link that leads there is refused as well.
TEST(CliOutputs, SystemFoldersAreRefused) {
  ASSERT_FALSE(fs::exists("/plan.md"));
  for (const char* dir : {"/", "/etc", "/usr/", "/proc/self"}) {
    CmdResult r = gpufabric(std::string("plan examples/seed-70b-1024.yaml -o ") + dir);
    EXPECT_EQ(r.code, 2) << dir << r.err;
    EXPECT_NE(r.err.find("gpufabric writes its outputs in a folder of their own"),
              std::string::npos)
        << r.err;
  }
  EXPECT_FALSE(fs::exists("/plan.md"));
  EXPECT_FALSE(fs::exists("/.gpufabric-outputs"));
  const fs::path link = fs::temp_directory_path() / "gf_link_to_etc";
  fs::remove(link);
  fs::create_directory_symlink("/etc", link);
  CmdResult via = gpufabric("configs examples/roce-lab-16.yaml -o " + link.string());
  EXPECT_EQ(via.code, 2) << via.err;
  EXPECT_NE(via.err.find("/etc is a system folder"), std::string::npos) << via.err;
  fs::remove(link);
}

TEST(CliOutputs, ReplaceOnlyWhatGpufabricWroteUnchanged) {
  const fs::path dir = temp_dir("record");
  fs::create_directories(dir);
  std::ofstream(dir / "plan.md") << "my notes\n";
  std::ofstream(dir / "bom.csv") << "my,prices\n";
  const std::string plan = "plan examples/roce-lab-16.yaml -o " + dir.string();
  CmdResult mine = gpufabric(plan);
  EXPECT_EQ(mine.code, 2);
  // Every file in the way is named, not the first alone.
  for (const char* f : {"plan.md", "bom.csv"})
    EXPECT_NE(mine.err.find((dir / f).string() + ": error: -o: is in the way of this output, "
                                                 "and the folder has no record of what gpufabric "
                                                 "wrote there"),
              std::string::npos)
        << mine.err;
  fs::remove(dir / "bom.csv");
  EXPECT_TRUE(mine.out.empty()) << mine.out;
  EXPECT_FALSE(fs::exists(dir / "plan.json"));
  EXPECT_FALSE(fs::exists(dir / gf::kOutputRecord));
  EXPECT_EQ(read_text(dir / "plan.md"), "my notes\n");
  fs::remove(dir / "plan.md");
  // Written, then written again: the record lets the second run replace the first's files.
  ASSERT_EQ(gpufabric(plan).code, 0);
  ASSERT_EQ(gpufabric(plan).code, 0);
  // With a record, a file it does not list is said to be that.
  std::ofstream(dir / "grafana-dashboard.json") << "{}\n";
  CmdResult unlisted = gpufabric("dashboard examples/roce-lab-16.yaml -o " + dir.string());
  EXPECT_EQ(unlisted.code, 2);
  EXPECT_NE(unlisted.err.find("grafana-dashboard.json: error: -o: is in the way of this output, "
                              "and the folder's record of what gpufabric wrote (" +
                              (dir / gf::kOutputRecord).string() + ") does not list it"),
            std::string::npos)
      << unlisted.err;
  fs::remove(dir / "grafana-dashboard.json");
  EXPECT_NE(read_text(dir / gf::kOutputRecord).find(" plan.md\n"), std::string::npos);
  // Edited since (same size, other bytes): the edit is kept and the run refused.
  std::string text = read_text(dir / "plan.json");
  text[text.size() - 2] = text[text.size() - 2] == ' ' ? '\t' : ' ';
  std::ofstream(dir / "plan.json", std::ios::binary) << text;
  CmdResult edited = gpufabric(plan);
  EXPECT_EQ(edited.code, 2);
  EXPECT_NE(edited.err.find("plan.json: error: -o: was changed since gpufabric wrote it"),
            std::string::npos)
      << edited.err;
  EXPECT_EQ(read_text(dir / "plan.json"), text);
  fs::remove(dir / "plan.json");
  ASSERT_EQ(gpufabric(plan).code, 0);
  // A run cut short between its record and its files: the record names both contents of each
  // file (the one before and the run's own), so that either may be replaced. Made here from a
  // run of another spec: its plan.md in place, and its record's lines beside this one's.
  const fs::path other = temp_dir("record_other");
  ASSERT_EQ(gpufabric("plan examples/roce-lab-64.yaml -o " + other.string()).code, 0);
  ASSERT_NE(read_text(other / "plan.md"), read_text(dir / "plan.md"));
  fs::copy_file(other / "plan.md", dir / "plan.md", fs::copy_options::overwrite_existing);
  std::ofstream(dir / gf::kOutputRecord, std::ios::app) << read_text(other / gf::kOutputRecord);
  CmdResult resumed = gpufabric(plan);
  EXPECT_EQ(resumed.code, 0) << resumed.err;
  // Done, the record keeps one content a file, this run's (4 files, 2 comment lines).
  const std::string record = read_text(dir / gf::kOutputRecord);
  EXPECT_EQ(std::count(record.begin(), record.end(), '\n'), 6) << record;
  fs::remove_all(other);
  // A record saved with CRLF line endings is still read.
  std::string crlf;
  for (char c : record) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  std::ofstream(dir / gf::kOutputRecord, std::ios::binary) << crlf;
  CmdResult windows = gpufabric(plan);
  EXPECT_EQ(windows.code, 0) << windows.err;
  // A record that is not one replaces nothing; it names its line.
  std::ofstream(dir / gf::kOutputRecord, std::ios::app) << "not a record line\n";
  CmdResult garbled = gpufabric(plan);
  EXPECT_EQ(garbled.code, 2);
  EXPECT_NE(garbled.err.find(":7: error: -o: is not gpufabric's record of the files it wrote"),
            std::string::npos)
      << garbled.err;
  fs::remove_all(dir);
}

// Two commands writing one folder at once take turns (a lock on the folder, flock(2)): a run
// waits while another holds it, and then keeps the other's entries in the record. Without the
// lock, one run's record replaced the other's, and its files were then "not gpufabric's".
// A runbook written again with fewer burn-in passes: the earlier one's last pass's scripts go
// (a loop over burn-in/ would run them), with the folder they leave empty; one of them edited
// since stays, and so does a file of the user's; a fabric shrunk between two configs runs
// loses its gone switches' configs in the targets written, not in another target's folder.
TEST(CliOutputs, AnEarlierRunsFilesOfTheFoldersItWritesWholeGo) {
  const fs::path dir = temp_dir("retire");
  const std::string spec = "examples/roce-lab-16.yaml";
  ASSERT_EQ(gpufabric("acceptance " + spec + " -o " + dir.string()).code, 0);
  ASSERT_TRUE(fs::exists(dir / "burn-in/pass-4/round-01.sh"));
  ASSERT_TRUE(fs::exists(dir / "burn-in/pass-3/round-01.sh"));
  std::ofstream(dir / "burn-in/pass-3/round-01.sh", std::ios::app) << "# my change\n";
  std::ofstream(dir / "burn-in/notes.txt") << "mine\n";
  CmdResult fewer = gpufabric("acceptance " + spec + " --burn-in-passes 1 -o " + dir.string());
  ASSERT_EQ(fewer.code, 0) << fewer.err;
  EXPECT_FALSE(fs::exists(dir / "burn-in/pass-4"));
  EXPECT_TRUE(fs::exists(dir / "burn-in/pass-2/round-01.sh"));
  EXPECT_TRUE(fs::exists(dir / "burn-in/pass-3/round-01.sh"));
  EXPECT_EQ(read_text(dir / "burn-in/notes.txt"), "mine\n");
  EXPECT_NE(fewer.err.find("removed from " + dir.string() + " "), std::string::npos) << fewer.err;
  EXPECT_NE(fewer.err.find("burn-in/pass-4/round-01.sh"), std::string::npos) << fewer.err;
  EXPECT_EQ(read_text(dir / gf::kOutputRecord).find("pass-4/"), std::string::npos);
  fs::remove_all(dir);

  const fs::path cfg = temp_dir("retire_configs");
  std::string four = read_text(spec);
  const std::size_t nodes = four.find("\n  nodes: 8\n");
  ASSERT_NE(nodes, std::string::npos);
  four.replace(nodes, 12, "\n  nodes: 4\n");
  const fs::path small = write_temp("lab4.yaml", four);
  ASSERT_EQ(gpufabric("configs " + spec + " -o " + cfg.string()).code, 0);
  ASSERT_TRUE(fs::exists(cfg / "frr/su02-r0-leaf.conf"));
  CmdResult frr = gpufabric("configs " + small.string() + " --target frr -o " + cfg.string());
  ASSERT_EQ(frr.code, 0) << frr.err;
  EXPECT_FALSE(fs::exists(cfg / "frr/su02-r0-leaf.conf"));
  EXPECT_TRUE(fs::exists(cfg / "frr/su01-r0-leaf.conf"));
  EXPECT_TRUE(fs::exists(cfg / "eos/su02-r0-leaf.cfg"));  // not written this run: left
  EXPECT_NE(frr.err.find("are not this run's (an earlier run's: ansible/"), std::string::npos)
      << frr.err;
  fs::remove_all(cfg);
  fs::remove(small);
}

TEST(CliOutputs, RunsOnOneFolderTakeTurns) {
  const fs::path dir = temp_dir("record_lock");
  fs::create_directories(dir);
  ASSERT_EQ(gpufabric("plan examples/roce-lab-16.yaml -o " + dir.string()).code, 0);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);  // as another run writing there would
  const fs::path done = dir.string() + ".done";
  fs::remove(done);
  ASSERT_EQ(std::system(("cd " + std::string(GPUFABRIC_SOURCE_DIR) + " && (" + GPUFABRIC_BIN +
                         " dashboard examples/roce-lab-16.yaml -o " + dir.string() +
                         " >/dev/null 2>&1; echo $? > " + done.string() + ") &")
                            .c_str()),
            0);
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  EXPECT_FALSE(fs::exists(done));  // waiting for the lock
  EXPECT_FALSE(fs::exists(dir / "grafana-dashboard.json"));
  ::close(fd);  // released
  for (int i = 0; i < 200 && read_text(done).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(read_text(done), "0\n");
  const std::string record = read_text(dir / gf::kOutputRecord);
  for (const char* f : {" plan.md\n", " plan.json\n", " bom.csv\n", " cabling.csv\n",
                        " grafana-dashboard.json\n", " prometheus-rules.yml\n"})
    EXPECT_NE(record.find(f), std::string::npos) << f << "\n" << record;
  fs::remove(done);
  fs::remove_all(dir);
}

// An output named as one of the command's own inputs is refused, and the input stays whole.
TEST(CliOutputs, NeverReplaceTheirOwnInputs) {
  const fs::path dir = temp_dir("own-input");
  fs::create_directories(dir);
  const fs::path spec = dir / "s.yaml";
  fs::copy_file(fs::path(GPUFABRIC_SOURCE_DIR) / "examples/roce-lab-16.yaml", spec);
  const auto before = fs::file_size(spec);
  CmdResult links = gpufabric("simulate " + spec.string() + " -e 1M --links " + spec.string());
  EXPECT_EQ(links.code, 2);
  EXPECT_NE(links.err.find("is one of this command's inputs"), std::string::npos) << links.err;
  EXPECT_TRUE(links.out.empty()) << links.out;
  EXPECT_EQ(fs::file_size(spec), before);
  fs::copy_file(spec, dir / "plan.md");
  CmdResult folder = gpufabric("plan " + (dir / "plan.md").string() + " -o " + dir.string());
  EXPECT_EQ(folder.code, 2);
  EXPECT_EQ(fs::file_size(dir / "plan.md"), before);
  // With two outputs, the second is checked before the first is written: a --links that is a
  // folder leaves no -o folder behind.
  fs::create_directories(dir / "ldir");
  CmdResult two = gpufabric("jobs examples/jobs-trace.yaml --no-compare -o " +
                            (dir / "out").string() + " --links " + (dir / "ldir").string());
  EXPECT_EQ(two.code, 2);
  EXPECT_FALSE(fs::exists(dir / "out"));
  fs::remove_all(dir);
}

TEST(CliSimulate, JsonAndExplain) {
  CmdResult r = gpufabric("simulate examples/seed-70b-1024.yaml -b 1M -e 1G -f 4 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["collective"], "all_reduce");
  EXPECT_EQ(j["gpus"], 1024);
  ASSERT_EQ(j["results"].size(), 6u);
  for (const auto& row : j["results"])
    for (const char* k : {"bytes", "time_us", "algbw_gbs", "busbw_gbs", "algorithm", "protocol",
                          "bottleneck", "ecmp_collision_factor"})
      EXPECT_TRUE(row.contains(k)) << k;
  EXPECT_GT(j["results"].back()["busbw_gbs"].get<double>(), 300);

  CmdResult e =
      gpufabric("simulate examples/roce-lab-64.yaml --op alltoall -b 1M -e 1G -f 32 --explain");
  ASSERT_EQ(e.code, 0) << e.err;
  EXPECT_NE(e.out.find("# gpufabric explain"), std::string::npos);
  EXPECT_NE(e.out.find("p2p"), std::string::npos);
  EXPECT_NE(e.out.find("alltoall_perf"), std::string::npos);
}

TEST(CliSimulate, NodesSelectsPartOfTheCluster) {
  CmdResult r = gpufabric("simulate examples/seed-70b-1024.yaml --nodes 2 -b 8G -e 8G --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpus"], 16);
  EXPECT_EQ(j["nodes"], 2);
  // A ring on two nodes stays under its rails' leaves: no switch-to-switch traffic, so no
  // collision factor (NVLS, NCCL's pick here, goes up to the switches that reduce).
  CmdResult ring =
      gpufabric("simulate examples/seed-70b-1024.yaml --nodes 2 -b 8G -e 8G --algo ring --json");
  ASSERT_EQ(ring.code, 0) << ring.err;
  EXPECT_TRUE(nlohmann::json::parse(ring.out)["results"][0]["ecmp_collision_factor"].is_null())
      << ring.out;
  CmdResult e =
      gpufabric("simulate examples/seed-70b-1024.yaml --nodes 2 -b 8G -e 8G --algo ring --explain");
  ASSERT_EQ(e.code, 0) << e.err;
  EXPECT_NE(e.out.find("- = no switch-to-switch traffic)"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("          -\n#\n"), std::string::npos) << e.out;
  // The search graphs NCCL's tuner reads, as its own search finds them on DGX H100 with 400G
  // NICs (NcclCost.RingAndNvlsGraphsAreNcclsSearchs).
  EXPECT_NE(e.out.find("#   ring          8 channels x 48/48 GB/s"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("#   nvls_tree     8 heads x 40/48 GB/s"), std::string::npos) << e.out;
  CmdResult one = gpufabric("simulate examples/seed-70b-1024.yaml --nodes 1 -b 8G -e 8G --explain");
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(one.out.find("NCCL's search graphs"), std::string::npos) << one.out;
}

// The rank lines name the nodes as cabling.csv and what-if do: node0001 ... node1000 on 1,000
// nodes (they had printed node001 beside node1000, which what-if --fail refused).
TEST(CliSimulate, RankLinesNameNodesAsTheCablingDoes) {
  const fs::path spec = write_temp("n1000.yaml",
                                   "name: n1000\ncluster: {gpu: h100-sxm, nodes: 1000, nic: "
                                   "cx7-400g}\nfabric: {technology: infiniband}\n");
  CmdResult r = gpufabric("simulate " + spec.string() + " --nodes 1000 -b 1G -e 1G --algo ring");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("#  Rank  0 Group  0 Pid      0 on   node0001 device  0"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" on   node1000 device  7"), std::string::npos) << r.out;
  fs::remove(spec);
}

// -g 8 as nccl-tests: one thread issues every call on eight GPUs, and small calls wait on it.
TEST(CliSimulate, GpusPerThreadFloorsSmallCallsAtTheHost) {
  CmdResult one = gpufabric("simulate examples/seed-70b-1024.yaml --nodes 1 -b 8 -e 8");
  CmdResult eight = gpufabric("simulate examples/seed-70b-1024.yaml --nodes 1 -b 8 -e 8 -g 8");
  ASSERT_EQ(one.code, 0) << one.err;
  ASSERT_EQ(eight.code, 0) << eight.err;
  EXPECT_NE(one.out.find("# nThread 1 nGpus 1 "), std::string::npos) << one.out;
  EXPECT_NE(eight.out.find("# nThread 1 nGpus 8 "), std::string::npos) << eight.out;
  EXPECT_NE(eight.out.find("    35.20 "), std::string::npos) << eight.out;
  EXPECT_EQ(one.out.find("    35.20 "), std::string::npos) << one.out;
  EXPECT_EQ(gpufabric("simulate examples/seed-70b-1024.yaml -g 0").code, 2);
}

// -n as nccl-tests: a small broadcast across 4 x 8 H100 runs on one channel, and the 20 calls
// timed pipeline down its 31-hop chain (--explain lists them with one call's time); -n 1 times
// one call alone.
TEST(CliSimulate, BackToBackBroadcastPipelinesUnlessOneCall) {
  const std::string vp = "simulate tests/data/calfit/voltage-park.yaml --op broadcast -b 1K -e 1K";
  CmdResult piped = gpufabric(vp + " --json");
  CmdResult alone = gpufabric(vp + " -n 1 --json");
  ASSERT_EQ(piped.code, 0) << piped.err;
  ASSERT_EQ(alone.code, 0) << alone.err;
  const auto p = nlohmann::json::parse(piped.out)["results"][0];
  const auto a = nlohmann::json::parse(alone.out)["results"][0];
  EXPECT_TRUE(a["alone_time_us"].is_null());
  ASSERT_TRUE(p["alone_time_us"].is_number());
  EXPECT_DOUBLE_EQ(p["alone_time_us"].get<double>(), a["time_us"].get<double>());
  EXPECT_LT(p["time_us"].get<double>() * 3, a["time_us"].get<double>());
  CmdResult e = gpufabric(vp + " --explain");
  ASSERT_EQ(e.code, 0) << e.err;
  EXPECT_NE(e.out.find("# back to back: the 20 calls timed (-n) pipeline"), std::string::npos)
      << e.out;
  EXPECT_NE(e.out.find("iters: 20 agg iters"), std::string::npos);
  CmdResult e1 = gpufabric(vp + " -n 1 --explain");
  EXPECT_EQ(e1.out.find("# back to back"), std::string::npos);
  EXPECT_NE(e1.out.find("iters: 1 agg iters"), std::string::npos);
  // An all_reduce's ring is a cycle: the calls do not pipeline.
  CmdResult ar = gpufabric("simulate tests/data/calfit/voltage-park.yaml -b 1K -e 1K --json");
  ASSERT_EQ(ar.code, 0) << ar.err;
  EXPECT_TRUE(nlohmann::json::parse(ar.out)["results"][0]["alone_time_us"].is_null());
  EXPECT_EQ(gpufabric(vp + " -n 0").code, 2);
}

// A ring across 64 nodes under per-flow ECMP: the few ring edges between leaves collide (21x a
// switch's even share) on uplinks they leave far from full; --explain says the collisions cost
// nothing at those sizes, where the NICs or latency pace the call.
TEST(CliSimulate, CollisionsOffTheCriticalPathAreNamed) {
  CmdResult e = gpufabric(
      "simulate examples/seed-70b-1024.yaml --nodes 64 --algo ring --load-balancing ecmp -b 8M "
      "-e 8G -f 32 --explain");
  ASSERT_EQ(e.code, 0) << e.err;
  EXPECT_NE(e.out.find("those collisions cost nothing there"), std::string::npos) << e.out;
  CmdResult a = gpufabric(
      "simulate examples/seed-70b-1024.yaml --nodes 64 --algo ring --load-balancing adaptive -b 8M "
      "-e 8G -f 32 --explain");
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out.find("those collisions cost nothing"), std::string::npos) << a.out;
}

// --max-channels as NCCL_MAX_NCHANNELS: 4 channels on 8 NICs a node leave half of them idle;
// --min-channels copies channels over the same NICs and adds no bandwidth.
TEST(CliSimulate, ChannelLimitsAsNcclsEnvironment) {
  auto busbw = [](const std::string& extra) {
    CmdResult r = gpufabric(
        "simulate examples/seed-70b-1024.yaml --nodes 4 -b 8G -e 8G --algo ring --json " + extra);
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out)["results"][0]["busbw_gbs"].get<double>();
  };
  const double full = busbw("");
  EXPECT_NEAR(busbw("--max-channels 4"), full / 2, full * 0.03);
  EXPECT_NEAR(busbw("--min-channels 32"), full, full * 0.02);
  for (const char* bad : {"--max-channels 0", "--min-channels 65", "--max-channels four"}) {
    CmdResult r = gpufabric(std::string("simulate examples/seed-70b-1024.yaml ") + bad);
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_TRUE(r.out.empty()) << bad;
  }
}

// --buffsize as NCCL_BUFFSIZE: a tree's Simple chunk is a step, an eighth of the buffer, so a
// 16 MiB buffer streams 2 MiB chunks with a longer fill at 1 GiB; a ring all_reduce's time has
// no fill and does not change.
TEST(CliSimulate, BuffsizeAsNcclsEnvironment) {
  auto us = [](const std::string& extra) {
    CmdResult r = gpufabric(
        "simulate examples/seed-70b-1024.yaml -b 1G -e 1G --json --proto Simple " + extra);
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out)["results"][0]["time_us"].get<double>();
  };
  EXPECT_GT(us("--algo tree --buffsize 16M"), 1.1 * us("--algo tree"));
  EXPECT_DOUBLE_EQ(us("--algo tree --buffsize 4M"), us("--algo tree"));
  EXPECT_DOUBLE_EQ(us("--algo ring --buffsize 16M"), us("--algo ring"));
  for (const char* bad : {"--buffsize 32K", "--buffsize 2G", "--buffsize lots"}) {
    CmdResult r = gpufabric(std::string("simulate examples/seed-70b-1024.yaml ") + bad);
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_NE(r.err.find("--buffsize"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << bad;
  }
}

// A tool's output given where the spec goes is named for what it is, not for the spec keys it
// lacks (an iperf3 JSON read as YAML had named "start", "intervals" and "end").
TEST(CliSimulate, AToolsOutputForASpecIsNamed) {
  for (const auto& [file, kind] : {std::pair{"iperf3-tcp.json", "iperf3"},
                                   std::pair{"nccl-tests-2node-allreduce.txt", "nccl-tests"}}) {
    for (const char* cmd : {"simulate", "plan"}) {
      CmdResult r = gpufabric(std::string(cmd) + " tests/data/outputs/" + file);
      EXPECT_EQ(r.code, 2) << cmd << " " << file;
      EXPECT_NE(
          r.err.find(std::string("error: SPEC: this is ") + kind + " output, not a cluster spec"),
          std::string::npos)
          << r.err;
      EXPECT_EQ(r.err.find("unknown key"), std::string::npos) << r.err;
      EXPECT_TRUE(r.out.empty());
    }
  }
  // A log is named as one; a text that quotes a few of its lines is not (the README, given as the
  // spec, had been called NCCL debug log output).
  CmdResult log = gpufabric("plan tests/data/outputs/nccl-debug-ib-retry.log");
  EXPECT_NE(log.err.find("this is nccl-debug-log output"), std::string::npos) << log.err;
  CmdResult readme = gpufabric("plan README.md");
  EXPECT_EQ(readme.code, 2);
  EXPECT_EQ(readme.err.find("output, not a cluster spec"), std::string::npos) << readme.err;
}

TEST(CliSimulate, BadInputExitsTwo) {
  struct Case {
    const char* args;
    const char* expect;
  };
  for (const Case& c :
       {Case{"--op allreduce", "did you mean 'all_reduce'"},
        Case{"--algo ringg", "unknown algorithm"},
        Case{"--proto fast", "unknown protocol"},
        Case{"--nodes 999", "cannot run on 999"},
        Case{"-b 1G -e 1K", "larger than the largest"},
        Case{"-b lots", "is not a size"},
        Case{"-f 1", "factor"},
        Case{"--load-balancing ecmpp", "did you mean 'ecmp'"},
        Case{"--nccl 3.0",
             "--nccl: unknown NCCL release '3.0' (use 2.18 or 2.20 or 2.21 or 2.24 or 2.26 or "
             "2.27 or 2.28.7 or 2.28 or 2.29 or 2.30, or"},
        Case{"--nccl ''", "--nccl: an empty value: give one, or leave the flag out"},
        Case{"--load-balancing ''", "--load-balancing: an empty value"},
        Case{"--op all_gather --algo pat --nccl 2.18", "NCCL 2.18 has no PAT"},
        Case{"--algo nvls --proto LL128", "nvls runs the Simple protocol only"},
        Case{"--algo collnet_chain --proto LL", "Simple protocol only"},
        Case{"--op sendrecv --proto Simple", "runs the protocol NCCL's rule gives each send"},
        Case{"--op alltoall --proto LL", "leave --proto out, or give auto"},
        Case{"--seed -1", "is not a whole number from 0"},
        Case{"--seed 99999999999999999999", "is not a whole number from 0"},
        Case{"-g 3", "which 3 does not divide"},
        Case{"-g 16", "which 16 does not divide"},
        Case{"--min-channels 32 --max-channels 4", "32 channels at least, but 4 at most"},
        Case{"--links-bytes 1G", "add --links"}}) {
    CmdResult r = gpufabric(std::string("simulate examples/seed-70b-1024.yaml ") + c.args);
    EXPECT_EQ(r.code, 2) << c.args;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args;
  }
  // NVLS forced on GPUs without NVLink SHARP.
  const fs::path spec =
      write_temp("a100.yaml", "cluster: {gpu: a100-sxm-80g, nodes: 1, nic: cx6-200g}\n");
  CmdResult r = gpufabric("simulate " + spec.string() + " --algo nvls");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no NVLink SHARP"), std::string::npos) << r.err;
  fs::remove(spec);
}

// Both sets are reported apart, in the text and the JSON, and the exit code is the test set's
// verdict; no accuracy figure is asserted (the fit set is what constants came from, and the test
// set's figures are reported as measured).
TEST(CliCalibrate, ReportsTheFitAndTheTestSetApart) {
  const std::string csv = std::string(GPUFABRIC_SOURCE_DIR) + "/data/calibration/nccl-public.csv";
  CmdResult r = gpufabric("calibrate " + csv);
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.out << r.err;
  EXPECT_NE(r.out.find("## fit set"), std::string::npos);
  EXPECT_NE(r.out.find("## test set"), std::string::npos);
  EXPECT_NE(r.out.find("### fit set:"), std::string::npos);
  EXPECT_NE(r.out.find("### test set:"), std::string::npos);
  EXPECT_NE(r.out.find("| line | hardware |"), std::string::npos);
  EXPECT_NE(r.out.find("Targets on the test set"), std::string::npos);
  EXPECT_NE(r.out.find("skipped: line"), std::string::npos);
  CmdResult j = gpufabric("calibrate " + csv + " --json");
  EXPECT_EQ(j.code, r.code);
  auto doc = nlohmann::json::parse(j.out);
  for (const char* k : {"points", "median_abs_error_large", "max_abs_error_large",
                        "worst_latency_ratio", "skipped", "pass", "sets", "skipped_rows"})
    EXPECT_TRUE(doc.contains(k)) << k;
  for (const char* set : {"fit", "test"}) {
    const auto& x = doc["sets"][set];
    for (const char* k :
         {"points", "skipped", "small", "mid", "large", "groups", "sources", "targets", "pass"})
      EXPECT_TRUE(x.contains(k)) << set << "." << k;
    EXPECT_GT(x["points"].get<int>(), 0) << set;
    EXPECT_EQ(x["targets"].size(), 4u);
  }
  EXPECT_EQ(doc["pass"].get<bool>(), doc["sets"]["test"]["pass"].get<bool>());
  EXPECT_EQ(j.code, doc["pass"].get<bool>() ? 0 : 1);
  CmdResult summary = gpufabric("calibrate " + csv + " --summary");
  EXPECT_EQ(summary.code, r.code);
  EXPECT_NE(summary.out.find("### test set:"), std::string::npos);
  EXPECT_EQ(summary.out.find("| line | hardware |"), std::string::npos);
  CmdResult bad = gpufabric("calibrate /nonexistent.csv");
  EXPECT_EQ(bad.code, 2);
  // A tool's output where the CSV goes is named for what it is, and sent where it belongs.
  CmdResult tool = gpufabric("calibrate tests/data/outputs/nccl-tests-2node-allreduce.txt");
  EXPECT_EQ(tool.code, 2);
  EXPECT_NE(tool.err.find("error: CSV: this is nccl-tests output, not a calibration CSV (fit "
                          "your cluster's factors on it: gpufabric calibrate --fit "
                          "tests/data/outputs/nccl-tests-2node-allreduce.txt --spec SPEC"),
            std::string::npos)
      << tool.err;
  EXPECT_TRUE(tool.out.empty());
}

// calibrate --fit on a verbatim nccl-tests output (sendrecv_perf, 8 nodes of B200): the profile
// it writes, applied by a spec's calibration: key, brings simulate to the measured busbw; the
// files and flags it needs are bad input when missing.
TEST(CliCalibrate, FitWritesAProfileThatASpecApplies) {
  const std::string src = GPUFABRIC_SOURCE_DIR;
  const std::string run = src + "/tests/data/calfit/nccl-sendrecv-8node-79941.out";
  const std::string cluster = src + "/tests/data/calfit/use3a-ss.yaml";
  const fs::path dir = temp_dir("calfit");
  fs::create_directories(dir);
  auto read_text = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const fs::path prof = dir / "profile.yaml";
  CmdResult r = gpufabric("calibrate --fit " + run + " --spec " + cluster + " -o " + prof.string() +
                          " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"parameters", "cross_validation", "fit_errors", "cv_errors", "model_errors",
                        "points", "profile", "objective_before", "objective_after"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["cross_validation"], "5-fold over the points (point i in fold i mod 5)");
  EXPECT_EQ(j["points"].size(), 19u);  // 1 KiB to 256 MiB
  EXPECT_LT(j["objective_after"].get<double>(), j["objective_before"].get<double>());
  const std::string yaml = read_text(prof);
  for (const char* k :
       {"factors:", "network_step_latency_us:", "cross_validation:", "fitted_on:", "not_fitted:"})
    EXPECT_NE(yaml.find(k), std::string::npos) << k << "\n" << yaml;
  // A network send/recv here runs on NCCL's 2 channels a peer, not at the links' rate: no point
  // of this file tells the scale-out links' efficiency, and the profile says so.
  EXPECT_EQ(yaml.find("network_efficiency:"), std::string::npos) << yaml;
  // The spec, beside the profile, names it relatively.
  std::string spec_text = read_text(cluster);
  std::ofstream(dir / "cluster.yaml") << spec_text << "calibration: profile.yaml\n";
  const std::string args = " --op sendrecv --nodes 8 -b 256M -e 256M --json";
  auto busbw = [&](const std::string& spec) {
    CmdResult s = gpufabric("simulate " + spec + args);
    EXPECT_EQ(s.code, 0) << s.err;
    auto j = nlohmann::json::parse(s.out);
    // Only a calibrated run names its profile; the others' JSON is as before.
    EXPECT_EQ(j.contains("calibration"), spec.find("cluster.yaml") != std::string::npos);
    return j["results"][0]["busbw_gbs"].get<double>();
  };
  const double measured = 26.13;  // the file's 268435456-byte row
  const double model = busbw(cluster), calibrated = busbw((dir / "cluster.yaml").string());
  // 2 channels x NCCL's 14 GB/s a network p2p channel: 27.9 against 26.13 measured; the profile
  // fits the latency, which leaves the large size where it was.
  EXPECT_NEAR(model / measured, 1, 0.08) << model;
  EXPECT_NEAR(calibrated / measured, 1, 0.08) << calibrated;
  // The small sizes' time: the profile's network step latency, fitted on the file's ten rows
  // below 1 MiB, reaches the simulator. (Neither time is judged against the file's 1 KiB row:
  // the model's network send latency, kP2pNetSendUs, and the profile were both fitted on it.)
  auto time_1k = [&](const std::string& spec) {
    CmdResult s = gpufabric("simulate " + spec + " --op sendrecv --nodes 8 -b 1K -e 1K --json");
    EXPECT_EQ(s.code, 0) << s.err;
    return nlohmann::json::parse(s.out)["results"][0]["time_us"].get<double>();
  };
  const double t_model = time_1k(cluster), t_cal = time_1k((dir / "cluster.yaml").string());
  EXPECT_NE(t_cal, t_model) << t_model << " " << t_cal;
  CmdResult table = gpufabric("simulate " + (dir / "cluster.yaml").string() + " --op sendrecv");
  EXPECT_NE(table.out.find("# calibrated by " + prof.string()), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("not this spec's"), std::string::npos) << table.out;  // its own cluster
  // The same profile on other hardware is applied, and the table says it was fitted elsewhere.
  const fs::path other = dir / "other.yaml";
  std::ofstream(other) << "cluster: {gpu: h100-sxm, nodes: 8, nic: cx7-400g}\n"
                       << "fabric: {technology: infiniband}\ncalibration: " << prof.string()
                       << "\n";
  CmdResult elsewhere = gpufabric("simulate " + other.string() + " -b 1M -e 1M");
  EXPECT_EQ(elsewhere.code, 0) << elsewhere.err;
  EXPECT_NE(elsewhere.out.find("not this spec's h100-sxm with cx7-400g"), std::string::npos)
      << elsewhere.out;
  // step runs its collectives with the profile too, and says so.
  const fs::path stepped = dir / "stepped.yaml";
  std::ofstream(stepped) << "cluster: {gpu: h100-sxm, nodes: 2, nic: cx7-400g}\n"
                         << "fabric: {technology: infiniband}\ncalibration: " << prof.string()
                         << "\nworkload:\n  model: {params: 8B, layers: 32, hidden: 4096, "
                            "heads: 32, seq_len: 4096}\n  parallelism: {tp: 8}\n"
                            "  global_batch: 16\n";
  CmdResult st = gpufabric("step " + stepped.string() + " --no-sensitivity");
  EXPECT_LE(st.code, 1) << st.err;
  EXPECT_NE(st.out.find("note: collectives calibrated by " + prof.string()), std::string::npos)
      << st.out;
  // The text report names every factor and the cross-validation.
  CmdResult text = gpufabric("calibrate --fit " + run + " --spec " + cluster + " -o " +
                             (dir / "p2.yaml").string());
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("network_step_latency_us"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Cross-validation: 5-fold"), std::string::npos) << text.out;
  // Bad input: no spec, no -o, a CSV besides --fit; nothing written.
  EXPECT_EQ(gpufabric("calibrate --fit " + run + " -o " + (dir / "x.yaml").string()).code, 2);
  EXPECT_EQ(gpufabric("calibrate --fit " + run + " --spec " + cluster).code, 2);
  EXPECT_EQ(gpufabric("calibrate " + src + "/data/calibration/nccl-public.csv --fit " + run +
                      " --spec " + cluster + " -o " + (dir / "x.yaml").string())
                .code,
            2);
  EXPECT_FALSE(fs::exists(dir / "x.yaml"));
  fs::remove_all(dir);
}

// The spec's calibration: reaches step and what-if too: scale-out links at half the model's
// efficiency slow the step's exposed communication and the alltoall (NIC-bound) what-if reports.
TEST(CliCalibrate, TheProfileReachesStepAndWhatIf) {
  const fs::path dir = temp_dir("calfit-step");
  fs::create_directories(dir);
  std::ifstream in(fs::path(GPUFABRIC_SOURCE_DIR) / "examples/seed-70b-1024.yaml");
  std::stringstream spec;
  spec << in.rdbuf();
  std::ofstream(dir / "half.yaml") << "factors: {network_efficiency: 0.47}\n";
  std::ofstream(dir / "plain.yaml") << spec.str();
  std::ofstream(dir / "half-spec.yaml") << spec.str() << "calibration: half.yaml\n";
  auto step = [&](const char* name) {
    CmdResult r = gpufabric("step " + (dir / name).string() + " --json --no-sensitivity");
    EXPECT_TRUE(r.code == 0 || r.code == 1) << r.err;
    return nlohmann::json::parse(r.out)["exposed_comm_s"].get<double>();
  };
  auto alltoall = [&](const char* name) {
    CmdResult r = gpufabric("what-if " + (dir / name).string() + " --grow nodes=+8 --json");
    EXPECT_TRUE(r.code == 0 || r.code == 1) << r.err;
    return nlohmann::json::parse(r.out)["baseline"]["collectives"]["alltoall"]["busbw_gbs"]
        .get<double>();
  };
  EXPECT_GT(step("half-spec.yaml"), 1.2 * step("plain.yaml"));
  EXPECT_NEAR(alltoall("half-spec.yaml") / alltoall("plain.yaml"), 0.5, 0.05);
  fs::remove_all(dir);
}

// A row whose set is neither fit nor test: exit 2, the file, line and key, no output.
TEST(CliCalibrate, ABadSetIsBadInput) {
  const fs::path csv = write_temp(
      "badset.csv",
      "source,hardware,nodes,gpus_per_node,nic,nics_per_node,fabric,nccl,collective,algo,bytes,"
      "busbw_gbs,time_us,note,set\n"
      "x,H100-SXM,1,8,none,0,NVLink4,,all_reduce,ring,1073741824,360,,n,held-out\n");
  CmdResult r = gpufabric("calibrate " + csv.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("badset.csv:2: error: set: 'held-out' is neither fit nor test"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty());
  fs::remove(csv);
}

}  // namespace

namespace {

TEST(CliStep, JsonFollowsTheContract) {
  CmdResult r = gpufabric("step examples/seed-70b-1024.yaml --json");
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.err;  // 1: a constraint failed
  auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"step_time_s", "compute_s", "exposed_comm_s", "comm_fraction",
                        "tflops_per_gpu", "mfu", "gpu_utilization", "tokens_per_s", "breakdown",
                        "time_to_train_s", "cost_to_train_usd", "constraints", "sensitivity"})
    EXPECT_TRUE(j.contains(k)) << k;
  bool failed = false;
  for (const auto& c : j["constraints"]) failed = failed || !c["pass"].get<bool>();
  EXPECT_EQ(r.code, failed ? 1 : 0);
  EXPECT_EQ(j["sensitivity"].size(), 4u);
  CmdResult guide = gpufabric("step examples/seed-70b-plain-dp.yaml --json");
  auto g = nlohmann::json::parse(guide.out);
  EXPECT_NEAR(g["comm_fraction"].get<double>(), 0.36, 0.03);
  EXPECT_EQ(guide.code, 1);  // 36 % is over the 30 % limit
  // A compute time without the model's shape: no model FLOPs, so MFU is unknown (null, '-'),
  // never a 0 % that reads as a measurement.
  EXPECT_TRUE(g["mfu"].is_null()) << g["mfu"];
  EXPECT_TRUE(g["hfu"].is_null()) << g["hfu"];
  for (const auto& x : g["sensitivity"]) EXPECT_TRUE(x["mfu"].is_null()) << x;
  CmdResult text = gpufabric("step examples/seed-70b-plain-dp.yaml");
  EXPECT_NE(text.out.find("MFU unknown\n"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("MFU 0.0%"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("as planned (400G NICs)               16 s        37.5%        -\n"),
            std::string::npos)
      << text.out;
  CmdResult whatif = gpufabric("what-if examples/seed-70b-plain-dp.yaml --nic 800G --json");
  ASSERT_EQ(whatif.code, 0) << whatif.err;
  EXPECT_TRUE(nlohmann::json::parse(whatif.out)["scenario"]["step"]["mfu"].is_null());
  CmdResult none = gpufabric("step examples/roce-lab-64.yaml");
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("workload"), std::string::npos) << none.err;
}

TEST(CliStep, DimensionsSharingLinksAndNoConcurrency) {
  // roce-16k: the pipeline's gradient sends and the DP buckets share the NICs during the last
  // backward; --no-concurrency runs each alone, as before.
  CmdResult r = gpufabric("step examples/roce-16k.yaml --json --no-sensitivity");
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["concurrency"]["enabled"].get<bool>());
  EXPECT_EQ(j["concurrency"]["windows"].size(), 2u);
  EXPECT_GT(j["concurrency"]["added_s"].get<double>(), 0);
  bool pp = false;
  for (const auto& b : j["breakdown"]) {
    if (b["kind"] != "pp_sendrecv") continue;
    pp = true;
    EXPECT_GT(b["concurrency_factor"].get<double>(), 1);
    EXPECT_GT(b["total_s"].get<double>(), b["alone_total_s"].get<double>());
    EXPECT_EQ(b["shares_links_with"], nlohmann::json::array({"dp_reduce_scatter_all_gather"}));
  }
  EXPECT_TRUE(pp);
  CmdResult off = gpufabric("step examples/roce-16k.yaml --json --no-sensitivity --no-concurrency");
  auto o = nlohmann::json::parse(off.out);
  EXPECT_FALSE(o["concurrency"]["enabled"].get<bool>());
  EXPECT_TRUE(o["concurrency"]["windows"].empty());
  for (const auto& b : o["breakdown"]) {
    if (b.contains("concurrency_factor")) {
      EXPECT_EQ(b["concurrency_factor"].get<double>(), 1);
    }
  }
  EXPECT_LT(o["step_time_s"].get<double>(), j["step_time_s"].get<double>());
  CmdResult text = gpufabric("step examples/roce-16k.yaml --no-sensitivity");
  EXPECT_NE(text.out.find("slower beside dp_reduce_scatter_all_gather on the same links"),
            std::string::npos)
      << text.out;
  // The timeline draws the slowed sends: each pipeline send lasts the slowed total per call.
  const fs::path dir = temp_dir("step_concurrency");
  CmdResult traced =
      gpufabric("step examples/roce-16k.yaml --json --no-sensitivity -o " + dir.string());
  std::ifstream tf(dir / "step.trace.json");
  ASSERT_TRUE(tf) << traced.err;
  auto t = nlohmann::json::parse(tf);
  double per_call_us = 0;
  for (const auto& b : j["breakdown"])
    if (b["kind"] == "pp_sendrecv")
      per_call_us = b["total_s"].get<double>() / b["count"].get<double>() * 1e6;
  int sends = 0;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "X" && e["name"] == "pp_sendrecv") {
      ++sends;
      EXPECT_NEAR(e["dur"].get<double>(), per_call_us, 1e-6 * per_call_us);
    }
  EXPECT_GT(sends, 0);
  fs::remove_all(dir);
}

TEST(CliStep, MemoryAndTimeline) {
  // The memory breakdown is in the JSON and the text; -o writes the Perfetto timeline.
  const fs::path dir = temp_dir("step");
  CmdResult r =
      gpufabric("step examples/seed-70b-1024.yaml --json --no-sensitivity -o " + dir.string());
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"params_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes",
                        "nccl_bytes", "total_bytes", "hbm_bytes", "fits", "stages"})
    EXPECT_TRUE(j["memory"].contains(k)) << k;
  EXPECT_TRUE(j["memory"]["fits"].get<bool>());
  EXPECT_TRUE(j.contains("pipeline"));
  std::ifstream tf(dir / "step.trace.json");
  ASSERT_TRUE(tf) << "no step.trace.json";
  auto t = nlohmann::json::parse(tf);
  ASSERT_TRUE(t["traceEvents"].is_array());
  EXPECT_GT(t["traceEvents"].size(), 10u);
  fs::remove_all(dir);
  CmdResult text = gpufabric("step examples/seed-70b-1024.yaml --no-sensitivity");
  EXPECT_NE(text.out.find("PASS memory: "), std::string::npos) << text.out;
  // Stages count from 1 in text, as the notes and what-if name them: one stage is "1 of 1".
  EXPECT_NE(text.out.find("memory per GPU (stage 1 of 1,"), std::string::npos) << text.out;
  // GPT-3 175B on 8 x 8 A100 without recomputation at 4 sequences a microbatch: 176 GiB a GPU.
  const fs::path big = write_temp(
      "oversized.yaml",
      "name: oversized\ncluster: {gpu: a100-sxm-80g, nodes: 8, nic: cx6-200g}\n"
      "workload:\n  model: {params: 175B, layers: 96, hidden: 12288, heads: 96, seq_len: 2048, "
      "vocab: 51200}\n  parallelism: {tp: 8, pp: 8}\n  global_batch: 256\n  micro_batch: 4\n"
      "  recompute: none\nconstraints: {max_comm_fraction: 1, min_gpu_utilization: 0}\n");
  CmdResult over = gpufabric("step " + big.string() + " --no-sensitivity");
  EXPECT_EQ(over.code, 1) << over.err;
  EXPECT_NE(over.out.find("FAIL memory: "), std::string::npos) << over.out;
  EXPECT_NE(over.err.find("does not fit in memory: pipeline stage 1 needs"), std::string::npos)
      << over.err;
  // sweep marks the design invalid, with the reason.
  const fs::path sdir = temp_dir("sweep_memory");
  CmdResult sw =
      gpufabric("sweep " + big.string() +
                " --vary workload.micro_batch=1,4 --vary workload.recompute=selective,none"
                " --threads 1 -o " +
                sdir.string());
  EXPECT_EQ(sw.code, 0) << sw.err;
  std::ifstream js(sdir / "sweep.json");
  auto sj = nlohmann::json::parse(js);
  ASSERT_EQ(sj["designs"].size(), 4u);
  EXPECT_TRUE(sj["designs"][0]["valid"].get<bool>());   // micro_batch 1, selective
  EXPECT_FALSE(sj["designs"][3]["valid"].get<bool>());  // micro_batch 4, no recomputation
  EXPECT_NE(sj["designs"][3]["error"].get<std::string>().find("does not fit in memory"),
            std::string::npos);
  fs::remove_all(sdir);
  fs::remove(big);
}

// qos: the verdicts decide the exit code (PFC without ECN pauses before marking: 1), bad flags
// and a non-RoCE spec are refused with 2 and nothing on stdout, -o writes its three files.
TEST(CliQos, VerdictsExitCodesAndOutputs) {
  CmdResult ok = gpufabric("qos examples/roce-lab-64.yaml --pattern incast:4 --bytes 4M --json");
  ASSERT_EQ(ok.code, 0) << ok.err;
  auto j = nlohmann::json::parse(ok.out);
  for (const char* k : {"ports", "verdicts", "fct_p99_s", "flow_model_throughput_Bps", "totals"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["verdicts"].size(), 5u);
  // Every port row has both queues: the RoCE priority and the CNPs' strict-priority queue.
  ASSERT_FALSE(j["ports"].empty());
  for (const char* k : {"peak_queue_bytes", "cnp_peak_queue_bytes", "pause_sent", "ecn_marks"})
    EXPECT_TRUE(j["ports"][0].contains(k)) << k;
  EXPECT_TRUE(j["pass"].get<bool>());
  CmdResult pfc_only = gpufabric(
      "qos examples/roce-lab-64.yaml --pattern incast:8 --bytes 64M --ecn off --dcqcn off");
  EXPECT_EQ(pfc_only.code, 1) << pfc_only.err;
  EXPECT_NE(pfc_only.out.find("FAIL  ECN marks before PFC pauses"), std::string::npos);
  EXPECT_NE(pfc_only.out.find("change: turn ECN marking on"), std::string::npos);
  const fs::path dir = temp_dir("qos_out");
  CmdResult out = gpufabric("qos examples/roce-lab-64.yaml --pattern permutation --bytes 1M -o " +
                            dir.string());
  ASSERT_EQ(out.code, 0) << out.err;
  for (const char* f : {"qos.json", "qos.txt", "ports.csv"}) EXPECT_TRUE(fs::exists(dir / f)) << f;
  for (const char* bad :
       {"--pattern incast", "--pattern incast:999", "--pattern ring", "--pattern alltoall:3",
        "--ecn kmin=1M,kmax=1K", "--ecn kmin=x", "--ecn pmax=150%", "--ecn gain=1", "--pfc maybe",
        "--dcqcn fast", "--bytes 0", "--bytes lots", "--bytes 8G", "--pattern incast:1K",
        "--pattern incast:3x", "--pattern incast:0", "--ecn kmin=200M,kmax=400M,pmax=20%"}) {
    CmdResult e = gpufabric(std::string("qos examples/roce-lab-64.yaml ") + bad);
    EXPECT_EQ(e.code, 2) << bad;
    EXPECT_TRUE(e.out.empty()) << bad;
  }
  // A percentage without its sign reads as a fraction: the message shows both forms.
  CmdResult pct = gpufabric("qos examples/roce-lab-64.yaml --ecn pmax=20");
  EXPECT_EQ(pct.code, 2);
  EXPECT_NE(pct.err.find("pmax: '20' is not a probability: a fraction in (0, 1], e.g. 0.2, or a "
                         "percentage with its sign, e.g. 20%"),
            std::string::npos)
      << pct.err;
  CmdResult ib = gpufabric("qos examples/superpod-h100-4su.yaml");
  EXPECT_EQ(ib.code, 2);
  EXPECT_NE(ib.err.find("examples/superpod-h100-4su.yaml:"), std::string::npos) << ib.err;
  EXPECT_NE(ib.err.find("fabric.technology"), std::string::npos) << ib.err;
  // Thresholds above the switch's buffer would mark nothing; a count is not a parameter count.
  CmdResult deep = gpufabric("qos examples/roce-lab-64.yaml --ecn kmin=200M,kmax=400M,pmax=20%");
  EXPECT_NE(deep.err.find("is at or above the arista-7060x6's 165 MB packet buffer"),
            std::string::npos)
      << deep.err;
  EXPECT_NE(gpufabric("qos examples/roce-lab-64.yaml --pattern incast:1K")
                .err.find("'1K' is not a number of senders"),
            std::string::npos);
  // A one-GPU cluster has no sender: the spec's error, at its line, not "N from 1 to 0".
  const fs::path one =
      write_temp("one-gpu.yaml",
                 "name: one\ncluster:\n  gpu: h100-sxm\n  nodes: 1\n"
                 "  gpus_per_node: 1\n  nic: cx7-400g\nfabric: {technology: roce}\n");
  CmdResult tiny = gpufabric("qos " + one.string() + " --pattern incast:1");
  EXPECT_EQ(tiny.code, 2);
  EXPECT_TRUE(tiny.out.empty());
  EXPECT_NE(
      tiny.err.find(one.string() +
                    ":4:10: error: cluster.nodes: the cluster has too few GPUs for an incast"),
      std::string::npos)
      << tiny.err;
  EXPECT_EQ(tiny.err.find("from 1 to 0"), std::string::npos) << tiny.err;
  fs::remove(one);
}

// qos --cc: HPCC is named in the JSON with its base RTT and window; --cc none is --dcqcn off (the
// same run, byte for byte); an unknown name or a --dcqcn that contradicts --cc is refused with 2,
// the flag named and nothing on stdout.
TEST(CliQos, CongestionControlFlag) {
  const std::string run = "qos examples/roce-lab-64.yaml --pattern incast:4 --bytes 4M --json ";
  CmdResult h = gpufabric(run + "--cc hpcc");
  ASSERT_EQ(h.code, 0) << h.err;
  auto j = nlohmann::json::parse(h.out);
  EXPECT_EQ(j["congestion_control"], "hpcc");
  EXPECT_GT(j["hpcc"]["base_rtt_s"].get<double>(), 1e-6);
  EXPECT_GT(j["hpcc"]["init_window_bytes"].get<double>(), 0);
  EXPECT_EQ(j["totals"]["cnps"], 0);
  EXPECT_NE(j["settings"].get<std::string>().find("HPCC on"), std::string::npos);
  CmdResult d = gpufabric(run);
  ASSERT_EQ(d.code, 0) << d.err;
  EXPECT_EQ(nlohmann::json::parse(d.out)["congestion_control"], "dcqcn");
  EXPECT_FALSE(nlohmann::json::parse(d.out).contains("hpcc"));
  CmdResult none = gpufabric(run + "--cc none"), off = gpufabric(run + "--dcqcn off");
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_EQ(none.out, off.out);
  EXPECT_EQ(nlohmann::json::parse(none.out)["congestion_control"], "none");
  CmdResult text =
      gpufabric("qos examples/roce-lab-64.yaml --pattern incast:4 --bytes 4M --cc hpcc");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("HPCC: base RTT T"), std::string::npos) << text.out;
  const std::pair<const char*, const char*> bad[] = {{"--cc tcp", "--cc"},
                                                     {"--cc HPCC", "--cc"},
                                                     {"--cc ''", "--cc"},
                                                     {"--cc hpcc --dcqcn off", "--dcqcn"},
                                                     {"--cc none --dcqcn paper", "--dcqcn"},
                                                     {"--cc dcqcn --dcqcn off", "--dcqcn"}};
  for (const auto& [flags, named] : bad) {
    CmdResult e = gpufabric(run + flags);
    EXPECT_EQ(e.code, 2) << flags;
    EXPECT_TRUE(e.out.empty()) << flags;
    EXPECT_NE(e.err.find(named), std::string::npos) << flags << ": " << e.err;
  }
  CmdResult paper = gpufabric(run + "--cc dcqcn --dcqcn paper");
  EXPECT_EQ(paper.code, 0) << paper.err;
}

// simulate --engine packet --cc hpcc: the packet level under HPCC, which holds even a ring's
// uncongested links at eta (95 %) less INT's bytes, so its busbw sits below DCQCN's (which
// leaves an uncongested link at line rate); --cc without --engine packet is refused with 2.
TEST(CliSimulate, PacketEngineTakesTheCongestionControl) {
  const std::string run =
      "simulate examples/roce-lab-64.yaml --engine packet -b 256M -e 256M --json";
  CmdResult h = gpufabric(run + " --cc hpcc"), d = gpufabric(run);
  ASSERT_EQ(h.code, 0) << h.err;
  ASSERT_EQ(d.code, 0) << d.err;
  const auto jh = nlohmann::json::parse(h.out)["packet"],
             jd = nlohmann::json::parse(d.out)["packet"];
  EXPECT_NE(jh["settings"].get<std::string>().find("HPCC on"), std::string::npos);
  EXPECT_NE(jd["settings"].get<std::string>().find("DCQCN on"), std::string::npos);
  const double ratio =
      jh["results"][0]["busbw_gbs"].get<double>() / jd["results"][0]["busbw_gbs"].get<double>();
  EXPECT_GT(ratio, 0.85);  // measured 0.91 at 256 MiB, 0.914 at 1 GiB (86.0 against 94.1 GB/s)
  EXPECT_LT(ratio, 0.96);
  for (const char* bad : {"simulate examples/roce-lab-64.yaml --cc hpcc",
                          "simulate examples/roce-lab-64.yaml --engine packet --cc tcp"}) {
    CmdResult e = gpufabric(bad);
    EXPECT_EQ(e.code, 2) << bad;
    EXPECT_TRUE(e.out.empty()) << bad;
    EXPECT_NE(e.err.find("--cc"), std::string::npos) << e.err;
  }
}

// simulate --engine packet: nccl-tests' table unchanged above, the packet-level rows beside the
// flow-level ones below (within 5 % at 1 GiB, where nothing congests a ring), the same in JSON;
// fabrics, ops, algorithms and sizes the engine does not run are refused with 2 and no output.
TEST(CliSimulate, PacketEngineBesideTheFlowModel) {
  CmdResult t = gpufabric("simulate examples/roce-lab-64.yaml --engine packet -b 1M -e 1G -f 32");
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("# Collective test concluded: all_reduce_perf"), std::string::npos);
  EXPECT_NE(t.out.find("# gpufabric packet level (--engine packet): ring all_reduce of 1 GiB"),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("# Avg bus bandwidth at packet level"), std::string::npos);
  // The table is the packet level's layout's, which the output says where NCCL would choose.
  EXPECT_NE(t.out.find("# note: the nccl-tests rows above are ring's"), std::string::npos);
  EXPECT_EQ(gpufabric("simulate examples/roce-lab-64.yaml --engine packet -b 1M -e 1M --algo ring")
                .out.find("# note: the nccl-tests rows above"),
            std::string::npos);
  CmdResult j = gpufabric("simulate examples/roce-lab-64.yaml --engine packet -b 1G -e 1G --json");
  ASSERT_EQ(j.code, 0) << j.err;
  auto js = nlohmann::json::parse(j.out);
  EXPECT_EQ(js["engine"], "packet");
  EXPECT_EQ(js["results"][0]["algorithm"], "ring");
  ASSERT_EQ(js["packet"]["results"].size(), 1u);
  const auto& row = js["packet"]["results"][0];
  for (const char* k : {"bytes", "time_us", "network_us", "busbw_gbs", "flow_busbw_gbs",
                        "ecn_marks", "pause_frames", "drops", "events", "failed_verdicts"})
    EXPECT_TRUE(row.contains(k)) << k;
  const double ratio = row["busbw_gbs"].get<double>() / row["flow_busbw_gbs"].get<double>();
  EXPECT_NEAR(ratio, 1.0, 0.05) << row.dump();
  EXPECT_EQ(row["drops"], 0);
  // Adaptive routing is not modelled per packet: the output says so.
  CmdResult ar = gpufabric(
      "simulate examples/roce-lab-64.yaml --engine packet -b 1M -e 1M --load-balancing adaptive");
  ASSERT_EQ(ar.code, 0) << ar.err;
  EXPECT_NE(ar.out.find("# note: load balancing adaptive: the packet level routes each QP"),
            std::string::npos);
  // The default engine's JSON says which engine made it and has no packet rows.
  CmdResult flow = gpufabric("simulate examples/roce-lab-64.yaml -b 1M -e 1M --json");
  ASSERT_EQ(flow.code, 0) << flow.err;
  EXPECT_EQ(nlohmann::json::parse(flow.out)["engine"], "flow");
  EXPECT_FALSE(nlohmann::json::parse(flow.out).contains("packet"));
  const std::pair<const char*, const char*> refused[] = {
      {"examples/roce-lab-64.yaml --engine packet --op broadcast", "--op"},
      {"examples/roce-lab-64.yaml --engine packet --algo tree", "--algo"},
      {"examples/roce-lab-64.yaml --engine packet -e 8G", "-e"},
      {"examples/roce-lab-64.yaml --engine packet --nodes 1 -e 1M", "--engine"},
      {"examples/roce-lab-64.yaml --engine pkt", "--engine"},
      {"examples/roce-16k.yaml --engine packet -e 1M", "--nodes 64"},
      {"examples/seed-70b-1024.yaml --engine packet -e 1M", "infiniband"}};
  for (const auto& [args, says] : refused) {
    CmdResult e = gpufabric(std::string("simulate ") + args);
    EXPECT_EQ(e.code, 2) << args;
    EXPECT_TRUE(e.out.empty()) << args;
    EXPECT_NE(e.err.find(says), std::string::npos) << args << ": " << e.err;
  }
  EXPECT_NE(gpufabric("simulate --help").out.find("--engine"), std::string::npos);
}

// dashboard on RoCE: the congestion rules' thresholds come from the packet-level run, with a
// comment naming it; on InfiniBand the rules say why there are none.
TEST(CliDashboard, RoceThresholdsFromThePacketLevelRun) {
  const fs::path dir = temp_dir("dash_roce");
  CmdResult r = gpufabric("dashboard examples/roce-lab-64.yaml -o " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(dir / "prometheus-rules.yml");
  const std::string rules((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* k : {"alert: GpufabricPfcPausesAbovePlan", "alert: GpufabricEcnMarksAbovePlan",
                        "alert: GpufabricCnpsAbovePlan", "gpufabric's packet-level run",
                        "alltoall of 64 MiB per rank over 64 GPUs"})
    EXPECT_NE(rules.find(k), std::string::npos) << k;
  fs::remove_all(dir);
  const fs::path ib = temp_dir("dash_ib");
  ASSERT_EQ(gpufabric("dashboard examples/seed-70b-1024.yaml -o " + ib.string()).code, 0);
  std::ifstream in2(ib / "prometheus-rules.yml");
  const std::string ib_rules((std::istreambuf_iterator<char>(in2)),
                             std::istreambuf_iterator<char>());
  EXPECT_EQ(ib_rules.find("AbovePlan"), std::string::npos);
  EXPECT_NE(ib_rules.find("No thresholds from the packet-level run: infiniband"),
            std::string::npos);
  fs::remove_all(ib);
}

TEST(CliWhatIf, JsonAndErrors) {
  CmdResult r = gpufabric("what-if examples/seed-70b-1024.yaml --fail switch:su01-r0-leaf --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"baseline", "scenario", "changes", "affected_nodes", "recommendation"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["affected_nodes"].size(), 32u);
  CmdResult grow = gpufabric("what-if examples/seed-70b-1024.yaml --grow nodes=+64 --json");
  ASSERT_EQ(grow.code, 0) << grow.err;
  EXPECT_EQ(nlohmann::json::parse(grow.out)["scenario"]["gpus"], 1536);
  for (const char* bad : {"--grow 64", "--fail switch:nope", "--fail cable:x", "--nic 300G", ""}) {
    CmdResult e = gpufabric(std::string("what-if examples/seed-70b-1024.yaml ") + bad);
    EXPECT_EQ(e.code, 2) << bad;
    EXPECT_TRUE(e.out.empty()) << bad;
  }
  // One change an element: the same one twice, or two rates for one link, is refused.
  CmdResult twice = gpufabric(
      "what-if examples/seed-70b-1024.yaml --fail switch:su01-r0-leaf --fail switch:su01-r0-leaf");
  EXPECT_EQ(twice.code, 2);
  EXPECT_NE(twice.err.find("--fail: 'switch:su01-r0-leaf' is given twice"), std::string::npos)
      << twice.err;
  EXPECT_EQ(
      gpufabric("what-if examples/seed-70b-1024.yaml --degrade link:node003:su01-r0-leaf=200G "
                "--degrade link:node003:su01-r0-leaf=100G")
          .code,
      2);
  // A refused --grow is the one error: no second one about a --fail that was never given.
  for (const char* grow : {"nodes=+0", "nodes=-8", "racks=+2"}) {
    CmdResult bad = gpufabric(std::string("what-if examples/seed-70b-1024.yaml --grow ") + grow);
    EXPECT_EQ(bad.code, 2) << grow;
    EXPECT_NE(bad.err.find("--grow"), std::string::npos) << bad.err;
    EXPECT_EQ(bad.err.find("--fail"), std::string::npos) << bad.err;
  }
  // No change at all: what-if says one is needed and lists them, blaming no flag it never got.
  CmdResult none = gpufabric("what-if examples/seed-70b-1024.yaml");
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("error: what-if needs at least one change"), std::string::npos)
      << none.err;
  for (const char* f : {"--fail", "--degrade", "--slow", "--grow", "--nic"})
    EXPECT_NE(none.err.find(f), std::string::npos) << f << ": " << none.err;
  EXPECT_EQ(none.err.find("error: --fail"), std::string::npos) << none.err;
  CmdResult help = gpufabric("what-if --help");
  for (const char* f : {"--fail", "--grow", "--nic", "--bytes", "--json"})
    EXPECT_NE(help.out.find(f), std::string::npos) << f;
  // --links where the scenario cannot run (nodes cut off from a rail): the restarted job's
  // links, said so; the comparison is still printed (it had been exit 2 and nothing).
  const fs::path links = fs::temp_directory_path() / ("gf_wi_links_" + std::to_string(getpid()));
  CmdResult cut = gpufabric(
      "what-if examples/seed-70b-1024.yaml --fail switch:su01-r0-leaf --links " + links.string());
  EXPECT_EQ(cut.code, 0) << cut.err;
  EXPECT_NE(cut.out.find("Recommendation: 32 nodes are cut off from a rail"), std::string::npos)
      << cut.out;
  EXPECT_NE(cut.out.find("\nRestarted, ports left out:\n"), std::string::npos) << cut.out;
  EXPECT_NE(cut.err.find("note: --links " + links.string() +
                         ": the scenario's all_reduce cannot run (nodes cut off from a rail): the "
                         "links are the restarted job's, its ports left out"),
            std::string::npos)
      << cut.err;
  EXPECT_TRUE(fs::exists(links));
  fs::remove(links);
}

}  // namespace

namespace {

TEST(CliVerify, CheckDiagnoseDoctor) {
  const std::string out = std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/outputs/";
  CmdResult c = gpufabric("check examples/seed-70b-1024.yaml " + out +
                          "nccl-tests-2node-allreduce.txt " + out + "ib_write_bw-400g.txt --json");
  ASSERT_EQ(c.code, 0) << c.out << c.err;
  auto j = nlohmann::json::parse(c.out);
  EXPECT_EQ(j["verdict"], "pass");
  int context = 0;
  for (const auto& row : j["rows"]) {
    for (const char* k : {"file", "collective", "bytes", "ratio", "ok", "judged"})
      EXPECT_TRUE(row.contains(k));
    // A row shown for context (below 1 GiB) is neither a pass nor a fail.
    if (!row["judged"].get<bool>()) {
      EXPECT_TRUE(row["ok"].is_null());
      ++context;
    } else {
      EXPECT_TRUE(row["ok"].is_boolean());
    }
  }
  EXPECT_EQ(context, 3);
  CmdResult slow =
      gpufabric("check examples/seed-70b-1024.yaml " + out + "ib_write_bw-slow-mb.txt");
  EXPECT_EQ(slow.code, 1);
  EXPECT_NE(slow.out.find("BELOW"), std::string::npos);

  CmdResult d = gpufabric("diagnose " + out + "nccl-debug-socket-fallback.log --json");
  EXPECT_EQ(d.code, 1);
  auto dj = nlohmann::json::parse(d.out);
  ASSERT_FALSE(dj["findings"].empty());
  const auto& f = dj["findings"][0];
  EXPECT_EQ(f["id"], "nccl-socket-fallback");
  for (const char* k : {"severity", "evidence", "cause", "check", "fix"})
    EXPECT_TRUE(f.contains(k));
  EXPECT_GT(f["evidence"][0]["line"].get<int>(), 0);
  CmdResult ok = gpufabric("diagnose " + out + "ib_write_bw-400g.txt --line-rate 400G");
  EXPECT_EQ(ok.code, 0) << ok.out;
  CmdResult bad = gpufabric("diagnose /nonexistent.log");
  EXPECT_EQ(bad.code, 2);
  const fs::path junk = write_temp("junk.txt", "not a tool output\n");
  CmdResult unknown = gpufabric("diagnose " + junk.string());
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("cannot tell which tool"), std::string::npos);
  fs::remove(junk);

  CmdResult doc =
      gpufabric(std::string("doctor --json --sysfs ") + GPUFABRIC_SOURCE_DIR + "/tests/data/sysfs");
  EXPECT_EQ(doc.code, 1);  // the recorded host has a port down
  // A --sysfs that does not exist is a mistyped flag, not a host without devices.
  CmdResult bare = gpufabric("doctor --sysfs /nonexistent-sysfs");
  EXPECT_EQ(bare.code, 2) << bare.out;
  EXPECT_NE(bare.err.find("/nonexistent-sysfs: error: --sysfs: no such folder"), std::string::npos)
      << bare.err;
  CmdResult file = gpufabric("doctor --sysfs README.md");
  EXPECT_EQ(file.code, 2);
  EXPECT_NE(file.err.find("README.md: error: --sysfs: is not a folder"), std::string::npos)
      << file.err;
}

TEST(CliAcceptance, WritesTheRunbookAndChecksItsResultsFolder) {
  const fs::path dir = temp_dir("acceptance");
  CmdResult w = gpufabric("acceptance examples/roce-lab-16.yaml -o " + dir.string());
  ASSERT_EQ(w.code, 0) << w.err;
  EXPECT_NE(w.out.find("link tests     16 in 1 round (lower bound 1"), std::string::npos) << w.out;
  for (const char* f : {"runbook.md", "link-tests.csv", "expected.json", "link-tests/round-01.sh",
                        "burn-in/counters.sh", "burn-in/pass-2/round-01.sh", "nccl/2-nodes.sh",
                        "nccl/hosts-cluster.txt"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  std::ifstream round(dir / "link-tests/round-01.sh");
  const std::string script((std::istreambuf_iterator<char>(round)), {});
  EXPECT_NE(script.find("ib_write_bw -d mlx5_0 -F -x 3 --report_gbits -q 4 -D 10 -p 18515 "
                        "--flow_label="),
            std::string::npos)
      << script;
  CmdResult j = gpufabric("acceptance examples/roce-lab-16.yaml --json --burn-in-passes 0");
  ASSERT_EQ(j.code, 0) << j.err;
  const auto js = nlohmann::json::parse(j.out);
  for (const char* k : {"cables", "rounds", "lower_bound_rounds", "uncovered_directions",
                        "expected_gbps", "nccl_env", "link_tests", "nccl", "notes"})
    EXPECT_TRUE(js.contains(k)) << k;
  EXPECT_EQ(js["link_tests"], 16);
  EXPECT_EQ(js["rounds"], 1);
  fs::remove_all(dir);

  // A results folder in the tools' formats, as the runbook's scripts fill it.
  auto planned =
      gf::load_and_plan(std::string(GPUFABRIC_SOURCE_DIR) + "/examples/roce-lab-16.yaml");
  ASSERT_TRUE(planned.ok());
  auto a = gf::plan_acceptance(*planned, gf::AcceptanceOptions{});
  ASSERT_TRUE(a.ok());
  const fs::path good = temp_dir("results_good"), slow = temp_dir("results_slow"),
                 bad = temp_dir("results_bad");
  gf::testing::write_results(good.string(), gf::testing::acceptance_results(*planned, *a));
  CmdResult pass = gpufabric("check examples/roce-lab-16.yaml " + good.string());
  EXPECT_EQ(pass.code, 0) << pass.out << pass.err;
  EXPECT_NE(pass.out.find("Verdict: PASS"), std::string::npos) << pass.out;
  gf::testing::ResultsRecipe recipe;
  recipe.slow_cable = 20;  // a leaf-spine cable
  gf::testing::write_results(slow.string(), gf::testing::acceptance_results(*planned, *a, recipe));
  CmdResult fail = gpufabric("check examples/roce-lab-16.yaml " + slow.string());
  EXPECT_EQ(fail.code, 1) << fail.out << fail.err;
  EXPECT_NE(fail.out.find("Suspect cable (the one cable that only the failing tests share):\n  " +
                          a->cables[20].name()),
            std::string::npos)
      << fail.out;
  CmdResult fj = gpufabric("check examples/roce-lab-16.yaml " + slow.string() + " --json");
  ASSERT_EQ(fj.code, 1);
  const auto fjs = nlohmann::json::parse(fj.out);
  EXPECT_EQ(fjs["verdict"], "fail");
  ASSERT_EQ(fjs["suspects"].size(), 1u);
  EXPECT_EQ(fjs["suspects"][0]["cable"], a->cables[20].name());
  // A truncated file: bad input naming the file (as the user can open it) and the line.
  auto files = gf::testing::acceptance_results(*planned, *a);
  for (auto& f : files)
    if (f.path == "link-tests/T0002-bw.txt") f.text = f.text.substr(0, f.text.find("#bytes") + 90);
  gf::testing::write_results(bad.string(), files);
  CmdResult trunc = gpufabric("check examples/roce-lab-16.yaml " + bad.string());
  EXPECT_EQ(trunc.code, 2) << trunc.out;
  EXPECT_NE(trunc.err.find((bad / "link-tests/T0002-bw.txt").string() + ":"), std::string::npos)
      << trunc.err;
  EXPECT_TRUE(trunc.out.empty()) << trunc.out;
  // A link or a FIFO where a result goes is named, exit 2 (it had read as a missing result).
  gf::testing::write_results(bad.string(), gf::testing::acceptance_results(*planned, *a));
  const fs::path linked = bad / "link-tests/T0002-bw.txt";
  fs::rename(linked, bad / "elsewhere.txt");
  fs::create_symlink(bad / "elsewhere.txt", linked);
  CmdResult link = gpufabric("check examples/roce-lab-16.yaml " + bad.string());
  EXPECT_EQ(link.code, 2) << link.out;
  EXPECT_NE(link.err.find(linked.string() + ": error: RESULTS: a link: results are read from "
                                            "plain files only"),
            std::string::npos)
      << link.err;
  fs::remove(linked);
  ASSERT_EQ(::mkfifo(linked.c_str(), 0600), 0);
  CmdResult fifo = gpufabric("check examples/roce-lab-16.yaml " + bad.string());
  EXPECT_EQ(fifo.code, 2) << fifo.out;
  EXPECT_NE(fifo.err.find(linked.string() + ": error: RESULTS: not a plain file"),
            std::string::npos)
      << fifo.err;
  // A folder goes alone; bad flags are bad input.
  CmdResult mixed = gpufabric("check examples/roce-lab-16.yaml " + good.string() +
                              " tests/data/outputs/ib_write_bw-400g.txt");
  EXPECT_EQ(mixed.code, 2);
  EXPECT_NE(mixed.err.find("a results folder is read alone"), std::string::npos) << mixed.err;
  for (const char* flags : {"--qps 0", "--duration -1", "--burn-in-passes 99", "--tolerance 1"}) {
    CmdResult b = gpufabric(std::string("acceptance examples/roce-lab-16.yaml ") + flags);
    EXPECT_EQ(b.code, 2) << flags;
  }
  for (const auto& d : {good, slow, bad}) fs::remove_all(d);
}

// check expects the burn-in passes the runbook planned, which its scripts write into the results
// folder: a burn-in never run (or its last pass) is missing results, not a plan without one.
TEST(CliAcceptance, CheckExpectsEveryPlannedBurnInPass) {
  const fs::path book = temp_dir("runbook_passes"), res = temp_dir("results_passes");
  ASSERT_EQ(
      gpufabric("acceptance examples/roce-lab-16.yaml --burn-in-passes 2 -o " + book.string()).code,
      0);
  // A script of the runbook, run (its ssh a no-op), leaves the plan file.
  const std::string run = "cd " + book.string() + " && SSH=true RESULTS=" + res.string() +
                          " sh burn-in/counters.sh before >/dev/null 2>&1";
  ASSERT_EQ(std::system(run.c_str()), 0);
  EXPECT_EQ(read_text(res / gf::kResultsPlanFile),
            "# gpufabric acceptance: the plan these results follow; gpufabric check reads it.\n"
            "burn-in-passes 2\n");
  fs::remove_all(res);
  auto planned =
      gf::load_and_plan(std::string(GPUFABRIC_SOURCE_DIR) + "/examples/roce-lab-16.yaml");
  ASSERT_TRUE(planned.ok());
  auto a = gf::plan_acceptance(*planned, gf::AcceptanceOptions{});  // 3 passes
  ASSERT_TRUE(a.ok());
  gf::testing::write_results(res.string(), gf::testing::acceptance_results(*planned, *a));
  const std::string check = "check examples/roce-lab-16.yaml " + res.string();
  // Without the plan file: acceptance's default, said.
  CmdResult dflt = gpufabric(check);
  EXPECT_EQ(dflt.code, 0) << dflt.out << dflt.err;
  EXPECT_NE(dflt.err.find("has no acceptance-plan.txt (each script of the runbook writes it): "
                          "expecting acceptance's default of 3 burn-in passes"),
            std::string::npos)
      << dflt.err;
  std::ofstream(res / gf::kResultsPlanFile) << gf::results_plan_text(*a);
  CmdResult all = gpufabric(check);
  EXPECT_EQ(all.code, 0) << all.out << all.err;
  EXPECT_TRUE(all.err.empty()) << all.err;
  // The last pass not run, then no burn-in at all: each planned result is missing.
  fs::remove_all(res / "burn-in/pass-4");
  CmdResult last = gpufabric(check);
  EXPECT_EQ(last.code, 1) << last.out;
  EXPECT_NE(last.out.find("FAIL  missing  P4-T0001                        -                   "
                          "ib_write_bw: no result file  [burn-in/pass-4/P4-T0001-bw.txt]"),
            std::string::npos)
      << last.out;
  EXPECT_EQ(last.out.find("(expected 0)"), std::string::npos) << last.out;
  fs::remove_all(res / "burn-in");
  CmdResult none = gpufabric(check + " --json");
  EXPECT_EQ(none.code, 1) << none.out;
  const auto js = nlohmann::json::parse(none.out);
  const auto burn_in = std::count_if(a->tests.begin(), a->tests.end(),
                                     [](const gf::LinkTest& t) { return t.pass > 1; });
  EXPECT_GE(burn_in, 3 * 16);             // 3 passes over 16 cable directions at least
  EXPECT_EQ(js["missing"], 2 * burn_in);  // bandwidth and latency each
  for (const auto& row : js["rows"])
    if (row["what"] == "missing") {
      EXPECT_TRUE(row["measured"].is_null()) << row;
    }
  // A runbook planned without a burn-in: nothing of it is expected.
  EXPECT_EQ(gpufabric(check + " --burn-in-passes 0").code, 0);
  // Results of a pass the plan does not have: another runbook's, named.
  gf::testing::write_results(res.string(), gf::testing::acceptance_results(*planned, *a));
  std::ofstream(res / gf::kResultsPlanFile) << "burn-in-passes 1\n";
  CmdResult extra = gpufabric(check);
  EXPECT_EQ(extra.code, 2) << extra.out;
  EXPECT_NE(extra.err.find((res / "burn-in/pass-4").string() +
                           ": error: RESULTS: results of burn-in pass 4, where the runbook "
                           "planned 1 pass (passes 2 to 2)"),
            std::string::npos)
      << extra.err;
  EXPECT_TRUE(extra.out.empty()) << extra.out;
  std::ofstream(res / gf::kResultsPlanFile) << "# x\nburn-in-passes three\n";
  CmdResult junk = gpufabric(check);
  EXPECT_EQ(junk.code, 2);
  EXPECT_NE(junk.err.find((res / gf::kResultsPlanFile).string() +
                          ":2: error: burn-in-passes: 'three' is not a count of burn-in passes"),
            std::string::npos)
      << junk.err;
  CmdResult files = gpufabric(
      "check examples/roce-lab-16.yaml --burn-in-passes 1 "
      "tests/data/outputs/ib_write_bw-400g.txt");
  EXPECT_EQ(files.code, 2);
  EXPECT_NE(files.err.find("--burn-in-passes: applies to a results folder"), std::string::npos)
      << files.err;
  fs::remove_all(book);
  fs::remove_all(res);
}

// A socket listening on a free loopback port (IPv4's, or with `v6` IPv6's ::1), closed when it
// goes out of scope; with `reuse_port` it is bound as cpp-httplib's default binds (SO_REUSEPORT),
// like another exporter.
struct Listener {
  int fd = -1, port = 0;
  explicit Listener(bool reuse_port, bool v6 = false) {
    fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
    const int yes = 1;
    if (reuse_port) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &yes, sizeof yes);
    sockaddr_storage a{};
    if (v6) {
      auto* a6 = reinterpret_cast<sockaddr_in6*>(&a);
      a6->sin6_family = AF_INET6;
      a6->sin6_addr = in6addr_loopback;
    } else {
      auto* a4 = reinterpret_cast<sockaddr_in*>(&a);
      a4->sin_family = AF_INET;
      a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    }
    socklen_t len = v6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), len) == 0 && listen(fd, 1) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&a)->sin6_port
                      : reinterpret_cast<sockaddr_in*>(&a)->sin_port);
  }
  ~Listener() { close(fd); }
};

// gpufabric(args) for a command that serves for ever when it should fail: stopped after 10 s
// (exit 124 from `timeout`).
CmdResult gpufabric_at_most_10s(const std::string& args) {
  const fs::path err = temp_dir("err");
  const std::string cmd = std::string("cd ") + GPUFABRIC_SOURCE_DIR + " && timeout 10 " +
                          GPUFABRIC_BIN + " " + args + " 2>" + err.string() + " >/dev/null";
  const int status = std::system(cmd.c_str());
  CmdResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err);
  r.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  fs::remove(err);
  return r;
}

TEST(CliExporter, PortInUseIsOnlyAnErrorAndExitTwo) {
  for (const bool reuse_port : {false, true}) {
    Listener taken(reuse_port);
    ASSERT_GT(taken.port, 0);
    const std::string at = "127.0.0.1:" + std::to_string(taken.port);
    CmdResult r = gpufabric_at_most_10s("exporter --sysfs tests/data/sysfs-mlx5 --listen " + at);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err.find("serving"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("error: --listen: cannot listen on " + at + ": Address already in use"),
              std::string::npos)
        << r.err;
  }
  // An IPv6 address in brackets, as URLs write it, binds ::1: the port taken there is named.
  Listener taken6(false, true);
  if (taken6.port > 0) {  // a host without IPv6 skips this
    const std::string at = "[::1]:" + std::to_string(taken6.port);
    CmdResult r = gpufabric_at_most_10s("exporter --sysfs tests/data/sysfs-mlx5 --listen " + at);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("cannot listen on " + at + ": Address already in use"), std::string::npos)
        << r.err;
  }
  for (const std::string bad : {"127.0.0.1:98x", "[::1:9850", "::1]:9850", "[]:9850", ":9850"}) {
    CmdResult r = gpufabric_at_most_10s("exporter --listen '" + bad + "'");
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_NE(r.err.find("--listen: cannot read '" + bad + "' (use ADDR:PORT"), std::string::npos)
        << r.err;
  }
}

TEST(CliExporter, BadInputIsOneClearErrorAndExitTwoBeforeServing) {
  const std::string sys = " --sysfs tests/data/sysfs-mlx5";
  const fs::path junk = write_temp("baseline.json", "{\"rows\": [");
  const std::vector<std::pair<std::string, std::string>> cases{
      {" --sysfs /nonexistent", "/nonexistent: error: --sysfs: no such folder"},
      {" --sysfs README.md", "README.md: error: --sysfs: is not a folder"},
      {sys + " --ethtool-dir /nonexistent", "error: --ethtool-dir: no such folder"},
      {sys + " --baseline /nonexistent", "/nonexistent: error: --baseline: cannot read the file"},
      {sys + " --baseline " + junk.string(), "error: --baseline: not valid JSON"},
      {sys + " --baseline /dev/zero", "error: --baseline: file goes on past the limit"},
      {sys + " --plan examples/seed-70b-1024.yaml --node node999",
       "error: --node: 'node999' is not a node of the plan (node001 to node128)"},
      {sys + " --plan examples/seed-70b-1024.yaml --node node0001", "did you mean 'node001'?"},
      {sys + " --node node001", "--node requires --plan"}};
  for (const auto& [args, message] : cases) {
    CmdResult r = gpufabric_at_most_10s("exporter --once" + args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;  // no raw JSON error
  }
  fs::remove(junk);
  // Checked before serving: the error alone, never "serving".
  Listener free_port(false);
  const std::string at = " --listen 127.0.0.1:" + std::to_string(free_port.port);
  close(free_port.fd);
  free_port.fd = -1;
  CmdResult r = gpufabric_at_most_10s("exporter --sysfs /nonexistent" + at);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "/nonexistent: error: --sysfs: no such folder (give /sys or the root of a "
            "recorded copy of it)\n");
}

}  // namespace

TEST(CliSimulate, LinksCsvSumsToTheRingsBytesTimesItsHops) {
  const fs::path dir = temp_dir("links");
  fs::create_directories(dir);
  const fs::path csv = dir / "links.csv";
  CmdResult r = gpufabric("simulate examples/seed-70b-1024.yaml --algo ring -b 1G -e 1G --links " +
                          csv.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("# Traffic per link: all_reduce of 1073741824 bytes, ring"),
            std::string::npos)
      << r.out;
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header,
            "rank,from_device,from_port,to_device,to_port,tier,direction,capacity_gbps,bytes,"
            "utilization_mean,utilization_peak,flows");
  // Every ring channel leaves each of the 128 nodes once through a NIC: the NIC uplinks carry
  // 128 x 2(N-1)/N x the size between them.
  double nic_up = 0, last_util = 2;
  long long rows = 0;
  bool sorted = true;
  std::set<std::string> devices;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    ASSERT_EQ(f.size(), 12u) << line;
    ++rows;
    EXPECT_EQ(std::stoll(f[0]), rows);
    const double util = std::stod(f[9]);
    sorted = sorted && util <= last_util + 1e-12;
    last_util = util;
    if (f[5] == "nic_leaf" && f[6] == "up") nic_up += std::stod(f[8]);
    if (f[5] == "leaf_spine") devices.insert(f[1]);
  }
  EXPECT_TRUE(sorted);
  const double n = 1024;
  EXPECT_NEAR(nic_up, 1073741824.0 * 2 * (n - 1) / n * 128, 1e-6 * nic_up);
  // The ends are cabling.csv's devices.
  const fs::path plan_dir = dir / "plan";
  ASSERT_EQ(gpufabric("plan examples/seed-70b-1024.yaml -o " + plan_dir.string()).code, 0);
  std::ifstream cab(plan_dir / "cabling.csv");
  std::stringstream all;
  all << cab.rdbuf();
  for (const auto& d : devices) EXPECT_NE(all.str().find("," + d + ","), std::string::npos) << d;
  // JSON carries the per-tier summary.
  CmdResult j =
      gpufabric("simulate examples/seed-70b-1024.yaml -b 1G -e 1G --json --links " + csv.string());
  ASSERT_EQ(j.code, 0) << j.err;
  auto js = nlohmann::json::parse(j.out);
  ASSERT_TRUE(js.contains("links"));
  EXPECT_FALSE(js["links"]["tiers"].empty());
  EXPECT_EQ(js["links"]["hottest"].size(), 10u);
  fs::remove_all(dir);
  // "-" is not standard output here (that holds the table): refused, and no file named "-".
  CmdResult dash = gpufabric("simulate examples/seed-70b-1024.yaml -b 1G -e 1G --links -");
  EXPECT_EQ(dash.code, 2);
  EXPECT_TRUE(dash.out.empty()) << dash.out;
  EXPECT_NE(dash.err.find("--links"), std::string::npos) << dash.err;
  EXPECT_NE(dash.err.find("not standard output"), std::string::npos) << dash.err;
  EXPECT_FALSE(fs::exists(fs::path(GPUFABRIC_SOURCE_DIR) / "-"));
}

TEST(CliWhatIf, DegradeAndSlowShowTheJobSlowedToItsSlowestMember) {
  CmdResult r = gpufabric(
      "what-if examples/seed-70b-1024.yaml --degrade link:node003:su01-r0-leaf=200G "
      "--slow node:node005=0.8 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const double base = j["baseline"]["step"]["step_time_s"],
               scen = j["scenario"]["step"]["step_time_s"];
  EXPECT_GT(scen, base);
  EXPECT_NEAR(j["scenario"]["step"]["compute_s"].get<double>(),
              j["baseline"]["step"]["compute_s"].get<double>() / 0.8, 1e-6);
  EXPECT_EQ(j["scenario"]["step"]["straggler"]["speed"], 0.8);
  // JSON indices count from 0, as step's memory.stages[].stage and node_index (text from 1).
  EXPECT_EQ(j["scenario"]["step"]["straggler"]["node_index"], 4);
  EXPECT_EQ(j["scenario"]["step"]["straggler"]["stage_index"], 0);
  bool named = false;
  for (const auto& c : j["changes"])
    named =
        named || c.get<std::string>().find("trained at 200G instead of 400G") != std::string::npos;
  EXPECT_TRUE(named) << j["changes"].dump();
  CmdResult bad = gpufabric("what-if examples/seed-70b-1024.yaml --slow node:nod005=0.8");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("did you mean 'node005'"), std::string::npos) << bad.err;
}
namespace {

TEST(CliNetworks, PlanStepAndConfigsShowTheOtherNetworks) {
  const std::string ex = std::string(GPUFABRIC_SOURCE_DIR) + "/examples/networks-dgx-256.yaml";
  CmdResult text = gpufabric("plan " + ex);
  ASSERT_EQ(text.code, 0) << text.err;
  for (const char* s : {"networks (isolation: physical", "compute", "storage", "inband", "oob",
                        "cluster+nets", "checkpoint     980 GB (14 B/param)"})
    EXPECT_NE(text.out.find(s), std::string::npos) << s << "\n" << text.out;
  CmdResult js = gpufabric("plan " + ex + " --json");
  ASSERT_EQ(js.code, 0);
  const auto j = nlohmann::json::parse(js.out);
  ASSERT_EQ(j["networks"]["nets"].size(), 3u);
  EXPECT_EQ(j["networks"]["isolation"], "physical");
  double sum = 0;
  for (const auto& n : j["networks"]["nets"]) sum += n["capex_usd"].get<double>();
  EXPECT_NEAR(j["networks"]["capex_usd"].get<double>(), sum, 0.05);
  EXPECT_NEAR(j["networks"]["cluster_capex_usd"].get<double>(),
              j["bom"]["capex_usd"].get<double>() + sum, 0.1);
  EXPECT_DOUBLE_EQ(j["checkpoint"]["bytes"].get<double>(), 70e9 * 14);
  EXPECT_FALSE(j["checkpoint"]["converged"].get<bool>());
  // A compute-only spec's plan.json has no networks key and no checkpoint.
  CmdResult plain = gpufabric("plan examples/seed-70b-1024.yaml --json");
  const auto k = nlohmann::json::parse(plain.out);
  EXPECT_FALSE(k.contains("networks"));
  EXPECT_FALSE(k.contains("checkpoint"));

  CmdResult step = gpufabric("step " + ex + " --json --no-sensitivity");
  ASSERT_EQ(step.code == 0 || step.code == 1, true) << step.err;
  const auto s = nlohmann::json::parse(step.out);
  EXPECT_GT(s["checkpoint"]["write_s"].get<double>(), 0);

  // cabling.csv: every network's links, the network column last.
  const fs::path dir = temp_dir("networks");
  ASSERT_EQ(gpufabric("plan " + ex + " -o " + dir.string()).code, 0);
  std::ifstream cab(dir / "cabling.csv");
  std::string header;
  std::getline(cab, header);
  EXPECT_EQ(header.substr(header.rfind(',') + 1), "network");
  std::map<std::string, long long> per;
  for (std::string l; std::getline(cab, l);) ++per[l.substr(l.rfind(',') + 1)];
  EXPECT_EQ(per["compute"], j["links"]["total"].get<long long>());
  for (const auto& n : j["networks"]["nets"])
    EXPECT_EQ(per[n["network"].get<std::string>()], n["host_links"].get<long long>() +
                                                        n["leaf_spine_links"].get<long long>() +
                                                        n["isl_links"].get<long long>());
  fs::remove_all(dir);
}

TEST(CliNetworks, BadNetworksKeyIsExitTwoWithFileLineKey) {
  const fs::path spec = write_temp("badnet.yaml",
                                   "cluster: {gpu: h100-sxm, nodes: 4, nic: cx7-400g}\n"
                                   "networks:\n  isolation: vlan\n  oob:\n    pdu_per_rack: 2\n");
  CmdResult r = gpufabric("plan " + spec.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find(spec.string() +
                       ":5:5: error: networks.oob.pdu_per_rack: unknown key (did you mean "
                       "'pdus_per_rack'?)"),
            std::string::npos)
      << r.err;
  fs::remove(spec);
}

}  // namespace

namespace {

// Two jobs of 4 servers spread over the units of a 4:1 fabric with one spine, so that they meet.
std::string two_jobs_spec() {
  std::string s =
      "name: two-jobs\ncluster: {gpu: h100-sxm, nodes: 16, gpus_per_node: 8, nic: cx7-400g}\n"
      "fabric: {technology: roce, topology: clos2, scalable_unit: 4, switch: arista-7060x6, "
      "oversubscription: 4, load_balancing: ecmp}\njobs:\n";
  for (const char* name : {"a", "b"})
    s += std::string("  - name: ") + name +
         "\n    nodes: 4\n    placement: spread\n    workload:\n"
         "      model: {params: 8B, layers: 32, hidden: 4096, heads: 32, seq_len: 4096}\n"
         "      parallelism: {tp: 8}\n      global_batch: 32\n";
  return s;
}

TEST(CliJobs, TextJsonFilesAndTheContract) {
  const fs::path spec = write_temp("jobs.yaml", two_jobs_spec());
  CmdResult text = gpufabric("jobs " + spec.string());
  ASSERT_EQ(text.code, 0) << text.err;
  for (const char* s : {"slowdown", "where the jobs meet", "placement and load balancing compared",
                        "advice: packed placement"})
    EXPECT_NE(text.out.find(s), std::string::npos) << s << "\n" << text.out;
  const fs::path dir = temp_dir("jobs");
  const fs::path csv = fs::temp_directory_path() / ("gf_jobs_links_" + std::to_string(getpid()));
  CmdResult r = gpufabric("jobs " + spec.string() + " --json --no-compare -o " + dir.string() +
                          " --links " + csv.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* k :
       {"name", "load_balancing", "placement", "together_s", "worst_slowdown", "worst_job",
        "mean_slowdown", "changes", "jobs", "meetings", "compared", "best", "advice", "links_file"})
    EXPECT_TRUE(j.contains(k)) << k;
  ASSERT_EQ(j["jobs"].size(), 2u);
  for (const char* k :
       {"name", "placement", "gpus", "nodes", "units", "step_alone_s", "step_together_s",
        "slowdown", "meets", "meeting_links", "hottest_meeting_link", "comms"})
    EXPECT_TRUE(j["jobs"][0].contains(k)) << k;
  EXPECT_GT(j["jobs"][0]["slowdown"].get<double>(), 1.05);
  EXPECT_EQ(j["jobs"][0]["nodes"][0], "node001");
  EXPECT_EQ(j["compared"].size(), 1u);  // --no-compare
  EXPECT_GT(j["meetings"]["links"].get<int>(), 0);
  EXPECT_EQ(j["meetings"]["hottest"][0]["jobs"], nlohmann::json::array({"a", "b"}));
  for (const char* f : {"jobs.json", "jobs.txt", "jobs-links.csv"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  std::ifstream in(csv);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header.substr(0, 5), "rank,");
  EXPECT_EQ(header.substr(header.size() - 5), ",jobs");
  long long rows = 0, shared = 0;
  while (std::getline(in, line)) {
    ++rows;
    shared += line.size() > 4 && line.substr(line.size() - 4) == ",a;b";
  }
  EXPECT_GT(rows, shared);
  EXPECT_EQ(shared, j["meetings"]["links"].get<long long>());
  // --placement packed: the jobs keep to their own units and do not meet.
  CmdResult packed = gpufabric("jobs " + spec.string() + " --placement packed --no-compare --json");
  ASSERT_EQ(packed.code, 0) << packed.err;
  EXPECT_EQ(nlohmann::json::parse(packed.out)["worst_slowdown"], 1.0);
  // --fail as what-if.
  CmdResult failed =
      gpufabric("jobs " + spec.string() + " --fail node:node001 --no-compare --json");
  ASSERT_EQ(failed.code, 0) << failed.err;
  EXPECT_EQ(nlohmann::json::parse(failed.out)["changes"].size(), 1u);
  EXPECT_NE(nlohmann::json::parse(failed.out)["jobs"][0]["nodes"][0], "node001");
  fs::remove_all(dir);
  fs::remove(csv);
  // Bad input: exit 2, nothing on stdout, no folder.
  for (const char* bad : {"--placement packd", "--fail switch:nope", "--fail cable:x"}) {
    CmdResult e = gpufabric("jobs " + spec.string() + " -o " + dir.string() + " " + bad);
    EXPECT_EQ(e.code, 2) << bad;
    EXPECT_TRUE(e.out.empty()) << bad;
    EXPECT_FALSE(fs::exists(dir)) << bad;
  }
  CmdResult none = gpufabric("jobs examples/seed-70b-1024.yaml");
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("jobs: the spec has no jobs section"), std::string::npos) << none.err;
  CmdResult help = gpufabric("jobs --help");
  for (const char* f : {"SPEC", "--placement", "--fail", "--links", "--out", "--no-compare",
                        "--json", "packed | spread | random", "trace:"})
    EXPECT_NE(help.out.find(f), std::string::npos) << f;
  fs::remove(spec);
}

// A job whose layout does not fit in its GPUs' memory is a finding, as in `step` (jobs had run
// it without a word): a 70B model on tp 1 with ZeRO 0.
TEST(CliJobs, AJobThatDoesNotFitInMemoryFails) {
  std::string spec = two_jobs_spec();
  const std::string small =
      "model: {params: 8B, layers: 32, hidden: 4096, heads: 32, seq_len: "
      "4096}\n      parallelism: {tp: 8}";
  spec.replace(spec.find(small), small.size(),
               "model: {params: 70B, layers: 80, hidden: 8192, heads: 64, seq_len: 4096}\n"
               "      parallelism: {tp: 1}");
  const fs::path file = write_temp("jobs-oom.yaml", spec);
  CmdResult text = gpufabric("jobs " + file.string() + " --no-compare");
  EXPECT_EQ(text.code, 1) << text.err;
  EXPECT_NE(text.out.find("FAIL memory: a does not fit in memory: pipeline stage "),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("FAIL memory: b"), std::string::npos) << text.out;
  CmdResult js = gpufabric("jobs " + file.string() + " --no-compare --json");
  EXPECT_EQ(js.code, 1);
  const auto j = nlohmann::json::parse(js.out);
  EXPECT_FALSE(j["jobs"][0]["memory"]["fits"].get<bool>());
  EXPECT_TRUE(j["jobs"][1]["memory"]["fits"].get<bool>());
  EXPECT_GT(j["jobs"][0]["memory"]["total_bytes"].get<double>(),
            j["jobs"][0]["memory"]["hbm_bytes"].get<double>());
}

TEST(CliJobs, TheExampleRunsItsEightJobs) {
  CmdResult r = gpufabric("jobs examples/jobs-roce-16k.yaml --no-compare --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["jobs"].size(), 8u);
  for (const auto& job : j["jobs"]) {
    EXPECT_EQ(job["gpus"], 2048);
    EXPECT_GE(job["slowdown"].get<double>(), 1.0);
  }
}

TEST(CliJobs, ATraceJobAloneIsTheReplayOfItsTrace) {
  // The replay fixtures' two-node fabric with the traced 16-rank job as its one job: the job's
  // step alone is `replay`'s prediction, to the last digit.
  std::ifstream in(std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/replay/two-nodes.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string trace =
      std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/replay/kineto-torch2.5-tp8-dp2-rank0.json";
  const fs::path spec = write_temp("trace-job.yaml", ss.str() +
                                                         "jobs:\n  - name: rec\n    nodes: 2\n"
                                                         "    trace: " +
                                                         trace + "\n    step: ProfilerStep#1\n");
  CmdResult j = gpufabric("jobs " + spec.string() + " --json --no-compare");
  ASSERT_EQ(j.code, 0) << j.err;
  CmdResult r = gpufabric("replay " + trace +
                          " --spec tests/data/replay/two-nodes.yaml --step ProfilerStep#1 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto jobs = nlohmann::json::parse(j.out);
  const auto rep = nlohmann::json::parse(r.out);
  const auto& job = jobs["jobs"][0];
  EXPECT_EQ(job["source"], "trace");
  EXPECT_EQ(job["trace"]["step"], "ProfilerStep#1");
  EXPECT_EQ(job["trace"]["world"], 16);
  EXPECT_EQ(job["trace"]["files"][0], trace);
  EXPECT_EQ(job["step_alone_s"].get<double>(), rep["predicted"]["step_time_s"].get<double>());
  EXPECT_EQ(job["trace"]["recorded_step_s"].get<double>(),
            rep["recorded"]["step_time_s"].get<double>());
  EXPECT_EQ(job["slowdown"], 1.0);
  EXPECT_EQ(job["comms"].size(), 3u);  // TP all-gather and reduce-scatter, the DP all-reduce
  CmdResult text = gpufabric("jobs " + spec.string() + " --no-compare");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("rec replays " + trace + " (ProfilerStep#1, 1 of 16 ranks traced)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("\n# 1 job, as placed;"), std::string::npos) << text.out;
  fs::remove(spec);
  // A trace that is not one: its own file named, and the spec's line of the job that names it.
  const fs::path junk = write_temp("junk-trace.log", "hello\nworld\n");
  const fs::path bad_spec =
      write_temp("bad-trace-job.yaml", ss.str() +
                                           "jobs:\n  - name: rec\n    nodes: 2\n"
                                           "    trace: " +
                                           junk.string() + "\n");
  CmdResult bad = gpufabric("jobs " + bad_spec.string() + " --no-compare");
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(bad.out.empty()) << bad.out;
  EXPECT_NE(bad.err.find(junk.string() + ": error: not a PyTorch profiler trace"),
            std::string::npos)
      << bad.err;
  const std::string fabric = ss.str();
  const int line = static_cast<int>(std::count(fabric.begin(), fabric.end(), '\n')) + 4;
  EXPECT_NE(bad.err.find(fmt::format("job 'rec' names this trace at {}:{}, jobs[0].trace",
                                     bad_spec.string(), line)),
            std::string::npos)
      << bad.err;
  fs::remove(junk);
  fs::remove(bad_spec);
}

// The examples' sample traces are the replay tests' fixtures, byte for byte: installed
// examples must not name tests/ (not installed), and the copies must not drift.
TEST(CliJobs, TheExampleTracesAreTheFixtures) {
  auto text = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  for (const char* f : {"kineto-torch2.5-tp8-dp2-rank0.json", "nccl-2.29.7-coll.log",
                        "two-nodes.yaml", "four-by-four.yaml"}) {
    const std::string copy = text(fs::path("examples/traces") / f);
    EXPECT_FALSE(copy.empty()) << f;
    EXPECT_EQ(copy, text(fs::path("tests/data/replay") / f)) << f;
  }
  // (A comment may tell how a file was made from the source tree; a value may not need it.)
  for (const auto& e : fs::directory_iterator("examples")) {
    if (e.path().extension() != ".yaml") continue;
    std::istringstream lines(text(e.path()));
    for (std::string line; std::getline(lines, line);) {
      if (line.find('#') == 0) continue;
      EXPECT_EQ(line.substr(0, line.find(" #")).find("tests/"), std::string::npos)
          << e.path() << ": " << line;
    }
  }
}

TEST(CliJobs, TheTraceExampleMeetsItsWorkloadJob) {
  // examples/jobs-trace.yaml names its traces relative to its folder (run from the source root).
  // Every job spread: the run as asked is the spread ecmp row, which is not run again; says so.
  CmdResult text = gpufabric("jobs examples/jobs-trace.yaml");
  EXPECT_NE(text.out.find("(as asked: every job spread; this is the spread ecmp row)"),
            std::string::npos)
      << text.out;
  CmdResult r = gpufabric("jobs examples/jobs-trace.yaml --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["jobs"].size(), 3u);
  EXPECT_EQ(j["jobs"][0]["source"], "trace");
  EXPECT_EQ(j["jobs"][1]["source"], "trace");
  EXPECT_EQ(j["jobs"][2]["source"], "workload");
  EXPECT_FALSE(j["jobs"][2].contains("trace"));
  // Spread across units at 2:1 with per-flow ECMP, each meets the others and is slowed. Other
  // jobs only take capacity: no communication is faster together, and one on NVLink alone
  // (nccl-logged's tensor-parallel calls, 0.69 once) is as alone.
  for (const auto& job : j["jobs"]) {
    EXPECT_GT(job["slowdown"].get<double>(), 1.0) << job["name"];
    EXPECT_EQ(job["meets"].size(), 2u) << job["name"];
    for (const auto& c : job["comms"]) {
      EXPECT_GE(c["factor"].get<double>(), 1.0) << job["name"] << " " << c["kind"];
      if (!c["network"].get<bool>()) {
        EXPECT_EQ(c["factor"].get<double>(), 1.0) << c["kind"];
      }
    }
  }
  EXPECT_EQ(j["jobs"][1]["trace"]["recorded_step_s"], nullptr);  // an NCCL log: no durations
  EXPECT_LT(j["compared"][j["best"].get<int>()]["worst_slowdown"].get<double>(),
            j["worst_slowdown"].get<double>());
  // The sweep reads the trace jobs too.
  const fs::path dir = temp_dir("jobs_trace_sweep");
  CmdResult sw = gpufabric("sweep examples/jobs-trace.yaml --vary placement=packed,spread -q -o " +
                           dir.string());
  ASSERT_EQ(sw.code, 0) << sw.err;
  std::ifstream in(dir / "sweep.csv");
  std::stringstream csv;
  csv << in.rdbuf();
  EXPECT_NE(csv.str().find("jobs_worst_slowdown"), std::string::npos) << csv.str();
  // A spec of jobs alone has no step of its own: those cells are empty, the jobs' are not.
  std::ifstream json_in(dir / "sweep.json");
  const auto sj = nlohmann::json::parse(json_in);
  EXPECT_FALSE(sj["designs"][0].contains("constraints_met")) << sj["designs"][0];
  EXPECT_TRUE(sj["designs"][0].contains("within_budget")) << sj["designs"][0];
  const gf::CsvTable table(csv.str());
  ASSERT_EQ(table.rows(), 2u) << csv.str();
  for (size_t row : {0u, 1u}) {
    EXPECT_EQ(table.at(row, "step_time_s"), "") << csv.str();
    EXPECT_EQ(table.at(row, "gpu_utilization"), "") << csv.str();
    EXPECT_EQ(table.at(row, "constraints_met"), "") << csv.str();  // a step's constraints
    EXPECT_NE(table.at(row, "within_budget"), "") << csv.str();
    EXPECT_NE(table.at(row, "jobs_worst_slowdown"), "") << csv.str();
    EXPECT_NE(table.at(row, "busbw_gbs"), "") << csv.str();
  }
  fs::remove_all(dir);
}

}  // namespace

namespace {

const char* const kReplaySpec = "--spec tests/data/replay/two-nodes.yaml";

TEST(CliReplay, OversubscriptionRowsBesideThisFabric) {
  // Four nodes of four GPUs in two units of two: the fixture's DP pairs cross the spine, and at
  // 2:1 each leaf has one uplink for its two nodes.
  const std::string spec = "tests/data/replay/four-by-four.yaml";
  CmdResult r = gpufabric("replay tests/data/replay/kineto-torch2.5-tp8-dp2-rank0.json --spec " +
                          spec + " --oversubscription 2 --oversubscription 4:1 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["alternatives"].size(), 2u);
  const auto& two = j["alternatives"][0];
  for (const char* k : {"label", "kind", "asked", "built", "fabric", "vs_planned", "predicted",
                        "breakdown", "groups"})
    EXPECT_TRUE(two.contains(k)) << k;
  EXPECT_EQ(two["label"], "2:1 oversubscription");
  EXPECT_EQ(two["built"], 2.0);
  EXPECT_GT(two["predicted"]["step_time_s"].get<double>(),
            j["predicted"]["step_time_s"].get<double>());
  EXPECT_GT(two["vs_planned"].get<double>(), 0.05);
  // Two nodes a leaf cannot be 4:1: the fabric as built says so.
  EXPECT_EQ(j["alternatives"][1]["asked"], 4.0);
  EXPECT_EQ(j["alternatives"][1]["built"], 2.0);
  CmdResult text = gpufabric("replay tests/data/replay/kineto-torch2.5-tp8-dp2-rank0.json --spec " +
                             spec + " --oversubscription 2");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("On the spec's alternatives"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("2:1 oversubscription"), std::string::npos) << text.out;
  // Without the flag the output is as before: no alternatives.
  CmdResult plain = gpufabric("replay tests/data/replay/kineto-one-allreduce.json " +
                              std::string(kReplaySpec) + " --json");
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_FALSE(nlohmann::json::parse(plain.out).contains("alternatives"));
  CmdResult help = gpufabric("replay --help");
  EXPECT_NE(help.out.find("--oversubscription"), std::string::npos);
  CmdResult bad = gpufabric("replay tests/data/replay/kineto-one-allreduce.json " +
                            std::string(kReplaySpec) + " --oversubscription 100");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--oversubscription"), std::string::npos) << bad.err;
}

TEST(CliReplay, PredictsTheStepBesideTheRecordedOne) {
  CmdResult r =
      gpufabric(std::string("replay tests/data/replay/kineto-torch2.5-tp8-dp2-rank0.json ") +
                kReplaySpec + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"world", "step", "recorded", "predicted", "difference", "groups",
                        "breakdown", "traces", "spec", "fabric", "notes"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["world"], 16);
  EXPECT_EQ(j["step"], "ProfilerStep#2");
  EXPECT_GT(j["predicted"]["step_time_s"].get<double>(), 0);
  EXPECT_NEAR(j["recorded"]["step_time_s"].get<double>(), 0.032804, 1e-6);
  EXPECT_NEAR(j["predicted"]["compute_s"].get<double>(), j["recorded"]["compute_s"].get<double>(),
              1e-12);  // compute kept as recorded
  EXPECT_EQ(j["breakdown"].size(), 3u);
  EXPECT_FALSE(j.contains("scenario"));
  // The text names the groups as the trace does, whole (it had cut "TENSOR_MODEL_PARALLEL_GROUP"
  // to 22 characters), the columns lined up after the longest.
  CmdResult named = gpufabric(
      std::string("replay tests/data/replay/kineto-torch2.5-tp8-dp2-rank0.json ") + kReplaySpec);
  ASSERT_EQ(named.code, 0) << named.err;
  EXPECT_NE(named.out.find(" TENSOR_MODEL_PARALLEL_GROUP     8      1     tp"), std::string::npos)
      << named.out;
  EXPECT_NE(named.out.find(" DATA_PARALLEL_GROUP             2      8     dp"), std::string::npos)
      << named.out;

  CmdResult text = gpufabric(
      std::string("replay tests/data/replay/kineto-torch2.1-tp8-dp2-rank0.json ") + kReplaySpec);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("this fabric vs recorded:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("inferred from sizes and calls"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("not used"), std::string::npos) << text.out;

  // The torch 2.5 trace names its groups' ranks: a layout beside it is not used, and says so,
  // with the group it contradicts.
  for (const std::string& layout : {std::string("--tp 8 --dp 2"), std::string("--tp 4 --dp 4")}) {
    CmdResult given =
        gpufabric(std::string("replay tests/data/replay/kineto-torch2.5-tp8-dp2-rank0.json ") +
                  kReplaySpec + " " + layout);
    ASSERT_EQ(given.code, 0) << given.err;
    EXPECT_NE(given.out.find("note: --tp/--pp/--dp not used: the traces name every group's ranks"),
              std::string::npos)
        << given.out;
    EXPECT_EQ(given.out.find("of 8 ranks is none of tp=4") != std::string::npos,
              layout == "--tp 4 --dp 4")
        << given.out;
  }
  // A layout whose product passes 64 bits is refused with it, not wrapped around to 0.
  CmdResult huge =
      gpufabric(std::string("replay tests/data/replay/kineto-torch2.5-tp8-dp2-rank0.json ") +
                kReplaySpec + " --tp 16777216 --pp 16777216 --dp 16777216");
  EXPECT_EQ(huge.code, 2);
  EXPECT_NE(huge.err.find("tp x pp x dp = 4.722e+21"), std::string::npos) << huge.err;
}

TEST(CliReplay, ScenarioLinksAndOutputFolder) {
  const fs::path dir = temp_dir("replay");
  const fs::path links =
      fs::temp_directory_path() / ("gf_replay_links_" + std::to_string(getpid()) + ".csv");
  CmdResult r =
      gpufabric(std::string("replay tests/data/replay/kineto-one-allreduce.json ") + kReplaySpec +
                " --nic 800G --links " + links.string() + " -o " + dir.string() + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("scenario"));
  EXPECT_LT(j["scenario"]["predicted"]["step_time_s"].get<double>(),
            j["predicted"]["step_time_s"].get<double>());
  EXPECT_FALSE(j["scenario"]["changes"].empty());
  EXPECT_TRUE(j.contains("links"));
  EXPECT_TRUE(fs::exists(dir / "replay.json"));
  EXPECT_TRUE(fs::exists(dir / "replay.txt"));
  std::ifstream csv(links);
  std::string header;
  std::getline(csv, header);
  EXPECT_NE(header.find("bytes"), std::string::npos) << header;
  fs::remove_all(dir);
  fs::remove(links);

  // node002's failure cuts the world group apart: the replay on this fabric is shown, and the
  // scenario said to stop the traced job (a finding, as what-if shows one, not bad input).
  CmdResult logs = gpufabric(std::string("replay tests/data/replay/nccl-2.29.7-coll.log ") +
                             kReplaySpec + " --fail node:node002");
  EXPECT_EQ(logs.code, 0) << logs.err;
  EXPECT_NE(logs.out.find("  step time    "), std::string::npos) << logs.out;
  EXPECT_NE(logs.out.find("cannot run\n"), std::string::npos) << logs.out;
  EXPECT_NE(logs.out.find("the scenario cannot run the traced job: "), std::string::npos)
      << logs.out;
  EXPECT_NE(logs.out.find("failed links cut a group apart; what-if prices restarting the job "
                          "without what failed"),
            std::string::npos)
      << logs.out;
  CmdResult lj = gpufabric(std::string("replay tests/data/replay/nccl-2.29.7-coll.log ") +
                           kReplaySpec + " --fail node:node002 --json");
  ASSERT_EQ(lj.code, 0) << lj.err;
  const auto ljs = nlohmann::json::parse(lj.out);
  EXPECT_NE(ljs["scenario"]["cannot_run"].get<std::string>().find("cut a group apart"),
            std::string::npos);
  EXPECT_FALSE(ljs["scenario"]["changes"].empty());
  EXPECT_TRUE(ljs.contains("predicted"));
  // --links then writes this fabric's traffic on this fabric's links: its 400G NICs, not the
  // scenario's 200G ones (which had put the links at 176 % of their capacity).
  const fs::path cut_links = temp_dir("replay_cut_links.csv");
  CmdResult cl =
      gpufabric(std::string("replay tests/data/replay/nccl-2.29.7-coll.log ") + kReplaySpec +
                " --fail node:node002 --nic 200G --links " + cut_links.string());
  ASSERT_EQ(cl.code, 0) << cl.err;
  EXPECT_NE(cl.out.find("(this fabric's traffic: the scenario cannot run the traced job)"),
            std::string::npos)
      << cl.out;
  const std::string csv_text = read_text(cut_links);
  EXPECT_NE(csv_text.find(",nic_leaf,up,400,"), std::string::npos) << csv_text.substr(0, 400);
  EXPECT_EQ(csv_text.find(",nic_leaf,up,200,"), std::string::npos) << csv_text.substr(0, 400);
  fs::remove(cut_links);
  // Two runs' logs of the same ranks are not one run's ranks.
  CmdResult two_runs = gpufabric(std::string("replay tests/data/replay/nccl-2.18.6-coll.log "
                                             "tests/data/replay/nccl-2.29.7-coll.log ") +
                                 kReplaySpec);
  EXPECT_EQ(two_runs.code, 2);
  EXPECT_NE(two_runs.err.find("rank 0 is traced in tests/data/replay/nccl-2.18.6-coll.log too"),
            std::string::npos)
      << two_runs.err;
}

TEST(CliReplay, BadTracesExitTwoNamingFileAndLineAndWriteNothing) {
  const std::string good = [] {
    std::ifstream f(std::string(GPUFABRIC_SOURCE_DIR) +
                    "/tests/data/replay/kineto-torch2.5-tp8-dp2-rank0.json");
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }();
  const fs::path cut = write_temp("cut.json", good.substr(0, good.size() / 3));
  const fs::path dir = temp_dir("replay_bad");
  CmdResult r = gpufabric("replay " + cut.string() + " " + kReplaySpec + " -o " + dir.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(cut.string() + ":"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir));
  const fs::path junk = write_temp("junk.txt", "hello\nworld\n");
  CmdResult g = gpufabric("replay " + junk.string() + " " + kReplaySpec);
  EXPECT_EQ(g.code, 2);
  EXPECT_NE(g.err.find("NCCL"), std::string::npos) << g.err;
  CmdResult step = gpufabric(std::string("replay tests/data/replay/kineto-one-allreduce.json ") +
                             kReplaySpec + " --step ProfilerStep#9");
  EXPECT_EQ(step.code, 2);
  EXPECT_NE(step.err.find("--step"), std::string::npos) << step.err;
  CmdResult nospec = gpufabric("replay tests/data/replay/kineto-one-allreduce.json");
  EXPECT_EQ(nospec.code, 2);
  fs::remove(cut);
  fs::remove(junk);
}

}  // namespace
