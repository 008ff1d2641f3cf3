#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <thread>
#include <type_traits>

#include "engine/aligned_vector.h"
#include "engine/bf16_weights.h"
#include "engine/coherence_probe.h"
#include "engine/delay_layer.h"
#include "engine/draw_state.h"
#include "engine/driver.h"
#include "engine/feature_order.h"
#include "engine/force_inline.h"
#include "engine/hot_rows.h"
#include "engine/landings.h"
#include "engine/linear_evaluation.h"
#include "engine/minibatch.h"
#include "engine/packed_rows.h"
#include "engine/prefetch.h"
#include "engine/replica_merge.h"
#include "engine/rng.h"
#include "engine/sampling.h"
#include "engine/staleness_probe.h"
#include "engine/subsets.h"
#include "engine/train_loss_sample.h"
#include "engine/virtual_clocks.h"
#include "engine/window_clock.h"
#include "engine/worker_stats.h"
#include "engine/workers.h"
#include "hogwild/detail/policies.h"
#include "hogwild/error.h"
#include "hogwild/trainer.h"

namespace hogwild {

using detail::binary_label_values;
using detail::dispatch_loss;
using detail::dispatch_policy;
using detail::EvaluatedRows;
using detail::kCacheLine;
using detail::mapped_labels;
using detail::ParamStore;
using detail::RacyPolicy;
using detail::SerialPolicy;
using detail::source_name;

namespace {

// ---- The update engine --------------------------------------------------------------------
//
// Glossary: w = shared weights, r = row (example) index, m = margin w.x_r, g = d loss / d m,
// eta = step, coef = -eta * g (the data gradient step is coef * x_r), shrink[j] =
// 1 / (1 + eta * l2 * n / count[j]): the L2 term applied on a row's nonzeros only, scaled by
// how rarely each feature occurs so its expectation is the full l2/2 ||w||^2 gradient; the
// proximal form keeps it stable for rare features at any step.
//
// A computed update is (r, coef): rows are immutable, so this pair is the whole sparse
// payload, and a delayed update needs no copy of the gradient. Delays count the worker's own
// later steps: an update computed at step t with delay d is applied at step t + d, after that
// step's own computation; updates due at the same step are applied in the order computed.

using detail::AppliedCounter;
using detail::kCoherenceWindowsPerEpoch;
using detail::SampleClock;

struct Pending {
  detail::StalenessProbe::Reading read;  // measured updates only
  std::uint32_t row;                     // single update: the row
  float coef;                            // single update: its coefficient
  std::uint32_t count;  // 0: single update; else the batch's (row, coef) pairs in its
                        // delay-line slot's payload
  bool measured;
};

using RowCoef = std::pair<std::uint32_t, float>;

// An update sent and not landed yet (--write-latency): a single update, or a minibatch with its
// (row, coef) pairs.
struct Flight {
  Pending update;
  std::vector<RowCoef> rows;
};

// Everything one worker (thread or virtual) owns; aligned so workers never share a line.
struct alignas(kCacheLine) WorkerState {
  WorkerState(int worker, const TrainConfig& config, std::uint64_t seed_base,
              std::span<AppliedCounter> counters, const ClockFactory& clocks,
              const std::atomic<bool>* stop)
      : id(worker),
        staleness_probe(config.staleness_sample,
                        detail::derive_seed(seed_base, 0x57a1e000u + worker), counters, worker,
                        config.virtual_time && clocks ? clocks(worker).get() : nullptr,
                        config.bounded_staleness >= 0),
        coherence(config.coherence_sample, detail::derive_seed(seed_base, 0xc0e40000u + worker),
                  config.coherence_lag),
        delay(config.delay, detail::derive_seed(seed_base, 0xde1a0000u + worker)),
        clock(*config.schedule, config.speed, worker,
              detail::derive_seed(seed_base, 0x5bee0000u + worker),
              clocks ? clocks(worker) : nullptr, stop) {
    stats.size_for(config.epochs, config.delay.max_delay());
    // The minibatch path: minibatches, time windows, and single samples under a speed model
    // (whose clock the path keeps); with delays, each pending update's payload needs a slot.
    const bool batched = config.schedule->kind == ScheduleSpec::Kind::kTime ||
                         config.schedule->batch > 1 || config.speed.active();
    if (batched) {
      const std::size_t capacity = config.schedule->capacity();
      batch.reserve(capacity);
      // One payload per delay-line slot: the pending batches' whole storage.
      if (delay.on()) pool.resize(delay.capacity() * capacity);
    }
  }
  int id;
  detail::StalenessProbe staleness_probe;
  detail::CoherenceProbe coherence;
  detail::DelayLayer<Pending> delay;
  // Coherence: a sampled update's (row, coef), compared with the update `lag` later.
  std::uint32_t saved_row = 0;
  float saved_coef = 0;
  std::vector<RowCoef> batch;  // the open minibatch: (row, g)
  std::uint32_t batch_samples = 0;
  bool batch_measured = false;
  detail::StalenessProbe::Reading batch_read;
  detail::WindowClock clock;
  std::size_t clock_countdown = 1;  // samples until the open window reads the clock
  std::vector<RowCoef> pool;        // delayed batches' payloads, `capacity` pairs per slot
  // Replica (--replicate): the worker's private copy of the model, the shared values it was
  // refreshed from, and what has not been merged into the shared store yet.
  detail::AlignedFloats replica;  // line-aligned: merges go a cache line at a time
  detail::AlignedFloats replica_base;
  bool replica_fresh = false;
  detail::ReplicaCounts replica_counts;
  detail::InFlight<Flight> in_flight;  // --write-latency: sent, oldest first
  detail::RoundingBits rounding;       // --weights bf16: the random bits of its roundings
  // The weights a private sample's margin read, then its values widened (twice the longest row).
  std::vector<float> kept_weights;
  detail::WorkerStats stats;
};

// Cosine of two training rows, as the loops read them: the data set's own rows when the loops'
// are renumbered (their indices no longer increase along a row; f32 values, the same floats).
double sparse_cosine(const detail::PackedRows& rows, const Dataset& data, std::uint32_t a,
                     std::uint32_t b) {
  if (rows.renumbered()) {
    const SparseRow x = data.row(a), y = data.row(b);
    return detail::sparse_cosine(
        x.indices.size(),
        [&](std::size_t i) {
          return std::pair{x.indices[i], x.values[i]};
        },
        y.indices.size(),
        [&](std::size_t i) {
          return std::pair{y.indices[i], y.values[i]};
        });
  }
  return rows.visit(a, [&](const auto* a_idx, auto a_val, std::size_t a_n) {
    return rows.visit(b, [&](const auto* b_idx, auto b_val, std::size_t b_n) {
      return detail::sparse_cosine(
          a_n,
          [&](std::size_t i) {
            return std::pair{std::uint32_t{a_idx[i]}, a_val[i]};
          },
          b_n,
          [&](std::size_t i) {
            return std::pair{std::uint32_t{b_idx[i]}, b_val[i]};
          });
    });
  });
}

// kBf16 (--weights bf16): the shared weights the plain loop and single steps read and write are
// `bf16` (racy or serial, no replicas, delays or minibatches: the configuration allows no other
// loop); the float store is what the kernel widens them into.
template <class P, bool kRegularised, bool kBf16>
class Engine {
 public:
  Engine(ParamStore& store, const Dataset& data, const detail::PackedRows& rows, const float* y,
         const float* shrink, const TrainConfig& config, std::span<WorkerState> states,
         detail::GlobalSteps* global, detail::Landings* landings, const detail::HotRows* hot,
         std::span<const std::uint32_t> mean_merged, std::uint16_t* bf16)
      : store_(store),
        data_(data),
        rows_(rows),
        hot_(hot),
        mean_merged_(mean_merged),
        y_(y),
        shrink_(shrink),
        workers_(static_cast<std::size_t>(config.workers())),
        delayed_(config.delay.kind != DelaySpec::Kind::kNone),
        coherence_(config.coherence_sample > 0),
        timed_(config.schedule->kind == ScheduleSpec::Kind::kTime),
        batched_(timed_ || config.schedule->batch > 1),
        mean_(config.schedule->mean),
        capacity_(config.schedule->capacity()),
        slow_(config.speed.active()),
        clocked_(config.virtual_time),
        // Simulation steps each virtual worker one sample per round.
        per_sample_(delayed_ || batched_ || slow_ || config.simulate > 0),
        loss_(std::get<LinearModel>(config.model).loss),
        merge_every_(static_cast<std::uint64_t>(config.replicate)),
        states_(states),
        global_(global),
        landings_(landings),
        read_latency_ns_(config.read_latency_ns),
        bf16_(bf16) {}

  // The epoch's step size and first coherence window.
  void begin_epoch(float eta, int epoch) {
    eta_ = eta;
    window_base_ = static_cast<std::size_t>(epoch - 1) * kCoherenceWindowsPerEpoch;
  }

