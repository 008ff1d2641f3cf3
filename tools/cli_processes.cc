#include "cli_processes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "hogwild/error.h"

#ifdef HOGWILD_HAS_MPI
#include <mpi.h>

#include "hogwild/mpi_exchange.h"
#endif

namespace hogwild_cli {
namespace {

#ifdef HOGWILD_HAS_MPI
// MPI lives as long as the process: MPI_Finalize runs at exit, after every exchange is gone.
std::optional<hogwild::MpiSession>& session() {
  static std::optional<hogwild::MpiSession> s;
  return s;
}
#endif

#ifndef HOGWILD_HAS_MPI
// The process count a launcher announces, 0 when none started this process.
int launched_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* value = std::getenv(name)) return std::atoi(value);
  }
  return 0;
}
#endif

}  // namespace

Processes::Processes() {
#ifdef HOGWILD_HAS_MPI
  if (hogwild::MpiSession::launched()) {
    if (!session()) session().emplace(nullptr, nullptr);
    rank_ = session()->rank();
    ranks_ = session()->ranks();
    mpi_ = true;
  }
#endif
}

Processes::~Processes() = default;

void Processes::connect(const TrainArgs& args) {
  const bool asked =
      args.given("--sync") || args.given("--sync-every") || args.given("--sync-bound");
#ifdef HOGWILD_HAS_MPI
  if (!mpi_ && asked) {
    throw hogwild::InputError(
        "--sync: expected a run started by mpirun (mpirun -np N hogwild train ...), found a "
        "single process");
  }
  if (!mpi_ || (ranks_ == 1 && !asked)) return;
  const auto& c = args.config;
  if (c.simulate > 0 || c.dynamic_sharding || c.bounded_staleness >= 0) {
    throw hogwild::InputError(
        "--sync: expected threads with static sharding and no --bounded-staleness across "
        "processes, found --simulate, --sharding dynamic or --bounded-staleness (across "
        "processes, --sync-bound bounds the staleness)");
  }
  if (args.compare_serial) {
    throw hogwild::InputError(fmt::format(
        "--compare-serial: expected a single process, found {} started by mpirun", ranks_));
  }
  if (c.weights == hogwild::WeightPrecision::kBf16) {
    throw hogwild::InputError(fmt::format(
        "--weights: expected f32 across processes (their exchange merges float weights), found "
        "bf16 with {} processes started by mpirun",
        ranks_));
  }
  if (args.limit > 0 && args.format == "libsvm") {
    throw hogwild::InputError(fmt::format(
        "--limit: expected a single process for LIBSVM data (processes started by mpirun each "
        "read their own part of the file), found --limit {} with {} started by mpirun",
        args.limit, ranks_ == 1 ? "one process" : fmt::format("{} processes", ranks_)));
  }
  exchange_ = hogwild::make_mpi_exchange(*session(), hogwild::parse_sync_mode(args.sync),
                                         args.sync_every, args.sync_bound);
#else
  if (asked) {
    throw hogwild::InputError(
        "--sync: expected a hogwild built with MPI (cmake -DHOGWILD_MPI=ON with Open MPI's "
        "libopenmpi-dev), found a build without it");
  }
  if (const int ranks = launched_ranks(); ranks > 1) {
    throw hogwild::InputError(fmt::format(
        "mpirun: started as one of {} processes, but this hogwild was built without MPI "
        "(cmake -DHOGWILD_MPI=ON with Open MPI's libopenmpi-dev): each would train alone",
        ranks));
  }
#endif
}

void Processes::ready(std::size_t parameters) {
#ifdef HOGWILD_HAS_MPI
  if (mpi_ && session()->first_failure(false) >= 0) throw PeerFailed();
  if (mpi_ && ranks_ > 1) {
    // Every process reads its own copy of the data: copies that differ would give models of
    // different sizes, which could not be merged.
    const unsigned long long mine = parameters;
    unsigned long long range[2] = {mine, ~mine};
    unsigned long long all[2] = {0, 0};
    MPI_Allreduce(range, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (all[0] != ~all[1]) {
      if (root()) {
        fmt::print(stderr,
                   "hogwild: --train: expected the same data on every process, found models of "
                   "{} to {} parameters (does every node read the same file?)\n",
                   ~all[1], all[0]);
      }
      throw PeerFailed();
    }
  }
#else
  (void)parameters;
#endif
  agreed_ = true;
}

#ifdef HOGWILD_HAS_MPI
namespace {

// Every process's numbers, rank after rank (a vector per process, of any length).
std::vector<std::vector<double>> gathered(std::span<const double> mine, int ranks) {
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(ranks));
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> starts(counts.size(), 0);
  for (std::size_t r = 1; r < counts.size(); ++r) starts[r] = starts[r - 1] + counts[r - 1];
  std::vector<double> all(static_cast<std::size_t>(starts.back() + counts.back()));
  MPI_Allgatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), starts.data(),
                 MPI_DOUBLE, MPI_COMM_WORLD);
  std::vector<std::vector<double>> out;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    const auto first = all.begin() + starts[r];
    out.emplace_back(first, first + counts[r]);
  }
  return out;
}

// The largest of every process's `values`, element by element (unsigned: a minimum is the
// largest complement).
void agree_on_largest(std::span<unsigned long long> values) {
  MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()),
                MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
}

