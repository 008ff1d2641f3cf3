#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hogwild/dense_dataset.h"

namespace hogwild {

/// The raw contents of one IDX file (the MNIST format): unsigned-byte data and its shape.
struct IdxArray {
  std::vector<std::size_t> shape;  ///< dimension sizes, outermost first
  std::vector<std::uint8_t> data;  ///< product(shape) bytes, row-major
};

/// Reads an IDX file of unsigned bytes (type 0x08), plain or compressed with gzip, bzip2 or xz
/// (told by the content, so `.gz` files need no unpacking). Throws InputError("path: expected ...,
/// found
/// ...") for a wrong magic number, a size that does not match the header, a truncated or
/// corrupt file, and SystemError when it cannot be opened or read.
IdxArray read_idx_array(const std::filesystem::path& path);

/// Whether `bytes` (uncompressed) begin as an IDX file does: 00 00, a type, a count of
/// dimensions above 0.
bool looks_like_idx(std::string_view bytes);

/// Parses IDX bytes already in memory (plain or compressed) as read_idx_array does; `name`
/// is used in messages.
IdxArray parse_idx_array(std::string_view bytes, std::string_view name);

/// The labels file beside an images file by the standard names (`train-images-idx3-ubyte` ->
/// `train-labels-idx1-ubyte`, also `train-images.idx3-ubyte`, with or without `.gz`), or
/// nothing when no such file exists.
std::optional<std::filesystem::path> find_idx_labels(const std::filesystem::path& images);

/// Reads IDX images (N x rows x cols bytes, or any N x ... shape) and their labels (N bytes)
/// into a dense dataset that keeps the pixel bytes (read back as pixel / 255, in [0, 1]). When
/// `labels` is empty the labels file is looked up beside the images (find_idx_labels);
/// InputError says so when it is missing.
DenseDataset read_idx(const std::filesystem::path& images,
                      const std::filesystem::path& labels = {});

}  // namespace hogwild