  // Positions [first, last) of a worker's share of length `len`. Without delay, minibatches or
  // speed model, the samples between two sampled (measured) ones run the plain Hogwild! loop,
  // with no per-sample bookkeeping beyond a counter in a register (and, when other workers
  // measure staleness, the store of this worker's applied count); the sampled sample itself
  // takes the full step. Which samples are sampled is the same as stepping one by one.
  //
  // Replicas: the worker reads and writes a private copy of the model and every
  // `merge_every_` samples adds what it changed (replica - base) to the shared store under the
  // policy, re-reading it in the same pass. Cache lines then move between cores once per
  // merge instead of once per colliding write. Sampled updates take the full step on the
  // replica; their staleness counts the updates others merged between the worker's refresh
  // (the values it read) and its merge (when its update reached the shared store).
  void run_range(WorkerState& s, const std::uint32_t* rows, std::size_t first, std::size_t last,
                 std::size_t len) {
    if (per_sample_) {
      for (std::size_t pos = first; pos < last; ++pos) step(s, rows[pos], pos, len);
      return;
    }
    const bool replicated = merge_every_ > 0;
    if (replicated && !s.replica_fresh) refresh_replica(s);
    std::size_t pos = first;
    while (pos < last) {
      // Samples that cannot be sampled: the staleness clock ticks once per sample, the
      // coherence clock once per update (at most one per sample), and a saved coherence
      // gradient waits for the update `lag` updates after it. A replica also stops at its
      // next merge.
      std::uint64_t plain = last - pos;
      if (replicated) plain = std::min(plain, merge_every_ - s.replica_counts.since_merge);
      if (s.staleness_probe.on()) plain = std::min(plain, s.staleness_probe.until_next());
      if (coherence_) plain = std::min(plain, s.coherence.quiet_after(s.stats.computed));
      if (plain == 0) {
        prefetch_ahead(rows, pos, len);  // keeps the stretches' prefetch pipeline going
        if (replicated) {
          replica_step(s, rows[pos], pos, len);
        } else {
          step(s, rows[pos], pos, len);
        }
        plain = 1;
      } else {
        const std::size_t end = pos + static_cast<std::size_t>(plain);
        const std::uint64_t updates =
            replicated                      ? (hot_ ? hot_loop(s, rows, pos, end, len)
                                                    : plain_loop<kOnReplica>(s, rows, pos, end, len))
            : s.staleness_probe.publishes() ? plain_loop<kPublishing>(s, rows, pos, end, len)
                                            : plain_loop<kShared>(s, rows, pos, end, len);
        if (s.staleness_probe.on()) s.staleness_probe.skip(plain);
        if (coherence_) s.coherence.skip(updates);
      }
      pos += static_cast<std::size_t>(plain);
      if (replicated) {
        s.replica_counts.since_merge += plain;
        if (s.replica_counts.since_merge >= merge_every_) merge_replica(s);
      }
    }
  }

  // One sample on the replica with the sampling clocks ticked: staleness and coherence.
  void replica_step(WorkerState& s, std::uint32_t r, std::size_t pos, std::size_t len) {
    ++s.stats.samples;
    const bool measured = s.staleness_probe.tick();
    float* w = s.replica.data();
    const float m = hot_ ? hot_margin(w, r) : row_margin<Private>(w, r);
    const float g = derivative(m, y_[r]);
    if constexpr (!kRegularised) {
      if (g == 0.0f) return;
    }
    const float coef = -eta_ * g;
    ++s.stats.computed;
    if (coherence_) track_coherence(s, r, coef, pos, len);
    if (hot_) {
      hot_apply(w, r, coef);
    } else {
      replica_apply(w, r, coef);
    }
    s.replica_counts.updated(measured);
  }

  HOGWILD_FORCE_INLINE inline void replica_apply(float* w, std::uint32_t r, float coef) {
    rows_.visit(r, [&](const auto* idx, auto values, std::size_t n) {
      detail::for_each_by_four(n, [&](std::size_t k) {
        const std::uint32_t j = idx[k];
        float v = w[j] + coef * values[k];
        if constexpr (kRegularised) v *= shrink_[j];
        w[j] = v;
      });
    });
  }

  // Reads the shared store into the replica and its base (the hot features' slots alone, with
  // --hot-features).
  void refresh_replica(WorkerState& s) {
    const float* shared = store_.data();
    const std::size_t size = hot_ ? hot_->features.size() : store_.size();
    s.replica.resize(size);
    s.replica_base.resize(size);
    for (std::size_t i = 0; i < size; ++i) {
      const std::size_t j = hot_ ? hot_->features[i] : i;
      s.replica[i] = s.replica_base[i] = P::load(shared[j]);
    }
    s.replica_fresh = true;
    s.replica_counts.refreshed(s.staleness_probe);
  }

  // merge_replica for replicas of the hot features: slot i holds feature features[i], so the
  // shared lines a merge touches are those of the hot features alone.
  void merge_hot(float* replica, float* base) {
    float* shared = store_.data();
    const std::uint32_t* features = hot_->features.data();
    for (std::size_t i = 0; i < hot_->features.size(); ++i) {
      const std::size_t j = features[i];
      const float delta = replica[i] - base[i];
      if (delta == 0.0f) {
        replica[i] = base[i] = P::load(shared[j]);
      } else if constexpr (std::is_same_v<P, RacyPolicy>) {
        const float v = detail::relaxed_load(shared[j]) + delta;
        detail::relaxed_store(shared[j], v);
        replica[i] = base[i] = v;
      } else {
        P::dense_update(store_, j, 1, [&](float old, std::size_t) {
          const float v = old + delta;
          replica[i] = base[i] = v;
          return v;
        });
      }
    }
  }

  // Row r in the hot layout: its shared (cold) features, then its hot ones by replica slot.
  struct HotParts {
    SparseRow cold;
    SparseRow hot;
  };
  HOGWILD_FORCE_INLINE inline HotParts hot_parts(std::uint32_t r) const {
    const std::uint64_t begin = data_.row_offsets[r];
    const std::size_t n = data_.row_offsets[r + 1] - begin;
    const std::size_t cold = hot_->cold_count[r];
    const std::uint32_t* idx = hot_->indices.data() + begin;
    const float* val = hot_->values.data() + begin;
    return {{{idx, cold}, {val, cold}}, {{idx + cold, n - cold}, {val + cold, n - cold}}};
  }

  // The margin of row r with its cold weights read from the shared store and its hot ones
  // from the worker's replica.
  HOGWILD_FORCE_INLINE inline float hot_margin(const float* replica, std::uint32_t r) const {
    const HotParts row = hot_parts(r);
    return margin<P>(store_.data(), row.cold) + margin<Private>(replica, row.hot);
  }

  // Applies coef x row r: the cold part to the shared store under the policy, the hot part to
  // the replica.
  HOGWILD_FORCE_INLINE inline void hot_apply(float* replica, std::uint32_t r, float coef) {
    const HotParts row = hot_parts(r);
    apply_sparse(row.cold, coef);
    const std::uint32_t* slots = row.hot.indices.data();
    const float* values = row.hot.values.data();
    for (std::size_t k = 0; k < row.hot.indices.size(); ++k) {
      float v = replica[slots[k]] + coef * values[k];
      if constexpr (kRegularised) v *= shrink_[hot_->features[slots[k]]];
      replica[slots[k]] = v;
    }
  }

  // One hot-loop sample of row r: hot_margin and hot_apply, with the hot part's weights, which
  // no other worker writes, written from the values its margin kept (as private_step); the cold
  // part's are read again under the policy, as other workers write them. Returns whether it
  // updated.
  HOGWILD_FORCE_INLINE inline bool hot_private_step(float* replica, std::uint32_t r, float* kept) {
    const HotParts row = hot_parts(r);
    const std::uint32_t* slots = row.hot.indices.data();
    const detail::F32Values values{row.hot.values.data()};
    const std::size_t n = row.hot.indices.size();
    const float g = derivative(margin<P>(store_.data(), row.cold) +
                                   margin<Private, float, true>(replica, slots, values, n, kept),
                               y_[r]);
    if constexpr (!kRegularised) {
      if (g == 0.0f) return false;
    }
    const float coef = -eta_ * g;
    apply_sparse(row.cold, coef);
    apply_kept(replica, slots, values, n, coef, kept,
               [&](std::uint32_t slot) { return shrink_[hot_->features[slot]]; });
    return true;
  }

