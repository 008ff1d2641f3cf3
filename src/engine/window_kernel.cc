#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <thread>

#include "engine/aligned_vector.h"
#include "engine/coherence_probe.h"
#include "engine/delay_layer.h"
#include "engine/draw_state.h"
#include "engine/driver.h"
#include "engine/landings.h"
#include "engine/minibatch.h"
#include "engine/prefetch.h"
#include "engine/replica_merge.h"
#include "engine/rng.h"
#include "engine/sampling.h"
#include "engine/staleness_probe.h"
#include "engine/train_loss_sample.h"
#include "engine/virtual_clocks.h"
#include "engine/window_clock.h"
#include "engine/worker_stats.h"
#include "engine/workers.h"
#include "hogwild/detail/policies.h"
#include "hogwild/error.h"
#include "hogwild/trainer.h"
#include "io/report_json.h"
#include "models/model.h"
#include "models/optimizer_kernel.h"

namespace hogwild {

using detail::dispatch_policy;
using detail::kCacheLine;
using detail::ParamStore;

namespace {

using detail::EvalSums;
using detail::Examples;
using detail::Model;

// Per-worker buffers, allocated once per run so the hot loop does not allocate; on cache lines
// of its own, since its counters are written on every window (unaligned, softmax at 2 threads
// ran at 0.93-0.95x, bench/interleave.sh).
struct alignas(kCacheLine) WorkerState {
  int id = 0;  // the worker's index
  std::unique_ptr<detail::Workspace> workspace;
  detail::OptimizerScratch scratch;
  detail::AlignedFloats local;  // gathered rows or the snapshot of all parameters
  detail::AlignedFloats grad;
  std::vector<std::uint32_t> idx;   // coordinates of a sparse update
  std::vector<std::uint32_t> rows;  // touched rows (with duplicates), then unique
  std::vector<std::uint32_t> unique;
  std::vector<std::int32_t> slot;  // row -> slot in `local`, -1 when not gathered
  std::uint64_t updates = 0;

  // The open minibatch (fixed size) or time window, computed chunk by chunk: the first chunk's
  // gradient goes straight into `grad`; later chunks' into `chunk_grad`, added into `grad`
  // as sums (see compute_chunk). Sparse models keep the rows gathered for the whole window.
  bool open = false;
  std::uint32_t samples_in = 0;  // samples in the open window
  std::uint32_t chunks_in = 0;   // chunks computed in it
  std::size_t rows_in = 0;       // sparse: rows gathered in it (slots 0..rows_in-1)
  float eta = 0;                 // its step size
  double t = 0;                  // its step count for the optimiser
  std::size_t coherence_window = 0;
  bool measured = false;  // its staleness is measured
  detail::StalenessProbe::Reading read;
  std::vector<std::uint32_t> buffer;  // a chunk's samples when it spans two claimed ranges
  std::size_t buffered = 0;
  std::size_t chunk_target = 0;
  detail::AlignedFloats chunk_grad;
  std::vector<std::uint32_t> chunk_rows;  // sparse: the rows one chunk touches, once each
  std::vector<std::uint32_t> stamp;       // sparse: per slot, the last chunk that touched it
  std::uint32_t chunk_id = 0;
  detail::WindowClock clock;

