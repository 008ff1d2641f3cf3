#pragma once

// The delay layer of one worker: injected delays drawn, held and released.

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/delay_line.h"
#include "engine/global_steps.h"
#include "engine/samplers.h"
#include "hogwild/delay.h"

namespace hogwild::detail {

/// One worker's delay layer (--delay): each update computed at the worker's step t draws a
/// delay d and is applied at its step t + d, after that step's own computation; updates due at
/// the same step are applied in the order computed. Steps count the worker's updates (or
/// samples, for single-sample updates), the same clock whether or not it computed an update.
template <class Entry>
class DelayLayer {
 public:
  /// Off: nothing is held back.
  DelayLayer() = default;
  /// Delays from `spec` (which must outlive the layer: its sampler reads it), drawn from
  /// `seed`.
  DelayLayer(const DelaySpec& spec, std::uint64_t seed) : line_(spec.max_delay()) {
    if (spec.kind != DelaySpec::Kind::kNone) sampler_.emplace(spec, seed);
  }

  /// Counts delays in the steps of `global` (every worker of one simulation shares it) for
  /// worker `worker`: hold() notes its updates there, and the caller releases them when
  /// `global` ends their step (release_at), instead of end_step().
  void count_globally(GlobalSteps* global, int worker) {
    global_ = global;
    worker_ = worker;
  }

  /// Delays are injected.
  bool on() const { return sampler_.has_value(); }
  /// Slots there are: a caller's payload storage indexed by slot needs this many.
  std::size_t capacity() const { return line_.capacity(); }
  /// Holds back `entry`, computed at the current step, for a delay it draws and counts in
  /// `injected`; returns its slot, valid until it is released.
  std::uint32_t hold(const Entry& entry, std::vector<std::uint64_t>& injected) {
    const std::uint32_t d = sampler_->next();
    ++injected[d];
    if (!global_) return line_.push(step_ + d, entry);
    line_.advance(global_->now());
    global_->note(global_->now() + d, worker_);
    return line_.push(global_->now() + d, entry);
  }
  /// Global steps: applies, by apply(entry, slot), what is due at the step `global` ends now.
  template <class Apply>
  void release_at_global_step(Apply&& apply) {
    line_.release(global_->now(), apply);
  }
  /// Ends the current step: applies, by apply(entry, slot), what is due at it.
  template <class Apply>
  void end_step(Apply&& apply) {
    line_.release(step_, apply);
    ++step_;
  }
  /// Appends the state of its delay draws to `words` (none when delays are off).
  void save(std::vector<std::uint64_t>& words) const {
    if (sampler_) sampler_->save(words);
  }
  /// Continues the delay draws from the state save() wrote.
  void restore(DrawReader& words) {
    if (sampler_) sampler_->restore(words);
  }
  /// Applies every held update, in due order (the end of an epoch).
  template <class Apply>
  void flush(Apply&& apply) {
    line_.flush(apply);
  }

 private:
  std::optional<DelaySampler> sampler_;
  DelayLine<Entry> line_;
  std::uint64_t step_ = 0;
  GlobalSteps* global_ = nullptr;
  int worker_ = 0;
};

}  // namespace hogwild::detail