  // The plain loop on replicas of the hot features; its updates count as unmerged until the
  // next merge, as on a whole replica.
  std::uint64_t hot_loop(WorkerState& s, const std::uint32_t* rows, std::size_t first,
                         std::size_t last, std::size_t ahead_end) {
    float* replica = s.replica.data();
    std::uint64_t updates = 0;
    for (std::size_t pos = first; pos < last; ++pos) {
      const std::uint32_t r = rows[pos];
      prefetch_ahead(rows, pos, ahead_end);
      if (hot_private_step(replica, r, s.kept_weights.data())) ++updates;
    }
    s.stats.samples += last - first;
    s.stats.computed += updates;
    s.replica_counts.unmerged += updates;
    return updates;
  }

  // Adds the replica's changes (replica - base) to the shared store, writing only what changed
  // so untouched cache lines stay where they are, and re-reads the shared store into the
  // replica in the same pass; counts the replica's updates as applied.
  void merge_replica(WorkerState& s) {
    float* replica = s.replica.data();
    float* base = s.replica_base.data();
    detail::to_mean_change(replica, base, mean_merged_, static_cast<int>(workers_));
    if (hot_) {
      merge_hot(replica, base);
    } else {
      detail::merge_replica<P>(store_, replica, base, s.replica.size(), static_cast<int>(workers_));
    }
    // The pass also re-read the shared store: the replica's next updates are read now.
    s.replica_counts.merged(s.staleness_probe, s.stats);
  }

  // Where the plain loop reads and writes: the shared store (publishing the worker's applied
  // count after every update for others' measurements, or not), or the worker's replica.
  enum Target { kShared, kPublishing, kOnReplica };

  // The plain Hogwild! loop over positions [first, last); returns the updates it made. Rows up
  // to `ahead_end` (the end of the worker's range) are prefetched, so the samples after a
  // stretch arrive warm. On the replica the updates count as unmerged until the next merge.
  template <Target kTarget>
  std::uint64_t plain_loop(WorkerState& s, const std::uint32_t* rows, std::size_t first,
                           std::size_t last, std::size_t ahead_end) {
    constexpr bool kReplica = kTarget == kOnReplica;
    float* w = kReplica ? s.replica.data() : store_.data();
    const std::uint64_t applied_before = s.stats.applied;
    [[maybe_unused]] auto& published = s.staleness_probe.counter();
    std::uint64_t updates = 0;
    const bool kept = writes_kept<kTarget>();
    for (std::size_t pos = first; pos < last; ++pos) {
      const std::uint32_t r = rows[pos];
      prefetch_ahead(rows, pos, ahead_end);
      if (kept) {
        if (private_step(w, r, s.kept_weights.data())) ++updates;
        continue;
      }
      // Shared weights others write (or bf16): read again as they are written.
      const float g = derivative(shared_margin(r), y_[r]);
      if constexpr (!kRegularised) {
        if (g == 0.0f) continue;
      }
      apply_shared(s, r, -eta_ * g);
      ++updates;
      if constexpr (kTarget == kPublishing) {
        published.store(applied_before + updates, std::memory_order_relaxed);
      }
    }
    s.stats.samples += last - first;
    s.stats.computed += updates;
    (kReplica ? s.replica_counts.unmerged : s.stats.applied) += updates;
    return updates;
  }

  // Whether the plain loop may write each weight from the value its margin read
  // (private_step): on the worker's replica (floats, whatever the shared weights are), or on
  // the shared store in floats where no other worker writes it (the serial policy; racy with
  // one worker, whose plain loads and stores are the serial policy's).
  template <Target kTarget>
  bool writes_kept() const {
    if constexpr (kTarget == kOnReplica) {
      return true;
    } else if constexpr (kBf16 || kTarget == kPublishing) {
      return false;
    } else if constexpr (std::is_same_v<P, SerialPolicy>) {
      return true;
    } else {
      return std::is_same_v<P, RacyPolicy> && workers_ == 1;
    }
  }

  // One plain-loop sample of row r on weights w that no other worker writes: the margin keeps
  // the weights it reads in `kept` (and half or byte values widened, after them), and the
  // update writes w[j] = kept + coef x value four nonzeros at a time, instead of reading each
  // weight again. A row's indices are distinct, so kept[k] is still w[idx[k]] when the update
  // writes it: the same sums, rounded the same way, as the read-modify-write loop. Returns
  // whether it updated.
  HOGWILD_FORCE_INLINE inline bool private_step(float* w, std::uint32_t r, float* kept) {
    return rows_.visit(r, [&](const auto* idx, auto values, std::size_t n) {
      const float g = derivative(margin<Private, float, true>(w, idx, values, n, kept), y_[r]);
      if constexpr (!kRegularised) {
        if (g == 0.0f) return false;
      }
      apply_kept(w, idx, values, n, -eta_ * g, kept, [&](auto j) { return shrink_[j]; });
      return true;
    });
  }

  // w[idx[k]] = (kept[k] + coef x values[k]) (x shrink(idx[k]), the feature's L2 shrink) for
  // the n nonzeros, the values widened read from kept[n, 2n).
  template <class Index, class Values, class Shrink>
  HOGWILD_FORCE_INLINE inline void apply_kept(float* w, const Index* idx, Values values,
                                              std::size_t n, float coef, const float* kept,
                                              Shrink&& shrink) {
    using Floats4 = float __attribute__((vector_size(16)));
    std::size_t k = 0;
    for (; k + 4 <= n; k += 4) {
      Floats4 v, x;
      std::memcpy(&v, kept + k, sizeof v);
      if constexpr (kWidened<Values>) {
        std::memcpy(&x, kept + n + k, sizeof x);
      } else {
        x = Floats4{values[k], values[k + 1], values[k + 2], values[k + 3]};
      }
      v += coef * x;
      if constexpr (kRegularised) {
        v *= Floats4{shrink(idx[k]), shrink(idx[k + 1]), shrink(idx[k + 2]), shrink(idx[k + 3])};
      }
      for (int j = 0; j < 4; ++j) w[idx[k + j]] = v[j];
    }
    for (; k < n; ++k) {
      float v = kept[k] + coef * (kWidened<Values> ? kept[n + k] : values[k]);
      if constexpr (kRegularised) v *= shrink(idx[k]);
      w[idx[k]] = v;
    }
  }

  // Whether a row's values are widened to floats as they are read (half floats, bytes): the
  // margin keeps them widened for the update, which would widen them again.
  template <class Values>
  static constexpr bool kWidened =
      !std::is_same_v<Values, detail::F32Values> && !std::is_same_v<Values, detail::OneValues>;

  // Dispatches one sample to the single-sample or the minibatch path.
  void step(WorkerState& s, std::uint32_t r, std::size_t pos, std::size_t len) {
    ++s.stats.samples;
    if (!batched_ && !slow_) {
      if (!clocked_) return step_single(s, r, pos, len);
      s.clock.before(1);
      if (landings_) landings_->set_now(s.clock.now());
      step_single(s, r, pos, len);
      s.clock.after(1);
      if (read_latency_ns_ > 0) s.clock.wait_for(read_latency_ns_);
      return;
    }
    step_batched(s, r);
  }

  // Closes a partly filled minibatch (end of a segment) so no sample is lost.
  void close_open_batch(WorkerState& s) {
    if (merge_every_ > 0 && s.replica_fresh) {
      merge_replica(s);
      s.replica_fresh = false;  // the next segment starts from the shared store
    }
    if (landings_) landings_->set_now(s.clock.now());
    if (s.batch_samples > 0) close_batch(s);
    s.clock.discard();  // the next sample opens a fresh window
  }

  // One single-sample update on row r; `window` is the coherence window it falls in.
  // Inlined: called once per sample, its body is the hot loop.
  HOGWILD_FORCE_INLINE inline void step_single(WorkerState& s, std::uint32_t r, std::size_t pos,
                                               std::size_t len) {
    const bool measured = s.staleness_probe.tick();
    detail::StalenessProbe::Reading at_read;
    if (measured) at_read = s.staleness_probe.read();
    const float m = shared_margin(r);
    const float g = derivative(m, y_[r]);
    bool has_update = true;
    if constexpr (!kRegularised) has_update = g != 0.0f;
    if (has_update) {
      const float coef = -eta_ * g;
      ++s.stats.computed;
      if (coherence_) track_coherence(s, r, coef, pos, len);
      if (!delayed_) {
        if (landings_) [[unlikely]] {
          send(s, Pending{at_read, r, coef, 0, measured});
        } else {
          apply(s, r, coef, measured ? &at_read : nullptr);
        }
      } else {
        s.delay.hold(Pending{at_read, r, coef, 0, measured}, s.stats.injected);
      }
    }
    if (delayed_) release_due(s);
  }

