#include "common/file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

namespace gf {
namespace {

/// Closes a descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// The files this process read as inputs, by device and inode (so that another name or a link
// to one is the same file).
std::mutex inputs_mutex;
std::set<std::pair<dev_t, ino_t>> inputs;

void note_input(const struct stat& st) {
  std::lock_guard<std::mutex> lock(inputs_mutex);
  inputs.insert({st.st_dev, st.st_ino});
}

// Waits until `fd` has data (or its end), at most `seconds`: false when it stayed silent.
bool wait_readable(int fd, int seconds) {
  struct pollfd p {
    fd, POLLIN, 0
  };
  for (;;) {
    const int r = ::poll(&p, 1, seconds * 1000);
    if (r < 0 && errno == EINTR) continue;
    return r != 0;
  }
}

Diagnostic silent(const std::string& path, const std::string& key, const std::string& what,
                  int seconds) {
  return Diagnostic::in_file(
      path, key,
      fmt::format("the {} brought no data for {} s (a pipe or FIFO whose writer "
                  "writes nothing)",
                  what, seconds),
      "write the output to a file first, or check what feeds the pipe");
}

Diagnostic too_large(const std::string& path, const std::string& key, const std::string& what,
                     std::size_t max_bytes) {
  return Diagnostic::in_file(path, key,
                             fmt::format("{}; at most {} is read", what, human_bytes(max_bytes)),
                             "check that this is the file you meant");
}

}  // namespace

bool is_input_of_this_run(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  std::lock_guard<std::mutex> lock(inputs_mutex);
  return inputs.count({st.st_dev, st.st_ino}) > 0;
}

std::string human_bytes(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.3g} {}", bytes, kUnits[u]);
}

Result<std::string> read_file_bounded(const std::string& path, std::size_t max_bytes,
                                      const std::string& key, const std::string& what,
                                      int idle_seconds) {
  // O_NONBLOCK so that opening a FIFO without a writer does not wait; cleared below.
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)};
  if (f.fd < 0)
    return Diagnostic::in_file(path, key,
                               fmt::format("cannot read the {}: {}", what, std::strerror(errno)),
                               "check the path");
  struct stat st {};
  if (::fstat(f.fd, &st) != 0)
    return Diagnostic::in_file(path, key,
                               fmt::format("cannot read the {}: {}", what, std::strerror(errno)),
                               "check the path");
  if (S_ISDIR(st.st_mode))
    return Diagnostic::in_file(path, key, "is a folder, not a " + what, "name a file");
  const bool regular = S_ISREG(st.st_mode);
  if (regular) note_input(st);
  if (regular && static_cast<std::size_t>(st.st_size) > max_bytes)
    return too_large(path, key, what + " is " + human_bytes(static_cast<double>(st.st_size)),
                     max_bytes);
  // A regular file reads without waiting; a pipe, FIFO or device stays non-blocking: a read
  // that finds no data waits for it at most idle_seconds, and one that finds no writer (a FIFO
  // nobody opened for writing) is its end at once.
  const int flags = ::fcntl(f.fd, F_GETFL);
  if (regular && flags >= 0) ::fcntl(f.fd, F_SETFL, flags & ~O_NONBLOCK);

  std::string out;
  if (regular) out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (!wait_readable(f.fd, idle_seconds)) return silent(path, key, what, idle_seconds);
        continue;
      }
      return Diagnostic::in_file(path, key,
                                 fmt::format("cannot read the {}: {}", what, std::strerror(errno)));
    }
    if (out.size() + static_cast<std::size_t>(n) > max_bytes)
      return too_large(path, key, what + " goes on past the limit (a device or a growing file?)",
                       max_bytes);
    out.append(buf, static_cast<std::size_t>(n));
  }
  if (S_ISFIFO(st.st_mode) && out.empty())
    return Diagnostic::in_file(path, key,
                               fmt::format("the {} is a FIFO that nothing was written into", what),
                               "start its writer first, or give the output as a file");
  return out;
}

Result<std::unique_ptr<std::ifstream>> open_input_file(const std::string& path,
                                                       const std::string& key,
                                                       const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Diagnostic::in_file(path, key,
                               fmt::format("cannot read the {}: {}", what, std::strerror(errno)),
                               "check the path");
  if (S_ISDIR(st.st_mode))
    return Diagnostic::in_file(path, key, "is a folder, not a " + what, "name a file");
  // A pipe, FIFO or device would be waited on without end (opening a FIFO waits for its
  // writer) and cannot be read twice: a streamed input is a file.
  if (!S_ISREG(st.st_mode))
    return Diagnostic::in_file(
        path, key, fmt::format("the {} is not a regular file (a pipe, FIFO or device)", what),
        "write it to a file first and give that");
  note_input(st);
  auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*in)
    return Diagnostic::in_file(path, key, fmt::format("cannot read the {}", what),
                               "check the path and its permissions");
  return in;
}

namespace {

namespace fs = std::filesystem;

/// System folders no tool's folder is made in or taken as: it would sit among the system's own
/// (with --state-dir /, a lab named etc would have /etc as its folder; plan -o / writes plan.md
/// beside /etc).
const std::vector<fs::path> kSystemFolders{
    "/",          "/bin",   "/boot",    "/dev",     "/etc",       "/home",
    "/lib",       "/lib32", "/lib64",   "/libx32",  "/media",     "/mnt",
    "/opt",       "/proc",  "/root",    "/run",     "/sbin",      "/srv",
    "/sys",       "/usr",   "/usr/bin", "/usr/lib", "/usr/local", "/usr/sbin",
    "/usr/share", "/var",   "/var/lib", "/var/log", "/var/run",   "/var/tmp"};
/// Kernel file systems: nothing can be kept anywhere under them.
const std::vector<fs::path> kKernelTrees{"/proc", "/sys", "/dev"};

bool is_within(const fs::path& p, const fs::path& tree) {
  auto pi = p.begin();
  for (auto ti = tree.begin(); ti != tree.end(); ++ti, ++pi)
    if (pi == p.end() || *pi != *ti) return false;
  return true;
}

}  // namespace

std::filesystem::path normal_path(const std::filesystem::path& p) {
  std::error_code ec;
  fs::path n = fs::absolute(p, ec).lexically_normal();
  if (ec) n = p.lexically_normal();
  if (n.has_relative_path() && n.filename().empty()) n = n.parent_path();
  return n;
}

std::optional<std::string> system_folder_reason(const std::string& dir, std::string* where) {
  // Both the path as given and where it leads (symbolic links followed).
  const fs::path given = normal_path(dir);
  std::error_code ec;
  fs::path real = fs::weakly_canonical(given, ec);
  real = ec ? given : normal_path(real);
  for (const fs::path& p : {given, real}) {
    const bool system =
        std::find(kSystemFolders.begin(), kSystemFolders.end(), p) != kSystemFolders.end();
    const bool kernel = std::any_of(kKernelTrees.begin(), kKernelTrees.end(),
                                    [&](const fs::path& t) { return is_within(p, t); });
    if (!system && !kernel) continue;
    if (where) *where = p.string();
    return std::string(system ? "a system folder" : "in a kernel file system");
  }
  return std::nullopt;
}

}  // namespace gf
