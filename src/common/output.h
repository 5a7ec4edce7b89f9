// Writing result files: all or nothing, so bad input never leaves half-written output.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "common/diag.h"

namespace gf {

/// A file to write: name relative to the output folder, and its content.
using OutputFile = std::pair<std::string, std::string>;

/// Writes every file into `dir` (created if missing): each goes to a temporary name first and
/// all are renamed into place only once all were written. Returns the paths written.
Result<std::vector<std::string>> write_outputs(const std::string& dir,
                                               const std::vector<OutputFile>& files);

/// Writes one file at `path` from `write` (streamed, so that a large table is never held in
/// memory): into a temporary file beside it first, renamed over `path` only once all was
/// written; on failure nothing is left. `flag` names the option in errors. Refuses a folder or
/// anything but a regular file in the way, a missing parent folder, and "-" (which users read
/// as standard output). Returns the path.
Result<std::string> write_output_file(const std::string& path, const std::string& flag,
                                      const std::function<void(std::ostream&)>& write);

/// What write_output_file would refuse at `path` before writing anything, or nullopt: a
/// command with two outputs checks the second before it writes the first, so that nothing is
/// left when the second cannot be written.
std::optional<Diagnostic> output_file_problem(const std::string& path, const std::string& flag);

/// The files under `dir`'s folders `folders` (names relative to `dir`, "hosts/") that are not
/// among `files`: what an earlier run left there, which this one did not write (and does not
/// delete). At most `limit` names are listed; `count` receives them all.
std::vector<std::string> files_left_from_before(const std::string& dir,
                                                const std::vector<std::string>& folders,
                                                const std::vector<OutputFile>& files,
                                                std::size_t limit, std::size_t& count);

/// A CSV field, quoted when it holds a comma, a quote or a newline (RFC 4180).
std::string csv_field(const std::string& s);

}  // namespace gf
