// The acceptance runbook of a planned fabric (guide §5): RDMA link tests that cross every cable
// of the compute fabric in the fewest parallel rounds, nccl-tests at growing scale with the
// simulator's expectation, a burn-in with error counters, and the reading back of a results
// folder into PASS/FAIL with the suspect cable of a failed link test.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/diag.h"
#include "common/output.h"
#include "plan/plan.h"
#include "sim/nccl_cost.h"
#include "spec/spec.h"
#include "verify/check.h"
#include "verify/parsers.h"

namespace gf {

/// One cable of the compute fabric, as cabling.csv lists it (appliance ports left out: they
/// carry no RDMA traffic between nodes).
struct AcceptanceCable {
  LinkKind kind = LinkKind::kNodeLeaf;
  std::string a_device, a_port, b_device, b_port;  ///< a is the lower tier
  std::string name() const;                        ///< "node001:nic0 - su01-r0-leaf:1"
};

/// One ib_write_bw / ib_write_lat pair: from a NIC of one node to a NIC of another.
struct LinkTest {
  std::string id;  ///< "T0001" (coverage pass) or "P2-T0001" (burn-in pass 2)
  int pass = 1, round = 1;
  std::string src_node, src_port, src_device, dst_node, dst_port, dst_device;
  int plane = 0;
  int tcp_port = 0;    ///< perftest's out-of-band port on the server
  int flow_label = 0;  ///< RoCE: pins the QPs' UDP source port (0: InfiniBand, not chosen)
  /// Directed cable crossings, in path order: cable index x 2 + (0 lower to upper, 1 down).
  std::vector<int> crossings;
  double latency_floor_us = 0;  ///< the path's switch latencies and propagation
  int switches = 0;             ///< switches the path crosses
};

/// One nccl-tests run of the acceptance: a scale and a binary, with the simulated busbw.
struct NcclStage {
  std::string name;  ///< "2-nodes", "1-unit", "cluster"
  int nodes = 0;
  Op op = Op::kAllReduce;
  std::string binary;                               ///< all_reduce_perf, ...
  std::vector<std::pair<double, double>> expected;  ///< (bytes, busbw GB/s) from the simulator
};

/// Options of the runbook.
struct AcceptanceOptions {
  int qps = 4;             ///< ib_write_bw -q: QPs per test (one flow label: one path)
  int duration_s = 10;     ///< ib_write_bw -D
  int burn_in_passes = 3;  ///< passes of link tests in the burn-in, each paired differently
  int burn_in_duration_s = 600;
  double tolerance =
      kDefaultBusbwTolerance;  ///< nccl-tests busbw below the simulation still accepted
};

/// The runbook: every test and expectation.
struct AcceptancePlan {
  std::vector<AcceptanceCable> cables;
  std::vector<LinkTest> tests;  ///< pass 1 (coverage) then the burn-in passes, by round
  int rounds = 0;               ///< of pass 1
  int lower_bound_rounds = 0;   ///< no schedule needs fewer (the busiest port's demand)
  std::string lower_bound_reason;
  long long uncovered = 0;  ///< directed cable crossings no test of pass 1 reaches
  /// Those crossings, "node001:nic0 -> su01-r0-leaf:1" (the cable's lower end first going up),
  /// in cable order, for the runbook to name.
  std::vector<std::string> uncovered_directions;
  double expected_gbps = 0, line_gbps = 0;
  bool roce = true;
  int gid_index = -1;                 ///< -x for RoCE v2; -1 on InfiniBand
  std::vector<std::string> nccl_env;  ///< NAME=value lines of the host configs' nccl.env
  std::vector<NcclStage> nccl;
  AcceptanceOptions options;
  std::vector<std::string> notes;  ///< limitations stated in the runbook
  /// Names the scripts use that the spec does not give, each "key: what stands in where"
  /// (addressing.host_netdevs: ethtool -S nic0): to set before running them.
  std::vector<std::string> placeholders;
};

/// Plans the runbook of `planned` (pure: nothing is run or written).
Result<AcceptancePlan> plan_acceptance(const PlannedSpec& planned, const AcceptanceOptions& o);

/// The files `acceptance -o DIR` writes: runbook.md, link-tests.csv, expected.json, the round
/// scripts (link-tests/, burn-in/, nccl/).
std::vector<OutputFile> acceptance_files(const PlannedSpec& planned, const AcceptancePlan& a);
/// The most burn-in passes a runbook plans: beyond it a flag is a typo, not a test plan.
constexpr int kMaxBurnInPasses = 16;

/// The file every script of the runbook writes at the top of the results folder, naming the
/// plan the results follow (its burn-in passes), so that `check` expects that plan's results, a
/// pass never run among them.
constexpr const char* kResultsPlanFile = "acceptance-plan.txt";
/// Its content for `a`.
std::string results_plan_text(const AcceptancePlan& a);
/// The burn-in passes it names; an error names `file`, the line and the key.
Result<int> parse_results_plan(const std::string& text, const std::string& file);

/// The console summary.
std::string acceptance_text(const AcceptancePlan& a);
nlohmann::json acceptance_json(const AcceptancePlan& a);

/// A results file of the folder, read (path relative to the folder).
struct ResultFile {
  std::string path, text;
};

/// What check makes of a results folder.
struct AcceptanceRow {
  std::string what;  ///< "link", "latency", "nccl", "counter", "missing"
  std::string id, file, detail;
  double measured = 0, expected = 0;
  bool ok = true, judged = true;
};
struct Suspect {
  std::string cable;      ///< the cable's name
  std::string direction;  ///< "a->b", "b->a" or "both"
};
struct AcceptanceResult {
  std::vector<AcceptanceRow> rows;
  std::vector<Suspect> suspects;  ///< the single cables that explain every failed link test
  std::string suspect_note;       ///< why there are none, or several
  int failed_links = 0, passed_links = 0, missing = 0;
  bool pass = false;
};

/// Reads a results folder's files (as the runbook lays them out: link-tests/, burn-in/,
/// nccl/, counters/) against `a`. A file that does not parse is bad input (its file and line).
Result<AcceptanceResult> check_acceptance(const PlannedSpec& planned, const AcceptancePlan& a,
                                          const std::vector<ResultFile>& files);
std::string acceptance_result_text(const AcceptanceResult& r);
nlohmann::json acceptance_result_json(const AcceptanceResult& r);

/// The results file of a link test: "link-tests/T0001-bw.txt", "burn-in/pass-2/P2-T0001-bw.txt".
std::string link_test_result_path(const LinkTest& t, bool latency);
/// The results file of an nccl-tests stage: "nccl/2-nodes/all_reduce_perf.txt".
std::string nccl_result_path(const NcclStage& s);

}  // namespace gf
