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

/// The file in each output folder that lists what gpufabric wrote there (name, bytes, hash).
constexpr const char* kOutputRecord = ".gpufabric-outputs";

/// Writes every file into `dir` (created if missing): each goes to a temporary name first and
/// all are renamed into place only once all were written. A file already at an output's name is
/// replaced only where `dir`'s record (kOutputRecord, written with the outputs) says gpufabric
/// wrote it and it still holds what was written; any other (the user's, or one edited since) is
/// refused, each named, and nothing is written. Runs on one folder take turns (a lock on it),
/// and a run cut short leaves every file replaceable by the next. Returns the paths written
/// (not the record).
///
/// `whole_folders`: the folders of `dir` this run writes whole (acceptance's link-tests/, a
/// config target's frr/). A file there that an earlier run wrote (in the record), that this run
/// does not write, and that still holds what was written, is removed with this run (put back if
/// the run fails), with the folders it leaves empty: a script or config of a design that is no
/// longer, which a glob over the folder would otherwise pick up. Any other file is left as it
/// is. `retired`, when given, receives the names removed (relative to `dir`, in name order).
Result<std::vector<std::string>> write_outputs(const std::string& dir,
                                               const std::vector<OutputFile>& files,
                                               const std::vector<std::string>& whole_folders = {},
                                               std::vector<std::string>* retired = nullptr);

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

/// The files under `dir`'s folders that are not among this run's: what earlier gpufabric runs
/// wrote there (in `dir`'s record) and files gpufabric did not write. At most `limit` names of
/// each kind are listed, in name order; `count` is all of them.
struct FilesLeft {
  std::vector<std::string> earlier_runs, not_gpufabrics;
  std::size_t count = 0;
};
FilesLeft files_left_from_before(const std::string& dir, const std::vector<std::string>& folders,
                                 const std::vector<OutputFile>& files, std::size_t limit);

/// A CSV field, quoted when it holds a comma, a quote or a newline (RFC 4180).
std::string csv_field(const std::string& s);

}  // namespace gf
