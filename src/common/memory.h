// How much memory this process may still use, so that a command can refuse work that would not
// fit instead of dying in the middle of it.
#pragma once

namespace gf {

/// Bytes this process can still allocate: the least of the machine's available memory
/// (/proc/meminfo MemAvailable), what its address-space limit (ulimit -v) leaves, and what its
/// cgroup's memory.max leaves; 0 when none of them can be read.
double available_memory_bytes();

}  // namespace gf