  // Delay layer: pending updates, their payloads in slots (one per delay-line slot,
  // each allocated the first time that many are pending at once and reused after).
  struct Pending {
    detail::StalenessProbe::Reading read;
    double t;
    float eta;
    std::uint32_t count;  // coordinates (sparse) or parameters (dense, idx unused)
    bool dense;
    bool measured;
  };
  detail::DelayLayer<Pending> delay;
  std::vector<std::vector<std::uint32_t>> slot_idx;  // per delay-line slot
  std::vector<std::vector<float>> slot_grad;
  // --write-latency: updates sent and not landed yet, oldest first, with their coordinates
  // (sparse) and gradients.
  struct Flight {
    Pending update;
    std::vector<std::uint32_t> idx;
    std::vector<float> grad;
  };
  detail::InFlight<Flight> in_flight;
  // Measurement.
  detail::StalenessProbe staleness_probe;
  detail::CoherenceProbe coherence;
  std::vector<std::pair<std::uint32_t, float>> saved;  // a sampled gradient, sorted by index
  std::vector<std::pair<std::uint32_t, float>> current;
  std::vector<float> saved_dense;  // a sampled dense gradient, as it is
  // Replica (--replicate, dense models): the worker's private parameters and optimiser state,
  // the shared values it last read, and its updates not yet merged into the shared store.
  std::unique_ptr<ParamStore> replica;
  detail::AlignedFloats replica_base;
  std::unique_ptr<detail::OptimizerState> replica_state;
  bool replica_fresh = false;    // read from the shared store since the segment began
  bool replica_started = false;  // its optimiser state copied from the shared one
  detail::ReplicaCounts replica_counts;
  detail::WorkerStats stats;
};

// Cosine between two gradients given as (index, value) sorted by index.
double cosine(const std::vector<std::pair<std::uint32_t, float>>& a,
              const std::vector<std::pair<std::uint32_t, float>>& b) {
  return detail::sparse_cosine(
      a.size(), [&](std::size_t i) { return a[i]; }, b.size(), [&](std::size_t i) { return b[i]; });
}

// The model's mean loss, and its accuracy (classifiers) or RMSE (factorisation), on the training
// or the test data.
Evaluation evaluate_model(const Model& model, const Examples& data, const float* w,
                          tbb::task_arena& arena) {
  const std::size_t n = data.size();
  // Deterministic: the same split and order of sums whatever the threads and their timing, so
  // serial and simulated runs report the same losses to the last bit.
  const EvalSums sums = arena.execute([&] {
    return tbb::parallel_deterministic_reduce(
        tbb::blocked_range<std::size_t>(0, n, 512), EvalSums{},
        [&](const tbb::blocked_range<std::size_t>& range, EvalSums acc) {
          acc += model.evaluate(data, w, range.begin(), range.end());
          return acc;
        },
        [](EvalSums a, const EvalSums& b) { return a += b; });
  });
  return sums.mean(n, model.classifier());
}

[[noreturn]] void diverged(int epoch, double loss, double step, std::string_view where) {
  throw DivergenceError(fmt::format(
      "epoch {}: {} loss became {}; the run diverged: try a smaller --step (this epoch used "
      "{:.6g})",
      epoch, where, loss, step));
}

// Counts an update the worker has written and publishes the count, after any staleness record
// of it: a record reads the others' counts at the write, before this count lets them move on
// (--bounded-staleness in threads reads the published counts).
void count_applied(WorkerState& ws) {
  ++ws.stats.applied;
  ws.staleness_probe.publish(ws.stats.applied);
}

// Applies one update (sparse coordinates or all parameters) through the optimiser; a measured
// one (read at `measured`) records its staleness.
template <class P>
void apply_update(const TrainConfig& config, ParamStore& store, detail::OptimizerState& state,
                  WorkerState& ws, std::span<const std::uint32_t> idx, std::span<const float> g,
                  float eta, double t, const detail::StalenessProbe::Reading* measured) {
  detail::apply_step<P>(config.optimizer, store, state, {idx, g}, eta, t, ws.scratch);
  if (measured) ws.staleness_probe.record(*measured, ws.stats.staleness);
  count_applied(ws);
}

template <class P>
void apply_pending(const TrainConfig& config, ParamStore& store, detail::OptimizerState& state,
                   WorkerState& ws, const WorkerState::Pending& u, std::uint32_t slot) {
  const auto& idx = ws.slot_idx[slot];
  const auto& g = ws.slot_grad[slot];
  apply_update<P>(config, store, state, ws,
                  u.dense ? std::span<const std::uint32_t>{} : std::span(idx.data(), u.count),
                  std::span(g.data(), u.count), u.eta, u.t, u.measured ? &u.read : nullptr);
}

// Sends update `u` with its coordinates and gradient (--write-latency): it lands later.
void send(detail::Landings& landings, WorkerState& ws, const WorkerState::Pending& u,
          std::span<const std::uint32_t> idx, std::span<const float> g) {
  WorkerState::Flight& flight = ws.in_flight.push();
  flight.update = u;
  flight.idx.assign(idx.begin(), idx.end());
  flight.grad.assign(g.begin(), g.end());
  landings.sent(ws.id);
}

// A delayed update released now: applied, or sent when updates take time to land.
template <class P>
void release(const TrainConfig& config, ParamStore& store, detail::OptimizerState& state,
             detail::Landings* landings, WorkerState& ws, const WorkerState::Pending& u,
             std::uint32_t slot) {
  if (!landings) return apply_pending<P>(config, store, state, ws, u, slot);
  const auto& idx = ws.slot_idx[slot];
  send(*landings, ws, u,
       u.dense ? std::span<const std::uint32_t>{} : std::span(idx.data(), u.count),
       std::span(ws.slot_grad[slot].data(), u.count));
}

// The worker's oldest update in flight lands, at virtual time `at_ns`.
template <class P>
void land(const TrainConfig& config, ParamStore& store, detail::OptimizerState& state,
          WorkerState& ws, std::int64_t at_ns) {
  const WorkerState::Flight& flight = ws.in_flight.front();
  const WorkerState::Pending& u = flight.update;
  detail::apply_step<P>(config.optimizer, store, state, {flight.idx, flight.grad}, u.eta, u.t,
                        ws.scratch);
  if (u.measured) ws.staleness_probe.record_landed(u.read, ws.stats.staleness, at_ns);
  count_applied(ws);
  ws.in_flight.pop();
}

// Applies (or sends) every pending update of the worker, in due order.
template <class P>
void flush(const TrainConfig& config, ParamStore& store, detail::OptimizerState& state,
           detail::Landings* landings, WorkerState& ws) {
  if (landings) landings->set_now(ws.clock.now());
  ws.delay.flush([&](const WorkerState::Pending& u, std::uint32_t slot) {
    release<P>(config, store, state, landings, ws, u, slot);
  });
}

// ---- Minibatches and time windows --------------------------------------------------------
//
// Glossary: a window is what one update is made of: B samples (fixed:B) or the samples that
// fit in W (time:W, at most --max-batch); it is computed in chunks of samples, one gradient
// call each (a fixed minibatch is one chunk). n = samples in the window, b = samples in a
// chunk. The window opens with the Hogwild! read (dense models: a snapshot of all parameters;
// sparse models: each row when a chunk first touches it), and its gradients are all taken at
// that read: the worker's own update is applied when the window closes.

// What the workers of one epoch share.
struct EpochContext {
  const TrainConfig& config;
  const Model& model;
  const Examples& data;
  ParamStore& store;
  detail::OptimizerState& state;
  std::atomic<bool>& stop;  // a worker diverged
  int epoch;
  int workers;        // real or virtual: the step count of an update interleaves theirs
  bool timed;         // time windows
  bool virtual_time;  // --clock virtual: one sample per chunk, so every sample has its time
  std::span<const std::unique_ptr<WorkerState>> all_workers;  // for delays in global steps
  detail::GlobalSteps* global;                                // --delay-unit global, or null
  detail::Landings* landings;                                 // --write-latency, or null
  std::int64_t read_latency_ns;                               // --read-latency
  double step0;               // the initial step, times the plateau schedule's factor (else 1)
  std::uint64_t merge_every;  // --replicate: samples between a replica's merges, 0 = shared
};

// Replicas (--replicate, dense models): a worker computes its windows' gradients at its
// replica and applies them there with its own optimiser state (as PyTorch's Hogwild example
// gives each process its own optimiser: shared moments would move between cores on every
// update); every `merge_every` samples it adds what the replica changed to the shared parameters
// and reads them back (replica_merge.h). Its updates count as applied, and a measured one records
// its staleness, at the merge that carries them to the shared store: the updates the others
// merged since the worker's last read.

// Reads the shared parameters into the worker's replica; the first time, also the optimiser
// state (zeros, or a resumed run's), which the replica keeps from then on.
template <class P>
void refresh_replica(const EpochContext& c, WorkerState& ws) {
  detail::refresh_replica<P>(c.store, ws.replica->data(), ws.replica_base.data(), c.store.size());
  if (!ws.replica_started) {
    const ParamStore* shared[] = {c.state.s1.get(), c.state.s2.get()};
    ParamStore* own[] = {ws.replica_state->s1.get(), ws.replica_state->s2.get()};
    for (std::size_t b = 0; b < 2; ++b) {
      if (own[b]) std::copy_n(shared[b]->data(), shared[b]->size(), own[b]->data());
    }
    ws.replica_started = true;
  }
  ws.replica_fresh = true;
  ws.replica_counts.refreshed(ws.staleness_probe);
}

// Adds the replica's changes to the shared parameters and reads them back; counts its updates
// as applied.
template <class P>
void merge_replica(const EpochContext& c, WorkerState& ws) {
  detail::merge_replica<P>(c.store, ws.replica->data(), ws.replica_base.data(), c.store.size(),
                           c.workers);
  ws.replica_counts.merged(ws.staleness_probe, ws.stats);
}

// Ends the worker's step: applies the updates due at it; with delays in global steps, every
// worker's updates due at the global step it ends.
template <class P>
void end_delay_step(const EpochContext& c, WorkerState& ws) {
  const auto apply_for = [&](WorkerState& holder) {
    return [&](const WorkerState::Pending& u, std::uint32_t slot) {
      release<P>(c.config, c.store, c.state, c.landings, holder, u, slot);
    };
  };
  if (c.global) {
    c.global->end_step([&](int worker) {
      WorkerState& holder = *c.all_workers[static_cast<std::size_t>(worker)];
      holder.delay.release_at_global_step(apply_for(holder));
    });
  } else {
    ws.delay.end_step(apply_for(ws));
  }
}

// Time windows read the clock once per chunk. Each chunk is sized to take half the time left
// in the window, at the window's time per sample so far (the previous window's for its first
// chunk; one sample for a worker's very first), at least one sample and at most kMaxChunk (the
// model's scratch space is sized for that many). A window then takes a few chunks (about
// log2 of its samples), most of its samples in large ones, where a dense model's gradient is
// a matrix product and its per-chunk passes over all parameters are amortised, and it
// overshoots W by about one sample when the time per sample holds steady.
constexpr std::uint32_t kMaxChunk = 64;

// Opens a window at the sample at position `pos` of `len` positions: the Hogwild! read, and
// the step size, step count and coherence window of the update it becomes.
template <class P>
void open_window(const EpochContext& c, WorkerState& ws, std::size_t pos, std::size_t len,
                 int worker) {
  const TrainConfig& config = c.config;
  ws.open = true;
  ws.samples_in = 0;
  ws.chunks_in = 0;
  ws.rows_in = 0;
  if (c.timed) ws.clock.open();
  const std::size_t unit = c.timed ? 1 : config.schedule->batch;
  const std::size_t units = std::max<std::size_t>(1, (len + unit - 1) / unit);
  const std::size_t b = pos / unit;
  const double progress = (c.epoch - 1) + static_cast<double>(b) / static_cast<double>(units);
  // The schedules are linear in the initial step: scaling it scales every step.
  ws.eta = static_cast<float>(config.optimizer.step_at(c.step0, c.epoch - 1, progress));
  // Adam's bias correction counts the steps its moments have seen: every worker's, interleaved,
  // on shared moments; the worker's own on a replica's.
  ws.t = c.merge_every > 0
             ? static_cast<double>(ws.updates + 1)
             : static_cast<double>(ws.updates * static_cast<std::uint64_t>(c.workers) +
                                   static_cast<std::uint64_t>(worker) + 1);
  ws.coherence_window = static_cast<std::size_t>(c.epoch - 1) * detail::kCoherenceWindowsPerEpoch +
                        b * detail::kCoherenceWindowsPerEpoch / units;
  ws.measured = ws.staleness_probe.tick();
  if (ws.measured) ws.read = ws.staleness_probe.read();
  ++ws.updates;
  if (c.merge_every > 0) {
    if (!ws.replica_fresh) refresh_replica<P>(c, ws);
  } else if (P::kConcurrent && c.model.row_width() == 0) {
    // Other workers write while this one reads: take the snapshot with relaxed loads.
    detail::relaxed_copy(c.store.data(), ws.local.data(), c.store.size());
  }
}

// How far ahead the gather of a chunk's rows asks the caches for them.
constexpr std::size_t kRowsAhead = 8;

// Computes one chunk's gradient at the window's read and adds it to the window's. The first
// chunk's gradient (the model's: mean loss gradient plus regulariser) is left as it is, so a
// fixed minibatch is exactly one gradient call; from the second chunk on, `grad` holds the
// sum over samples (each chunk's mean times b).
template <class P>
void compute_chunk(const EpochContext& c, WorkerState& ws, std::span<const std::uint32_t> chunk) {
  const Model& model = c.model;
  ws.clock.before(chunk.size());
  if (c.landings) c.landings->set_now(ws.clock.now());
  const bool first = ws.chunks_in == 0;
  const auto b = static_cast<float>(chunk.size());
  const std::size_t width = model.row_width();
  double loss;
  if (width > 0) {
    if (ws.chunks_in == 1) {
      const auto n = static_cast<float>(ws.samples_in);
      for (std::size_t i = 0; i < ws.rows_in * width; ++i) ws.grad[i] *= n;
    }
    ws.rows.clear();
    model.touched_rows(c.data, chunk, ws.rows);
    if (++ws.chunk_id == 0) {  // wrapped: forget old stamps
      std::fill(ws.stamp.begin(), ws.stamp.end(), 0u);
      ws.chunk_id = 1;
    }
    ws.chunk_rows.clear();
    const float* w = c.store.data();
    for (std::size_t i = 0; i < ws.rows.size(); ++i) {
      // The rows a chunk touches lie anywhere in the model: each would wait for memory in turn
      // (most of a 20-class text softmax's gather did).
      if (i + kRowsAhead < ws.rows.size()) {
        const std::uint32_t ahead = ws.rows[i + kRowsAhead];
        __builtin_prefetch(&ws.slot[ahead]);
        detail::prefetch_lines(w + std::size_t{ahead} * width, width * sizeof(float));
      }
      const std::uint32_t r = ws.rows[i];
      std::int32_t s = ws.slot[r];
      if (s < 0) {
        // First touch in this window: gather the row (the Hogwild! read of it).
        s = static_cast<std::int32_t>(ws.rows_in++);
        ws.slot[r] = s;
        ws.unique[static_cast<std::size_t>(s)] = r;
        const std::size_t base = std::size_t{r} * width;
        const std::size_t at = static_cast<std::size_t>(s) * width;
        for (std::size_t k = 0; k < width; ++k) {
          ws.local[at + k] = P::load(w[base + k]);
          ws.idx[at + k] = static_cast<std::uint32_t>(base + k);
        }
        std::fill_n(ws.grad.begin() + static_cast<std::ptrdiff_t>(at), width, 0.0f);
      }
      // A window's first chunk touches only rows it slotted itself, in slot order
      // (ws.unique), so only later chunks need to collect theirs.
      if (!first && ws.stamp[static_cast<std::size_t>(s)] != ws.chunk_id) {
        ws.stamp[static_cast<std::size_t>(s)] = ws.chunk_id;
        ws.chunk_rows.push_back(r);
      }
    }
    const std::span<const std::uint32_t> chunk_rows =
        first ? std::span<const std::uint32_t>(ws.unique.data(), ws.rows_in)
              : std::span<const std::uint32_t>(ws.chunk_rows.data(), ws.chunk_rows.size());
    float* target = first ? ws.grad.data() : ws.chunk_grad.data();
    if (!first) {
      for (const auto r : ws.chunk_rows) {
        std::fill_n(target + static_cast<std::size_t>(ws.slot[r]) * width, width, 0.0f);
      }
    }
    // The regulariser applies to the rows this chunk touches, as for a minibatch.
    detail::ParamView view{ws.local.data(), ws.slot.data(), width, chunk_rows};
    loss = model.gradient(c.data, chunk, view, target, ws.workspace.get());
    if (!first) {
      for (const auto r : ws.chunk_rows) {
        const std::size_t at = static_cast<std::size_t>(ws.slot[r]) * width;
        for (std::size_t k = 0; k < width; ++k) ws.grad[at + k] += b * ws.chunk_grad[at + k];
      }
    }
  } else {
    detail::ParamView view;
    view.values = c.merge_every > 0 ? ws.replica->data()
                  : P::kConcurrent  ? ws.local.data()
                                    : c.store.data();
    if (first) {
      loss = model.gradient(c.data, chunk, view, ws.grad.data(), ws.workspace.get());
    } else {
      loss = model.gradient(c.data, chunk, view, ws.chunk_grad.data(), ws.workspace.get());
      const float prior = ws.chunks_in == 1 ? static_cast<float>(ws.samples_in) : 1.0f;
      const std::size_t size = c.store.size();
      for (std::size_t i = 0; i < size; ++i) ws.grad[i] = prior * ws.grad[i] + b * ws.chunk_grad[i];
    }
  }
  if (!std::isfinite(loss)) {
    c.stop.store(true, std::memory_order_relaxed);
    diverged(c.epoch, loss, ws.eta, "minibatch");
  }
  ws.samples_in += static_cast<std::uint32_t>(chunk.size());
  ++ws.chunks_in;
  ws.stats.samples += chunk.size();
  ws.clock.after(chunk.size());
}

// Coherence: a sampled gradient is kept (a sparse one sorted by coordinate) and compared with
// the worker's gradient `lag` updates later. A dense one is kept as it is: on a 200k-parameter
// MLP, building and merging (coordinate, value) pairs cost 1.4% of training at the default 1%.
void measure_coherence(WorkerState& ws, detail::CoherenceProbe::Step step, std::size_t window,
                       std::span<const std::uint32_t> idx, std::span<const float> g) {
  const bool compare = step == detail::CoherenceProbe::Step::kCompare;
  if (idx.empty()) {
    if (compare) {
      detail::CoherenceProbe::add(ws.stats, window, detail::dense_cosine(g, ws.saved_dense));
    } else {
      ws.saved_dense.assign(g.begin(), g.end());
    }
    return;
  }
  ws.current.clear();
  for (std::size_t i = 0; i < g.size(); ++i) ws.current.emplace_back(idx[i], g[i]);
  std::sort(ws.current.begin(), ws.current.end());
  if (compare) {
    detail::CoherenceProbe::add(ws.stats, window, cosine(ws.current, ws.saved));
  } else {
    std::swap(ws.saved, ws.current);
  }
}

// Turns the open window into one update (the mean or the sum of its samples' gradients) and
// applies it now or after the injected delay (counted in the worker's own later updates).
template <class P>
void close_window(const EpochContext& c, WorkerState& ws) {
  const TrainConfig& config = c.config;
  if (c.timed) ws.clock.close(ws.samples_in, ws.stats.windows_ns);
  const std::size_t width = c.model.row_width();
  const std::size_t size = width > 0 ? ws.rows_in * width : c.store.size();
  const auto n = static_cast<float>(ws.samples_in);
  // One chunk: `grad` is its mean. More: the sum.
  const float scale = ws.chunks_in == 1 ? (config.schedule->mean ? 1.0f : n)
                                        : (config.schedule->mean ? 1.0f / n : 1.0f);
  if (scale != 1.0f) {
    for (std::size_t i = 0; i < size; ++i) ws.grad[i] *= scale;
  }
  const std::span<const std::uint32_t> idx =
      width > 0 ? std::span<const std::uint32_t>(ws.idx.data(), size)
                : std::span<const std::uint32_t>{};
  const std::span<const float> g(ws.grad.data(), size);
  const float eta = ws.eta;
  const double t = ws.t;
  const std::size_t window = ws.coherence_window;
  const bool measured = ws.measured;
  const detail::StalenessProbe::Reading read = ws.read;
  ParamStore& store = c.store;
  detail::OptimizerState& state = c.state;
  ++ws.stats.computed;
  ws.stats.batch_sizes.record(ws.samples_in);

  if (const auto step = ws.coherence.at(ws.stats.computed);
      step != detail::CoherenceProbe::Step::kNone) {
    measure_coherence(ws, step, window, idx, g);
  }

  if (c.merge_every > 0) {
    detail::apply_step<detail::SerialPolicy>(config.optimizer, *ws.replica, *ws.replica_state,
                                             {idx, g}, eta, t, ws.scratch);
    ws.replica_counts.updated(measured);
    ws.replica_counts.since_merge += ws.samples_in;
    if (ws.replica_counts.since_merge >= c.merge_every) merge_replica<P>(c, ws);
  } else if (!ws.delay.on() && c.landings) {
    send(*c.landings, ws,
         {read, t, eta, static_cast<std::uint32_t>(g.size()), idx.empty(), measured}, idx, g);
  } else if (!ws.delay.on()) {
    apply_update<P>(config, store, state, ws, idx, g, eta, t, measured ? &read : nullptr);
  } else {
    const std::uint32_t slot =
        ws.delay.hold({read, t, eta, static_cast<std::uint32_t>(g.size()), idx.empty(), measured},
                      ws.stats.injected);
    auto& slot_g = ws.slot_grad[slot];
    if (slot_g.size() < g.size()) slot_g.resize(ws.grad.size());  // first use of this slot
    std::copy(g.begin(), g.end(), slot_g.begin());
    if (!idx.empty()) {
      auto& slot_i = ws.slot_idx[slot];
      if (slot_i.size() < idx.size()) slot_i.resize(ws.idx.size());
      std::copy(idx.begin(), idx.end(), slot_i.begin());
    }
    end_delay_step<P>(c, ws);
  }
  if (width > 0) {
    for (std::size_t s = 0; s < ws.rows_in; ++s) ws.slot[ws.unique[s]] = -1;
  }
  ws.open = false;
  if (c.read_latency_ns > 0) ws.clock.wait_for(c.read_latency_ns);
}

// True when the open window is complete: B samples, or W has passed (or --max-batch).
inline bool window_done(const EpochContext& c, WorkerState& ws) {
  if (!c.timed) return ws.samples_in >= c.config.schedule->batch;
  return ws.samples_in >= c.config.schedule->max_batch || ws.clock.passed();
}

// Samples in the open window's next chunk: what completes a fixed minibatch, or half the
// time left in a time window (see kMaxChunk).
inline std::size_t next_chunk(const EpochContext& c, const WorkerState& ws) {
  if (c.virtual_time) return 1;
  if (!c.timed) return c.config.schedule->batch - ws.samples_in;
  return ws.clock.next_check(ws.samples_in,
                             std::min(kMaxChunk, c.config.schedule->max_batch - ws.samples_in));
}

// Feeds the samples at positions [first, last) of `rows` (`len` positions in all: a worker's
// slice, or the whole shuffle under dynamic sharding) to the worker's windows. A window may
// span two calls (claimed ranges); a chunk that does is gathered in the worker's buffer.
template <class P>
void run_range(const EpochContext& c, WorkerState& ws, const std::uint32_t* rows, std::size_t first,
               std::size_t last, std::size_t len, int worker) {
  std::size_t pos = first;
  while (pos < last) {
    if (c.stop.load(std::memory_order_relaxed)) return;
    if (!ws.open) open_window<P>(c, ws, pos, len, worker);
    if (ws.buffered == 0) ws.chunk_target = next_chunk(c, ws);
    const std::size_t take = std::min(ws.chunk_target - ws.buffered, last - pos);
    if (ws.buffered == 0 && take == ws.chunk_target) {
      compute_chunk<P>(c, ws, std::span(rows + pos, take));
    } else {
      std::copy_n(rows + pos, take, ws.buffer.begin() + static_cast<std::ptrdiff_t>(ws.buffered));
      ws.buffered += take;
      pos += take;
      if (ws.buffered < ws.chunk_target) return;  // the range is used up
      compute_chunk<P>(c, ws, std::span(ws.buffer.data(), ws.buffered));
      ws.buffered = 0;
      if (window_done(c, ws)) close_window<P>(c, ws);
      continue;
    }
    pos += take;
    if (window_done(c, ws)) close_window<P>(c, ws);
  }
}

// End of a segment of the epoch (evaluation follows): the partly filled chunk and window
// become an update, so no sample is lost and no window spans an evaluation.
template <class P>
void finish_segment(const EpochContext& c, WorkerState& ws) {
  if (c.stop.load(std::memory_order_relaxed)) return;
  if (ws.buffered > 0) {
    compute_chunk<P>(c, ws, std::span(ws.buffer.data(), ws.buffered));
    ws.buffered = 0;
  }
  if (c.landings) c.landings->set_now(ws.clock.now());
  if (ws.open) close_window<P>(c, ws);
  if (c.merge_every > 0 && ws.replica_fresh) {
    merge_replica<P>(c, ws);
    ws.replica_fresh = false;  // the next segment starts from the shared store
  }
}

// Checks a resumed state against this model and optimiser and copies it in.
void restore(const TrainState& resume, const TrainConfig& config, std::size_t params,
             const std::vector<ParamStore*>& state_buffers, ParamStore& store) {
  if (resume.weights.size() != params) {
    throw InputError(
        fmt::format("model: expected {} parameters to resume (this model on this data), found {}",
                    params, resume.weights.size()));
  }
  if (resume.optimizer_state.size() != state_buffers.size()) {
    throw InputError(fmt::format(
        "--optimizer: expected {} optimiser state buffers to resume {}, found {}",
        state_buffers.size(), to_string(config.optimizer.kind), resume.optimizer_state.size()));
  }
  for (const auto& buffer : resume.optimizer_state) {
    if (buffer.size() != params) {
      throw InputError(fmt::format("model: expected optimiser state of {} values, found {}", params,
                                   buffer.size()));
    }
  }
  std::copy(resume.weights.begin(), resume.weights.end(), store.values().begin());
  for (std::size_t b = 0; b < state_buffers.size(); ++b) {
    std::copy(resume.optimizer_state[b].begin(), resume.optimizer_state[b].end(),
              state_buffers[b]->values().begin());
  }
}

// Everything a model run's kernel works on, set up once by run().
struct ModelRun {
  const TrainConfig& config;
  const Model& model;
  const Examples& train;
  const std::optional<Examples>& test;
  ParamStore& store;
  detail::OptimizerState& state;
  std::vector<ParamStore*> state_buffers;  // the optimiser's, in checkpoint order
  std::vector<std::unique_ptr<WorkerState>> workers;
  std::vector<detail::AppliedCounter> counters;
  tbb::task_arena arena;
  std::optional<detail::GlobalSteps> global_steps{};  // --delay-unit global
  std::optional<detail::Landings> landings{};         // --write-latency
  std::optional<detail::ExamplesCopy> loss_sample{};  // --train-loss-sample: those measured
  std::uint64_t merge_every = 0;  // --replicate: samples between merges, 0 = shared parameters
};

// The model kernel: windows over a Model, for one policy chosen once; on cache lines of its own,
// as the linear kernel.
template <class P>
class alignas(kCacheLine) WindowKernel final : public detail::Kernel {
 public:
  explicit WindowKernel(ModelRun& run) : run_(run) {}

