// libFuzzer target: every tool-output parser (and the lab's netplan reader, the calibration
// profile's reader and calibrate --fit's reading of a run) takes any bytes without crashing, and
// what diagnose and check make of them renders as JSON (--json) without throwing.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "lab/netplan.h"
#include "plan/plan.h"
#include "spec/spec.h"
#include "spec/calibration_profile.h"
#include "verify/acceptance.h"
#include "verify/calibration_fit.h"
#include "verify/diagnose.h"
#include "verify/parsers.h"
#include "verify/trace_readers.h"

namespace {

// A small RoCE plan with named rails, so that the plan comparisons run too: check's, and
// diagnose's of nccl-tests results and of the rails in ip link output.
struct Planned {
  gf::Catalog catalog = *gf::builtin_catalog();
  gf::Spec spec;
  gf::Plan plan;
  Planned() {
    spec = *gf::parse_spec(
        "cluster: {gpu: h100-sxm, nodes: 8, gpus_per_node: 2, nic: cx7-400g, nics_per_node: 2}\n"
        "fabric: {technology: roce, topology: clos2, scalable_unit: 4, switch: arista-7060x6}\n"
        "addressing: {host_netdevs: [ens1np0, ens2np0]}\n",
        "fuzz.yaml");
    (void)gf::validate_spec(spec, catalog);
    plan = *gf::make_plan(spec, catalog);
    gf::AcceptanceOptions o;
    o.burn_in_passes = 1;
    planned = gf::PlannedSpec{spec, catalog, plan};
    acceptance = *gf::plan_acceptance(planned, o);
  }
  gf::PlannedSpec planned;
  gf::AcceptancePlan acceptance;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Planned p;
  const std::string t(reinterpret_cast<const char*>(data), size);
  (void)gf::parse_nccl_tests(t, "f");
  (void)gf::parse_perftest(t, "f");
  (void)gf::parse_iperf3(t, "f");
  (void)gf::parse_nccl_log(t, "f");
  (void)gf::parse_topo(t, "f");
  (void)gf::parse_ibv_devinfo(t, "f");
  (void)gf::parse_ethtool(t, "f");
  (void)gf::parse_ip_link(t, "f");
  (void)gf::parse_perfquery(t, "f");
  // The replay's streaming readers, and the replay of what they read on the small plan.
  {
    std::istringstream a(t), b(t);
    auto k = gf::read_kineto_trace(a, "f", 1 << 20);
    auto n = gf::read_nccl_coll_log(b, "f", 1 << 20);
    (void)gf::detect_trace_kind(t);
    static const gf::Fabric fabric = gf::Fabric::build(p.plan, p.catalog);
    if (k) (void)gf::replay_step({*k}, p.plan, fabric, {});
    if (n) (void)gf::replay_step(*n, p.plan, fabric, {});
  }
  (void)gf::parse_calibration_profile(t, "f");  // a spec's calibration: file
  if (auto np = gf::parse_netplan(t, "f"))  // the lab reads (possibly hand-edited) netplan files
    for (const auto& i : *np) (void)gf::netplan_ip_commands("ns", i);
  gf::ToolOutput o{"f", t, gf::detect_output_kind(t)};
  if (auto r = gf::diagnose({o}, 400)) (void)gf::findings_json(*r).dump(2);
  if (auto r = gf::diagnose({o}, 0, &p.plan, &p.catalog, p.spec.addressing.host_netdevs))
    (void)gf::findings_json(*r).dump(2);
  if (auto r = gf::check_measurements(p.plan, p.catalog, {o}, 0.15))
    (void)gf::check_json(*r).dump(2);
  // calibrate --fit's reading of the run (collective, NCCL_ALGO, nodes), with and without flags.
  (void)gf::read_fit_runs(p.plan, {o}, {});
  gf::FitOptions fo;
  fo.nodes = 2;
  (void)gf::read_fit_runs(p.plan, {o}, fo);
  // A results folder with these bytes where the acceptance runbook puts each kind of file.
  std::vector<gf::ResultFile> folder;
  for (const char* path :
       {"link-tests/T0001-bw.txt", "link-tests/T0001-lat.txt", "counters/before/node001/mlx5_0.txt",
        "counters/after/node001/mlx5_0.txt", "nccl/2-nodes/all_reduce_perf.txt"})
    folder.push_back({path, t});
  if (auto r = gf::check_acceptance(p.planned, p.acceptance, folder))
    (void)gf::acceptance_result_json(*r).dump(2);
  return 0;
}