  // One sample of a minibatch: its gradient is taken at the parameters as they are now (the
  // worker's own batch is not applied until the batch closes); the batch closes after B
  // samples (fixed) or once the window has passed (time), the clock read when the window
  // clock's estimate says so, so that it does not dominate cheap samples.
  void step_batched(WorkerState& s, std::uint32_t r) {
    if (timed_ && !s.clock.is_open()) {
      s.clock.open();
      s.clock_countdown = s.clock.next_check(0, capacity_);
    }
    s.clock.before(1);
    if (landings_) landings_->set_now(s.clock.now());
    if (s.batch_samples == 0) {
      s.batch_measured = s.staleness_probe.tick();
      if (s.batch_measured) s.batch_read = s.staleness_probe.read();
    }
    const float* w = store_.data();
    const float m = row_margin<P>(w, r);
    const float g = derivative(m, y_[r]);
    bool has_update = true;
    if constexpr (!kRegularised) has_update = g != 0.0f;
    if (has_update) s.batch.emplace_back(r, g);
    ++s.batch_samples;
    s.clock.after(1);
    bool close = s.batch_samples >= capacity_;
    if (!close && timed_ && --s.clock_countdown == 0) {
      close = s.clock.passed();
      if (!close)
        s.clock_countdown = s.clock.next_check(s.batch_samples, capacity_ - s.batch_samples);
    }
    if (close) close_batch(s);
  }

  // Turns the open minibatch into one update: applied now, or queued with its delay.
  void close_batch(WorkerState& s) {
    if (timed_) s.clock.close(s.batch_samples, s.stats.windows_ns);
    const float scale = -eta_ / (mean_ ? static_cast<float>(s.batch_samples) : 1.0f);
    if (!s.batch.empty()) {
      ++s.stats.computed;
      s.stats.batch_sizes.record(s.batch_samples);
      if (landings_ && !delayed_) {
        Flight& flight =
            send(s, Pending{s.batch_read, 0, 0.0f, static_cast<std::uint32_t>(s.batch.size()),
                            s.batch_measured});
        for (const auto& [row, g] : s.batch) flight.rows.emplace_back(row, scale * g);
      } else if (!delayed_) {
        for (const auto& [row, g] : s.batch) apply_row(row, scale * g);
        count_applied(s, s.batch_measured ? &s.batch_read : nullptr);
      } else {
        const std::uint32_t slot =
            s.delay.hold(Pending{s.batch_read, 0, 0.0f, static_cast<std::uint32_t>(s.batch.size()),
                                 s.batch_measured},
                         s.stats.injected);
        RowCoef* payload = s.pool.data() + std::size_t{slot} * capacity_;
        for (std::size_t i = 0; i < s.batch.size(); ++i)
          payload[i] = {s.batch[i].first, scale * s.batch[i].second};
      }
    }
    s.batch.clear();
    s.batch_samples = 0;
    if (delayed_) release_due(s);
    if (read_latency_ns_ > 0) s.clock.wait_for(read_latency_ns_);
  }

  // Applies every pending update of the worker, in due order.
  void flush(WorkerState& s) {
    if (landings_) landings_->set_now(s.clock.now());
    s.delay.flush([&](const Pending& u, std::uint32_t slot) { apply_pending(s, u, slot); });
  }

  // --write-latency: lands every update due at or before `now_ns`, in landing order.
  void land_until(std::int64_t now_ns) {
    landings_->land_until(now_ns, [&](int worker, std::int64_t at_ns) {
      land(states_[static_cast<std::size_t>(worker)], at_ns);
    });
  }

 private:
  // d loss / d margin of the run's loss: one predictable switch a sample, where compiling every
  // loop once per loss made this file take 2.5 times as long to compile.
  HOGWILD_FORCE_INLINE float derivative(float m, float y) const {
    return loss_derivative(loss_, m, y);
  }

  // Rows are read in shuffled order from storage far larger than the caches, so each sample
  // would start with dependent misses (its offsets, then its indices, values and label): the
  // plain loop asks for the offsets kOffsetAhead samples ahead and the row kRowAhead ahead.
  // Distances chosen by measurement (docs/benchmarks.md); prefetching the next row's weights
  // as well did not pay, on the 47k model (in L2) nor on a 10M one.
  static constexpr std::size_t kRowAhead = 2;
  static constexpr std::size_t kOffsetAhead = 4;

  // Reads of a worker's private replica: plain loads, as the serial policy's.
  using Private = SerialPolicy;

  // The margin w . x of training row r, as the loops read it (rows_).
  template <class Reader, class Weight>
  HOGWILD_FORCE_INLINE inline float row_margin(const Weight* w, std::uint32_t r) const {
    return rows_.visit(r, [&](const auto* idx, auto values, std::size_t n) {
      return margin<Reader>(w, idx, values, n);
    });
  }

  // How the shared bf16 weights are read and written: as the policy shares them.
  using Bf16 = detail::Bf16Access<P::kConcurrent>;

  // The margin of training row r on the shared weights.
  HOGWILD_FORCE_INLINE inline float shared_margin(std::uint32_t r) const {
    if constexpr (kBf16) {
      return row_margin<Bf16>(bf16_, r);
    } else {
      return row_margin<P>(store_.data(), r);
    }
  }

  // The margin of a row of the hot layout.
  template <class Reader>
  HOGWILD_FORCE_INLINE inline float margin(const float* w, const SparseRow& row) const {
    return margin<Reader>(w, row.indices.data(), detail::F32Values{row.values.data()},
                          row.indices.size());
  }

  // The margin w . x over n nonzeros, each weight read through Reader::load (a policy,
  // Private, or the bf16 access). Every path computes it in this one order, so they agree bit
  // for bit.
  // With kKeep, the weights read go to kept[0, n) and, for values widened from half floats or
  // bytes, the widened values to kept[n, 2n) (private_step).
  template <class Reader, class Weight, bool kKeep = false, class Index, class Values>
  HOGWILD_FORCE_INLINE inline float margin(const Weight* w, const Index* idx, Values val,
                                           std::size_t n, float* kept = nullptr) const {
    // Four partial sums: one sum's chain of dependent additions (75 of them, 3-4 cycles each)
    // was most of a sample's time once rows stream from memory. Sum j takes nonzeros k with
    // k % 4 == j; the four are the lanes of one vector, so four values are one load and four
    // products one multiplication and one addition (the roundings of four scalar sums).
    if constexpr (std::is_same_v<Values, detail::OneValues>) {
      return margin_of_ones<Reader, Weight, kKeep>(w, idx, n, kept);
    } else {
      using Floats4 = float __attribute__((vector_size(16)));
      Floats4 sums = {0, 0, 0, 0};
      std::size_t k = 0;
      for (; k + 4 <= n; k += 4) {
        const Floats4 weights = {Reader::load(w[idx[k]]), Reader::load(w[idx[k + 1]]),
                                 Reader::load(w[idx[k + 2]]), Reader::load(w[idx[k + 3]])};
        const Floats4 values = {val[k], val[k + 1], val[k + 2], val[k + 3]};
        if constexpr (kKeep) std::memcpy(kept + k, &weights, sizeof weights);
        if constexpr (kKeep && kWidened<Values>) std::memcpy(kept + n + k, &values, sizeof values);
        sums += weights * values;
      }
      float m0 = sums[0];
      for (; k < n; ++k) {
        const float x = Reader::load(w[idx[k]]);
        const float v = val[k];
        if constexpr (kKeep) kept[k] = x;
        if constexpr (kKeep && kWidened<Values>) kept[n + k] = v;
        m0 += x * v;
      }
      return (m0 + sums[1]) + (sums[2] + sums[3]);
    }
  }

  // The margin of a binary row (every value 1), in margin's order: with no values to load,
  // four scalar sums take fewer instructions than packing four weights into a vector.
  template <class Reader, class Weight, bool kKeep, class Index>
  HOGWILD_FORCE_INLINE inline float margin_of_ones(const Weight* w, const Index* idx, std::size_t n,
                                                   float* kept) const {
    const auto read = [&](std::size_t k) {
      const float x = Reader::load(w[idx[k]]);
      if constexpr (kKeep) kept[k] = x;
      return x;
    };
    float m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    std::size_t k = 0;
    for (; k + 4 <= n; k += 4) {
      m0 += read(k);
      m1 += read(k + 1);
      m2 += read(k + 2);
      m3 += read(k + 3);
    }
    for (; k < n; ++k) m0 += read(k);
    return (m0 + m1) + (m2 + m3);
  }

  // What the plain loop prefetches at position `pos` of a range ending at `end`.
  HOGWILD_FORCE_INLINE inline void prefetch_ahead(const std::uint32_t* rows, std::size_t pos,
                                                  std::size_t end) const {
    if (pos + kRowAhead < end) prefetch_row(rows[pos + kRowAhead]);
    if (pos + kOffsetAhead < end) prefetch_offsets(rows[pos + kOffsetAhead]);
  }

  HOGWILD_FORCE_INLINE inline void prefetch_offsets(std::uint32_t r) const {
    __builtin_prefetch(data_.row_offsets.data() + r);
    __builtin_prefetch(y_ + r);
  }

