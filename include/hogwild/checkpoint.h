#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hogwild/trainer.h"

namespace hogwild {

/// What tells one training set from another of the same shape: its size and a CRC-32 of its
/// contents as the library holds them after loading, so that `--resume` refuses a checkpoint
/// written on other data. The CRC runs over the examples one after another (sparse: the label,
/// the u64 count of nonzeros, the indices, the values; dense: the label and the pixels;
/// ratings: user, item, value), in the machine's byte order; consecutive parts of a file thus
/// combine to the whole file's fingerprint (combine_fingerprints).
struct DataFingerprint {
  std::uint64_t rows = 0;     ///< examples: rows, images or ratings
  std::uint64_t entries = 0;  ///< stored nonzeros, pixels (rows x columns) or ratings
  std::uint64_t bytes = 0;    ///< bytes the CRC covers (what combining two parts needs)
  std::uint32_t crc = 0;      ///< zlib's CRC-32 of those bytes
  /// Equal fields: the same data, but for a CRC collision (one chance in 2^32).
  friend bool operator==(const DataFingerprint&, const DataFingerprint&) = default;
};

/// A trained model between two epochs: its parameters, the optimiser's state, how far the run
/// got, and what is needed to continue it (`hogwild train --resume`) or to predict with it
/// (`hogwild predict`).
///
/// On disk (all integers little-endian): the magic `HOGWCKPT`, a u32 format version, a u32
/// CRC-32 (zlib's) of everything after it, a u64 byte count of what follows, then a u32-sized
/// JSON object with the scalar fields and the configuration, and the float arrays (parameters,
/// then each optimiser buffer) as a u64 count followed by that many IEEE-754 floats.
struct Checkpoint {
  std::string model;   ///< logistic, hinge, squared, softmax, mlp or mf
  std::string format;  ///< the training data's format: libsvm, idx or ratings
  /// The run's configuration as a JSON object (the report's `config`), compared on resume.
  std::string config;
  int epoch = 0;                      ///< epochs completed
  std::uint64_t features = 0;         ///< input dimension (linear, softmax, mlp)
  std::uint64_t classes = 0;          ///< softmax, mlp: number of classes
  std::vector<std::uint64_t> hidden;  ///< mlp: hidden layer widths
  std::uint64_t users = 0;            ///< mf: rows of the user factors
  std::uint64_t items = 0;            ///< mf: rows of the item factors
  std::uint64_t rank = 0;             ///< mf: factorisation rank
  double mean = 0;                    ///< mf: the training ratings' mean (added to predictions)
  bool zero_based = false;            ///< LIBSVM: the training file's indices were 0-based
  /// Linear models: trained with a constant feature of value 1 after each row's last (the
  /// Python module's intercept=True); the last weight is the bias, and predict() appends the
  /// feature to the rows it is given.
  bool intercept = false;
  /// Label values: binary linear models {negative, positive} (empty for squared); softmax and
  /// mlp the label of each class index.
  std::vector<double> labels;
  double initial_loss = 0;                    ///< training loss of the initial model
  double elapsed = 0;                         ///< training seconds up to `epoch`
  std::uint64_t samples = 0;                  ///< samples processed up to `epoch`
  std::vector<std::uint64_t> worker_updates;  ///< updates of each worker (Adam counts them)
  PlateauState plateau;  ///< --step-schedule plateau: the step's factor and the loss watched
  std::optional<PatienceState> patience;  ///< --patience: the loss watched and its count
  /// Each worker's seeded draws (TrainState::worker_draws); empty when no worker draws (the
  /// JSON then leaves the key out; checkpoints without it resume drawing from the seeds).
  std::vector<std::vector<std::uint64_t>> worker_draws;
  std::int64_t virtual_ns = 0;  ///< --clock virtual: the virtual time at `epoch`'s end
  /// The training data the run began on (data_fingerprint), compared on resume; absent from
  /// checkpoints written before it was recorded and from those of callers that do not compute
  /// it (a pass over the data), which then resume unchecked.
  std::optional<DataFingerprint> training_data;
  std::vector<float> weights;                       ///< the parameters, in the model's layout
  std::vector<std::vector<float>> optimizer_state;  ///< the optimiser's buffers (0, 1 or 2)
};

/// The checkpoint of a run on `train` (and `test`) before its first epoch: the model, the data's
/// format, the configuration, and the model's shape and labels as train() builds them from this
/// data. Saving it with record_state's progress makes a checkpoint; --resume compares it with the
/// file's. Throws InputError for data train() refuses (no examples, a single class).
Checkpoint checkpoint_for(const TrainConfig& config, const Dataset& train,
                          const Dataset* test = nullptr);
/// The same for IDX data (softmax, MLP).
Checkpoint checkpoint_for(const TrainConfig& config, const DenseDataset& train,
                          const DenseDataset* test = nullptr);
/// The same for ratings (factorisation): users and items of both sets, the training mean.
Checkpoint checkpoint_for(const TrainConfig& config, const Ratings& train,
                          const Ratings* test = nullptr);

/// The fingerprint of sparse training data as loaded (before a validation split or a shuffle of
/// its storage): one pass over its arrays. Only what writes or resumes a checkpoint needs it,
/// so checkpoint_for leaves it out; `hogwild train --checkpoint/--resume` stores it in
/// Checkpoint::training_data.
DataFingerprint data_fingerprint(const Dataset& data);
/// The same for dense data (IDX images: the labels and the pixels as stored, bytes or floats).
DataFingerprint data_fingerprint(const DenseDataset& data);
/// The same for ratings (the triples).
DataFingerprint data_fingerprint(const Ratings& data);
/// The fingerprint of `first`'s examples followed by `then`'s (zlib's crc32_combine): what
/// processes that each read a consecutive part of one file agree on, the whole file's.
DataFingerprint combine_fingerprints(const DataFingerprint& first, const DataFingerprint& then);

/// Version of the on-disk format that save_checkpoint writes and load_checkpoint reads.
inline constexpr std::uint32_t kCheckpointVersion = 1;

/// Number of parameters the checkpoint's model has, from its shape (model, features, classes,
/// hidden, users, items, rank); 0 when the shape is not one of a known model.
std::size_t checkpoint_parameters(const Checkpoint& checkpoint);

/// The checkpoint in its on-disk form.
std::string serialize_checkpoint(const Checkpoint& checkpoint);

/// Parses the on-disk form; `name` is used in messages. Throws InputError("NAME: expected ...,
/// found ...") for a wrong magic or version, a truncated file, a checksum that does not match,
/// or contents that are not a consistent model (sizes, non-finite values).
Checkpoint parse_checkpoint(std::string_view bytes, std::string_view name);

/// Writes the checkpoint atomically: to a temporary file in the same directory, flushed to
/// disk (fsync), then renamed over `path`, so `path` always holds a whole checkpoint, the old
/// one or the new one. A link named `path` keeps pointing at the checkpoint (its target is
/// replaced); anything else than a regular file there (a device, a FIFO) is refused. Throws
/// SystemError with the errno text on failure.
void save_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint);

