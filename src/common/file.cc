#include "common/file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gf {
namespace {

/// Closes a descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

Diagnostic too_large(const std::string& path, const std::string& key, const std::string& what,
                     std::size_t max_bytes) {
  return Diagnostic::in_file(path, key,
                             fmt::format("{}; at most {} is read", what, human_bytes(max_bytes)),
                             "check that this is the file you meant");
}

}  // namespace

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
                                      const std::string& key, const std::string& what) {
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
  if (regular && static_cast<std::size_t>(st.st_size) > max_bytes)
    return too_large(path, key, what + " is " + human_bytes(static_cast<double>(st.st_size)),
                     max_bytes);
  const int flags = ::fcntl(f.fd, F_GETFL);
  if (flags >= 0) ::fcntl(f.fd, F_SETFL, flags & ~O_NONBLOCK);

  std::string out;
  if (regular) out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return Diagnostic::in_file(path, key,
                                 fmt::format("cannot read the {}: {}", what, std::strerror(errno)));
    }
    if (out.size() + static_cast<std::size_t>(n) > max_bytes)
      return too_large(path, key, what + " goes on past the limit (a device or a growing file?)",
                       max_bytes);
    out.append(buf, static_cast<std::size_t>(n));
  }
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
  auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*in)
    return Diagnostic::in_file(path, key, fmt::format("cannot read the {}", what),
                               "check the path and its permissions");
  return in;
}

}  // namespace gf
