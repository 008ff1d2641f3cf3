// Parameter sharing across processes on MPI: one-sided merges into a window spread over the
// processes (rma), or synchronous averaging with MPI_Allreduce (allreduce).

#include "hogwild/mpi_exchange.h"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "hogwild/error.h"

namespace hogwild {
namespace {

using Clock = std::chrono::steady_clock;

// Coordinates per one-sided operation: a block whose values the process did not change since
// its last merge is only read (MPI_NO_OP), not sent.
constexpr std::size_t kBlock = 1024;

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw SystemError(fmt::format("MPI: {} failed: {}", what, std::string_view(text, length)));
}

int as_count(std::size_t n) {
  if (n > static_cast<std::size_t>(INT_MAX)) {
    throw InputError(
        fmt::format("--sync: expected a model of at most {} parameters across "
                    "processes, found {}",
                    INT_MAX, n));
  }
  return static_cast<int>(n);
}

// A merge's outcome for one coordinate that workers may be writing: the value the merge read
// becomes `merged`, keeping what workers added since the read (exactly `merged` when nothing
// was). Atomic read-modify-write unless the policy is racy, where a write landing between the
// load and the store is lost, as Hogwild allows.
void settle(float& x, float read, float merged, bool atomic) {
  std::atomic_ref<float> ref(x);
  float now = ref.load(std::memory_order_relaxed);
  if (!atomic) {
    ref.store(now == read ? merged : now + (merged - read), std::memory_order_relaxed);
    return;
  }
  while (!ref.compare_exchange_weak(now, now == read ? merged : now + (merged - read),
                                    std::memory_order_relaxed)) {
  }
}

// One merge as the staleness report counts it: the samples other processes merged between this
// process's read of the model and its write, for each of the `own` samples it merged.
struct MergeRecord {
  std::uint64_t others = 0;
  std::uint64_t own = 0;
  std::uint64_t nanos = 0;
};

class MpiExchange final : public Exchange {
 public:
  MpiExchange(const MpiSession& session, SyncMode mode, std::uint64_t merge_every, int bound)
      : rank_(session.rank()),
        ranks_(session.ranks()),
        mode_(mode),
        every_(merge_every),
        bound_(bound) {
    if (merge_every == 0) throw InputError("--sync-every: expected at least 1 sample, found 0");
    if (bound >= 0 && mode != SyncMode::kRma) {
      throw InputError(
          "--sync-bound: expected --sync rma, found --sync allreduce (which waits "
          "for every process at each merge)");
    }
  }

  ~MpiExchange() override {
    // Freeing a window is collective: a process unwinding alone (an error only it met) would
    // wait for the others forever; MPI_Finalize or MPI_Abort then releases it.
    if (window_ == MPI_WIN_NULL || std::uncaught_exceptions() > 0) return;
    MPI_Win_unlock_all(window_);
    MPI_Win_unlock_all(counter_window_);
    MPI_Win_free(&window_);
    MPI_Win_free(&counter_window_);
  }

  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }
  std::uint64_t merge_every() const override { return every_; }

