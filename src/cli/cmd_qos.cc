// gpufabric qos: the RoCE QoS settings the configurations write, run at packet level on the
// fabric (the qos layer's engine), with the verdicts a network engineer acts on.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/flags.h"
#include "cli/resources.h"
#include "common/file.h"
#include "common/output.h"
#include "common/text.h"
#include "plan/plan.h"
#include "qos/engine.h"
#include "qos/report.h"
#include "topo/fabric.h"
#include "units/units.h"

namespace gf::cli {
namespace {

/// --dcqcn: off, the NICs' firmware defaults (what the configured hosts run), or the paper's.
enum class DcqcnChoice { kOn, kOff, kPaper };
inline constexpr EnumName<DcqcnChoice> kDcqcnChoiceNames[] = {
    {DcqcnChoice::kOn, "on"}, {DcqcnChoice::kOff, "off"}, {DcqcnChoice::kPaper, "paper"}};
enum class OnOff { kOn, kOff };
inline constexpr EnumName<OnOff> kOnOffNames[] = {{OnOff::kOn, "on"}, {OnOff::kOff, "off"}};

struct QosFlags {
  std::string spec, pattern = "alltoall", bytes = "64M", ecn = "on", pfc = "on", dcqcn = "on", out;
  std::string cc = "dcqcn";
  bool json = false;
  CLI::Option* cc_opt = nullptr;  // whether --cc was given (--dcqcn off means --cc none)
};

// --ecn on | off | paper | kmin=150K,kmax=1.5M,pmax=20%: the thresholds the configurations
// write, none, the DCQCN paper's, or others.
void parse_ecn(const std::string& text, EcnSettings& e, std::vector<Diagnostic>& errs) {
  const std::string hint = "use --ecn on, off, paper or kmin=150K,kmax=1536K,pmax=20%";
  if (text == "on") return;
  if (text == "off") {
    e.enabled = false;
    return;
  }
  if (text == "paper") {
    e = ecn_paper();
    return;
  }
  for (const std::string& kv : split(text, ',')) {
    const auto eq = kv.find('=');
    const std::string key = kv.substr(0, eq),
                      val = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (eq == std::string::npos || val.empty()) {
      errs.push_back(Diagnostic::flag("--ecn", fmt::format("cannot read '{}'", kv), hint));
      return;
    }
    if (key == "kmin" || key == "kmax") {
      auto b = units::parse_bytes(val, units::SizeStyle::kNccl);
      if (!b || !(*b >= 0) || *b > kMaxFlagBytes) {
        errs.push_back(Diagnostic::flag(
            "--ecn", fmt::format("{}: cannot read '{}' as bytes", key, val), hint));
        return;
      }
      (key == "kmin" ? e.kmin_bytes : e.kmax_bytes) = *b;
    } else if (key == "pmax") {
      std::string v = val;
      double scale = 1;
      if (v.back() == '%') {
        v.pop_back();
        scale = 0.01;
      }
      auto p = units::parse_ratio(v);
      if (!p || !(*p * scale > 0) || *p * scale > 1) {
        errs.push_back(Diagnostic::flag(
            "--ecn",
            fmt::format("pmax: '{}' is not a probability: a fraction in (0, 1], e.g. 0.2, or a "
                        "percentage with its sign, e.g. 20%",
                        val),
            hint));
        return;
      }
      e.pmax = *p * scale;
    } else {
      errs.push_back(Diagnostic::flag("--ecn", fmt::format("unknown key '{}'", key),
                                      did_you_mean(key, {"kmin", "kmax", "pmax"})));
      return;
    }
  }
  if (e.kmax_bytes <= e.kmin_bytes)
    errs.push_back(Diagnostic::flag(
        "--ecn",
        fmt::format("kmax ({:.0f} B) must be above kmin ({:.0f} B)", e.kmax_bytes, e.kmin_bytes),
        hint));
}

int run(const QosFlags& f) {
  std::vector<Diagnostic> errs;
  QosSettings s;
  // --pattern NAME or incast:N.
  std::string pname = f.pattern;
  int senders = 0;
  if (const auto c = pname.find(':'); c != std::string::npos) {
    const std::string n = pname.substr(c + 1);
    pname = pname.substr(0, c);
    // A number of senders, written out: parse_count's units (70B, 1K) read as parameter counts.
    if (!all_digits(n) || n.size() > 7 || std::stoi(n) < 1)
      errs.push_back(Diagnostic::flag(
          "--pattern", fmt::format("'{}' is not a number of senders", n),
          fmt::format("use incast:N with N a whole number from 1 to {}, e.g. incast:8",
                      kMaxQosEndpoints)));
    else
      senders = std::stoi(n);
  }
  const auto pattern = parse_name(kQosPatternNames, pname);
  if (!pattern)
    errs.push_back(Diagnostic::flag("--pattern", fmt::format("unknown pattern '{}'", f.pattern),
                                    "use incast:N, alltoall, all_reduce or permutation"));
  else if (*pattern == QosPattern::kIncast && senders == 0 &&
           f.pattern.find(':') == std::string::npos)
    errs.push_back(Diagnostic::flag("--pattern", "incast needs its number of senders",
                                    "use incast:N, e.g. incast:8"));
  else if (*pattern != QosPattern::kIncast && f.pattern.find(':') != std::string::npos)
    errs.push_back(Diagnostic::flag("--pattern", fmt::format("'{}' takes no :N", pname),
                                    "only incast:N does"));
  const auto bytes = nccl_bytes_flag("--bytes", f.bytes, 1, errs);
  parse_ecn(f.ecn, s.ecn, errs);
  if (auto p = parse_name(kOnOffNames, f.pfc))
    s.pfc = *p == OnOff::kOn;
  else
    errs.push_back(
        Diagnostic::flag("--pfc", fmt::format("cannot read '{}'", f.pfc), "use on or off"));
  const auto cc = parse_name(kCongestionControlNames, f.cc);
  if (cc)
    s.cc = *cc;
  else
    errs.push_back(Diagnostic::flag("--cc", fmt::format("unknown congestion control '{}'", f.cc),
                                    "use --cc dcqcn, hpcc or none"));
  if (auto d = parse_name(kDcqcnChoiceNames, f.dcqcn)) {
    if (*d == DcqcnChoice::kPaper) s.dcqcn_params = dcqcn_paper();
    const bool cc_given = f.cc_opt && f.cc_opt->count() > 0;
    if (*d == DcqcnChoice::kOff && !cc_given) s.cc = CongestionControl::kNone;
    // --dcqcn off or paper beside a --cc that says otherwise is a contradiction, not a choice.
    if (cc && cc_given &&
        ((*d == DcqcnChoice::kOff && *cc != CongestionControl::kNone) ||
         (*d == DcqcnChoice::kPaper && *cc != CongestionControl::kDcqcn)))
      errs.push_back(Diagnostic::flag(
          "--dcqcn", fmt::format("--dcqcn {} contradicts --cc {}", f.dcqcn, f.cc),
          "give --cc alone (dcqcn, hpcc or none), or --dcqcn paper with --cc dcqcn"));
  } else {
    errs.push_back(Diagnostic::flag("--dcqcn", fmt::format("cannot read '{}'", f.dcqcn),
                                    "use on, off or paper"));
  }
  if (!errs.empty()) return fail(errs);
  Heartbeat alive("qos");
  auto loaded = load_planned_spec(f.spec, load_limits(true));
  if (!loaded) return fail(loaded.errors());
  const Plan& plan = loaded->plan;
  if (plan.technology != Technology::kRoce)
    return fail(
        {loaded->spec.at("fabric.technology",
                         fmt::format("qos simulates RoCE's lossless Ethernet; this fabric is {}",
                                     technology_name(plan.technology)),
                         "run qos on a spec with fabric.technology: roce")});
  // Marking thresholds the switch's buffer cannot reach would mark nothing: a setting no
  // switch takes, not a run to simulate.
  if (s.ecn.enabled && plan.sw.buffer_mb > 0 && s.ecn.kmin_bytes >= plan.sw.buffer_mb * 1e6)
    return fail({Diagnostic::flag(
        "--ecn",
        fmt::format("kmin {} is at or above the {}'s {:g} MB packet buffer: no queue reaches it, "
                    "so nothing would be marked",
                    human_bytes(s.ecn.kmin_bytes), plan.sw.id, plan.sw.buffer_mb),
        "give thresholds within the buffer, e.g. --ecn kmin=150K,kmax=1536K,pmax=20% (the "
        "configurations' own)")});
  const Fabric fab = Fabric::build(plan, loaded->catalog);
  auto traffic = qos_traffic(plan, fab, *pattern, senders, *bytes);
  if (!traffic) {
    // A spec key (not a flag) is pointed at where the spec writes it.
    std::vector<Diagnostic> errs;
    for (const auto& d : traffic.errors())
      errs.push_back(d.key.empty() || d.key.rfind("-", 0) == 0
                         ? d
                         : loaded->spec.at(d.key, d.message, d.hint));
    return fail(errs);
  }
  const QosResult r = run_qos(plan, loaded->catalog, fab, traffic->flows, s);
  const QosRunInfo info{plan.name, traffic->what, qos_settings_line(s), plan.topo.lane_gbps};
  const nlohmann::json json = qos_json(info, r);
  const std::string text = qos_text(info, r);
  if (!f.out.empty()) {
    if (auto code = write_out_folder(
            f.out,
            {{"qos.json", json.dump(2) + "\n"}, {"qos.txt", text}, {"ports.csv", qos_ports_csv(r)}},
            f.json))
      return *code;
  }
  if (f.json)
    std::cout << json.dump(2) << "\n";
  else
    std::cout << text;
  return r.all_pass() ? kExitOk : kExitFindings;
}

}  // namespace

Command add_qos(CLI::App& root) {
  auto f = std::make_shared<QosFlags>();
  CLI::App* a = root.add_subcommand(
      "qos",
      "Run the fabric's RoCE QoS (PFC, ECN, DCQCN as the configurations set them) at packet "
      "level: queues, pauses, marks, drops, completion times, and verdicts. Exit 1 when a "
      "verdict fails.");
  a->add_option("SPEC", f->spec, "the cluster spec (YAML), fabric.technology: roce")->required();
  complete_with(
      a->add_option("--pattern", f->pattern,
                    "traffic: incast:N (N senders to one NIC), alltoall, all_reduce "
                    "(NCCL's ring) or permutation")
          ->capture_default_str(),
      [] {
        return std::vector<std::string>{"incast:8", "alltoall", "all_reduce", "permutation"};
      });
  a->add_option("--bytes", f->bytes,
                "per sender (incast, permutation) or per rank as nccl-tests' -b (alltoall, "
                "all_reduce); K M G binary")
      ->capture_default_str();
  complete_with(a->add_option("--ecn", f->ecn,
                              "ECN marking: on (the configurations' 150K/1536K/20%), off, paper "
                              "(DCQCN paper's 5K/200K/1%) or kmin=..,kmax=..,pmax=..")
                    ->capture_default_str(),
                [] {
                  return std::vector<std::string>{"on", "off", "paper"};
                });
  complete_with(
      a->add_option("--pfc", f->pfc, "PFC on the RoCE priority: on or off")->capture_default_str(),
      [] { return names_of(kOnOffNames); });
  f->cc_opt = a->add_option("--cc", f->cc,
                            "congestion control at the NICs: dcqcn (ECN and CNPs, as the "
                            "configured hosts run), hpcc (INT from every switch, the HPCC "
                            "paper's window) or none (PFC alone)")
                  ->capture_default_str();
  complete_with(f->cc_opt, [] { return names_of(kCongestionControlNames); });
  complete_with(a->add_option("--dcqcn", f->dcqcn,
                              "DCQCN's parameters: on (ConnectX firmware defaults), off (as "
                              "--cc none), or paper (the DCQCN paper's parameters)")
                    ->capture_default_str(),
                [] { return names_of(kDcqcnChoiceNames); });
  a->add_flag("--json", f->json, "print the result as JSON");
  a->add_option("-o,--out", f->out, "also write qos.json, qos.txt and ports.csv into DIR")
      ->check(path_named());
  return {a, [f] { return run(*f); }};
}

}  // namespace gf::cli
