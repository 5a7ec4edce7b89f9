// `doctor`: the local host inspected for the usual mistakes.
#pragma once

#include <string>
#include <vector>

#include "verify/findings.h"

namespace gf {

/// The local host inspected like the files: MTUs, RDMA devices, memlock, NCCL variables, and
/// nvidia-smi / ibv_devinfo output when those tools exist. `sysfs` is the root of /sys.
std::vector<Finding> doctor(const std::string& sysfs);
/// The same with the environment given (NAME=VALUE strings) instead of this process's.
std::vector<Finding> doctor(const std::string& sysfs, const std::vector<std::string>& environment);

}  // namespace gf
