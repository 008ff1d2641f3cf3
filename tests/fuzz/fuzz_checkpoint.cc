// libFuzzer target for the checkpoint reader: each input is parsed as it is and with its
// length and CRC-32 fields rewritten to match (so the parser behind the checksum is reached);
// both must keep the contract in checkpoint_contract.h, or the target aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "checkpoint_contract.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::string fixed = hogwild::fuzz::with_valid_crc(bytes);
  for (const std::string_view input : {bytes, std::string_view(fixed)}) {
    const auto outcome = hogwild::fuzz::check_checkpoint(input);
    if (!outcome.violation.empty()) {
      std::fprintf(stderr, "checkpoint reader contract violated: %s\n", outcome.violation.c_str());
      if (!outcome.error.empty()) std::fprintf(stderr, "message: %s\n", outcome.error.c_str());
      std::abort();
    }
  }
  return 0;
}