  void attach(std::span<float> parameters, Policy policy) override {
    params_ = parameters;
    atomic_ = policy != Policy::kRacy;
    const std::size_t dim = parameters.size();
    check(MPI_Bcast(params_.data(), as_count(dim), MPI_FLOAT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    base_.assign(params_.begin(), params_.end());
    read_.resize(dim);
    delta_.resize(dim);
    result_.resize(dim);
    if (mode_ == SyncMode::kRma) open_window();
  }

  void begin_segment(std::uint64_t positions) override {
    std::lock_guard lock(mutex_);
    segment_samples_.store(0, std::memory_order_relaxed);
    merged_samples_ = 0;
    done_ = 0;
    stop_seen_.store(false, std::memory_order_relaxed);
    if (mode_ == SyncMode::kAllreduce) {
      // Every process makes the same number of collective merges: as many as the process with
      // the fewest samples in the segment reaches.
      std::uint64_t fewest = 0;
      check(MPI_Allreduce(&positions, &fewest, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD),
            "MPI_Allreduce");
      planned_ = fewest / every_;
    }
    if (bound_ >= 0) align_clocks();
  }

  void after_range(std::uint64_t samples) override {
    const std::uint64_t before = segment_samples_.fetch_add(samples, std::memory_order_relaxed);
    if ((before + samples) / every_ == before / every_) return;
    std::lock_guard lock(mutex_);
    if (mode_ == SyncMode::kRma) {
      if (bound_ >= 0) wait_for_slowest();
      merge_rma();
    } else if (done_ < planned_) {
      ++done_;
      merge_allreduce(false);
    }
  }

  bool stop_seen() const override { return stop_seen_.load(std::memory_order_relaxed); }

  bool end_segment(bool stop) override {
    std::lock_guard lock(mutex_);
    bool any_stop = false;
    if (mode_ == SyncMode::kRma) {
      // The segment's last merge keeps to the bound too; after it the process holds nobody
      // back.
      if (bound_ >= 0) wait_for_slowest();
      merge_rma();
      if (bound_ >= 0) {
        retired_at_ = clock_;
        publish_clock(kRetired);
      }
      // Every process's merge has completed (flushed) before any passes this reduction.
      const int mine = stop ? 1 : 0;
      int any = 0;
      check(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
      any_stop = any != 0;
      if (rank_ == 0) pull_rma();
    } else {
      // The merges the others make and this process did not reach, then the final one.
      for (; done_ < planned_; ++done_) merge_allreduce(stop);
      any_stop = merge_allreduce(stop);
    }
    // Every process ends the segment with rank 0's parameters, bit for bit.
    check(MPI_Bcast(result_.data(), as_count(result_.size()), MPI_FLOAT, 0, MPI_COMM_WORLD),
          "MPI_Bcast");
    check(MPI_Bcast(&total_after_, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
    std::copy(result_.begin(), result_.end(), params_.begin());
    base_ = result_;
    last_read_ = Clock::now();
    return any_stop;
  }

  void broadcast(std::span<double> values) override {
    check(MPI_Bcast(values.data(), as_count(values.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD),
          "MPI_Bcast");
  }

  void sum(std::span<double> values) override {
    check(MPI_Allreduce(MPI_IN_PLACE, values.data(), as_count(values.size()), MPI_DOUBLE, MPI_SUM,
                        MPI_COMM_WORLD),
          "MPI_Allreduce");
  }

  ExchangeSummary summary() override {
    ExchangeSummary s;
    s.sync = std::string(to_string(mode_));
    s.ranks = ranks_;
    s.merge_every = every_;
    s.merges = merges_;
    s.merge_seconds = merge_seconds_;
    s.bytes = bytes_;
    s.bound = bound_;
    s.bound_waits = bound_waits_;
    s.bound_wait_seconds = bound_wait_seconds_;
    s.merges_per_rank.resize(static_cast<std::size_t>(ranks_));
    check(MPI_Gather(&merges_, 1, MPI_UINT64_T, s.merges_per_rank.data(), 1, MPI_UINT64_T, 0,
                     MPI_COMM_WORLD),
          "MPI_Gather");
    gather_staleness(s.staleness);
    return s;
  }

 private:
  // The window: rank r holds coordinates [lo(r), lo(r + 1)); a second window on rank 0 counts
  // the samples merged so far, for the staleness across processes.
  std::size_t lo(int r) const {
    return params_.size() * static_cast<std::size_t>(r) / static_cast<std::size_t>(ranks_);
  }

  void open_window() {
    const std::size_t own = lo(rank_ + 1) - lo(rank_);
    float* memory = nullptr;
    check(MPI_Win_allocate(static_cast<MPI_Aint>(own * sizeof(float)), sizeof(float), MPI_INFO_NULL,
                           MPI_COMM_WORLD, &memory, &window_),
          "MPI_Win_allocate");
    std::copy_n(params_.begin() + static_cast<std::ptrdiff_t>(lo(rank_)), own, memory);
    // Rank 0's counters: the samples merged by all, then each process's merges (its SSP clock).
    const std::size_t counters = 1 + static_cast<std::size_t>(ranks_);
    std::uint64_t* counter = nullptr;
    check(MPI_Win_allocate(static_cast<MPI_Aint>(rank_ == 0 ? counters * sizeof(std::uint64_t) : 0),
                           sizeof(std::uint64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &counter,
                           &counter_window_),
          "MPI_Win_allocate");
    if (rank_ == 0) std::fill_n(counter, counters, 0);
    check(MPI_Win_lock_all(MPI_MODE_NOCHECK, window_), "MPI_Win_lock_all");
    check(MPI_Win_lock_all(MPI_MODE_NOCHECK, counter_window_), "MPI_Win_lock_all");
    MPI_Win_sync(window_);
    MPI_Win_sync(counter_window_);
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    last_read_ = Clock::now();
  }

  // Reads the parameters as workers leave them; the samples merged are those since the last
  // merge.
  std::uint64_t read_parameters() {
    for (std::size_t i = 0; i < params_.size(); ++i) {
      read_[i] = std::atomic_ref<float>(params_[i]).load(std::memory_order_relaxed);
    }
    const std::uint64_t now = segment_samples_.load(std::memory_order_relaxed);
    const std::uint64_t own = now - std::min(now, merged_samples_);
    merged_samples_ = std::max(now, merged_samples_);
    return own;
  }

  // Adds this process's changes to the window and reads every value back, block by block, in
  // one passive-target epoch; the parameters then hold the window's values plus what workers
  // wrote meanwhile.
  void merge_rma() {
    const auto start = Clock::now();
    const std::uint64_t own = read_parameters();
    for (std::size_t i = 0; i < params_.size(); ++i) delta_[i] = read_[i] - base_[i];
    exchange_blocks(true);
    std::uint64_t before = 0;
    check(MPI_Fetch_and_op(&own, &before, MPI_UINT64_T, 0, 0, MPI_SUM, counter_window_),
          "MPI_Fetch_and_op");
    if (bound_ >= 0 && clock_ != kRetired) {
      const std::uint64_t one = 1;
      check(MPI_Accumulate(&one, 1, MPI_UINT64_T, 0, clock_slot(rank_), 1, MPI_UINT64_T, MPI_SUM,
                           counter_window_),
            "MPI_Accumulate");
      ++clock_;
    }
    check(MPI_Win_flush_all(window_), "MPI_Win_flush_all");
    check(MPI_Win_flush(0, counter_window_), "MPI_Win_flush");
    for (std::size_t i = 0; i < params_.size(); ++i) {
      const float merged = result_[i] + delta_[i];
      settle(params_[i], read_[i], merged, atomic_);
      base_[i] = merged;
    }
    finish_merge(before - std::min(before, total_after_), own, start);
    total_after_ = before + own;
  }

  // --sync-bound S (stale synchronous parallel across processes): each process's clock is
  // the merges it made; a process does not start merge c + S + 1 before every process made
  // merge c. Clocks live on rank 0 beside the merged-sample count.
  static constexpr std::uint64_t kRetired = std::uint64_t{1} << 62;
  // How long a process waits for the slowest before it gives up: a process that stopped
  // merging without ending its segment (a hang, not a slow peer; a dead one ends the job).
  static constexpr double kBoundTimeoutSeconds = 300;

  static MPI_Aint clock_slot(int rank) { return 1 + rank; }

  // Sets this process's clock on rank 0.
  void publish_clock(std::uint64_t value) {
    clock_ = value;
    check(MPI_Accumulate(&value, 1, MPI_UINT64_T, 0, clock_slot(rank_), 1, MPI_UINT64_T,
                         MPI_REPLACE, counter_window_),
          "MPI_Accumulate");
    check(MPI_Win_flush(0, counter_window_), "MPI_Win_flush");
  }

  // At a segment's start (collective): every clock restarts from the largest, so a segment's
  // uneven merge counts do not carry over.
  void align_clocks() {
    std::uint64_t mine = clock_ == kRetired ? retired_at_ : clock_;
    std::uint64_t largest = 0;
    check(MPI_Allreduce(&mine, &largest, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD),
          "MPI_Allreduce");
    publish_clock(largest);
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  }

  // Before a merge: waits while this process is more than S merges ahead of the slowest.
  void wait_for_slowest() {
    const auto start = Clock::now();
    bool waited = false;
    std::vector<std::uint64_t> clocks(static_cast<std::size_t>(ranks_));
    const std::vector<std::uint64_t> none(clocks.size(), 0);
    for (int spins = 0;; ++spins) {
      check(
          MPI_Get_accumulate(none.data(), ranks_, MPI_UINT64_T, clocks.data(), ranks_, MPI_UINT64_T,
                             0, clock_slot(0), ranks_, MPI_UINT64_T, MPI_NO_OP, counter_window_),
          "MPI_Get_accumulate");
      check(MPI_Win_flush(0, counter_window_), "MPI_Win_flush");
      const std::uint64_t slowest = *std::min_element(clocks.begin(), clocks.end());
      if (clock_ <= slowest + static_cast<std::uint64_t>(bound_)) break;
      waited = true;
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      if (seconds > kBoundTimeoutSeconds) {
        throw SystemError(fmt::format(
            "--sync-bound: waited {:.0f} s for the slowest process to merge (this process at "
            "merge {}, the slowest at {}): a process stopped merging",
            seconds, clock_, slowest));
      }
      if (spins > 100) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    if (!waited) return;
    ++bound_waits_;
    bound_wait_seconds_ += std::chrono::duration<double>(Clock::now() - start).count();
  }

  // Rank 0 at a segment's end, once every process has merged: the window's values.
  void pull_rma() {
    std::fill(delta_.begin(), delta_.end(), 0.0f);
    exchange_blocks(false);
    const std::uint64_t none = 0;
    check(MPI_Fetch_and_op(&none, &total_after_, MPI_UINT64_T, 0, 0, MPI_NO_OP, counter_window_),
          "MPI_Fetch_and_op");
    check(MPI_Win_flush_all(window_), "MPI_Win_flush_all");
    check(MPI_Win_flush(0, counter_window_), "MPI_Win_flush");
  }

  // MPI_Get_accumulate over every block: SUM for the blocks `delta_` changes (when `add`),
  // NO_OP (a read, atomic with the others' sums) for the rest; results land in result_.
  void exchange_blocks(bool add) {
    for (int r = 0; r < ranks_; ++r) {
      const std::size_t begin = lo(r), end = lo(r + 1);
      for (std::size_t first = begin; first < end; first += kBlock) {
        const std::size_t n = std::min(kBlock, end - first);
        const float* d = delta_.data() + first;
        const bool changed = add && std::any_of(d, d + n, [](float v) { return v != 0.0f; });
        const int count = static_cast<int>(n);
        check(MPI_Get_accumulate(d, count, MPI_FLOAT, result_.data() + first, count, MPI_FLOAT, r,
                                 static_cast<MPI_Aint>(first - begin), count, MPI_FLOAT,
                                 changed ? MPI_SUM : MPI_NO_OP, window_),
              "MPI_Get_accumulate");
        bytes_ += (changed ? 2 : 1) * n * sizeof(float);
      }
    }
  }

  // One collective average; true when some process asked to stop.
  bool merge_allreduce(bool stop) {
    const auto start = Clock::now();
    const std::uint64_t own = read_parameters();
    const int dim = as_count(params_.size());
    check(MPI_Allreduce(read_.data(), result_.data(), dim, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
          "MPI_Allreduce");
    const std::uint64_t mine[2] = {own, stop ? 1u : 0u};
    std::uint64_t all[2] = {0, 0};
    check(MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    const float scale = 1.0f / static_cast<float>(ranks_);
    for (std::size_t i = 0; i < params_.size(); ++i) {
      result_[i] *= scale;
      settle(params_[i], read_[i], result_[i], atomic_);
    }
    bytes_ += 2 * params_.size() * sizeof(float);
    finish_merge(all[0] - own, own, start);
    if (all[1] > 0) stop_seen_.store(true, std::memory_order_relaxed);
    return all[1] > 0;
  }

  void finish_merge(std::uint64_t others, std::uint64_t own, Clock::time_point start) {
    const auto now = Clock::now();
    ++merges_;
    merge_seconds_ += std::chrono::duration<double>(now - start).count();
    if (own > 0) {
      const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_read_);
      records_.push_back({others, own, static_cast<std::uint64_t>(nanos.count())});
    }
    last_read_ = now;
  }

  // Rank 0 records every process's merges.
  void gather_staleness(StalenessStats& out) {
    std::vector<std::uint64_t> flat;
    for (const auto& r : records_) flat.insert(flat.end(), {r.others, r.own, r.nanos});
    const int count = as_count(flat.size());
    std::vector<int> counts(static_cast<std::size_t>(ranks_)), offsets(counts.size());
    check(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD),
          "MPI_Gather");
    std::vector<std::uint64_t> all;
    if (rank_ == 0) {
      int total = 0;
      for (std::size_t r = 0; r < counts.size(); ++r) {
        offsets[r] = total;
        total += counts[r];
      }
      all.resize(static_cast<std::size_t>(total));
    }
    check(MPI_Gatherv(flat.data(), count, MPI_UINT64_T, all.data(), counts.data(), offsets.data(),
                      MPI_UINT64_T, 0, MPI_COMM_WORLD),
          "MPI_Gatherv");
    for (std::size_t i = 0; i + 2 < all.size(); i += 3) {
      out.updates.record(all[i], all[i + 1]);
      out.nanos.record(all[i + 2], all[i + 1]);
    }
  }

  const int rank_;
  const int ranks_;
  const SyncMode mode_;
  const std::uint64_t every_;
  const int bound_;  // --sync-bound S; -1 = none
  std::span<float> params_;
  bool atomic_ = false;
  std::vector<float> base_;    // the values of the last merge, which workers' changes start from
  std::vector<float> read_;    // the parameters as a merge read them
  std::vector<float> delta_;   // what the process changed since its last merge
  std::vector<float> result_;  // the merged values
  MPI_Win window_ = MPI_WIN_NULL;
  MPI_Win counter_window_ = MPI_WIN_NULL;
  std::mutex mutex_;  // one merge at a time (MPI_THREAD_SERIALIZED)
  std::atomic<std::uint64_t> segment_samples_{0};
  std::atomic<bool> stop_seen_{false};
  std::uint64_t merged_samples_ = 0;  // of the segment's samples, those merged
  std::uint64_t planned_ = 0;         // allreduce: the segment's merges before its final one
  std::uint64_t done_ = 0;
  std::uint64_t total_after_ = 0;  // samples merged by all processes as of the last read
  std::uint64_t merges_ = 0;
  double merge_seconds_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint64_t clock_ = 0;       // --sync-bound: merges made (kRetired at a segment's end)
  std::uint64_t retired_at_ = 0;  // the clock before it retired
  std::uint64_t bound_waits_ = 0;
  double bound_wait_seconds_ = 0;
  Clock::time_point last_read_ = Clock::now();
  std::vector<MergeRecord> records_;
};

}  // namespace

SyncMode parse_sync_mode(std::string_view name) {
  if (name == "rma") return SyncMode::kRma;
  if (name == "allreduce") return SyncMode::kAllreduce;
  throw InputError(fmt::format("--sync: expected rma or allreduce, found '{}'", name));
}

std::string_view to_string(SyncMode mode) { return mode == SyncMode::kRma ? "rma" : "allreduce"; }

MpiSession::MpiSession(int* argc, char*** argv) {
  int provided = 0;
  check(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    throw SystemError("MPI: expected an MPI library with MPI_THREAD_SERIALIZED support");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks_);
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

int MpiSession::first_failure(bool failed) const {
  const int mine = failed ? rank_ : ranks_;
  int first = ranks_;
  check(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  return first == ranks_ ? -1 : first;
}

bool MpiSession::launched() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

std::unique_ptr<Exchange> make_mpi_exchange(const MpiSession& session, SyncMode mode,
                                            std::uint64_t merge_every, int bound) {
  return std::make_unique<MpiExchange>(session, mode, merge_every, bound);
}

}  // namespace hogwild