  void begin_epoch(int epoch) override {
    epoch_ = epoch;
    stop_.store(false, std::memory_order_relaxed);
  }
  std::size_t round_positions() const override { return run_.config.schedule->batch; }
  void run_range(int worker, const std::uint32_t* rows, std::size_t first, std::size_t last,
                 std::size_t len) override {
    ::hogwild::run_range<P>(context(), state(worker), rows, first, last, len, worker);
  }
  void part_done(int worker) override { finish_segment<P>(context(), state(worker)); }
  void end_segment(int worker, bool epoch_end) override {
    auto& ws = state(worker);
    finish_segment<P>(context(), ws);
    if (epoch_end) flush<P>(run_.config, run_.store, run_.state, landings(), ws);
  }
  void land_until(std::int64_t now_ns) override {
    run_.landings->land_until(now_ns, [&](int worker, std::int64_t at_ns) {
      land<P>(run_.config, run_.store, run_.state, state(worker), at_ns);
    });
  }
  bool failed() const override { return stop_.load(std::memory_order_relaxed); }
  EpochRecord evaluate(bool with_test) override {
    EpochRecord result;
    result.train = evaluated(run_.loss_sample ? run_.loss_sample->examples() : run_.train);
    if (with_test && run_.test && run_.test->size() > 0) result.test = evaluated(*run_.test);
    return result;
  }
  double step_of(int epoch, bool) const override {
    const auto& o = run_.config.optimizer;
    return step_scale_ * (epoch == 0 ? *o.step : o.step_at(*o.step, epoch - 1, epoch - 1));
  }
  void scale_step(double scale) override { step_scale_ = scale; }
  std::uint64_t applied() const override {
    std::uint64_t total = 0;
    for (const auto& ws : run_.workers) total += ws->stats.applied;
    return total;
  }
  std::uint64_t applied_by(int worker) const override {
    return run_.workers[static_cast<std::size_t>(worker)]->stats.applied;
  }
  std::span<const detail::AppliedCounter> published_counts() const override {
    return run_.counters;
  }
  void fill_state(TrainState& state) const override {
    state.weights = run_.store.values();
    if (run_.merge_every > 0) average_replica_states();
    for (const auto* buffer : run_.state_buffers) state.optimizer_state.push_back(buffer->values());
    for (const auto& ws : run_.workers) {
      state.worker_updates.push_back(ws->updates);
      auto& words = state.worker_draws.emplace_back();
      ws->delay.save(words);
      ws->clock.save(words);
    }
  }

