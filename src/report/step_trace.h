// One training step as a timeline in the Chrome trace-event format (Perfetto and
// chrome://tracing open it): a process per pipeline stage, a thread per stream.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/step.h"

namespace gf {

/// The step's schedule laid out event by event: each stage runs Megatron-LM's 1F1B (or
/// interleaved) order of forwards and backwards, a microbatch waits for the stage before it
/// (and its activations' transfer), and the exposed communication of every parallel dimension
/// sits on its own track. `{"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}`.
nlohmann::json step_trace(const StepResult& r);

}  // namespace gf
