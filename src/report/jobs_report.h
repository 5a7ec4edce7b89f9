// Many jobs on one fabric (sim/jobs.h) as text, JSON, a CSV of the traffic per link with the jobs
// that cross each link, and the HTML report's jobs section.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "plan/plan.h"
#include "sim/jobs.h"
#include "sim/link_load.h"

namespace gf {

/// The node indices as name ranges: "node0001-node0032, node0065-node0096" (at most `ranges`
/// ranges, then how many more).
std::string node_ranges(const std::vector<int>& nodes, const std::vector<std::string>& names,
                        int ranges = 3);

/// The human-readable result: per job its placement, step alone and together, slowdown and
/// whom it meets; the slowed communication; the hottest meeting links; the comparison and the
/// advice.
std::string jobs_text(const Plan& plan, const JobsResult& r, const LinkNames& names, int top = 8);

/// The result as JSON (keys in the README's tour).
nlohmann::json jobs_json(const Plan& plan, const JobsResult& r, const LinkNames& names,
                         int top = 20);

/// Every directed link that carries any job's traffic, hottest first: simulate --links' columns
/// (kLinksCsvHeader) and `jobs`, the jobs whose flows cross it (';'-separated), streamed.
void write_jobs_links_csv(std::ostream& out, const JobsResult& r, const LinkNames& names);

/// The HTML report's jobs section (a <section> element, self-contained).
std::string jobs_html_section(const JobsResult& r, const LinkNames& names);

}  // namespace gf
