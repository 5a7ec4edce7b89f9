// gpufabric simulate: collectives on the planned fabric, printed as nccl-tests prints them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/flags.h"
#include "cli/resources.h"
#include "common/output.h"
#include "plan/plan.h"
#include "qos/collective.h"
#include "qos/report.h"
#include "report/sim_report.h"
#include "sim/collective.h"
#include "sim/nccl_constants.h"
#include "spec/spec.h"
#include "topo/fabric.h"
#include "units/units.h"

namespace gf::cli {
namespace {

/// -f: above 1 (a factor of 1 never reaches -e); 1024 jumps 8 B to 8 KiB in one step.
constexpr double kMinStepFactor = 1.000001;
constexpr double kMaxStepFactor = 1024;
/// -g: a thread drives GPUs of its own host, and no host holds more than 16 (HGX-2).
constexpr int kMaxGpusPerThread = 16;

/// --engine: the flow-level model alone (nccl-tests' table), or the packet-level RoCE engine
/// beside it.
enum class SimEngine { kFlow, kPacket };
inline constexpr EnumName<SimEngine> kSimEngineNames[] = {{SimEngine::kFlow, "flow"},
                                                          {SimEngine::kPacket, "packet"}};

/// The algorithm the packet level lays an op out as (qos_collective_traffic): NCCL's ring, or
/// point-to-point with PXN for alltoall; none for the ops it does not build.
std::optional<Algorithm> packet_algorithm(Op op) {
  switch (op) {
    case Op::kAllReduce:
    case Op::kAllGather:
    case Op::kReduceScatter:
      return Algorithm::kRing;
    case Op::kAlltoall:
      return Algorithm::kP2p;
    default:
      return std::nullopt;
  }
}

struct SimulateFlags {
  std::string spec, op = "all_reduce", min_bytes = "8", max_bytes = "8G", algo = "auto",
                    proto = "auto", load_balancing, nccl, links, links_bytes = "1G",
                    engine = "flow", cc = "dcqcn", buffsize;
  CLI::Option* cc_opt = nullptr;           // --cc acts on the packet level only
  CLI::Option* links_bytes_opt = nullptr;  // --links-bytes sizes --links only
  double factor = 2;
  int nodes = 0;
  int gpus_per_thread = 1;
  int iters = nccl::kNcclTestsIters;
  int min_channels = 0, max_channels = 0;  // NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS
  unsigned long long seed = 1;
  bool explain = false, json = false;
};

/// "auto" and then `names`: the values of --algo and --proto.
std::vector<std::string> auto_or(std::vector<std::string> names) {
  names.insert(names.begin(), "auto");
  return names;
}

int run(const SimulateFlags& f) {
  std::vector<Diagnostic> errs;
  SimOptions o;
  if (auto op = parse_op(f.op))
    o.op = *op;
  else
    errs.push_back(Diagnostic::flag("--op", fmt::format("unknown collective '{}'", f.op),
                                    did_you_mean(f.op, op_names())));
  if (f.algo != "auto") {
    if (auto a = parse_algorithm(f.algo))
      o.algorithm = *a;
    else
      errs.push_back(Diagnostic::flag("--algo", fmt::format("unknown algorithm '{}'", f.algo),
                                      "use auto, " + names_joined(kAlgorithmNames, ", ")));
  }
  if (f.proto != "auto") {
    if (auto p = parse_protocol(f.proto))
      o.protocol = *p;
    else
      errs.push_back(Diagnostic::flag("--proto", fmt::format("unknown protocol '{}'", f.proto),
                                      "use auto, LL, LL128 or Simple"));
  }
  // Point-to-point's protocol is NCCL's rule's, send by send (NCCL_P2P_LL_THRESHOLD,
  // enqueue.cc@v2.29.7-1:851-906: LL for a small send inside an NVLink domain, Simple otherwise),
  // not NCCL_PROTO's: a forced one would leave sizes that no protocol runs.
  const bool p2p = is_point_to_point(o.op) || (o.algorithm && *o.algorithm == Algorithm::kP2p);
  if (p2p && o.protocol)
    errs.push_back(Diagnostic::flag(
        "--proto",
        fmt::format("point-to-point (alltoall, sendrecv) runs the protocol NCCL's rule gives each "
                    "send (LL for a send of at most 16 KiB a channel inside an NVLink domain, "
                    "Simple otherwise), not {}",
                    f.proto),
        "leave --proto out, or give auto"));
  // NCCL runs NVLS, NVLS Tree, CollNet and PAT with the Simple protocol only
  // (tuning.cc@v2.29.7-1:280-283: no model for LL or LL128; NCCL_PROTO=LL with NCCL_ALGO=NVLS
  // finds no algorithm).
  else if (o.algorithm && o.protocol && *o.protocol != Protocol::kSimple &&
           *o.algorithm != Algorithm::kRing && *o.algorithm != Algorithm::kTree)
    errs.push_back(Diagnostic::flag(
        "--proto",
        fmt::format("{} runs the Simple protocol only; NCCL has no {} for it", f.algo, f.proto),
        "use --proto Simple or auto"));
  if (f.min_channels > 0 && f.max_channels > 0 && f.min_channels > f.max_channels)
    errs.push_back(
        Diagnostic::flag("--min-channels",
                         fmt::format("{} channels at least, but {} at most (--max-channels)",
                                     f.min_channels, f.max_channels),
                         "give --min-channels no more than --max-channels"));
  if (f.links.empty() && f.links_bytes_opt && f.links_bytes_opt->count() > 0)
    errs.push_back(Diagnostic::flag("--links-bytes", "--links-bytes sizes the --links table",
                                    "add --links FILE.csv"));
  if (!f.nccl.empty()) {
    o.nccl = nccl_release_of_version(f.nccl);
    if (!o.nccl)
      errs.push_back(Diagnostic::flag(
          "--nccl", fmt::format("unknown NCCL release '{}'", f.nccl),
          "use " + names_joined(kNcclReleaseNames, " or ") +
              ", or the version NCCL prints (2.24.3: " + kNcclVersionTables + ")"));
  }
  o.load_balancing = load_balancing_flag(f.load_balancing, errs);
  if (!f.buffsize.empty())
    if (const auto b = quantity_flag(
            "--buffsize", f.buffsize,
            [](std::string_view t) { return units::parse_bytes(t, units::SizeStyle::kNccl); },
            nccl::kBuffsizeMinBytes, nccl::kBuffsizeMaxBytes, true, errs))
      o.buffsize_bytes = *b;
  std::optional<double> links_bytes;
  if (!f.links.empty()) links_bytes = nccl_bytes_flag("--links-bytes", f.links_bytes, 1, errs);
  const auto lo = nccl_bytes_flag("-b", f.min_bytes, 0, errs);
  const auto hi = nccl_bytes_flag("-e", f.max_bytes, 1, errs);
  if (lo && hi && *lo > *hi)
    errs.push_back(Diagnostic::flag("-b", "the smallest size is larger than the largest (-e)"));
  if (lo && hi && *lo <= *hi) {
    const double sizes = std::floor(std::log(*hi / std::max(*lo, 1.0)) / std::log(f.factor)) + 1;
    if (sizes > kMaxSweepSizes)
      errs.push_back(
          Diagnostic::flag("-f",
                           fmt::format("{:.0f} sizes from -b to -e; at most {} are simulated",
                                       sizes, kMaxSweepSizes),
                           "use a larger factor, e.g. -f 2"));
  }
  const auto engine = parse_name(kSimEngineNames, f.engine);
  if (!engine)
    errs.push_back(Diagnostic::flag("--engine", fmt::format("unknown engine '{}'", f.engine),
                                    "use " + names_joined(kSimEngineNames, " or ")));
  const bool packet = engine == SimEngine::kPacket;
  QosSettings qos;
  if (auto cc = parse_name(kCongestionControlNames, f.cc))
    qos.cc = *cc;
  else
    errs.push_back(Diagnostic::flag("--cc", fmt::format("unknown congestion control '{}'", f.cc),
                                    "use --cc dcqcn, hpcc or none"));
  if (engine && !packet && f.cc_opt && f.cc_opt->count() > 0)
    errs.push_back(Diagnostic::flag("--cc", "--cc is the packet level's congestion control",
                                    "add --engine packet"));
  if (packet && errs.empty()) {
    // The packet level runs the op as NCCL's ring or PXN alltoall; the flow-level rows beside it
    // are the same algorithm's, so that the two columns compare one layout.
    const auto a = packet_algorithm(o.op);
    if (!a)
      errs.push_back(Diagnostic::flag(
          "--op",
          fmt::format("--engine packet builds all_reduce, all_gather, reduce_scatter (ring) and "
                      "alltoall (PXN); not {}",
                      f.op),
          "use --engine flow for broadcast, reduce and sendrecv"));
    else if (o.algorithm && *o.algorithm != *a)
      errs.push_back(Diagnostic::flag(
          "--algo",
          fmt::format("--engine packet runs {} as {}; not {}", f.op, algorithm_name(*a), f.algo),
          fmt::format("use --algo auto or {} with --engine packet", algorithm_name(*a))));
    else
      o.algorithm = a;
  }
  if (!errs.empty()) return fail(errs);
  o.nodes = f.nodes;
  o.seed = f.seed;
  o.gpus_per_thread = f.gpus_per_thread;
  o.iters = f.iters;
  o.min_channels = f.min_channels;
  o.max_channels = f.max_channels;

  Heartbeat alive("simulate");
  const LoadLimits limits = load_limits(true);
  auto loaded = load_planned_spec(f.spec, limits);
  if (!loaded) return fail(loaded.errors());
  const Plan* plan = &loaded->plan;
  // nccl-tests -g: the GPUs one thread drives, all of one node (a process runs on one host).
  if (f.gpus_per_thread > plan->gpus_per_node || plan->gpus_per_node % f.gpus_per_thread != 0)
    return fail({Diagnostic::flag(
        "-g",
        fmt::format("one thread drives GPUs of its own node; the nodes have {} GPUs, which {} "
                    "does not divide",
                    plan->gpus_per_node, f.gpus_per_thread),
        fmt::format("use -g 1 (a process a GPU) or a divisor of {}", plan->gpus_per_node))});
  // What the fabric leaves of the memory is the flows' budget (alltoall at scale needs most).
  o.memory_budget_bytes = flows_budget_bytes(limits, plan->nodes, plan->gpus_per_node);
  if (packet && plan->technology != Technology::kRoce)
    return fail({Diagnostic::flag(
        "--engine",
        fmt::format("the packet-level engine simulates RoCE's lossless Ethernet (PFC, ECN, "
                    "DCQCN); this fabric is {}",
                    technology_name(plan->technology)),
        "use --engine flow, or a spec with fabric.technology: roce")});
  const Fabric fabric = Fabric::build(*plan, loaded->catalog);
  auto model = CollectiveModel::build(fabric, *plan, o);
  if (!model) return fail(model.errors());
  if (o.algorithm) {
    for (const auto& a : model->algorithms())
      if (a.algorithm == *o.algorithm && !a.available)
        return fail({Diagnostic::flag(
            "--algo", fmt::format("{} cannot run {} here: {}", f.algo, f.op, a.unavailable_reason),
            "use --algo auto")});
  }
  // nccl-tests runs no size whose buffers the GPU cannot hold: it lowers -e (and -b above it) to
  // what fits and says so (nccl_tests_memory_max_bytes).
  const double memory_max = nccl_tests_memory_max_bytes(plan->gpu.memory_gb);
  const bool reduced = memory_max > 0 && *hi > memory_max;
  const double run_hi = reduced ? memory_max : *hi, run_lo = std::min(*lo, run_hi);
  const auto sizes = size_sweep(run_lo, run_hi, f.factor);
  SimReport report = simulate_sweep(*plan, *model, sizes, *lo, *hi, f.factor);
  if (reduced) report.reduced_max_bytes = memory_max;
  // The packet level: every size's traffic on the RoCE data path, with the configured QoS.
  std::optional<PacketSweep> packets;
  if (packet) {
    std::vector<PacketSizeInput> in;
    for (const SizeResult& row : report.rows)
      in.push_back({row.bytes, row.latency_us, row.protocol, row.time_us, row.busbw_gbs});
    // --load-balancing holds for the packet level too (ecmp-multi-qp: its QPs per connection).
    Plan lb_plan = *plan;
    if (o.load_balancing) lb_plan.load_balancing = *o.load_balancing;
    auto swept = packet_sweep(lb_plan, loaded->catalog, fabric, o.op, f.nodes, in, qos);
    if (!swept) return fail(swept.errors());
    packets = std::move(*swept);
    // The table above is the packet level's algorithm's, not NCCL's choice: say so where the
    // user left the algorithm to NCCL.
    if (f.algo.empty() || f.algo == "auto") {
      const std::string why = fmt::format(
          "the nccl-tests rows above are {}'s, the layout the packet level runs, not the "
          "algorithm NCCL would choose at each size (without --engine packet)",
          algorithm_name(*o.algorithm));
      packets->note = packets->note.empty() ? why : packets->note + "; " + why;
    }
  }
  // Traffic per link: the algorithm chosen at --links-bytes simulated again with its load kept.
  std::optional<CollectiveTraffic> traffic;
  std::unique_ptr<LinkNames> names;
  if (!f.links.empty()) {
    auto t = collective_traffic(fabric, *plan, o, *model, *links_bytes);
    if (!t) return fail(t.errors());
    traffic = std::move(*t);
    names = std::make_unique<LinkNames>(*plan, loaded->catalog, fabric);
    auto w = write_output_file(f.links, "--links", [&](std::ostream& out) {
      write_links_csv(out, fabric, *names, *traffic);
    });
    if (!w) return fail(w.errors());
    if (!f.json) std::cerr << "wrote " << *w << "\n";
  }
  if (f.json) {
    auto j = sim_json(report);
    j["engine"] = name_of(kSimEngineNames, *engine);
    if (packets) j["packet"] = packet_sweep_json(*packets);
    if (traffic) {
      j["links"] = links_json(fabric, *names, *traffic);
      j["links"]["file"] = f.links;
    }
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << nccl_tests_table(report, f.explain);
    if (packets) std::cout << packet_sweep_text(*packets);
    if (traffic) std::cout << links_text(fabric, *names, *traffic);
  }
  return kExitOk;
}

}  // namespace

Command add_simulate(CLI::App& root) {
  auto f = std::make_shared<SimulateFlags>();
  CLI::App* a = root.add_subcommand(
      "simulate",
      "How collectives perform on the planned fabric and where the bottleneck is; prints the "
      "table nccl-tests prints.");
  a->add_option("SPEC", f->spec, "the cluster spec (YAML)")->required();
  complete_with(a->add_option("--op", f->op,
                              "collective: all_reduce | all_gather | reduce_scatter | alltoall | "
                              "broadcast | reduce | sendrecv")
                    ->capture_default_str(),
                op_names);
  a->add_option(
       "-b,--minbytes", f->min_bytes,
       "smallest size, as nccl-tests (K M G are binary, and KB MB GB as nccl-tests reads them)")
      ->capture_default_str();
  a->add_option(
       "-e,--maxbytes", f->max_bytes,
       "largest size, e.g. 8G (as nccl-tests, lowered to what the GPU's memory holds: a send "
       "and a receive buffer of the size, after nccl-tests' reserve)")
      ->capture_default_str();
  a->add_option("-f,--stepfactor", f->factor, "multiply the size by this each step (above 1)")
      ->check(finite_in(kMinStepFactor, kMaxStepFactor))
      ->capture_default_str();
  complete_with(a->add_option("--algo", f->algo,
                              "auto | ring | tree | nvls | nvls_tree | collnet | collnet_chain | "
                              "pat | p2p (auto: as NCCL; collnet is CollNet Direct)")
                    ->capture_default_str(),
                [] { return auto_or(names_of(kAlgorithmNames)); });
  complete_with(
      a->add_option("--proto", f->proto,
                    "auto | LL | LL128 | Simple (as NCCL_PROTO: a named protocol runs even where "
                    "NCCL would not enable it by default, as LL128 off its switch; not for "
                    "alltoall and sendrecv, whose sends take NCCL's rule's)")
          ->capture_default_str(),
      [] { return auto_or(names_of(kProtocolNames)); });
  a->add_option("--nodes", f->nodes,
                "run on the first N nodes of the fabric (as nccl-tests on part of a cluster; "
                "default: all)")
      ->check(CLI::Range(1, kMaxFlagNodes));
  a->add_option("-g,--ngpus", f->gpus_per_thread,
                "GPUs one host thread drives, as nccl-tests -g: back-to-back calls are then at "
                "least this many host issues apart (about 4.4 us each, and an alltoall's 0.21 us "
                "more for each send and receive NCCL plans, two a rank); 1 is one process per GPU")
      ->check(CLI::Range(1, kMaxGpusPerThread))
      ->capture_default_str();
  a->add_option("-n,--iters", f->iters,
                "calls timed back to back at each size, as nccl-tests -n (it reports their mean): "
                "a broadcast or reduce on one channel pipelines down its chain across them; 1 "
                "times one call alone")
      ->check(CLI::Range(1, nccl::kMaxNcclTestsIters))
      ->capture_default_str();
  a->add_option("--min-channels", f->min_channels,
                "as NCCL_MIN_NCHANNELS: the communicator's ring/tree channels at least N (NCCL "
                "copies its channels over the same NICs; default: NCCL's own count)")
      ->check(CLI::Range(1, nccl::kMaxChannels));
  a->add_option("--buffsize", f->buffsize,
                "as NCCL_BUFFSIZE: the Simple protocol's buffer a connection, 64K to 1G (K M G "
                "binary; default: NCCL's 4M); a Simple step is an eighth of it: trees, CollNet and "
                "broadcast/reduce chains stream bigger chunks (a longer fill), NVLS keeps its "
                "own, and point-to-point's chunk stays within a step");
  a->add_option("--max-channels", f->max_channels,
                "as NCCL_MAX_NCHANNELS: at most N channels (NCCL keeps the first ones: across "
                "nodes fewer channels than NICs leave NICs idle; default: NCCL's own count)")
      ->check(CLI::Range(1, nccl::kMaxChannels));
  complete_with(a->add_option("--load-balancing", f->load_balancing,
                              "override the plan's: " + names_joined(kLoadBalancingNames))
                    ->check(non_empty()),
                [] { return names_of(kLoadBalancingNames); });
  complete_with(
      a->add_option(
           "--nccl", f->nccl,
           "the NCCL release whose tuner terms are used: " + names_joined(kNcclReleaseNames) +
               ", or a version as NCCL prints it (2.24.3; " + kNcclVersionTables +
               ") (default: the spec's cluster.nccl, else " + nccl_release_name(kNewestNccl) + ")")
          ->check(non_empty()),
      [] { return names_of(kNcclReleaseNames); });
  a->add_option("--seed", f->seed,
                "where the QP numbers start: the UDP source ports the switches hash, and so the "
                "collisions, differ per seed (the switches' own seeds: fabric.ecmp_hash.seed)")
      ->check(unsigned_64_check())
      ->capture_default_str();
  a->add_flag("--explain", f->explain,
              "add per size: algorithm, protocol, bottleneck link class and its utilisation, ECMP "
              "collision factor (with a note where it sits off the critical path); the sizes "
              "whose back-to-back calls pipeline down a broadcast's or reduce's chain, with one "
              "call's time; and the sizes where the time model finds another algorithm or "
              "protocol more than 20% faster than NCCL's pick, with the NCCL_ALGO / NCCL_PROTO "
              "that force it; then each algorithm's flows and, across nodes, the topology search "
              "graphs NCCL's tuner rates ring and NVLS Tree by");
  a->add_option("--links", f->links,
                "write the traffic per directed link to this CSV (ends as cabling.csv names them, "
                "tier, capacity, bytes, mean and peak utilisation, flows; hottest first) for the "
                "algorithm NCCL picks at --links-bytes")
      ->check(path_named());
  f->links_bytes_opt =
      a->add_option("--links-bytes", f->links_bytes,
                    "collective size of the --links table, as nccl-tests (K M G binary)")
          ->capture_default_str();
  complete_with(
      a->add_option("--engine", f->engine,
                    "flow: the flow-level model (nccl-tests' table); packet: also every size at "
                    "packet level on the RoCE data path (PFC, ECN, DCQCN as configured), beside "
                    "it; RoCE fabrics of at most 1,024 NIC ports (or --nodes), ops all_reduce, "
                    "all_gather, reduce_scatter (ring) and alltoall (PXN)")
          ->capture_default_str(),
      [] { return names_of(kSimEngineNames); });
  f->cc_opt = a->add_option("--cc", f->cc,
                            "with --engine packet: the NICs' congestion control, dcqcn (as the "
                            "configured hosts run), hpcc or none")
                  ->capture_default_str();
  complete_with(f->cc_opt, [] { return names_of(kCongestionControlNames); });
  a->add_flag("--json", f->json, "print results as JSON");
  return {a, [f] { return run(*f); }};
}

}  // namespace gf::cli
