// gpufabric estimate: the planning guide's calculator (seed §1, §3.2).
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/flags.h"
#include "estimate/estimate.h"
#include "report/plan_report.h"
#include "units/units.h"

namespace gf::cli {
namespace {

struct EstimateFlags {
  std::string params, precision = "bf16", gpus, link, nic, compute_time, comm_time, steps,
                      collective = "all_reduce";
  double link_efficiency = 1.0;
  bool json = false;
};

/// "a | b | c", for --collective's help.
std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " | ") + n;
  return out;
}

int run(const EstimateFlags& f) {
  std::vector<Diagnostic> errs;
  EstimateInput in;
  // Each value checked here, before any arithmetic: finite, in range, whole where it counts.
  const double kMinParams = 1;
  in.params = quantity_flag("--params", f.params, units::parse_count, kMinParams, kMaxFlagParams,
                            false, errs)
                  .value_or(0);
  if (auto p = parse_name(kPrecisionNames, f.precision))
    in.precision = *p;
  else
    errs.push_back(Diagnostic::flag("--precision",
                                    fmt::format("unknown precision '{}'", f.precision),
                                    "use fp32, bf16, fp16 or fp8"));
  in.gpus = static_cast<long long>(
      quantity_flag("--gpus", f.gpus, units::parse_count, 2, kMaxFlagGpus, true, errs).value_or(0));
  in.link_bits_per_s =
      quantity_flag("--link", f.link, units::parse_bitrate, 1, kMaxFlagBitsPerSecond, false, errs)
          .value_or(0);
  // Above zero, as --comm-time: 0 would read as no compute time given.
  in.compute_time_s = quantity_flag("--compute-time", f.compute_time, units::parse_seconds, 1e-9,
                                    kMaxFlagSeconds, false, errs)
                          .value_or(0);
  in.comm_time_s = quantity_flag("--comm-time", f.comm_time, units::parse_seconds, 1e-9,
                                 kMaxFlagSeconds, false, errs)
                       .value_or(0);
  in.steps = quantity_flag("--steps", f.steps, units::parse_count, 1, kMaxFlagSteps, true, errs)
                 .value_or(0);
  in.collective = f.collective;
  in.link_efficiency = f.link_efficiency;
  if (!f.nic.empty()) {
    auto cat = builtin_catalog();
    if (!cat) return fail(cat.errors());
    auto it = cat->nics.find(f.nic);
    if (it == cat->nics.end()) {
      errs.push_back(Diagnostic::flag("--nic", fmt::format("unknown NIC '{}'", f.nic),
                                      did_you_mean(f.nic, cat->nic_ids())));
    } else if (!f.link.empty()) {
      errs.push_back(Diagnostic::flag("--nic", "give --link or --nic, not both"));
    } else {
      in.link_bits_per_s = it->second.rate_gbps * 1e9;
    }
  }
  if (!errs.empty()) return fail(errs);
  auto e = estimate(in);
  if (!e) return fail(e.errors());
  if (f.json)
    std::cout << estimate_json(*e).dump(2) << "\n";
  else
    std::cout << estimate_text(*e);
  return kExitOk;
}

}  // namespace

Command add_estimate(CLI::App& root) {
  auto f = std::make_shared<EstimateFlags>();
  CLI::App* a = root.add_subcommand(
      "estimate",
      "How much traffic a gradient synchronisation makes and how long it takes on a link "
      "(the guide's calculator).");
  a->add_option("--params", f->params, "model parameters, e.g. 70B, 175B, 1.5T")->required();
  complete_with(a->add_option("--precision", f->precision,
                              "the training's precision, in which the guide counts a gradient "
                              "(Megatron-LM reduces bf16 "
                              "and fp8 training's in fp32: step's workload.grad_reduce): " +
                                  names_joined(kPrecisionNames))
                    ->capture_default_str(),
                [] { return names_of(kPrecisionNames); });
  a->add_option("--gpus", f->gpus, "GPUs taking part (ring size), e.g. 1024")->required();
  a->add_option("--link", f->link, "per-GPU link rate, e.g. 400G, 800Gbps, 50GB/s");
  complete_with(
      a->add_option("--nic", f->nic, "take the link rate from a catalog NIC, e.g. cx7-400g"),
      catalog_nic_ids);
  a->add_option("--link-efficiency", f->link_efficiency,
                "usable fraction of the line rate, in (0, 1] (the guide uses 1; NCCL reaches "
                "~0.92-0.96)")
      ->check(finite_in(1e-6, 1))
      ->capture_default_str();
  a->add_option("--compute-time", f->compute_time, "compute time per step, e.g. 10s");
  a->add_option("--comm-time", f->comm_time,
                "use this collective time instead of computing it, e.g. 1s (the guide's 1 s vs "
                "10 s example)");
  a->add_option("--steps", f->steps, "training steps, e.g. 100000 or 100k");
  complete_with(a->add_option("--collective", f->collective, joined(estimate_collectives()))
                    ->capture_default_str(),
                estimate_collectives);
  a->add_flag("--json", f->json, "print the result as JSON");
  return {a, [f] { return run(*f); }};
}

}  // namespace gf::cli
