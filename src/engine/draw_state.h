#pragma once

// The state of a worker's seeded draws (injected delays, the speed model) between epochs, as
// words: a checkpoint keeps them (TrainState::worker_draws) so that a resumed run draws what
// the uninterrupted run draws.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hogwild/detail/random.h"
#include "hogwild/error.h"
#include "hogwild/trainer.h"

namespace hogwild::detail {

/// Appends a generator's state to a worker's words.
inline void save_rng(const Rng& rng, std::vector<std::uint64_t>& words) {
  const auto state = rng.state();
  words.insert(words.end(), state.begin(), state.end());
}

/// Reads back, in the order they were saved, the words of one worker's draws.
class DrawReader {
 public:
  /// The words of worker `worker`.
  DrawReader(std::span<const std::uint64_t> words, std::size_t worker)
      : words_(words), worker_(worker) {}

  /// The next word; throws InputError when the words run out (a state of another run's shape).
  std::uint64_t next() {
    if (at_ == words_.size()) short_of(at_ + 1);
    return words_[at_++];
  }
  /// Continues `rng` from the state save_rng wrote.
  void restore(Rng& rng) {
    std::array<std::uint64_t, 4> state{};
    for (auto& word : state) word = next();
    rng.set_state(state);
  }
  /// Throws InputError unless every word was read.
  void expect_done() const {
    if (at_ != words_.size()) short_of(at_);
  }

 private:
  [[noreturn]] void short_of(std::size_t expected) const {
    throw InputError("the checkpoint's worker_draws: expected " + std::to_string(expected) +
                     " words of seeded-draw state for worker " + std::to_string(worker_) +
                     ", found " + std::to_string(words_.size()));
  }

  std::span<const std::uint64_t> words_;
  std::size_t worker_;
  std::size_t at_ = 0;
};

/// Continues each worker's draws from `resume`, by restore(worker, reader), where it holds the
/// draws of as many workers as the run has; a run resumed on another number of workers (or
/// from a checkpoint that kept no draws) draws from its seeds.
template <class Restore>
void restore_worker_draws(const TrainState* resume, std::size_t workers, Restore&& restore) {
  if (resume == nullptr || resume->worker_draws.size() != workers) return;
  for (std::size_t w = 0; w < workers; ++w) {
    DrawReader reader(resume->worker_draws[w], w);
    restore(w, reader);
    reader.expect_done();
  }
}

}  // namespace hogwild::detail
