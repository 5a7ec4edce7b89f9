// Shell completion from the parser itself: `gpufabric completion bash` walks the app's
// subcommands and options and prints a bash script, so the completion offers exactly the flags
// the parser takes. A flag whose values come from a closed set (an enum's table of names) or the
// catalog names them where it is declared, with complete_with; any other value completes as a
// file name.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace gf::cli {

/// Where a flag's values come from: called only when a completion script is printed.
using CompletionValues = std::function<std::vector<std::string>()>;

/// Records that `option` (a flag or a positional) takes one of `values`; returns `option`, to
/// chain as CLI11's own setters do.
CLI::Option* complete_with(CLI::Option* option, CompletionValues values);
/// The values recorded for `option`; empty when none were.
std::vector<std::string> completion_values(const CLI::Option* option);

/// The NIC ids of the built-in catalog, for the flags that take one (estimate's and what-if's
/// --nic); none when the catalog does not load.
std::vector<std::string> catalog_nic_ids();

/// The bash completion script for `root`'s subcommands: each one's flags, the values of the
/// flags and positionals given complete_with, file names for the others.
std::string bash_completion(const CLI::App& root);

/// `gpufabric completion bash`: prints bash_completion of `root` (as built when it runs).
Command add_completion(CLI::App& root);

}  // namespace gf::cli
