// gpufabric lab up|check|down: the emulated fabric that proves the configurations.
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/flags.h"
#include "cli/resources.h"
#include "lab/lab.h"
#include "plan/plan.h"

namespace gf::cli {
namespace {

struct LabFlags {
  std::string action, spec;
  bool json = false;
  LabOptions options;
};

void warn(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
}

// `s` as one shell word: as it is when it needs no quoting, else in single quotes.
std::string shell_word(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_not_of(
                                       "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789_-.,/:=+@%") == std::string::npos;
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int up(const LabLayout& lab, const LabFlags& f) {
  auto r = lab_up(lab, f.options);
  if (!r) {
    std::cerr << format_diagnostics(r.errors()) << "\n";
    // The state folder could not be made: the flag was bad. Otherwise the machine was fine and
    // building the lab failed (and was undone).
    return r.errors().front().key == "--state-dir" ? kExitBadInput : kExitFindings;
  }
  warn(r->warnings);
  if (f.json) {
    std::cout << nlohmann::json{{"lab", lab.name},
                                {"namespaces", r->namespaces},
                                {"links", r->links},
                                {"daemons", r->daemons},
                                {"configs", r->config_dir}}
                     .dump(2)
              << "\n";
    return kExitOk;
  }
  std::cout << fmt::format(
      "lab {} is up: {} namespaces ({} switches, {} hosts), {} veth links, {} FRR daemons\n"
      "configurations in {}\nnext: gpufabric lab check {}{}\n",
      lab.name, r->namespaces, lab.addresses.switches.size(),
      lab.devices.size() - lab.addresses.switches.size(), r->links, r->daemons, r->config_dir,
      shell_word(f.spec),
      f.options.state_dir == kLabDefaultStateDir
          ? ""
          : " --state-dir " + shell_word(f.options.state_dir));
  return kExitOk;
}

int check(const LabLayout& lab, LabFlags f) {
  if (!f.json) {
    std::cout << fmt::format("lab {}:\n", lab.name) << std::flush;
    f.options.on_check = [](const LabCheck& c) {
      std::cout << fmt::format("  {}  {:<26} {} ({:.1f} s)\n", c.ok ? "PASS" : "FAIL", c.name,
                               c.detail, c.seconds)
                << std::flush;
    };
  }
  auto r = lab_check(lab, f.options);
  if (!r) return fail(r.errors());
  int passed = 0;
  nlohmann::ordered_json checks = nlohmann::ordered_json::array();
  for (const auto& c : *r) {
    passed += c.ok ? 1 : 0;
    checks.push_back({{"name", c.name},
                      {"ok", c.ok},
                      {"detail", c.detail},
                      {"seconds", std::round(c.seconds * 1000) / 1000}});
  }
  const bool ok = passed == static_cast<int>(r->size());
  if (f.json)
    std::cout << nlohmann::ordered_json{{"ok", ok}, {"lab", lab.name}, {"checks", checks}}.dump(2)
              << "\n";
  else
    std::cout << fmt::format("{} of {} checks passed\n", passed, r->size());
  return ok ? kExitOk : kExitFindings;
}

int down(const LabLayout& lab, const LabFlags& f) {
  if (geteuid() != 0) return fail({Diagnostic::error("the lab needs root", "run it as root")});
  auto down = lab_down(lab, f.options);
  if (!down) return fail(down.errors());
  const LabDownResult& r = *down;
  warn(r.warnings);
  if (f.json)
    std::cout << nlohmann::json{{"lab", lab.name},
                                {"namespaces_removed", r.namespaces},
                                {"processes_ended", r.processes}}
                     .dump(2)
              << "\n";
  else
    std::cout << fmt::format("lab {} is down: {} namespaces removed, {} FRR daemons ended\n",
                             lab.name, r.namespaces, r.processes);
  return kExitOk;
}

int run(LabFlags f) {
  auto loaded = load_planned_spec(f.spec, load_limits(false));
  if (!loaded) return fail(loaded.errors());
  auto lab = lab_layout(*loaded);
  if (!lab) return fail(lab.errors());
  // The state folder first (bad input whoever runs it): up and down remove a previous lab's.
  if (f.action != "check")
    if (auto errs = lab_state_errors(*lab, f.options); !errs.empty()) return fail(errs);
  if (f.action != "down")
    if (auto errs = lab_preflight(f.options); !errs.empty()) return fail(errs);
  if (isatty(STDERR_FILENO))
    f.options.progress = [](const std::string& line) { std::cerr << line << "\n"; };
  if (f.action == "up") return up(*lab, f);
  if (f.action == "check") return check(*lab, f);
  return down(*lab, f);
}

}  // namespace

Command add_lab(CLI::App& root) {
  auto f = std::make_shared<LabFlags>();
  CLI::App* c = root.add_subcommand(
      "lab",
      "The emulated fabric (root): `up` builds a network namespace per switch and host, a veth "
      "pair per cabling link, applies the generated host files and runs FRR with the generated "
      "frr.conf; `check` proves BGP, ECMP, jumbo frames, traffic and a link failure (exit 1 if "
      "any check fails); `down` removes it all.");
  static const std::vector<std::string> kActions = {"up", "check", "down"};
  complete_with(c->add_option("ACTION", f->action, "up | check | down")
                    ->required()
                    ->check(CLI::IsMember(kActions)),
                [] { return kActions; });
  c->add_option("SPEC", f->spec,
                "the cluster spec (YAML); a small one, e.g. "
                "examples/roce-lab-16.yaml")
      ->required();
  c->add_flag("--json", f->json, "print the result as JSON");
  c->add_option("--state-dir", f->options.state_dir,
                fmt::format("where the lab keeps its configurations, logs and namespace "
                            "record, in a folder named after the lab and marked as its own ({}); "
                            "system folders, and a lab folder it did not make, are refused "
                            "(exit 2)",
                            kLabStateMarker))
      ->capture_default_str();
  c->add_option("--frr-dir", f->options.frr_dir, "the folder holding FRR's zebra and bgpd")
      ->capture_default_str();
  c->add_option("--timeout", f->options.timeout_s,
                "seconds check waits for BGP to converge before it fails")
      ->capture_default_str()
      ->check(finite_in(1, 3600));
  return {c, [f] { return run(*f); }};
}

}  // namespace gf::cli
