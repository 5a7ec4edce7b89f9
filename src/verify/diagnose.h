// Diagnosis of real measurements and logs by the guide's troubleshooting table (seed §6).
// The comparison of measurements with the simulated plan (`check`) is in verify/check.h, the
// local host (`doctor`) in verify/doctor.h.
#pragma once

#include <string>
#include <vector>

#include "common/diag.h"
#include "plan/plan.h"
#include "verify/check.h"
#include "verify/findings.h"
#include "verify/parsers.h"

namespace gf {

/// Applies every rule to every file. `line_rate_gbps` (0 = unknown) is the NIC port rate the
/// RDMA and TCP figures are judged against; with a plan, nccl-tests results are also compared
/// with the simulated expectation, and on a RoCE plan the rails named in `rail_netdevs` (the
/// spec's addressing.host_netdevs) are checked in `ip link` output: present, up, and at the
/// planned MTU. Unreadable files are errors.
Result<std::vector<Finding>> diagnose(const std::vector<ToolOutput>& files, double line_rate_gbps,
                                      const Plan* plan = nullptr, const Catalog* catalog = nullptr,
                                      const std::vector<std::string>& rail_netdevs = {});

}  // namespace gf
