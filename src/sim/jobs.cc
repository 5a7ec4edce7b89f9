#include "sim/jobs.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <numeric>

#include "sim/collective.h"
#include "sim/flow_builder.h"
#include "sim/flow_model.h"
#include "sim/step_overlap.h"
#include "sim/whatif.h"

namespace gf {
namespace {

// A key mixed into each job's ECMP hashes (its connections' QP numbers and addresses differ
// from every other job's).
constexpr uint64_t kJobHashKey = 0x10b5;

// A node is unusable when every one of its NIC ports lost its link (--fail node:NAME).
std::vector<uint8_t> cut_off_nodes(const Fabric& fab) {
  std::vector<uint8_t> out(static_cast<size_t>(fab.nodes()), 0);
  for (int n = 0; n < fab.nodes(); ++n) {
    bool any = false;
    for (int r = 0; r < fab.nics_per_node() && !any; ++r)
      for (int p = 0; p < fab.planes() && !any; ++p)
        any = !fab.links()[static_cast<size_t>(fab.nic_to_leaf(fab.nic(n, r), p))].failed;
    out[static_cast<size_t>(n)] = any ? 0 : 1;
  }
  return out;
}

std::string policy_text(std::optional<Placement> p) {
  return p ? fmt::format("{} placement", placement_name(*p)) : "the spec's placements";
}

// One communication of a job's step as flows: its calls' summed nccl-tests size on every group
// of its kind at once (a workload job's from the step model, a trace job's from the replay).
struct CommFlows {
  Op op = Op::kAllReduce;
  double bytes = 0;
  std::vector<std::vector<int>> gpu_groups;
};

// A trace job's step: its recorded step replayed on its GPUs of the shared fabric, and its step
// traffic as communications (each simulated collective of each process group, its calls summed)
// that run beside the other jobs' as a workload job's do.
std::vector<Diagnostic> replay_job(const Spec& spec, const JobSpec& js,
                                   const std::vector<TracedRank>* traces, const Plan& pj,
                                   const Fabric& fab, const std::vector<int>& gpu_of_rank,
                                   LoadBalancing lb, JobResult& jr, std::vector<CommFlows>& calls) {
  const std::string key = js.key + ".trace";
  if (!traces || traces->empty())
    return {spec.at(key, fmt::format("job '{}': its trace was not read", js.name),
                    "gpufabric jobs reads the job's trace files")};
  ReplayOptions ro;
  ro.gpu_of_rank = gpu_of_rank;
  ro.load_balancing = lb;
  if (!js.trace_step.empty()) ro.step = js.trace_step;
  auto rep = replay_step(*traces, pj, fab, ro);
  if (!rep) {
    const auto& e = rep.errors().front();
    // The replay names a --step or --tp flag; in a spec they are the job's keys.
    const std::string k = e.key == "--step" ? js.key + ".step" : key;
    return {spec.at(k, fmt::format("job '{}': {}", js.name, e.message), e.hint)};
  }
  if (rep->world != jr.gpus)
    return {spec.at(js.key + (js.gpus_requested > 0 ? ".gpus" : ".nodes"),
                    fmt::format("job '{}' has {} GPUs but its trace is of a run of {} ranks",
                                js.name, jr.gpus, rep->world),
                    fmt::format("give the job the traced run's size: gpus: {}", rep->world))};
  jr.step_alone_s = rep->predicted.step_s;
  std::map<std::string, std::string> role;
  for (const auto& g : rep->groups) role[g.name] = g.role;
  for (const auto& b : rep->breakdown) {
    const auto op = parse_op(b.op);
    if (!b.simulated || !op || b.gpu_groups.empty()) continue;
    JobComm jc;
    jc.kind = fmt::format("{} {} (pg {})", role[b.group], b.op, b.group);
    jc.total_s = jc.total_together_s = b.simulated_s;
    jc.exposed_s = jc.exposed_together_s = b.predicted_exposed_s;
    jr.comms.push_back(std::move(jc));
    calls.push_back({*op, b.bytes, b.gpu_groups});
  }
  jr.replay = std::move(*rep);
  jr.traces = js.trace_files;
  return {};
}

// Every job placed by `policy`, stepped alone with load balancing `lb`, and all their traffic
// run together.
Result<JobsRun> run_jobs(const Spec& spec, const Plan& plan, const Fabric& fab,
                         const std::vector<double>& cap, const std::vector<std::string>& names,
                         const std::vector<uint8_t>& unusable, std::optional<Placement> policy,
                         LoadBalancing lb, const JobsOptions& o) {
  auto placed = place_jobs(spec, plan, names, policy, unusable);
  if (!placed) return placed.errors();
  JobsRun run;
  run.policy = policy;
  run.load_balancing = lb;
  const int G = plan.gpus_per_node, npu = placement_unit(plan);
  const size_t L = fab.links().size();
  // Per job its step traffic as flows, each tagged with the step communication it belongs to.
  std::vector<TaggedFlows> flows(spec.jobs.size());
  for (size_t j = 0; j < spec.jobs.size(); ++j) {
    const JobSpec& js = spec.jobs[j];
    JobResult jr;
    jr.name = js.name;
    jr.placement = js.placement && policy ? policy : js.placement;
    jr.nodes = (*placed)[j];
    jr.gpus = 1LL * static_cast<long long>(jr.nodes.size()) * G;
    {
      std::vector<int> units;
      for (int n : jr.nodes) units.push_back(n / npu);
      std::sort(units.begin(), units.end());
      jr.units = static_cast<int>(std::unique(units.begin(), units.end()) - units.begin());
    }
    // The job's own spec and plan: its workload on its GPUs of the shared fabric.
    Spec sj = spec;
    sj.jobs.clear();
    sj.workload = js.workload;
    Plan pj = plan;
    pj.gpus = jr.gpus;
    pj.nodes = static_cast<int>(jr.nodes.size());
    pj.load_balancing = lb;
    std::vector<int> gpu_of_rank(static_cast<size_t>(jr.gpus));
    for (long long r = 0; r < jr.gpus; ++r)
      gpu_of_rank[static_cast<size_t>(r)] = jr.nodes[static_cast<size_t>(r / G)] * G + r % G;
    // Its step traffic: each communication's calls of one step in its groups, at once.
    std::vector<CommFlows> calls;
    if (!js.trace_files.empty()) {
      const auto* traces = o.traces && j < o.traces->size() ? &(*o.traces)[j] : nullptr;
      auto errs = replay_job(spec, js, traces, pj, fab, gpu_of_rank, lb, jr, calls);
      if (!errs.empty()) return errs;
    } else {
      auto step = simulate_step(sj, pj, fab, {}, gpu_of_rank);
      if (!step) {
        std::vector<Diagnostic> errs;
        for (const auto& e : step.errors())
          errs.push_back(
              Diagnostic::error(fmt::format("job '{}': {}", js.name, e.message), e.hint));
        return errs;
      }
      jr.step = std::move(*step);
      jr.step_alone_s = jr.step.step_time_s;
      for (const StepComm& c : jr.step.comms) {
        JobComm jc;
        jc.kind = c.kind;
        jc.total_s = jc.total_together_s = c.total_s;
        jc.exposed_s = jc.exposed_together_s = c.exposed_s;
        jr.comms.push_back(jc);
        calls.push_back({c.op, c.bytes * c.count, c.groups});
      }
    }
    // The step alone already has the job's own dimensions sharing links
    // (StepComm::concurrency_factor): alone here is the job alone on the fabric, its own
    // concurrency included.
    TaggedFlows& jf = flows[j];
    for (size_t k = 0; k < calls.size(); ++k) {
      JobComm& jc = jr.comms[k];
      const int before = jf.fs.size();
      group_flows(fab, lb, calls[k].op, calls[k].gpu_groups, calls[k].bytes, jf.fs,
                  mix_key(kJobHashKey, j + 1));
      for (int f = before; f < jf.fs.size(); ++f) {
        jf.tag.push_back(static_cast<int>(k));
        jc.network = jc.network || crosses_network(fab, jf.fs, f);
      }
    }
    run.jobs.push_back(std::move(jr));
  }

  // Which links each job's flows cross; jobs that share one are run together.
  const size_t J = run.jobs.size();
  run.job_mask.assign(L, 0);
  for (size_t j = 0; j < J; ++j)
    for (int f = 0; f < flows[j].fs.size(); ++f)
      for (const auto* h = flows[j].fs.begin(f); h != flows[j].fs.end(f); ++h)
        run.job_mask[static_cast<size_t>(h->link)] |= uint64_t{1} << j;
  std::vector<size_t> group(J);
  std::iota(group.begin(), group.end(), 0);
  auto root = [&](size_t j) {
    while (group[j] != j) j = group[j] = group[group[j]];
    return j;
  };
  for (uint64_t m : run.job_mask) {
    if (std::popcount(m) < 2) continue;
    const size_t first = static_cast<size_t>(std::countr_zero(m));
    for (uint64_t rest = m & (m - 1); rest; rest &= rest - 1)
      group[root(static_cast<size_t>(std::countr_zero(rest)))] = root(first);
  }
  run.load.payload_bytes = 1;
  std::vector<std::vector<double>> alone(J), together(J);
  for (size_t j = 0; j < J; ++j) {
    const FluidResult r = run_fluid(flows[j].fs, cap);
    alone[j] = tag_completion(flows[j], r, 0, run.jobs[j].comms.size());
    bool shared = false;
    for (size_t o = 0; o < J; ++o) shared = shared || (o != j && root(o) == root(j));
    if (!shared) {  // no link in common with any other job: exactly as alone
      together[j] = alone[j];
      run.load.add(flows[j].fs, r, L);
      run.together_s = std::max(run.together_s, r.time_s);
    }
  }
  for (size_t g = 0; g < J; ++g) {
    std::vector<size_t> members;
    for (size_t j = 0; j < J; ++j)
      if (root(j) == g) members.push_back(j);
    if (members.size() < 2) continue;
    TaggedFlows all;
    std::vector<int> first;
    for (size_t j : members) {
      first.push_back(all.fs.size());
      all.append(flows[j]);
    }
    const FluidResult r = run_fluid(all.fs, cap);
    for (size_t i = 0; i < members.size(); ++i)
      together[members[i]] =
          tag_completion(flows[members[i]], r, first[i], run.jobs[members[i]].comms.size());
    run.load.add(all.fs, r, L);
    run.together_s = std::max(run.together_s, r.time_s);
  }

  // Each communication slowed by its flows' factor: what compute hid stays hidden (the window
  // is the same compute), the longer rest is exposed.
  double sum = 0;
  for (size_t j = 0; j < J; ++j) {
    JobResult& jr = run.jobs[j];
    double added = 0;
    for (size_t k = 0; k < jr.comms.size(); ++k) {
      JobComm& c = jr.comms[k];
      c.fluid_alone_s = alone[j][k];
      c.fluid_together_s = together[j][k];
      // Another job's traffic only takes capacity away. Both runs overlap all of the job's own
      // communications; together, one slowed on shared links (a network all_reduce) leaves
      // its NVLink to another of the job's (its tensor-parallel calls), which then finishes
      // sooner: an artifact of that overlap, not a speed-up the other jobs give. At least 1.
      c.factor = c.fluid_alone_s > 0 ? std::max(1.0, c.fluid_together_s / c.fluid_alone_s) : 1;
      const SlowedComm s = slow_comm(c.total_s, c.exposed_s, c.factor);
      c.total_together_s = s.total_s;
      c.exposed_together_s = s.exposed_s;
      added += c.exposed_together_s - c.exposed_s;
    }
    jr.step_together_s = jr.step_alone_s + added;
    jr.slowdown = jr.step_alone_s > 0 ? jr.step_together_s / jr.step_alone_s : 1;
    sum += jr.slowdown;
    if (run.worst_job.empty() || jr.slowdown > run.worst_slowdown) {
      run.worst_slowdown = jr.slowdown;
      run.worst_job = jr.name;
    }
  }
  run.mean_slowdown = J ? sum / static_cast<double>(J) : 1;

  // Where the jobs meet, hottest first.
  for (size_t l = 0; l < L; ++l) {
    const uint64_t m = run.job_mask[l];
    if (std::popcount(m) < 2) continue;
    MeetingLink ml;
    ml.link = static_cast<int32_t>(l);
    for (uint64_t b = m; b; b &= b - 1) ml.jobs.push_back(std::countr_zero(b));
    ml.use = link_use(fab, run.load, ml.link, 1, run.together_s);
    run.meetings.push_back(std::move(ml));
  }
  std::sort(run.meetings.begin(), run.meetings.end(),
            [](const MeetingLink& a, const MeetingLink& b) {
              if (a.use.mean_util != b.use.mean_util) return a.use.mean_util > b.use.mean_util;
              if (a.use.bytes != b.use.bytes) return a.use.bytes > b.use.bytes;
              return a.link < b.link;
            });
  for (const auto& ml : run.meetings)
    for (int j : ml.jobs) {
      JobResult& jr = run.jobs[static_cast<size_t>(j)];
      if (jr.meeting_links++ == 0) {
        jr.hottest_meeting_link = ml.link;
        jr.hottest_meeting_util = ml.use.mean_util;
      }
      for (int o : ml.jobs)
        if (o != j && std::find(jr.meets.begin(), jr.meets.end(),
                                run.jobs[static_cast<size_t>(o)].name) == jr.meets.end())
          jr.meets.push_back(run.jobs[static_cast<size_t>(o)].name);
    }
  return run;
}

JobsComparison summary_of(const JobsRun& r) {
  JobsComparison c;
  c.policy = r.policy;
  c.load_balancing = r.load_balancing;
  c.worst_slowdown = r.worst_slowdown;
  c.mean_slowdown = r.mean_slowdown;
  c.worst_job = r.worst_job;
  c.meeting_links = static_cast<long long>(r.meetings.size());
  double sum = 0;
  for (const auto& j : r.jobs) sum += j.step_together_s;
  c.mean_step_together_s = r.jobs.empty() ? 0 : sum / static_cast<double>(r.jobs.size());
  return c;
}

}  // namespace

int placement_unit(const Plan& plan) {
  const int npu = plan.topo.nodes_per_unit;
  return npu > 0 ? npu : std::max(1, plan.nodes);
}

Result<std::vector<std::vector<int>>> place_jobs(const Spec& spec, const Plan& plan,
                                                 const std::vector<std::string>& names,
                                                 std::optional<Placement> policy,
                                                 const std::vector<uint8_t>& unusable) {
  const int N = plan.nodes, npu = placement_unit(plan);
  const int U = (N + npu - 1) / npu;
  std::vector<uint8_t> taken(static_cast<size_t>(N), 0);
  for (size_t n = 0; n < unusable.size() && n < taken.size(); ++n)
    if (unusable[n]) taken[n] = 2;
  std::vector<std::vector<int>> out(spec.jobs.size());
  std::vector<Diagnostic> errs;
  std::map<std::string, int> index;
  for (int n = 0; n < N && n < static_cast<int>(names.size()); ++n) index[names[n]] = n;
  for (size_t j = 0; j < spec.jobs.size(); ++j) {
    const JobSpec& js = spec.jobs[j];
    if (js.placement) continue;
    for (size_t k = 0; k < js.nodes_listed.size(); ++k) {
      const std::string key = fmt::format("{}.placement[{}]", js.key, k);
      const auto it = index.find(js.nodes_listed[k]);
      if (it == index.end()) {
        const std::string hint = did_you_mean(js.nodes_listed[k], names);
        errs.push_back(spec.at(key, fmt::format("unknown node '{}'", js.nodes_listed[k]),
                               !hint.empty()   ? hint
                               : names.empty() ? "the plan has no nodes"
                                               : fmt::format("the nodes are {} to {} (cabling.csv)",
                                                             names.front(), names.back())));
        continue;
      }
      if (taken[static_cast<size_t>(it->second)] == 2) {
        errs.push_back(spec.at(key,
                               fmt::format("node '{}' is cut off by --fail", js.nodes_listed[k]),
                               "list a node whose links work"));
        continue;
      }
      taken[static_cast<size_t>(it->second)] = 1;
      out[j].push_back(it->second);
    }
  }
  if (!errs.empty()) return errs;
  std::vector<int> cursor(static_cast<size_t>(U), 0);  // spread: next node to look at per unit
  for (size_t j = 0; j < spec.jobs.size(); ++j) {
    const JobSpec& js = spec.jobs[j];
    if (!js.placement) continue;
    const Placement p = policy.value_or(*js.placement);
    const int want = js.nodes;
    long long left = 0, cut = 0;
    for (uint8_t t : taken) {
      left += t == 0;
      cut += t == 2;
    }
    if (want > left) {
      errs.push_back(spec.at(
          js.key + (js.gpus_requested > 0 ? ".gpus" : ".nodes"),
          fmt::format("job '{}' needs {} nodes; {} are left after the jobs "
                      "before it{}",
                      js.name, want, left, cut > 0 ? " and without the nodes --fail cut off" : ""),
          "make the jobs smaller or the cluster larger"));
      continue;
    }
    std::vector<int>& got = out[j];
    if (p == Placement::kPacked) {
      for (int n = 0; n < N && static_cast<int>(got.size()) < want; ++n)
        if (!taken[static_cast<size_t>(n)]) got.push_back(n);
    } else if (p == Placement::kSpread) {
      // One node from each unit in turn, each unit's free nodes in order.
      for (int u = 0; static_cast<int>(got.size()) < want; u = (u + 1) % U) {
        int& c = cursor[static_cast<size_t>(u)];
        const int end = std::min(N, (u + 1) * npu);
        while (u * npu + c < end && taken[static_cast<size_t>(u * npu + c)]) ++c;
        if (u * npu + c < end) {
          got.push_back(u * npu + c);
          taken[static_cast<size_t>(u * npu + c)] = 1;
        }
      }
    } else {
      std::vector<int> free;
      for (int n = 0; n < N; ++n)
        if (!taken[static_cast<size_t>(n)]) free.push_back(n);
      uint64_t state = js.seed;
      // Fisher-Yates over the free nodes; the first `want` are the job's.
      for (size_t i = 0; i < static_cast<size_t>(want); ++i) {
        const size_t pick = i + static_cast<size_t>(splitmix64_next(state) % (free.size() - i));
        std::swap(free[i], free[pick]);
        got.push_back(free[i]);
      }
    }
    for (int n : got) taken[static_cast<size_t>(n)] = 1;
    std::sort(got.begin(), got.end());
  }
  if (!errs.empty()) return errs;
  return out;
}

bool improves_on(const JobsComparison& c, const JobsComparison& than) {
  // Ties within half the printed step: the worst slowdown's 0.001x, the mean step's third
  // significant figure (0.5 % of it, at most).
  constexpr double kWorstTie = 5e-4, kStepTie = 5e-3;
  if (c.worst_slowdown < than.worst_slowdown - kWorstTie) return true;
  return std::abs(c.worst_slowdown - than.worst_slowdown) <= kWorstTie &&
         c.mean_step_together_s < than.mean_step_together_s * (1 - kStepTie);
}

Result<JobsResult> simulate_jobs(const Spec& spec, const Catalog& catalog, const Plan& plan,
                                 const JobsOptions& o) {
  if (spec.jobs.empty())
    return spec.at("jobs", "the spec has no jobs section",
                   "add jobs: a list of {name, gpus, placement, workload} as in "
                   "examples/jobs-roce-16k.yaml");
  if (spec.jobs.size() > static_cast<size_t>(kMaxJobs))
    return spec.at("jobs", fmt::format("more than {} jobs", kMaxJobs));
  JobsResult res;
  auto fab = std::make_shared<Fabric>(Fabric::build(plan, catalog));
  auto errs = fail_parts(plan, catalog, *fab, o.fail, res.changes);
  if (!errs.empty()) return errs;
  res.node_names = node_names(plan, catalog, *fab);
  res.nodes_per_unit = placement_unit(plan);
  const std::vector<uint8_t> unusable = cut_off_nodes(*fab);
  const std::vector<double> cap = simple_capacities(*fab, plan);
  auto asked = run_jobs(spec, plan, *fab, cap, res.node_names, unusable, o.placement,
                        plan.load_balancing, o);
  if (!asked) return asked.errors();
  res.run = std::move(*asked);
  res.compared.push_back(summary_of(res.run));
  res.best = 0;
  if (o.compare) {
    bool any_policy = false;
    for (const auto& j : spec.jobs) any_policy = any_policy || j.placement.has_value();
    std::vector<std::optional<Placement>> policies;
    if (any_policy)
      for (const auto& e : kPlacementNames) policies.push_back(e.value);
    else
      policies.push_back(std::nullopt);
    for (const auto& p : policies)
      for (LoadBalancing lb : kComparedLoadBalancing) {
        // The run as asked is already in.
        bool same_policy = p == o.placement;
        if (p && !o.placement) {
          same_policy = true;
          for (const auto& j : spec.jobs)
            same_policy = same_policy && (!j.placement || j.placement == p);
        }
        if (same_policy && lb == plan.load_balancing) continue;
        auto r = run_jobs(spec, plan, *fab, cap, res.node_names, unusable, p, lb, o);
        JobsComparison c;
        if (r) {
          c = summary_of(*r);
        } else {
          c.policy = p;
          c.load_balancing = lb;
          c.runs = false;
          c.note = r.errors().front().message;
        }
        res.compared.push_back(std::move(c));
      }
    for (size_t i = 1; i < res.compared.size(); ++i) {
      const auto& c = res.compared[i];
      const auto& b = res.compared[static_cast<size_t>(res.best)];
      if (!c.runs) continue;
      // The run as asked (first) and the earlier rows keep their place against a gain the
      // table cannot show.
      if (improves_on(c, b)) res.best = static_cast<int>(i);
    }
  }
  const auto& b = res.compared[static_cast<size_t>(res.best)];
  const auto& a = res.compared[0];
  const std::string asked_text = o.placement ? policy_text(o.placement) : "as placed";
  if (res.compared.size() == 1)
    res.advice = fmt::format("worst slowdown {:.3f}x ({}); no comparison was run", a.worst_slowdown,
                             a.worst_job);
  else if (res.best == 0)
    res.advice = fmt::format(
        "{} with {} keeps the worst slowdown lowest of the {} compared: {:.3f}x ({})", asked_text,
        load_balancing_name(a.load_balancing), res.compared.size(), a.worst_slowdown, a.worst_job);
  else
    res.advice = fmt::format(
        "{} with {} keeps the worst slowdown lowest: {:.3f}x ({}), against {:.3f}x ({}) {} with {}",
        policy_text(b.policy), load_balancing_name(b.load_balancing), b.worst_slowdown, b.worst_job,
        a.worst_slowdown, a.worst_job, asked_text, load_balancing_name(a.load_balancing));
  if (b.worst_slowdown <= 1 + 1e-9 && res.compared.size() > 1)
    res.advice += "; there the jobs do not slow each other";
  res.fabric = std::move(fab);
  return res;
}

}  // namespace gf
