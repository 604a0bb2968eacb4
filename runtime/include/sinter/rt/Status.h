//===- Status.h - Success or an error message, without exceptions -*- C++ -*-===//
//
// The runtime never throws: every operation that can fail returns a Status or
// an Expected<T>. A failed Status carries one human-readable message that
// names the file or object involved, says what is wrong and what was
// expected, e.g.
//   data/x.npy: truncated: the header declares float32 [1797, 64] = 460,032
//   bytes of data but the file holds 460,000
// Callers add context by prefixing, never by wrapping in a new type.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_STATUS_H
#define SINTER_RT_STATUS_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace sinter::rt {

class [[nodiscard]] Status {
public:
  /// Success.
  Status() = default;
  static Status success() { return Status(); }
  /// A failure; `message` must not be empty.
  static Status error(std::string message) {
    Status s;
    s.failed = true;
    s.text = message.empty() ? std::string("unknown error") : std::move(message);
    return s;
  }

  bool ok() const { return !failed; }
  /// "" on success.
  const std::string &message() const { return text; }

  /// The same failure with `prefix` in front ("rank 3: " + message); success
  /// stays success.
  Status withPrefix(const std::string &prefix) const {
    return ok() ? *this : error(prefix + text);
  }

private:
  bool failed = false;
  std::string text;
};

/// A value or the Status saying why there is none.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : val(std::move(value)) {}
  /// `status` must be a failure: success without a value is a bug.
  Expected(Status status) : st(std::move(status)) {
    assert(!st.ok() && "Expected<T> built from a successful Status");
    if (st.ok())
      st = Status::error("internal error: no value and no error");
  }

  bool ok() const { return val.has_value(); }
  const Status &status() const { return st; }
  const std::string &message() const { return st.message(); }

  T &value() {
    assert(ok());
    return *val;
  }
  const T &value() const {
    assert(ok());
    return *val;
  }
  T &operator*() { return value(); }
  const T &operator*() const { return value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

  /// Moves the value out (the Expected is left holding a moved-from T).
  T take() { return std::move(value()); }

private:
  std::optional<T> val;
  Status st;
};

} // namespace sinter::rt

/// Returns from the enclosing function when `expr` (a Status) failed.
#define SINTER_RT_RETURN_IF_ERROR(expr)                                        \
  do {                                                                         \
    ::sinter::rt::Status sinterRtStatus_ = (expr);                             \
    if (!sinterRtStatus_.ok())                                                 \
      return sinterRtStatus_;                                                  \
  } while (false)

#endif // SINTER_RT_STATUS_H
