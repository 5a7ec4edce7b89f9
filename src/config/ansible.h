// Ansible inventory (switches by role, hosts by scalable unit) and a playbook that applies the
// generated host files.
#pragma once

#include <string>

#include "config/addressing.h"
#include "plan/plan.h"

namespace gf {

std::string ansible_inventory(const Plan& plan, const AddressPlan& a);
std::string ansible_playbook();

}  // namespace gf