/// Reads a checkpoint file; throws SystemError when it cannot be read and InputError as
/// parse_checkpoint does.
Checkpoint load_checkpoint(const std::filesystem::path& path);

/// What a resumed run may change from the run its checkpoint was written by.
struct ResumeRules {
  /// Configuration keys that may differ (say the epoch count, the thread count, what is
  /// measured); unset: none may.
  std::function<bool(std::string_view key)> free_key;
  /// How a configuration key reads in a message (say its command-line option); unset: the key.
  std::function<std::string(std::string_view key)> name_of_key;
  /// The training data's name in messages (its path); empty: none is given.
  std::string data_name;
};

/// Checks that `found` (read from `name`) continues the run that `expected` describes: the
/// same model, data format and shape, label values, training mean and configuration, key by
/// key, but for the keys `rules` frees, and the same training data (Checkpoint::training_data)
/// where both record it. Throws InputError("NAME: expected ..., found ...")
/// naming the first difference.
void check_resumes(const Checkpoint& found, const Checkpoint& expected, std::string_view name,
                   const ResumeRules& rules = {});

/// The state train() continues from: a view of `checkpoint`'s buffers, valid
/// while it lives.
TrainState resume_state(const Checkpoint& checkpoint);

/// Stores the progress of `state` (epoch, initial loss, time, samples, parameters, optimiser
/// state, per-worker updates) in `checkpoint`, which keeps the run's description: what
/// Callbacks::on_epoch_state does before save_checkpoint.
void record_state(Checkpoint& checkpoint, const TrainState& state);

}  // namespace hogwild
