// Many jobs on one fabric (make bench). Target (issue 17, Speed): a 16,384-GPU fabric with 8 jobs
// of 2,048 GPUs each, every job's step traffic together: <= 10 s. Each iteration builds the
// fabric, places the jobs, simulates each job's step and runs all their traffic together;
// BM_Jobs16kCompared adds the comparison (3 placements x 3 load balancings, 10 runs in all).
#include <benchmark/benchmark.h>

#include "bench_support.h"
#include "plan/plan.h"
#include "sim/jobs.h"
#include "spec/spec.h"

namespace {

using gf::bench::load;
using gf::bench::Loaded;

void jobs(benchmark::State& state, bool compare) {
  const Loaded l = load("examples/jobs-roce-16k.yaml");
  gf::JobsOptions o;
  o.compare = compare;
  for (auto _ : state) {
    auto r = gf::simulate_jobs(l.spec.spec, l.spec.catalog, l.plan, o);
    if (!r) throw std::runtime_error(gf::format_diagnostics(r.errors()));
    state.counters["worst_slowdown"] = r->run.worst_slowdown;
    state.counters["meeting_links"] = static_cast<double>(r->run.meetings.size());
    benchmark::DoNotOptimize(r.ok());
  }
}

void BM_Jobs16k(benchmark::State& s) { jobs(s, false); }
void BM_Jobs16kCompared(benchmark::State& s) { jobs(s, true); }
BENCHMARK(BM_Jobs16k)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_Jobs16kCompared)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
