// Reading files a user names, with a limit: no input can make gpufabric read without end.
#pragma once

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "common/diag.h"

namespace gf {

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;

/// Specs, catalogs and calibration CSVs: the largest shipped is under 64 KiB, a 131,072-node
/// spec is a few hundred bytes, so 4 MiB is generous and still parses in well under a second.
constexpr std::size_t kMaxSpecBytes = 4 * kMiB;
/// Outputs of real tools read by `check`, `diagnose` and `report --measured`: an NCCL_DEBUG=INFO
/// log of a 1,024-rank job is about 30 MiB; anything larger should be filtered (grep NCCL) first.
constexpr std::size_t kMaxToolOutputBytes = 256 * kMiB;
/// One sysfs counter or `ethtool -S` dump: a few KiB at most on real NICs (ethtool -S of a
/// ConnectX-7 port is ~40 KiB with every per-queue counter), so 256 KiB.
constexpr std::size_t kMaxCounterFileBytes = 256 * kKiB;

/// How long a pipe or FIFO may stay silent before its reader gives up, seconds: a writer that
/// holds it open and writes nothing would otherwise keep gpufabric waiting without end.
constexpr int kInputIdleSeconds = 30;

/// `p` absolute, without "." or ".." and without a trailing slash: "/tmp/../etc/" is "/etc".
std::filesystem::path normal_path(const std::filesystem::path& p);

/// Why `dir` is no place for a tool's own folder: "a system folder" (/, /etc, /home, /usr, /var
/// and their like, where a folder of outputs would sit among the system's own, or be one of
/// them) or "in a kernel file system" (under /proc, /sys, /dev), for the path as given or where
/// its links lead; nullopt elsewhere. `where` gets the path that was refused.
std::optional<std::string> system_folder_reason(const std::string& dir,
                                                std::string* where = nullptr);

/// The whole file at `path`, or a diagnostic naming it (and `key`, the flag or spec key that
/// named it). A regular file larger than `max_bytes` is refused before anything is read; any
/// other file (a pipe, a device such as /dev/zero, a /proc or sysfs entry) is read in blocks and
/// refused as soon as it passes `max_bytes`, so memory stays bounded by `max_bytes`. A folder
/// is refused with its own message. `what` names the file in messages ("spec file").
/// A pipe or FIFO is read as it comes, each wait for data at most `idle_seconds`; one that had
/// no writer (nothing read) is refused rather than read as an empty file.
Result<std::string> read_file_bounded(const std::string& path, std::size_t max_bytes,
                                      const std::string& key = "", const std::string& what = "file",
                                      int idle_seconds = kInputIdleSeconds);

/// Opens `path` to be streamed by a reader that bounds what it reads itself (a trace of
/// gigabytes is never held whole): refuses a folder and a file that cannot be opened, with a
/// diagnostic naming it (and `key`), and anything but a regular file (a FIFO would be waited
/// on without end, and a stream read twice). `what` names the file in messages ("trace").
Result<std::unique_ptr<std::ifstream>> open_input_file(const std::string& path,
                                                       const std::string& key = "",
                                                       const std::string& what = "file");

/// Whether the file at `path` (followed through links) is one this process read as an input
/// (read_file_bounded, open_input_file): an output must never replace its own command's input.
bool is_input_of_this_run(const std::string& path);

/// "4 MiB", "256 KiB", "1.5 GiB": a byte count for messages.
std::string human_bytes(double bytes);

}  // namespace gf
