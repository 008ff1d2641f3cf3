#include "hogwild/detail/huge_pages.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace hogwild::detail {

void touch_pages(void* begin, std::size_t bytes) {
  constexpr std::size_t kPage = std::size_t{4} << 10;
  constexpr std::size_t kPagesPerTask = 512;  // 2 MiB: one huge page where the kernel gave one
  volatile char* const first = static_cast<char*>(begin);
  const std::size_t pages = (bytes + kPage - 1) / kPage;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, pages, kPagesPerTask),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      for (std::size_t k = range.begin(); k < range.end(); ++k) {
                        first[k * kPage] = 0;
                      }
                    });
}

}  // namespace hogwild::detail
