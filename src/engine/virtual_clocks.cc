#include "engine/virtual_clocks.h"

#include <memory>
#include <vector>

namespace hogwild::detail {

Callbacks with_virtual_clocks(const TrainConfig& config, const Callbacks& callbacks) {
  if (!config.virtual_time) return callbacks;
  auto clocks = std::make_shared<std::vector<std::shared_ptr<WorkerClock>>>();
  for (int worker = 0; worker < config.workers(); ++worker) {
    clocks->push_back(callbacks.clock ? callbacks.clock(worker)
                                      : std::make_shared<ManualClock>(config.sample_cost_ns));
  }
  Callbacks result = callbacks;
  result.clock = [clocks](int worker) { return (*clocks)[static_cast<std::size_t>(worker)]; };
  return result;
}

}  // namespace hogwild::detail
