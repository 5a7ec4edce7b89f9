// The subcommands. Each registers its flags on the app and returns what runs it; the work
// itself is done by the model layers, this layer only reads flags and prints.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/diag.h"
#include "common/output.h"

namespace gf::cli {

/// Exit codes (docs/ARCHITECTURE.md).
constexpr int kExitOk = 0;
constexpr int kExitFindings = 1;
constexpr int kExitBadInput = 2;
/// A bug in gpufabric (an exception escaped a model): no input should reach it; report it.
constexpr int kExitInternal = 3;

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command add_estimate(CLI::App& root);
Command add_plan(CLI::App& root);
Command add_simulate(CLI::App& root);
Command add_calibrate(CLI::App& root);
Command add_step(CLI::App& root);
Command add_what_if(CLI::App& root);
Command add_jobs(CLI::App& root);
Command add_replay(CLI::App& root);
Command add_qos(CLI::App& root);
Command add_check(CLI::App& root);
Command add_acceptance(CLI::App& root);
Command add_diagnose(CLI::App& root);
Command add_doctor(CLI::App& root);
Command add_exporter(CLI::App& root);
Command add_dashboard(CLI::App& root);
Command add_report(CLI::App& root);
Command add_sweep(CLI::App& root);
Command add_configs(CLI::App& root);
Command add_lab(CLI::App& root);

/// Prints diagnostics to stderr and returns kExitBadInput.
int fail(const std::vector<Diagnostic>& errors);

/// Writes `files` into the folder of -o (write_outputs) and names each on stderr, unless `quiet`
/// (--json keeps stderr for errors). Returns the exit code of a failure, nullopt when written.
std::optional<int> write_out_folder(const std::string& dir, const std::vector<OutputFile>& files,
                                    bool quiet);

/// The folders `files` go into, by their first name part ("link-tests" of
/// "link-tests/round-01.sh"), in name order; files at the top are in none.
std::vector<std::string> top_folders(const std::vector<OutputFile>& files);

/// Names on `out` the files of an earlier run that write_outputs removed from `dir` (`retired`):
/// nothing when there are none, up to 3 names otherwise.
void note_retired(std::ostream& out, const std::string& dir,
                  const std::vector<std::string>& retired);

}  // namespace gf::cli