 private:
  WorkerState& state(int worker) { return *run_.workers[static_cast<std::size_t>(worker)]; }
  // With replicas each worker keeps its own optimiser state: the shared buffers get their mean,
  // which checkpoints save and a resumed run's workers start from.
  void average_replica_states() const {
    for (std::size_t b = 0; b < run_.state_buffers.size(); ++b) {
      std::span<float> mean = run_.state_buffers[b]->values();
      std::size_t started = 0;
      for (const auto& ws : run_.workers) {
        if (!ws->replica_started) continue;
        const ParamStore& own = b == 0 ? *ws->replica_state->s1 : *ws->replica_state->s2;
        if (started++ == 0) std::fill(mean.begin(), mean.end(), 0.0f);
        for (std::size_t i = 0; i < mean.size(); ++i) mean[i] += own.data()[i];
      }
      const auto share = static_cast<float>(started);
      if (started > 1) {
        for (auto& v : mean) v /= share;
      }
    }
  }
  detail::Landings* landings() { return run_.landings ? &*run_.landings : nullptr; }
  EpochContext context() {
    const bool timed = run_.config.schedule->kind == ScheduleSpec::Kind::kTime;
    return {run_.config,
            run_.model,
            run_.train,
            run_.store,
            run_.state,
            stop_,
            epoch_,
            run_.config.workers(),
            timed,
            run_.config.virtual_time,
            run_.workers,
            run_.global_steps ? &*run_.global_steps : nullptr,
            landings(),
            run_.config.read_latency_ns,
            step_scale_ * *run_.config.optimizer.step,
            run_.merge_every};
  }
  Evaluation evaluated(const Examples& data) {
    const float* w = run_.store.data();  // workers have joined: plain reads are safe
    return evaluate_model(run_.model, data, w, run_.arena);
  }

