#pragma once

#include <filesystem>
#include <iosfwd>
#include <string_view>

#include "hogwild/dataset.h"

namespace hogwild {

/// How feature indices in a LIBSVM file count.
enum class IndexBase {
  kAuto,  ///< 0-based when an index 0 appears anywhere in the file, else 1-based (scikit-learn's
          ///< `zero_based="auto"`)
  kZero,  ///< 0-based, as scikit-learn's dump_svmlight_file writes by default
  kOne,   ///< 1-based, as LIBSVM and LIBLINEAR write
};

/// Options for reading LIBSVM/SVMlight text.
struct LibsvmReadOptions {
  int threads = 0;  ///< parser threads; 0 uses all cores
  /// Labels of at most two values, as binary models take: a third is an InputError naming the
  /// line of its first example.
  bool binary_labels = false;
  /// How the indices count; the Dataset says what was decided (Dataset::zero_based).
  IndexBase index_base = IndexBase::kAuto;
};

/// Reads a LIBSVM/SVMlight file (`label [qid:N] index:value ... [# comment]`, strictly
/// increasing indices, 1-based unless options.index_base says otherwise) into CSR with 0-based
/// indices; `-` reads standard input. A file
/// compressed with gzip, bzip2 or xz (told by its first bytes, whatever its name) is
/// decompressed as it is read. Blank and comment-only lines are skipped. Throws
/// InputError("path:line: expected ..., found ...") on malformed input or compressed data that
/// does not decompress, and SystemError when the file cannot be read.
Dataset read_libsvm(const std::filesystem::path& path, const LibsvmReadOptions& options = {});

/// One of the equal parts of a file that processes training one model read each.
struct FilePart {
  int index = 0;  ///< 0 .. count - 1
  int count = 1;  ///< parts in all
};

/// Reads part `part.index` of `part.count` of a LIBSVM file, as read_libsvm reads all of it: of
/// a plain file, the lines that start in bytes [size * index / count, size * (index + 1) /
/// count), reading only those (and the rest of the last line); of compressed input or standard
/// input, which cannot be entered midway, rows [rows * index / count, rows * (index + 1) /
/// count) of all of it. Messages name lines of the whole file. A part may hold no example.
/// With IndexBase::kAuto a plain file's part decides for itself (Dataset::zero_based): a part
/// that saw no index 0 is read 1-based, which make_zero_based turns into the 0-based reading
/// when another part saw one. num_features covers at least the part's own indices.
Dataset read_libsvm_part(const std::filesystem::path& path, FilePart part,
                         const LibsvmReadOptions& options = {});

/// Turns data read 1-based into the 0-based reading of the same file (every index one up);
/// no-op when it is 0-based. InputError when an index would pass 2^32 - 2.
void make_zero_based(Dataset& data);

/// Parses LIBSVM text already in memory, plain or compressed; `name` is used in error messages.
Dataset parse_libsvm(std::string_view text, std::string_view name,
                     const LibsvmReadOptions& options = {});

/// Writes `data` as LIBSVM text with 1-based indices; values round-trip exactly.
void write_libsvm(const Dataset& data, std::ostream& out);

/// Writes `data` to `path` (replacing it); throws SystemError on failure.
void write_libsvm(const Dataset& data, const std::filesystem::path& path);

}  // namespace hogwild
