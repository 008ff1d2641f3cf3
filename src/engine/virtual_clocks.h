#pragma once

// The clocks of a simulation in virtual time (--simulate K --clock virtual): one per virtual
// worker, read by the worker's time windows, speed model and staleness probe, and by the
// driver, which runs the worker whose clock is earliest.

#include "hogwild/trainer.h"

namespace hogwild::detail {

/// `callbacks` with a clock factory that hands out one clock per virtual worker, the same one
/// however often it is asked: the caller's (Callbacks::clock, asked once per worker) or a
/// ManualClock on which a sample costs --sample-cost. Unchanged outside virtual time.
Callbacks with_virtual_clocks(const TrainConfig& config, const Callbacks& callbacks);

}  // namespace hogwild::detail
