// Numeric flags are validated as the spec's keys are: finite, within a range that a real cluster
// can have, whole where they count things; an error names the flag and exits 2.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/diag.h"
#include "spec/spec.h"

namespace gf::cli {

/// GPUs a flag may name: 2^24, sixteen times the largest clusters being built (1M GPUs).
constexpr double kMaxFlagGpus = 16777216;
/// Nodes and GPUs per node a flag may name: the spec's own bounds (spec.h).
constexpr int kMaxFlagNodes = static_cast<int>(kMaxSpecNodes);
constexpr int kMaxFlagGpusPerNode = static_cast<int>(kMaxSpecPerNode);
/// Model parameters: 10^15, a thousand times the largest published dense models (~1T).
constexpr double kMaxFlagParams = 1e15;
/// Training steps: the spec's bound on workload.steps (spec.h).
constexpr double kMaxFlagSteps = kMaxSpecSteps;
/// A per-step or per-collective time: one year.
constexpr double kMaxFlagSeconds = 365.0 * 24 * 3600;
/// A link rate: the catalog's bound on a port's rate (kMaxPortGbps, 100 Tb/s).
constexpr double kMaxFlagBitsPerSecond = kMaxPortGbps * 1e9;
/// A collective's size: 10 TB, as simulate has always refused larger.
constexpr double kMaxFlagBytes = 1e13;

/// A CLI11 check for a plain number flag: finite (no nan or inf) and within [lo, hi].
CLI::Validator finite_in(double lo, double hi);
/// A CLI11 check for an unsigned 64-bit flag (a seed): decimal digits that fit, so that "-1" or
/// 2^64 is refused rather than wrapped or clamped.
CLI::Validator unsigned_64_check();
/// A CLI11 check for an optional output flag (-o DIR, --links FILE): a name, not empty text, which
/// the command would otherwise read as the flag not given and write nothing.
CLI::Validator path_named();
/// A CLI11 check for a flag whose empty value would read as the flag not given (--nccl ""):
/// refused. (A delimited list's empty items never reach it: CLI11 drops them, so a list flag
/// splits its own items, as configs' --target does.)
CLI::Validator non_empty();

/// A flag given as text with a unit (70B, 400G, 10s, 8G), read by `parse` (one of the units
/// parsers) and checked: finite, within [lo, hi], and an integer when `whole`. Returns nullopt
/// and appends an error naming `flag` when it is not; an empty `text` (flag not given) is
/// nullopt without an error.
std::optional<double> quantity_flag(const std::string& flag, const std::string& text,
                                    const std::function<Result<double>(std::string_view)>& parse,
                                    double lo, double hi, bool whole,
                                    std::vector<Diagnostic>& errs);

/// A message size as nccl-tests writes it (-b 8 -e 8G: K, M and G binary), whole bytes in
/// [lo, kMaxFlagBytes]; errors as quantity_flag.
std::optional<double> nccl_bytes_flag(const std::string& flag, const std::string& text, double lo,
                                      std::vector<Diagnostic>& errs);

/// --load-balancing: one of fabric.load_balancing's modes, nullopt when not given (empty); an
/// unknown one is an error with the nearest mode.
std::optional<LoadBalancing> load_balancing_flag(const std::string& text,
                                                 std::vector<Diagnostic>& errs);

}  // namespace gf::cli