  HOGWILD_FORCE_INLINE inline void prefetch_row(std::uint32_t r) const {
    const auto lines = [](const void* from, const void* to) {
      detail::prefetch_lines(from, static_cast<std::size_t>(static_cast<const char*>(to) -
                                                            static_cast<const char*>(from)));
    };
    if (hot_) {
      const std::uint64_t begin = data_.row_offsets[r];
      const std::uint64_t end = data_.row_offsets[r + 1];
      lines(hot_->indices.data() + begin, hot_->indices.data() + end);
      lines(hot_->values.data() + begin, hot_->values.data() + end);
      return;
    }
    const detail::PackedRows::Extent row = rows_.extent(r);
    lines(row.indices_begin, row.indices_end);
    if (row.values_begin != row.values_end) lines(row.values_begin, row.values_end);
  }

  using Reading = detail::StalenessProbe::Reading;

  HOGWILD_FORCE_INLINE inline void apply(WorkerState& s, std::uint32_t r, float coef,
                                         const Reading* measured = nullptr) {
    apply_shared(s, r, coef);
    count_applied(s, measured);
  }

  // Adds coef x training row r to the shared weights: the float store under the policy, or
  // the bf16 weights rounded stochastically with the worker's random bits.
  HOGWILD_FORCE_INLINE inline void apply_shared(WorkerState& s, std::uint32_t r, float coef) {
    if constexpr (kBf16) {
      rows_.visit(r, [&](const auto* idx, auto values, std::size_t n) {
        apply_bf16(s.rounding, idx, values, n, coef);
      });
    } else {
      apply_row(r, coef);
    }
  }

  // Adds coef x the n nonzeros (idx, values) to the bf16 weights, each sum rounded with 16 of
  // the worker's random bits (its stream in a register for the row). Four nonzeros at a time in
  // vector registers: one widening shift, multiply-add, rounding add and narrowing shift for the
  // four instead of two moves between the integer and vector registers for each (1.07x the
  // scalar loop, docs/benchmarks.md); a row's indices are distinct, so the four
  // read-modify-writes are independent. Lane j takes bits 16j of each draw, as the scalar tail
  // does: both give the same results.
  template <class Index, class Values>
  HOGWILD_FORCE_INLINE inline void apply_bf16(detail::RoundingBits& rounding, const Index* idx,
                                              Values values, std::size_t n, float coef) {
    using Bits4 = std::uint32_t __attribute__((vector_size(16)));
    using Floats4 = float __attribute__((vector_size(16)));
    detail::RoundingBits bits = rounding;
    std::size_t k = 0;
    for (; k + 4 <= n; k += 4) {
      std::uint16_t* x[4] = {bf16_ + idx[k], bf16_ + idx[k + 1], bf16_ + idx[k + 2],
                             bf16_ + idx[k + 3]};
      const Bits4 old =
          Bits4{Bf16::bits(*x[0]), Bf16::bits(*x[1]), Bf16::bits(*x[2]), Bf16::bits(*x[3])} << 16;
      Floats4 v = std::bit_cast<Floats4>(old) +
                  coef * Floats4{values[k], values[k + 1], values[k + 2], values[k + 3]};
      if constexpr (kRegularised) {
        v *=
            Floats4{shrink_[idx[k]], shrink_[idx[k + 1]], shrink_[idx[k + 2]], shrink_[idx[k + 3]]};
      }
      const std::uint64_t random = bits.next();
      const Bits4 draws =
          Bits4{static_cast<std::uint32_t>(random), static_cast<std::uint32_t>(random >> 16),
                static_cast<std::uint32_t>(random >> 32),
                static_cast<std::uint32_t>(random >> 48)} &
          0xFFFFu;
      const Bits4 rounded = (std::bit_cast<Bits4>(v) + draws) >> 16;
      for (int j = 0; j < 4; ++j) Bf16::store(*x[j], static_cast<std::uint16_t>(rounded[j]));
    }
    std::uint64_t random = 0;
    for (; k < n; ++k) {
      if ((k & 3) == 0) random = bits.next();
      std::uint16_t& x = bf16_[idx[k]];
      float v = Bf16::load(x) + coef * values[k];
      if constexpr (kRegularised) v *= shrink_[idx[k]];
      Bf16::store(x, detail::round_bf16(v, static_cast<std::uint32_t>(random) & 0xFFFFu));
      random >>= 16;
    }
    rounding = bits;
  }

  // Counts an update the worker has written and publishes the count. A measured update (read
  // at `measured`) first records its staleness: the others' counts at its write, before this
  // count lets them move on (--bounded-staleness in threads reads the published counts).
  HOGWILD_FORCE_INLINE inline void count_applied(WorkerState& s,
                                                 const Reading* measured = nullptr) {
    if (measured) s.staleness_probe.record(*measured, s.stats.staleness);
    ++s.stats.applied;
    s.staleness_probe.publish(s.stats.applied);
  }

  // Adds coef x training row r to the shared store under the policy.
  HOGWILD_FORCE_INLINE inline void apply_row(std::uint32_t r, float coef) {
    rows_.visit(r, [&](const auto* idx, auto values, std::size_t n) {
      apply_sparse(idx, values, n, coef);
    });
  }

  // Adds coef x a row of the hot layout to the shared store.
  HOGWILD_FORCE_INLINE inline void apply_sparse(const SparseRow& row, float coef) {
    apply_sparse(row.indices.data(), detail::F32Values{row.values.data()}, row.indices.size(),
                 coef);
  }

  // Adds coef x the n nonzeros (idx, values) to the shared store under the policy.
  template <class Index, class Values>
  HOGWILD_FORCE_INLINE inline void apply_sparse(const Index* idx, Values values, std::size_t n,
                                                float coef) {
    [[maybe_unused]] const float* shrink = shrink_;
    P::sparse_update(store_, std::span<const Index>(idx, n), [=](float old, std::size_t k) {
      float v = old + coef * values[k];
      if constexpr (kRegularised) v *= shrink[idx[k]];
      return v;
    });
  }

  // Ends the worker's step: applies the updates due at it; with delays in global steps, every
  // worker's updates due at the global step it ends.
  void release_due(WorkerState& s) {
    if (global_) {
      global_->end_step([&](int worker) {
        WorkerState& holder = states_[static_cast<std::size_t>(worker)];
        holder.delay.release_at_global_step(
            [&](const Pending& u, std::uint32_t slot) { apply_pending(holder, u, slot); });
      });
      return;
    }
    s.delay.end_step([&](const Pending& u, std::uint32_t slot) { apply_pending(s, u, slot); });
  }

  void apply_pending(WorkerState& s, const Pending& u, std::uint32_t slot) {
    if (landings_) {  // released now, it leaves for the parameters
      Flight& flight = send(s, u);
      if (u.count > 0) {
        const RowCoef* payload = s.pool.data() + std::size_t{slot} * capacity_;
        flight.rows.assign(payload, payload + u.count);
      }
      return;
    }
    if (u.count == 0) {
      apply_row(u.row, u.coef);
    } else {
      const RowCoef* payload = s.pool.data() + std::size_t{slot} * capacity_;
      for (std::uint32_t i = 0; i < u.count; ++i) apply_row(payload[i].first, payload[i].second);
    }
    count_applied(s, u.measured ? &u.read : nullptr);
  }

  // Sends update `u` (--write-latency): it lands later, by land(). Returns its entry, whose
  // (row, coef) pairs a minibatch fills in.
  Flight& send(WorkerState& s, const Pending& u) {
    Flight& flight = s.in_flight.push();
    flight.update = u;
    flight.rows.clear();
    landings_->sent(s.id);
    return flight;
  }

  // The worker's oldest update in flight lands, at virtual time `at_ns`.
  void land(WorkerState& s, std::int64_t at_ns) {
    Flight& flight = s.in_flight.front();
    const Pending& u = flight.update;
    if (u.count == 0) {
      apply_row(u.row, u.coef);
    } else {
      for (const auto& [row, coef] : flight.rows) apply_row(row, coef);
    }
    if (u.measured) s.staleness_probe.record_landed(u.read, s.stats.staleness, at_ns);
    count_applied(s);
    s.in_flight.pop();
  }

  // Coherence: a sampled update is kept as (row, coef) and compared with the worker's update
  // `lag` updates later: the cosine of coef * x_r and coef' * x_r'. Costs one decrement per
  // update unless sampled.
  void track_coherence(WorkerState& s, std::uint32_t r, float coef, std::size_t pos,
                       std::size_t len) {
    switch (s.coherence.at(s.stats.computed)) {
      case detail::CoherenceProbe::Step::kNone:
        return;
      case detail::CoherenceProbe::Step::kSave:
        s.saved_row = r;
        s.saved_coef = coef;
        return;
      case detail::CoherenceProbe::Step::kCompare:
        break;
    }
    const std::size_t window =
        window_base_ + pos * kCoherenceWindowsPerEpoch / std::max<std::size_t>(len, 1);
    if (window >= s.stats.coherence_windows) return;
    const double sign = (coef > 0) == (s.saved_coef > 0) ? 1.0 : -1.0;
    detail::CoherenceProbe::add(s.stats, window,
                                sign * sparse_cosine(rows_, data_, r, s.saved_row));
  }

