#pragma once

// The storage of one training run's copy of the rows, kept for the next run's copy to write
// into. Memory handed back to the system and taken again costs page faults, and on a virtual
// machine that reports free pages to its host (virtio-balloon free page reporting), memory idle
// for two seconds is returned to the host and costs the host's faults too: 32 MB taken again
// after 4 idle seconds took 31 ms against 6.5 ms at once (bench/bench_setup.cc,
// fresh_buffer_after_idle), and a fit after a scikit-learn fit copied the rows in twice the
// time (docs/python.md). An allocator that kept freed memory would do the same.

#include <cstddef>

#include "hogwild/dataset.h"

namespace hogwild_python {

/// The most bytes of row storage kept between runs, all kept copies together; larger copies
/// are freed when their run ends.
inline constexpr std::size_t kKeptRowBytesMax = std::size_t{512} << 20;

/// The most copies whose storage is kept: a training copy and a prediction's (or a test set's)
/// each keep their own, sized as they are, so that neither grows the other's arrays.
inline constexpr std::size_t kKeptRowCopiesMax = 2;

/// Gives `data` kept storage for its row_offsets, indices and values (the smallest that holds
/// `nnz` nonzeros, if `nnz` is at least half of what it holds), with the sizes and the contents
/// they had: the copy overwrites them, and a resize within the old size then costs no
/// zero-fill (3 ms on the RCV1-like rows' 60 MB). What `data` held is freed.
void take_row_buffers(hogwild::Dataset& data, std::size_t nnz);

/// Keeps the storage of `data`'s row_offsets, indices and values for a later take_row_buffers,
/// beside what is kept already, dropping the smallest copies beyond kKeptRowCopiesMax or
/// kKeptRowBytesMax.
void keep_row_buffers(hogwild::Dataset&& data);

/// Bytes of row storage kept now.
std::size_t kept_row_bytes();

/// Frees the kept storage; returns how many bytes it held.
std::size_t release_row_buffers();

}  // namespace hogwild_python
