#pragma once

#include <memory>
#include <stdexcept>
#include <string>

namespace hogwild {

/// Bad input data or configuration: a file that does not parse, an option out of range.
/// The message names the place (`path:line:` or `--option:`), what was expected and what was
/// found. The CLI maps it to exit code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Report;

/// Training diverged: the loss became NaN/Inf or grew beyond its bound. The CLI maps it to
/// exit code 3.
class DivergenceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  /// A run that diverged at the end of an epoch, with its report up to that epoch.
  DivergenceError(const std::string& what, std::shared_ptr<const Report> report)
      : std::runtime_error(what), report_(std::move(report)) {}
  /// The run's report (StopReason::kDiverged): the epochs up to and with the one that
  /// diverged, the loss curve and the measurements so far, for a report of a failed run; null
  /// where the divergence was found inside an epoch or by the step search.
  const Report* report() const { return report_.get(); }

 private:
  std::shared_ptr<const Report> report_;
};

/// An operating-system failure (open, read, write) with the errno text in the message.
class SystemError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace hogwild