  ParamStore& store_;
  const Dataset& data_;
  const detail::PackedRows& rows_;  // the training rows as the loops read them
  const detail::HotRows* hot_;      // --hot-features: the rows laid out for them; null otherwise
  // Replica slots of the heavy features, whose merges add the workers' mean change.
  std::span<const std::uint32_t> mean_merged_;
  const float* y_;
  const float* shrink_;
  float eta_ = 0;
  std::size_t workers_;
  bool delayed_;
  bool coherence_;
  std::size_t window_base_ = 0;
  bool timed_;
  bool batched_;
  bool mean_;
  std::uint32_t capacity_;
  bool slow_;
  bool clocked_;  // virtual time: every sample moves the worker's clock
  bool per_sample_;
  LossKind loss_;              // one switch a sample: the loops are compiled once for all losses
  std::uint64_t merge_every_;  // samples between replica merges; 0: no replicas
  // Last: the per-sample loops read the fields above, at the offsets they had without these.
  std::span<WorkerState> states_;  // every worker's, for delays in global steps
  detail::GlobalSteps* global_;    // --delay-unit global; null otherwise
  detail::Landings* landings_;     // --write-latency; null otherwise
  std::int64_t read_latency_ns_;   // --read-latency; 0 outside virtual time
  std::uint16_t* bf16_;            // --weights bf16: the shared weights; null otherwise
};

// Everything a linear run's kernel works on, set up once by train().
struct LinearRun {
  const TrainConfig& config;
  ParamStore& store;
  const Dataset& train_data;
  const Dataset* test_data;
  std::vector<float> y_train;
  std::vector<float> y_test;
  std::vector<float> reg_scale;  // n / count[j], when l2 > 0
  std::vector<float> shrink;     // the epoch's 1 / (1 + eta l2 n / count[j])
  std::vector<WorkerState>& states;
  std::span<const AppliedCounter> counters;  // published applied counts, one per worker
  tbb::task_arena& arena;
  std::optional<detail::GlobalSteps> global_steps;  // --delay-unit global
  std::optional<detail::Landings> landings{};       // --write-latency
  std::optional<detail::PackedRows> rows{};         // the training rows as the loops read them
  std::optional<detail::HotRows> hot{};             // --hot-features
  std::vector<std::uint32_t> mean_merged{};         // replica slots merged as the mean change
  std::optional<Dataset> loss_sample{};             // --train-loss-sample: the rows measured
  std::vector<float> y_loss_sample{};               // and their labels
  std::vector<float> average{};                     // --average epochs: the model; else empty
  // --feature-order frequency: feature j's place in the store and the averages (empty: j), and
  // the weights put back in the given order for whatever leaves the kernel: the model
  // evaluated, a state's parameters and its last weights (averaging).
  std::vector<std::uint32_t> numbers{};
  std::array<std::vector<float>, 3> given{};
  // Where losses are taken in the numbering (loss_in_numbering): the test rows' indices under
  // it, features beyond the training data's keeping theirs (the loss skips them); else empty.
  std::vector<std::uint32_t> test_numbered{};
  // The test rows packed, where that reads fewer bytes than the data set (pack_test_rows).
  std::optional<detail::PackedRows> test_rows{};
  // --weights bf16: the shared weights the loops train (the store holds them widened for
  // whatever reads the model); empty otherwise.
  std::vector<std::uint16_t> bf16{};
};

// Whether losses are taken on rows under the run's numbering against the model as numbered: the
// same products summed in the same order give the same loss to the last bit, from the frequency
// order's few hot cache lines instead of the given order's scattered ones, with no copy of the
// model put back. For renumbered rows of 32-bit indices; not with l2 > 0, whose objective sums
// the squared weights in their given order.
bool loss_in_numbering(const LinearRun& run) {
  return run.rows->renumbered() && run.rows->wide_indices() != nullptr && *run.config.l2 == 0;
}

// Whether the training loss is read from the packed rows, against the model as the kernel
// numbers it: where they hold the data's own values (f32, or none for binary data), their 16-
// or 32-bit indices give the same products in the same order as the data set's, the same loss
// to the last bit, from fewer bytes (6 or 2 a nonzero where 16-bit indices do, against 8). Not
// for renumbered rows with l2 > 0, whose objective sums the squared weights in their given
// order.
bool loss_on_packed_rows(const LinearRun& run) {
  return run.rows->exact() && (!run.rows->renumbered() || *run.config.l2 == 0);
}

// The indices of `data` under `numbers`; those beyond the numbering stay as they are.
std::vector<std::uint32_t> numbered_indices(const Dataset& data,
                                            std::span<const std::uint32_t> numbers) {
  std::vector<std::uint32_t> numbered(data.indices.size());
  tbb::parallel_for(std::size_t{0}, numbered.size(), [&](std::size_t k) {
    const std::uint32_t j = data.indices[k];
    numbered[k] = j < numbers.size() ? numbers[j] : j;
  });
  return numbered;
}

// Which of LinearRun::given a put-back copy goes to.
enum Given { kEvaluated, kParameters, kLastWeights };

// `weights` in the given order: as they are, or put back into run.given[to].
std::span<const float> in_given_order(LinearRun& run, std::span<const float> weights, Given to) {
  if (run.numbers.empty()) return weights;
  std::vector<float>& given = run.given[to];
  given.resize(weights.size());
  run.arena.execute([&] { detail::to_given(weights, run.numbers, given); });
  return given;
}

// The replica slots of the features that carry more than TrainConfig::kMeanMergeMinShare of
// the training data's squared mass (a constant feature for an intercept): each worker's merge
// adds its change of their weights divided by the number of workers. Heavy features that
// --hot-features leaves shared are not replicated, so not merged. `counts`: the features'
// counts where the run has them (empty otherwise).
std::vector<std::uint32_t> mean_merged_slots(const LinearRun& run,
                                             std::span<const std::uint32_t> counts) {
  std::vector<std::uint32_t> slots;
  for (std::uint32_t j : heavy_features(run.train_data, TrainConfig::kMeanMergeMinShare, counts)) {
    if (!run.numbers.empty()) j = run.numbers[j];
    if (!run.hot) {
      slots.push_back(j);
      continue;
    }
    const auto& hot = run.hot->features;
    const auto at = std::find(hot.begin(), hot.end(), j);
    if (at != hot.end()) slots.push_back(static_cast<std::uint32_t>(at - hot.begin()));
  }
  return slots;
}

// The linear kernel: the Engine's loops behind the driver's interface, for one policy,
// regularisation and weight precision chosen once (and the loss read each sample). Workers read its
// fields on every sample: it has its cache lines to itself, so no heap neighbour's writes move them
// between cores.
template <class P, bool kRegularised, bool kBf16>
class alignas(kCacheLine) LinearKernel final : public detail::Kernel {
 public:
  explicit LinearKernel(LinearRun& run)
      : run_(run),
        engine_(run.store, run.train_data, *run.rows, run.y_train.data(), run.shrink.data(),
                run.config, run.states, run.global_steps ? &*run.global_steps : nullptr,
                run.landings ? &*run.landings : nullptr, run.hot ? &*run.hot : nullptr,
                run.mean_merged, run.bf16.data()) {}