  ModelRun& run_;
  int epoch_ = 1;
  double step_scale_ = 1;          // the plateau schedule's cuts
  std::atomic<bool> stop_{false};  // a worker diverged
};

// Worker `worker`'s state: scratch sized for the schedule's largest window, its window clock,
// delay line and probes, each seeded from the run's seed and the worker.
// `rows_per_example` is the model's max_rows_per_example over the data (a pass over it: once
// per run, not per worker).
std::unique_ptr<WorkerState> make_worker(const TrainConfig& config, const Model& model,
                                         std::size_t rows_per_example, int worker,
                                         const Callbacks& clocks,
                                         std::span<detail::AppliedCounter> counters,
                                         bool replicated) {
  const std::size_t params = model.num_params();
  const std::size_t width = model.row_width();
  const bool timed = config.schedule->kind == ScheduleSpec::Kind::kTime;
  auto ws = std::make_unique<WorkerState>();
  ws->id = worker;
  // A fixed minibatch is one chunk; a time window holds up to --max-batch samples, computed
  // in chunks of up to kMaxChunk.
  const std::size_t window_cap = timed ? config.schedule->max_batch : config.schedule->batch;
  const std::size_t chunk_cap =
      timed ? std::min<std::size_t>(kMaxChunk, config.schedule->max_batch) : config.schedule->batch;
  ws->workspace = model.workspace(chunk_cap);
  std::size_t update_size = params;
  if (width > 0) {
    const std::size_t row_count = params / width;
    const std::size_t max_rows = std::min(row_count, window_cap * rows_per_example + 1);
    update_size = max_rows * width;
    ws->slot.assign(row_count, -1);
    ws->unique.resize(max_rows);
    ws->stamp.assign(max_rows, 0);
    ws->idx.resize(update_size);
    ws->rows.reserve(chunk_cap * rows_per_example + 1);
    ws->chunk_rows.reserve(std::min(max_rows, chunk_cap * rows_per_example + 1));
  }
  if (replicated) {
    ws->replica = std::make_unique<ParamStore>(params, 1);
    ws->replica_base.resize(params);
    ws->replica_state = std::make_unique<detail::OptimizerState>(config.optimizer.kind, params);
  } else {
    ws->local.resize(update_size);
  }
  ws->grad.resize(update_size);
  // Time windows and virtual time compute a window in several chunks.
  if (timed || config.virtual_time) ws->chunk_grad.resize(update_size);
  ws->buffer.resize(chunk_cap);
  ws->scratch = detail::OptimizerScratch(update_size);
  const auto stream = static_cast<std::uint64_t>(worker);
  ws->clock = detail::WindowClock(*config.schedule, config.speed, worker,
                                  detail::derive_seed(config.seed, 0x5bee0000u + stream),
                                  clocks.clock ? clocks.clock(worker) : nullptr, clocks.stop);
  if (config.delay.kind != DelaySpec::Kind::kNone) {
    ws->delay = detail::DelayLayer<WorkerState::Pending>(
        config.delay, detail::derive_seed(config.seed, 0xde1a0000u + stream));
    ws->slot_idx.resize(ws->delay.capacity());
    ws->slot_grad.resize(ws->delay.capacity());
  }
  ws->staleness_probe = detail::StalenessProbe(
      config.staleness_sample, detail::derive_seed(config.seed, 0x57a1e000u + stream), counters,
      worker, config.virtual_time ? clocks.clock(worker).get() : nullptr,
      config.bounded_staleness >= 0);
  ws->coherence = detail::CoherenceProbe(config.coherence_sample,
                                         detail::derive_seed(config.seed, 0xc0e40000u + stream),
                                         config.coherence_lag);
  ws->stats.size_for(config.epochs, config.delay.max_delay());
  return ws;
}

}  // namespace

namespace detail {

Report train_model(const TrainConfig& raw, const Model& model, const Examples& train,
                   const std::optional<Examples>& test, DataShape shape, std::vector<double> labels,
                   const Callbacks& callbacks, const TrainState* resume) {
  Report report;
  report.config = raw.resolved();
  report.config.replicate = raw.resolved_model_replicate(model.row_width() == 0);
  const TrainConfig& config = report.config;
  const int worker_count = config.workers();
  shape.parameters = model.num_params();
  report.data = std::move(shape);
  report.labels = std::move(labels);

  const std::size_t n = train.size();
  if (n == 0) throw InputError("training data: expected at least one example, found none");
  if (n > std::numeric_limits<std::uint32_t>::max()) {
    throw InputError(fmt::format("training data: expected at most 2^32-1 examples, found {}", n));
  }
  const std::size_t params = model.num_params();
  if (params > std::numeric_limits<std::uint32_t>::max()) {
    throw InputError(fmt::format("model: expected at most 2^32-1 parameters, found {}", params));
  }
  ParamStore store(params);
  model.init(store.values(), config.seed);
  detail::OptimizerState state(config.optimizer.kind, params);
  // Evaluation uses at most the cores there are (more workers than cores is allowed).
  ModelRun run{
      config,
      model,
      train,
      test,
      store,
      state,
      {},
      {},
      std::vector<detail::AppliedCounter>(static_cast<std::size_t>(worker_count)),
      tbb::task_arena(std::min(
          worker_count, static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))))};
  if (state.s1) run.state_buffers.push_back(state.s1.get());
  if (state.s2) run.state_buffers.push_back(state.s2.get());
  if (resume) restore(*resume, config, params, run.state_buffers, store);
  run.merge_every = static_cast<std::uint64_t>(config.replicate);
  const auto loss_rows = detail::train_loss_rows(n, config.train_loss_sample, config.seed);
  if (!loss_rows.empty()) run.loss_sample.emplace(train, loss_rows);
  auto& workers = run.workers;
  const Callbacks clocks = detail::with_virtual_clocks(config, callbacks);
  const std::size_t rows_per_example =
      model.row_width() > 0 ? model.max_rows_per_example(train) : 0;
  for (int worker = 0; worker < worker_count; ++worker) {
    workers.push_back(make_worker(config, model, rows_per_example, worker, clocks, run.counters,
                                  run.merge_every > 0));
  }

