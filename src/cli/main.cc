// gpufabric: plan, simulate, configure and verify the network fabric of GPU clusters.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <set>

#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/version.h"
#include "common/output.h"

namespace gf::cli {

int fail(const std::vector<Diagnostic>& errors) {
  std::fputs(format_diagnostics(errors).c_str(), stderr);
  return kExitBadInput;
}

std::optional<int> write_out_folder(const std::string& dir, const std::vector<OutputFile>& files,
                                    bool quiet) {
  auto written = write_outputs(dir, files);
  if (!written) return fail(written.errors());
  if (!quiet)
    for (const auto& w : *written) std::cerr << "wrote " << w << "\n";
  return std::nullopt;
}

std::vector<std::string> top_folders(const std::vector<OutputFile>& files) {
  std::set<std::string> out;
  for (const auto& [name, content] : files) {
    const std::filesystem::path p(name);
    if (!p.parent_path().empty()) out.insert(p.begin()->string());
  }
  return {out.begin(), out.end()};
}

void note_retired(std::ostream& out, const std::string& dir,
                  const std::vector<std::string>& retired) {
  if (retired.empty()) return;
  constexpr std::size_t kNamed = 3;
  const std::vector<std::string> named(retired.begin(),
                                       retired.begin() + std::min(kNamed, retired.size()));
  out << fmt::format(
      "removed from {} {} file{} an earlier run wrote there and this one does not ({}{}): {} "
      "no longer part of this plan\n",
      dir, retired.size(), retired.size() == 1 ? "" : "s", fmt::join(named, ", "),
      retired.size() > named.size() ? ", ..." : "", retired.size() == 1 ? "it is" : "they are");
}

}  // namespace gf::cli

int main(int argc, char** argv) {
  using namespace gf::cli;
  CLI::App app{
      "gpufabric: plans, simulates, configures and verifies the network fabric of GPU clusters "
      "for large-model training.",
      "gpufabric"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "gpufabric " + build_version(),
                       "print the version and the git revision it was built from, and exit");
  app.footer(
      "Exit codes: 0 success, 1 findings (a check or diagnosis found problems), 2 bad input "
      "(a message names the file, line and key or the flag), 3 internal error (a bug in "
      "gpufabric: please report it with the command line).\nRun 'gpufabric COMMAND --help'.\n");
  std::vector<Command> commands = {
      add_estimate(app), add_plan(app),      add_simulate(app),  add_step(app),
      add_what_if(app),  add_jobs(app),     add_check(app),     add_diagnose(app),  add_doctor(app),
      add_acceptance(app),
      add_replay(app),
      add_exporter(app), add_dashboard(app), add_report(app),    add_sweep(app),
      add_configs(app),  add_lab(app),       add_calibrate(app), add_qos(app),
      add_completion(app)};
  // An unknown first word is a mistyped subcommand, not a missing one.
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const auto& c : commands) names.push_back(c.app->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      const std::string hint = gf::did_you_mean(argv[1], names);
      std::cerr << fmt::format("error: unknown subcommand '{}'{}\n", argv[1],
                               hint.empty() ? "" : " (" + hint + ")")
                << "subcommands: " << fmt::format("{}", fmt::join(names, ", ")) << "\n"
                << "run 'gpufabric --help' for what each does\n";
      return kExitBadInput;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string where;
    for (const auto* sub : app.get_subcommands()) where = " " + sub->get_name();
    std::cerr << "error: " << e.what() << "\n"
              << "run 'gpufabric" << where << " --help' for the flags\n";
    return kExitBadInput;
  }
  try {
    for (const auto& c : commands)
      if (c.app->parsed()) return c.run();
  } catch (const std::exception& e) {
    // Models report bad input as values; anything thrown here is a bug, still not a crash.
    std::cerr << "internal error: " << e.what()
              << "\nthis is a bug in gpufabric: please report it with the command line\n";
    return kExitInternal;
  }
  return kExitBadInput;
}
