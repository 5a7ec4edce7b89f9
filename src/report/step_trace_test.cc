#include "report/step_trace.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "plan/plan.h"
#include "topo/fabric.h"

namespace gf {
namespace {

StepResult step_of(const std::string& yaml) {
  auto cat = builtin_catalog();
  auto s = parse_spec(yaml, "t.yaml");
  EXPECT_TRUE(s.ok()) << format_diagnostics(s.errors());
  Spec spec = *s;
  auto errs = validate_spec(spec, *cat);
  EXPECT_TRUE(errs.empty()) << format_diagnostics(errs);
  auto plan = make_plan(spec, *cat);
  EXPECT_TRUE(plan.ok());
  const Fabric f = Fabric::build(*plan, *cat);
  auto r = simulate_step(spec, *plan, f);
  EXPECT_TRUE(r.ok()) << format_diagnostics(r.errors());
  return r.ok() ? *r : StepResult{};
}

const char* kPipelined =
    "cluster: {gpu: h100-sxm, nodes: 32, nic: cx7-400g}\n"
    "workload:\n  model: {params: 70B, layers: 80, hidden: 8192, heads: 64, seq_len: 4096, "
    "vocab: 128256}\n  parallelism: {tp: 8, pp: 4}\n  global_batch: 256\n";

// Checks the structure Perfetto's and chrome://tracing's JSON importers need, and returns the
// thread names by (pid, tid).
std::map<std::pair<int, int>, std::string> check_trace(const nlohmann::json& t) {
  std::map<std::pair<int, int>, std::string> threads;
  std::set<int> processes;
  EXPECT_TRUE(t.is_object());
  EXPECT_TRUE(t.at("traceEvents").is_array());
  for (const auto& e : t.at("traceEvents")) {
    const std::string ph = e.at("ph");
    EXPECT_TRUE(e.at("name").is_string());
    EXPECT_TRUE(e.at("pid").is_number_integer());
    if (ph == "M") {
      if (e["name"] == "thread_name")
        threads[{e["pid"].get<int>(), e.at("tid").get<int>()}] = e["args"]["name"];
      if (e["name"] == "process_name") processes.insert(e["pid"].get<int>());
    }
  }
  for (const auto& e : t.at("traceEvents")) {
    const std::string ph = e.at("ph");
    EXPECT_TRUE(ph == "X" || ph == "M") << e.dump();
    if (ph != "X") continue;
    EXPECT_TRUE(e.at("ts").is_number());
    EXPECT_TRUE(e.at("dur").is_number());
    EXPECT_GE(e["ts"].get<double>(), -1e-6) << e.dump();
    EXPECT_GE(e["dur"].get<double>(), 0) << e.dump();
    // Every span sits on a named thread of a named process.
    EXPECT_TRUE(threads.count({e["pid"].get<int>(), e.at("tid").get<int>()})) << e.dump();
    EXPECT_TRUE(processes.count(e["pid"].get<int>())) << e.dump();
  }
  // It survives a round trip through text, as the file is read.
  EXPECT_EQ(nlohmann::json::parse(t.dump()), t);
  return threads;
}

}  // namespace

TEST(StepTrace, OneTrackPerStreamAndStage) {
  const StepResult r = step_of(kPipelined);
  const nlohmann::json t = step_trace(r);
  const auto threads = check_trace(t);
  std::set<std::string> names;
  for (const auto& [k, v] : threads) names.insert(v);
  for (const char* n : {"compute", "pipeline bubble", "tp_reduce_scatter_all_gather", "pp_sendrecv",
                        "dp_allreduce"})
    EXPECT_TRUE(names.count(n)) << n;
  EXPECT_EQ(threads.size() % 4, 0u);  // the same tracks on each of the 4 stages
  EXPECT_TRUE(t["otherData"]["complete"].get<bool>());
  // Every microbatch's forward and backward on every stage: 4 x 2 x 32.
  int compute = 0, bubbles = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] != "X") continue;
    compute += e["cat"] == "forward" || e["cat"] == "backward";
    bubbles += e["cat"] == "bubble";
  }
  EXPECT_EQ(compute, 4 * 2 * 32);
  EXPECT_GT(bubbles, 0);
  // The schedule laid out event by event takes as long as the step model says (the model's
  // bubble is Megatron's (p - 1) t; the drawn fill and drain add the transfers), compute
  // stretched by the SMs overlapped communication takes (it had been drawn without them).
  EXPECT_GT(r.overlap_slowdown_s, 0);
  double critical_compute = 0;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "X" && (e["cat"] == "forward" || e["cat"] == "backward") &&
        e["pid"] == r.critical_stage + 1)
      critical_compute += e["dur"].get<double>() / 1e6;
  const StageTime& st = r.stages[r.critical_stage];
  EXPECT_NEAR(critical_compute,
              r.microbatches * (st.forward_s + st.backward_s) *
                  (1 + r.overlap_slowdown_s / r.compute_s),
              1e-6 * r.step_time_s);
  EXPECT_NEAR(t["otherData"]["timeline_s"].get<double>(), r.step_time_s, 0.02 * r.step_time_s);
}

TEST(StepTrace, InterleavedScheduleCompletes) {
  std::string yaml = kPipelined;
  yaml += "  virtual_pipeline: 5\n";
  const StepResult r = step_of(yaml);
  const nlohmann::json t = step_trace(r);
  check_trace(t);
  EXPECT_TRUE(t["otherData"]["complete"].get<bool>());
  EXPECT_NEAR(t["otherData"]["timeline_s"].get<double>(), r.step_time_s, 0.01 * r.step_time_s);
}

}  // namespace gf