  void begin_epoch(int epoch) override {
    eta_ = step_of(epoch, false);
    engine_.begin_epoch(static_cast<float>(eta_), epoch);
    if constexpr (kBf16) {
      // Each epoch's rounding streams derive from the seed, the epoch and the worker, so a run
      // resumed from a checkpoint draws the bits the uninterrupted run drew.
      for (auto& state : run_.states) {
        state.rounding.seed(detail::derive_seed(
            run_.config.seed, 0xbf160000'00000000ULL + (std::uint64_t(epoch) << 20) + state.id));
      }
    }
    if constexpr (kRegularised) {
      const double eta = eta_;
      const double l2 = *run_.config.l2;
      run_.arena.execute([&] {
        tbb::parallel_for(std::size_t{0}, run_.shrink.size(), [&](std::size_t j) {
          run_.shrink[j] = static_cast<float>(1.0 / (1.0 + eta * l2 * run_.reg_scale[j]));
        });
      });
    }
  }
  std::size_t round_positions() const override { return 1; }
  void run_range(int worker, const std::uint32_t* rows, std::size_t first, std::size_t last,
                 std::size_t len) override {
    engine_.run_range(state(worker), rows, first, last, len);
  }
  // In virtual time a worker's open minibatch is written when its share ends, at its own
  // time, not when the last worker's ends (rounds keep the order their reports record).
  void part_done(int worker) override {
    if (run_.config.virtual_time) engine_.close_open_batch(state(worker));
  }
  void end_segment(int worker, bool epoch_end) override {
    engine_.close_open_batch(state(worker));
    if (epoch_end) engine_.flush(state(worker));
  }
  void land_until(std::int64_t now_ns) override { engine_.land_until(now_ns); }
  // --average epochs: mean_k = mean_{k-1} + 2 / (k + 1) (w_k - mean_{k-1}), the mean of
  // w_1..w_k weighted by 1..k (the weights sum to k (k + 1) / 2).
  void end_epoch(int epoch) override {
    widen();
    if (run_.average.empty()) return;
    const float share = static_cast<float>(2.0 / (epoch + 1.0));
    const float* w = run_.store.values().data();
    float* mean = run_.average.data();
    run_.arena.execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, run_.average.size(), 4096),
                        [&](const tbb::blocked_range<std::size_t>& range) {
                          for (std::size_t j = range.begin(); j < range.end(); ++j) {
                            mean[j] += share * (w[j] - mean[j]);
                          }
                        });
    });
  }
  EpochRecord evaluate(bool with_test) override {
    widen();
    EpochRecord result;
    if (run_.loss_sample) {
      result.train = evaluated(model(), *run_.loss_sample, run_.y_loss_sample);
    } else if (loss_on_packed_rows(run_)) {
      result.train = packed_loss(*run_.rows, run_.train_data, run_.y_train);
    } else {
      result.train = evaluated(model(), run_.train_data, run_.y_train);
    }
    if (!run_.test_data || !with_test) return result;
    if (loss_in_numbering(run_)) {
      result.test = numbered_loss(*run_.test_data, run_.test_numbered.data(), run_.y_test);
    } else if (run_.test_rows) {
      result.test = packed_loss(*run_.test_rows, *run_.test_data, run_.y_test);
    } else {
      result.test = evaluated(model(), *run_.test_data, run_.y_test);
    }
    return result;
  }
  // One step per epoch. The epoch schedule multiplies by the decay once per epoch, so a resumed
  // run uses bit-identical steps; the inverse schedules take t at the epoch's start.
  double step_of(int epoch, bool initial) const override {
    if (initial) return 0;
    const OptimizerConfig& o = run_.config.optimizer;
    if (o.schedule != Schedule::kEpoch) {
      return step_scale_ * o.step_at(*o.step, epoch - 1, epoch - 1);
    }
    double eta = *o.step;
    for (int e = 1; e < epoch; ++e) eta *= o.decay;
    return eta;
  }
  void scale_step(double scale) override { step_scale_ = scale; }
  std::uint64_t applied() const override {
    std::uint64_t total = 0;
    for (const auto& state : run_.states) total += state.stats.applied;
    return total;
  }
  std::uint64_t applied_by(int worker) const override {
    return run_.states[static_cast<std::size_t>(worker)].stats.applied;
  }
  std::span<const AppliedCounter> published_counts() const override { return run_.counters; }
  // Averaging: the checkpoint's parameters are the model, the mean; the last weights, which
  // training goes on from, are its one state buffer.
  void fill_state(TrainState& state) const override {
    for (const auto& s : run_.states) {
      auto& words = state.worker_draws.emplace_back();
      s.delay.save(words);
      s.clock.save(words);
    }
    widen();
    if (run_.average.empty()) {
      state.weights = in_given_order(run_, run_.store.values(), kParameters);
      return;
    }
    state.weights = in_given_order(run_, run_.average, kParameters);
    state.optimizer_state.push_back(in_given_order(run_, run_.store.values(), kLastWeights));
  }

 private:
  WorkerState& state(int worker) { return run_.states[static_cast<std::size_t>(worker)]; }

  // --weights bf16: the store takes the bf16 weights' values, for whatever reads the model (no
  // worker runs).
  void widen() const {
    if constexpr (kBf16) {
      run_.arena.execute([&] { detail::widen_bf16(run_.bf16, run_.store.values()); });
    }
  }

  // The model as the kernel numbers its features: the mean with --average epochs, else the
  // shared weights.
  std::span<const float> numbered_model() const {
    return run_.average.empty() ? std::span<const float>(run_.store.values())
                                : std::span<const float>(run_.average);
  }

  // The model in the given order.
  std::span<const float> model() const {
    return in_given_order(run_, numbered_model(), kEvaluated);
  }

  // The loss of `data`, its indices under the run's numbering given by `numbered`, on the model
  // as numbered (loss_in_numbering).
  Evaluation numbered_loss(const Dataset& data, const std::uint32_t* numbered,
                           std::span<const float> y) const {
    return loss_of(numbered_model(), EvaluatedRows(data, numbered), y);
  }

  // The loss of `data` read from its exact packed rows, `packed`, against the model as
  // numbered: the training rows (loss_on_packed_rows) or the test rows (pack_test_rows).
  Evaluation packed_loss(const detail::PackedRows& packed, const Dataset& data,
                         std::span<const float> y) const {
    return detail::with_packed_rows(
        packed, data, [&](const auto& rows) { return loss_of(numbered_model(), rows, y); });
  }

  Evaluation evaluated(std::span<const float> w, const Dataset& data,
                       std::span<const float> y) const {
    return loss_of(w, EvaluatedRows(data), y);
  }

  // The loss and accuracy of the model `w` on `rows` (evaluate_mapped with the run's loss).
  template <class Rows>
  Evaluation loss_of(std::span<const float> w, const Rows& rows, std::span<const float> y) const {
    return dispatch_loss(std::get<LinearModel>(run_.config.model).loss, [&](auto loss) {
      return detail::evaluate_mapped<decltype(loss)>(w, *run_.config.l2, rows, y, run_.arena);
    });
  }

  LinearRun& run_;
  Engine<P, kRegularised, kBf16> engine_;
  double eta_ = 0;
  double step_scale_ = 1;  // the plateau schedule's cuts
};

// Fills the shared weights (and, averaging, the mean) from a checkpoint: averaging, its
// parameters are the mean and its one state buffer the last weights.
void resume_weights(const TrainState& resume, bool averaging, std::span<float> weights,
                    std::vector<float>& average, std::string_view source) {
  const std::size_t buffers = averaging ? 1 : 0;
  if (resume.optimizer_state.size() != buffers) {
    throw InputError(fmt::format(
        "{}: expected {} state buffer{} to resume a linear model with --average {}, found {}",
        source, buffers, averaging ? "" : "s", averaging ? "epochs" : "off",
        resume.optimizer_state.size()));
  }
  const std::span<const float> last = averaging ? resume.optimizer_state[0] : resume.weights;
  if (last.size() != weights.size()) {
    throw InputError(fmt::format("{}: expected last weights of {} values to resume, found {}",
                                 source, weights.size(), last.size()));
  }
  std::copy(last.begin(), last.end(), weights.begin());
  if (averaging) average.assign(resume.weights.begin(), resume.weights.end());
}

// Moves the shared weights and the average, filled in the given order (zeros, or a checkpoint's),
// to their places under run.numbers.
void renumber_weights(LinearRun& run) {
  const auto move = [&](std::span<float> weights) {
    // A fresh model (all +0) reads the same in any order: only a resumed one moves.
    const auto zero = [](float w) { return std::bit_cast<std::uint32_t>(w) == 0; };
    if (std::all_of(weights.begin(), weights.end(), zero)) return;
    const std::vector<float> given(weights.begin(), weights.end());
    run.arena.execute([&] { detail::to_numbered(given, run.numbers, weights); });
  };
  move(run.store.values());
  if (!run.average.empty()) move(run.average);
}

// The kernel for the run's policy, regularisation and weight precision.
std::unique_ptr<detail::Kernel> make_linear_kernel(LinearRun& run) {
  return dispatch_policy(run.config.policy, [&](auto policy) -> std::unique_ptr<detail::Kernel> {
    using P = decltype(policy);
    if constexpr (P::kind == Policy::kRacy || P::kind == Policy::kSerial) {
      if (!run.bf16.empty()) {
        if (*run.config.l2 > 0) return std::make_unique<LinearKernel<P, true, true>>(run);
        return std::make_unique<LinearKernel<P, false, true>>(run);
      }
    }
    if (*run.config.l2 > 0) return std::make_unique<LinearKernel<P, true, false>>(run);
    return std::make_unique<LinearKernel<P, false, false>>(run);
  });
}

// The training rows' count within what the kernels index (32-bit row numbers), and not zero.
void check_training_rows(const Dataset& train_data) {
  if (train_data.rows() == 0) {
    throw InputError(fmt::format("{}: expected at least one training example, found none",
                                 source_name(train_data, "training data")));
  }
  if (train_data.rows() > std::numeric_limits<std::uint32_t>::max()) {
    throw InputError(fmt::format("{}: expected at most 2^32-1 examples, found {}",
                                 source_name(train_data, "training data"), train_data.rows()));
  }
}

