#include "cli_processes.h"

#include <fmt/format.h>

#include <cstdlib>
#include <optional>
#include <string>

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