  if (config.global_delay && config.delay.kind != DelaySpec::Kind::kNone) {
    run.global_steps.emplace(config.delay.max_delay());
    for (int w = 0; w < worker_count; ++w) {
      workers[static_cast<std::size_t>(w)]->delay.count_globally(&*run.global_steps, w);
    }
  }
  if (config.write_latency_ns > 0) run.landings.emplace(config.write_latency_ns);
  if (resume) {
    // Each worker's update count continues (Adam's bias correction counts updates); with a
    // different number of workers the total is shared out evenly.
    std::uint64_t total = 0;
    for (const auto u : resume->worker_updates) total += u;
    for (std::size_t w = 0; w < workers.size(); ++w) {
      workers[w]->updates = resume->worker_updates.size() == workers.size()
                                ? resume->worker_updates[w]
                                : total / workers.size();
    }
  }
  // Across processes each process's workers draw their own: one process's draws are no others'.
  if (callbacks.exchange == nullptr) {
    detail::restore_worker_draws(resume, workers.size(),
                                 [&](std::size_t w, detail::DrawReader& in) {
                                   workers[w]->delay.restore(in);
                                   workers[w]->clock.restore(in);
                                 });
  }
  const auto kernel = dispatch_policy(config.policy, [&](auto policy) {
    return std::unique_ptr<detail::Kernel>(std::make_unique<WindowKernel<decltype(policy)>>(run));
  });

  std::vector<const WorkerStats*> measured;
  for (const auto& ws : workers) measured.push_back(&ws->stats);
  drive_into(report, driver_config(config, n, worker_count), *kernel, clocks, resume, measured,
             store, config.policy);
  return report;
}

}  // namespace detail

}  // namespace hogwild