std::string classes_text(const std::vector<double>& classes) {
  return fmt::format("{{{}}}", fmt::join(classes, ", "));
}

// Collective: what is wrong when the processes' parts hold different label classes (a class
// missing from a part would give that process a model of other classes), or "".
std::string classes_mismatch(const hogwild::Dataset& part, int ranks) {
  const std::set<float> distinct(part.labels.begin(), part.labels.end());
  const std::vector<double> mine(distinct.begin(), distinct.end());
  const auto all = gathered(mine, ranks);
  for (std::size_t r = 1; r < all.size(); ++r) {
    if (all[r] == all[0]) continue;
    return fmt::format(
        "{}: expected every label class in every process's part of the file, found {} in part 0 "
        "and {} in part {} (a file sorted by label: shuffle its lines, or train with fewer "
        "processes)",
        part.source, classes_text(all[0]), classes_text(all[r]), r);
  }
  return "";
}

}  // namespace
#endif

hogwild::Dataset Processes::read_training_part(const std::filesystem::path& path,
                                               const hogwild::LibsvmReadOptions& options,
                                               bool classifier) {
  if (path == "-") {
    throw hogwild::InputError(
        "--train: expected a file across processes, found - (standard input reaches one "
        "process alone)");
  }
  hogwild::Dataset part = hogwild::read_libsvm_part(path, {rank_, ranks_}, options);
  whole_rows_ = part.rows();
  whole_nnz_ = part.nnz();
#ifdef HOGWILD_HAS_MPI
  if (!mpi_) return part;
  if (session()->first_failure(false) >= 0) throw PeerFailed();
  const auto failed = [&](const std::string& message) {
    if (root()) fmt::print(stderr, "hogwild: {}\n", message);
    throw PeerFailed();
  };
  // The same file: its size, and whether any part saw an index 0 (--zero-based auto).
  std::error_code ec;
  const unsigned long long size = std::filesystem::file_size(path, ec);
  const unsigned long long zero = part.zero_based ? 1 : 0;
  const unsigned long long rows = part.rows();
  unsigned long long file[4] = {size, ~size, zero, ~rows};
  agree_on_largest(file);
  if (file[0] != ~file[1]) {
    failed(fmt::format(
        "{}: expected the same data on every process, found files of {} to {} bytes (does every "
        "node read the same file?)",
        part.source, ~file[1], file[0]));
  }
  if (~file[3] == 0) {
    failed(fmt::format(
        "{}: expected examples in every process's part of the file, found a part of none (the "
        "file has fewer lines than the {} processes)",
        part.source, ranks_));
  }
  if (options.index_base == hogwild::IndexBase::kAuto && file[2] != 0) {
    // Throws on this process alone (an index 2^32 - 1): the others learn it here.
    hogwild::make_zero_based(part);
    if (session()->first_failure(false) >= 0) throw PeerFailed();
  }
  unsigned long long features[1] = {part.num_features};
  agree_on_largest(features);
  part.num_features = features[0];
  double totals[2] = {static_cast<double>(part.rows()), static_cast<double>(part.nnz())};
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  whole_rows_ = static_cast<std::size_t>(totals[0]);
  whole_nnz_ = static_cast<std::size_t>(totals[1]);
  if (classifier) {
    if (const std::string mismatch = classes_mismatch(part, ranks_); !mismatch.empty()) {
      failed(mismatch);
    }
  }
#endif
  return part;
}

hogwild::DataFingerprint Processes::whole_fingerprint(const hogwild::Dataset& part) const {
  const hogwild::DataFingerprint mine = hogwild::data_fingerprint(part);
#ifdef HOGWILD_HAS_MPI
  if (mpi_ && ranks_ > 1) {
    // A process that failed since the parts were read (its --test file, say) is in
    // first_failure's collective, not in this one.
    if (session()->first_failure(false) >= 0) throw PeerFailed();
    // The parts are consecutive lines of the file, rank after rank.
    const unsigned long long fields[4] = {mine.rows, mine.entries, mine.bytes, mine.crc};
    std::vector<unsigned long long> all(4 * static_cast<std::size_t>(ranks_));
    MPI_Allgather(fields, 4, MPI_UNSIGNED_LONG_LONG, all.data(), 4, MPI_UNSIGNED_LONG_LONG,
                  MPI_COMM_WORLD);
    hogwild::DataFingerprint whole{.rows = all[0],
                                   .entries = all[1],
                                   .bytes = all[2],
                                   .crc = static_cast<std::uint32_t>(all[3])};
    for (std::size_t r = 1; r < static_cast<std::size_t>(ranks_); ++r) {
      whole =
          hogwild::combine_fingerprints(whole, {.rows = all[4 * r],
                                                .entries = all[4 * r + 1],
                                                .bytes = all[4 * r + 2],
                                                .crc = static_cast<std::uint32_t>(all[4 * r + 3])});
    }
    return whole;
  }
#endif
  return mine;
}

bool Processes::prints_failure() {
#ifdef HOGWILD_HAS_MPI
  if (mpi_ && !agreed_) return session()->first_failure(true) == rank_;
#endif
  return true;
}

void Processes::finish() const {
#ifdef HOGWILD_HAS_MPI
  if (mpi_ && ranks_ > 1) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

void Processes::abort(int code) const {
#ifdef HOGWILD_HAS_MPI
  if (mpi_ && ranks_ > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::exit(code);
}

}  // namespace hogwild_cli