// The report's description of the data sets and the labels' values.
void describe_data(Report& report, const Dataset& train_data, const Dataset* test_data,
                   std::size_t dim, std::span<const float> label_values) {
  report.data = {"libsvm", train_data.rows(),    dim, 0, 0, 0, test_data ? test_data->rows() : 0,
                 dim,      train_data.zero_based};
  report.dataset = describe(train_data);
  if (test_data) report.test_dataset = describe(*test_data);
  report.labels.assign(label_values.begin(), label_values.end());
}

// The test rows packed as the training rows are (their own dimension choosing 16- or 32-bit
// indices) with the data's own values, where the model keeps the given numbering and that takes
// fewer bytes than the data set's 8 a nonzero: the same products in the same order, so the same
// loss to the last bit. Else none, and the test loss reads the data set.
void pack_test_rows(LinearRun& run) {
  if (run.test_data == nullptr || run.rows->renumbered()) return;
  run.arena.execute([&] { run.test_rows.emplace(*run.test_data, DataPrecision::kF32); });
  if (!run.test_rows->exact() || run.test_rows->bytes_per_nonzero() >= 8) run.test_rows.reset();
}

// The rows as the training loops read them: renumbered by frequency where `renumber`, packed,
// the test rows numbered alike where losses are taken in the numbering (else packed where that
// pays), and the replicas' hot
// rows and mean-merged slots; what was chosen goes into the report.
void prepare_rows(LinearRun& run, Report& report, std::span<const std::uint32_t> counts,
                  bool renumber) {
  const TrainConfig& config = run.config;
  if (renumber) {
    run.numbers = detail::frequency_numbers(counts);
    renumber_weights(run);
  }
  run.arena.execute([&] { run.rows.emplace(run.train_data, config.data_precision, run.numbers); });
  if (run.test_data && loss_in_numbering(run)) {
    run.arena.execute([&] { run.test_numbered = numbered_indices(*run.test_data, run.numbers); });
  }
  pack_test_rows(run);
  report.training_rows = RowLayout{run.rows->index_bits(), to_string(run.rows->values()),
                                   run.rows->bytes_per_nonzero(), run.rows->renumbered()};
  if (config.replicate > 0 && config.hot_features > 0) {
    run.arena.execute([&] {
      run.hot.emplace(detail::hot_rows(
          run.train_data, detail::hottest_features(counts, config.hot_features, run.numbers),
          run.numbers, run.rows->wide_indices()));
    });
    report.config.hot_features = run.hot->features.size();  // run.config is the report's
  } else {
    report.config.hot_features = 0;
  }
  if (config.replicate > 0 && config.workers() > 1) {
    run.arena.execute([&] { run.mean_merged = mean_merged_slots(run, counts); });
  }
  report.mean_merged_features = run.mean_merged.size();
}

// L2's per-feature scale n / count (in the run's numbering), where l2 > 0: the penalty a
// sample applies to the weights it touches, so that an epoch applies it once to each.
void prepare_regularisation(LinearRun& run, std::span<const std::uint32_t> counts) {
  if (*run.config.l2 <= 0) return;
  const std::size_t dim = run.store.size();
  const auto n = static_cast<double>(run.train_data.rows());
  run.reg_scale.assign(dim, 0.0f);
  for (std::size_t j = 0; j < counts.size(); ++j) {
    if (counts[j] == 0) continue;
    run.reg_scale[run.numbers.empty() ? j : run.numbers[j]] = static_cast<float>(n / counts[j]);
  }
  run.shrink.resize(dim);
}

// --weights bf16: the shared weights narrowed for the training loops (one process only).
void prepare_bf16(LinearRun& run, const Callbacks& callbacks) {
  if (run.config.weights != WeightPrecision::kBf16) return;
  if (callbacks.exchange != nullptr) {
    throw InputError(
        "--weights: expected f32 across processes (their exchange merges float weights), "
        "found bf16");
  }
  run.arena.execute([&] { run.bf16 = detail::narrowed_bf16(run.store.values()); });
}

}  // namespace

namespace detail {

Report train_linear(const TrainConfig& raw, const Dataset& train_data, const Dataset* test_data,
                    const Callbacks& callbacks, const TrainState* resume) {
  check_training_rows(train_data);
  const std::size_t n = train_data.rows();
  const std::size_t dim = std::max<std::size_t>(1, train_data.num_features);
  Report report;
  report.config = raw.resolved();
  // Not with several processes: their exchange merges the stores place by place, and each
  // process would number the features of its part of the data its own way.
  const bool renumber =
      report.config.frequency_order && dim > TrainConfig::kFrequencyOrderMinFeatures &&
      report.config.data_precision == DataPrecision::kF32 && callbacks.exchange == nullptr;
  std::vector<std::uint32_t> counts;
  if (*report.config.l2 > 0 || report.config.hot_features > 0 || renumber ||
      replicas_count_features(raw, train_data)) {
    counts = feature_counts(train_data);
  }
  const ReplicaPlan replicas = resolved_replicas(raw, train_data, counts);
  report.config.replicate = replicas.merge_every;
  report.config.hot_features = replicas.hot_features;
  report.hot_share = replicas.hot_share;
  const TrainConfig& config = report.config;
  const LossKind loss = std::get<LinearModel>(config.model).loss;
  std::vector<float> label_values;
  if (is_classifier(loss)) label_values = binary_label_values(train_data);
  describe_data(report, train_data, test_data, dim, label_values);
  std::vector<float> y_train = mapped_labels(train_data, label_values, "training data");
  std::vector<float> y_test;
  if (test_data) y_test = mapped_labels(*test_data, label_values, "test data");

  if (resume && resume->weights.size() != dim) {
    throw InputError(fmt::format(
        "{}: expected a model of {} weights (the training data's dimension) to resume, found {}",
        source_name(train_data, "training data"), dim, resume->weights.size()));
  }
  ParamStore store(dim);
  std::vector<float> average;
  if (resume) {
    resume_weights(*resume, *config.average, store.values(), average,
                   source_name(train_data, "training data"));
  } else if (*config.average) {
    average.assign(dim, 0.0f);  // the initial model, as the store's
  }
  const int workers = config.workers();
  std::vector<WorkerState> states;
  states.reserve(static_cast<std::size_t>(workers));
  std::vector<AppliedCounter> counters(static_cast<std::size_t>(workers));
  const Callbacks clocks = with_virtual_clocks(config, callbacks);
  for (int w = 0; w < workers; ++w) {
    states.emplace_back(w, config, config.seed, counters, clocks.clock, clocks.stop);
    states.back().kept_weights.resize(2 * report.dataset->max_nnz_per_row);
  }
  // Across processes each process's workers draw their own: one process's draws are no others'.
  if (callbacks.exchange == nullptr) {
    detail::restore_worker_draws(resume, states.size(), [&](std::size_t w, detail::DrawReader& in) {
      states[w].delay.restore(in);
      states[w].clock.restore(in);
    });
  }
  tbb::task_arena arena(config.threads);
  LinearRun run{config, store,  train_data, test_data, std::move(y_train), std::move(y_test), {},
                {},     states, counters,   arena,     std::nullopt};
  if (config.global_delay && config.delay.kind != DelaySpec::Kind::kNone) {
    run.global_steps.emplace(config.delay.max_delay());
    for (int w = 0; w < workers; ++w) {
      states[static_cast<std::size_t>(w)].delay.count_globally(&*run.global_steps, w);
    }
  }
  if (config.write_latency_ns > 0) run.landings.emplace(config.write_latency_ns);
  run.average = std::move(average);
  const auto loss_rows = detail::train_loss_rows(n, config.train_loss_sample, config.seed);
  if (!loss_rows.empty()) {
    arena.execute([&] { run.loss_sample.emplace(detail::subset(train_data, loss_rows)); });
    run.y_loss_sample = mapped_labels(*run.loss_sample, label_values, "training data");
  }
  prepare_rows(run, report, counts, renumber);
  prepare_regularisation(run, counts);
  prepare_bf16(run, callbacks);
  const auto kernel = make_linear_kernel(run);
  std::vector<const WorkerStats*> measured;
  for (const auto& state : states) measured.push_back(&state.stats);
  drive_into(report, driver_config(config, n, workers), *kernel, clocks, resume, measured, store,
             config.policy);
  if (config.keep_weights) {
    const auto model = in_given_order(
        run, run.average.empty() ? std::span<const float>(store.values()) : run.average,
        kParameters);
    if (!run.average.empty() || !run.numbers.empty())
      report.weights.assign(model.begin(), model.end());
  }
  return report;
}

}  // namespace detail

}  // namespace hogwild
