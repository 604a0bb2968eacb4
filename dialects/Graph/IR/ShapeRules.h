//===- ShapeRules.h - Shape and dtype rules of the graph operations -------===//
//
// The single source of truth for how each graph operation derives its result
// shape. The frontend calls these rules with symbolic dimensions (B, T, ...)
// to report errors against the user's source; the graph dialect calls them
// from its verifiers and type inference with static or dynamic dimensions.
// Plain C++: no MLIR types, so the frontend and fuzzers stay light.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_GRAPH_SHAPERULES_H
#define SINTER_GRAPH_SHAPERULES_H

#include "runtime/contract/DType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sinter::shape {

/// Element types of LANGUAGE.md section 4 (runtime/contract/DType.h).
using sinter::DType;
using sinter::dtypeName;
using sinter::isInteger;
using sinter::parseDType;
inline bool isFloat(DType t) { return isFloatingPoint(t); }

/// One dimension: a product `coef * S1 * S2 ...` of named shape symbols, or
/// unknown (a dynamic dimension coming from IR, compatible with anything).
class Dim {
public:
  static Dim known(int64_t value);
  static Dim symbol(const std::string &name);
  static Dim unknown();

  bool isKnown() const { return !unknown_ && symbols_.empty(); }
  bool isUnknown() const { return unknown_; }
  bool isSymbolic() const { return !unknown_ && !symbols_.empty(); }
  int64_t value() const { return coef_; }
  int64_t coefficient() const { return coef_; }
  const std::vector<std::string> &symbols() const { return symbols_; }

  /// Products and exact quotients; nullopt on overflow or when the result is
  /// not a single product of symbols.
  std::optional<Dim> mul(const Dim &other) const;
  std::optional<Dim> divExact(const Dim &other) const;
  std::optional<Dim> add(const Dim &other) const;

  /// Structural equality (unknown equals only unknown).
  bool operator==(const Dim &other) const;
  bool operator!=(const Dim &other) const { return !(*this == other); }
  /// True when the two may denote the same size: equal, or one is unknown.
  bool compatible(const Dim &other) const;
  std::string str() const;

private:
  int64_t coef_ = 0;
  std::vector<std::string> symbols_; // sorted
  bool unknown_ = false;
};

using Shape = std::vector<Dim>;

std::string str(const Shape &shape);
/// The element count, when it is a single product (nullopt on overflow).
std::optional<Dim> numElements(const Shape &shape);

/// A rule's answer: the result shape, or a message that explains the error.
struct Result {
  Shape shape;
  std::string error;
  bool ok() const { return error.empty(); }
  static Result failure(std::string message) { return {{}, std::move(message)}; }
};

/// Maps a possibly negative axis into [0, rank); nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

Result broadcast(const Shape &a, const Shape &b);
Result matmul(const Shape &a, const Shape &b);
/// `axes` empty means every axis.
Result reduce(const Shape &in, const std::vector<int64_t> &axes, bool keepdim);
/// `target` may hold one entry that is the known dimension -1 (inferred).
Result reshape(const Shape &in, const Shape &target);
Result transpose(const Shape &in, const std::vector<int64_t> &perm);
Result concat(const std::vector<Shape> &inputs, int64_t axis);
Result slice(const Shape &in, int64_t axis, int64_t start, int64_t end);
Result conv2d(const Shape &x, const Shape &w, const int64_t stride[2],
              const int64_t padding[2], const int64_t dilation[2],
              int64_t groups);
Result pool2d(const Shape &x, const int64_t kernel[2], const int64_t stride[2],
              const int64_t padding[2]);
Result attention(const Shape &q, const Shape &k, const Shape &v);
Result embedding(const Shape &ids, const Shape &table);
/// Class-axis losses: logits `[..., C]` and integer targets `[...]`.
/// The per-sample shape is returned (the shape of `reduction="none"`).
Result classTargets(const Shape &logits, const Shape &target);
/// Losses over two tensors of one shape (mse, l1, bce).
Result sameShape(const Shape &a, const Shape &b);
/// softmax and log_softmax: the input shape, once `axis` is checked.
Result softmax(const Shape &in, int64_t axis);
/// one_hot: `ids` followed by a class axis of `numClasses`.
Result oneHot(const Shape &ids, int64_t numClasses);
/// global_avg_pool2d: NCHW to [N, C].
Result globalPool2d(const Shape &x);

} // namespace sinter::shape

#endif // SINTER_GRAPH_SHAPERULES_H
