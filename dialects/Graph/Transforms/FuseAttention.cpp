//===- FuseAttention.cpp - Spelled-out attention as graph.attention -------===//
//
// softmax(q @ transpose(k) * (1 / sqrt(D))) @ v, or the same divided by
// sqrt(D), optionally with a causal `where` before the softmax, is
// `graph.attention`: a target then lowers it whole (cuDNN's fused attention
// on CUDA) instead of op by op. The mask is recognised by its values: it is
// computed from constants and `arange`s (the usual `j > i` of two aranges),
// so it is evaluated here and compared with the causal pattern. Its fill
// must be -inf or at most -1e9 (exp of it is 0 in any float type).
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Graph/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;

namespace sinter::graph {
#define GEN_PASS_DEF_GRAPHFUSEATTENTION
#include "dialects/Graph/Transforms/Passes.h.inc"

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// A small integer tensor computed at compile time: shape and row-major
/// values.
struct Known {
  SmallVector<int64_t> shape;
  std::vector<int64_t> values;
};

/// Larger masks are not evaluated (a sequence of 4096 has 16M entries).
constexpr int64_t kMaxEvaluated = int64_t(1) << 24;

/// The values of `v` when it is computed from constants and aranges only.
std::optional<Known> evaluate(Value v) {
  RankedTensorType type = typeOf(v);
  if (!type.hasStaticShape() || type.getNumElements() > kMaxEvaluated)
    return std::nullopt;
  Known out;
  out.shape.assign(type.getShape().begin(), type.getShape().end());
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (isa<ArangeOp>(def)) {
    for (int64_t i = 0; i < type.getNumElements(); ++i)
      out.values.push_back(i);
    return out;
  }
  if (auto c = dyn_cast<ConstantOp>(def)) {
    auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
    if (!dense)
      return std::nullopt;
    if (dense.getElementType().isInteger(1)) {
      for (bool b : dense.getValues<bool>())
        out.values.push_back(b);
    } else if (isa<IntegerType>(dense.getElementType())) {
      for (const APInt &i : dense.getValues<APInt>())
        out.values.push_back(i.getSExtValue());
    } else {
      return std::nullopt;
    }
    return out;
  }
  if (auto r = dyn_cast<ReshapeOp>(def)) {
    std::optional<Known> in = evaluate(r.getInput());
    if (!in)
      return std::nullopt;
    out.values = std::move(in->values);
    return out;
  }
  auto cmp = dyn_cast<CompareOp>(def);
  if (!cmp)
    return std::nullopt;
  std::optional<Known> a = evaluate(cmp.getLhs()), b = evaluate(cmp.getRhs());
  if (!a || !b)
    return std::nullopt;
  // NumPy broadcasting of both operands to the result's shape.
  auto at = [&](const Known &k, ArrayRef<int64_t> index) {
    int64_t flat = 0, offset = int64_t(index.size() - k.shape.size());
    for (size_t d = 0; d < k.shape.size(); ++d)
      flat = flat * k.shape[d] + (k.shape[d] == 1 ? 0 : index[offset + d]);
    return k.values[flat];
  };
  StringRef p = cmp.getPredicate();
  SmallVector<int64_t> index(out.shape.size(), 0);
  for (int64_t n = 0; n < type.getNumElements(); ++n) {
    int64_t x = at(*a, index), y = at(*b, index);
    bool r = p == "lt" ? x < y : p == "le" ? x <= y : p == "gt" ? x > y
           : p == "ge" ? x >= y : p == "eq" ? x == y : x != y;
    out.values.push_back(r);
    for (int64_t d = int64_t(index.size()) - 1; d >= 0 && ++index[d] == out.shape[d]; --d)
      index[d] = 0;
  }
  return out;
}

/// Whether `mask` holds true exactly where key j comes after query i,
/// repeated over any leading dimensions.
bool isCausal(Value mask) {
  std::optional<Known> m = evaluate(mask);
  if (!m || m->shape.size() < 2)
    return false;
  int64_t rows = m->shape[m->shape.size() - 2], cols = m->shape.back();
  for (size_t n = 0; n < m->values.size(); ++n) {
    int64_t i = int64_t(n) / cols % rows, j = int64_t(n) % cols;
    if (bool(m->values[n]) != (j > i))
      return false;
  }
  return true;
}

bool near(double x, double y) { return std::abs(x - y) <= 1e-6 * std::abs(y); }

/// q @ transpose(k), the last two axes of k swapped.
bool matchScores(Value s, Value &q, Value &k) {
  auto mm = s.getDefiningOp<MatmulOp>();
  auto t = mm ? mm.getRhs().getDefiningOp<TransposeOp>() : TransposeOp();
  if (!t)
    return false;
  ArrayRef<int64_t> perm = t.getPermutation();
  int64_t rank = int64_t(perm.size());
  for (int64_t i = 0; i < rank; ++i) {
    int64_t want = i == rank - 1 ? rank - 2 : i == rank - 2 ? rank - 1 : i;
    if (perm[i] != want)
      return false;
  }
  q = mm.getLhs();
  k = t.getInput();
  return typeOf(q).getRank() == rank && typeOf(q).getRank() >= 2;
}

/// The scores scaled by 1 / sqrt(D), D the queries' last dimension.
bool matchScaled(Value v, Value &q, Value &k) {
  Operation *def = v.getDefiningOp();
  Value scores, factor;
  bool divides = false;
  if (auto m = dyn_cast_or_null<MulOp>(def)) {
    scores = splatFloat(m.getRhs()) ? m.getLhs() : m.getRhs();
    factor = splatFloat(m.getRhs()) ? m.getRhs() : m.getLhs();
  } else if (auto d = dyn_cast_or_null<DivOp>(def)) {
    scores = d.getLhs();
    factor = d.getRhs();
    divides = true;
  } else {
    return false;
  }
  std::optional<double> c = splatFloat(factor);
  if (!c || !matchScores(scores, q, k))
    return false;
  double d = double(typeOf(q).getShape().back());
  return divides ? near(*c, std::sqrt(d)) : near(*c, 1.0 / std::sqrt(d));
}

/// softmax(scaled scores, masked or not) @ v.
LogicalResult fuse(MatmulOp out) {
  auto softmax = out.getLhs().getDefiningOp<SoftmaxOp>();
  if (!softmax)
    return failure();
  int64_t rank = typeOf(softmax.getInput()).getRank();
  int64_t axis = int64_t(softmax.getAxis());
  if (axis != -1 && axis != rank - 1)
    return failure();
  Value scores = softmax.getInput(), q, k;
  bool causal = false;
  if (auto w = scores.getDefiningOp<WhereOp>()) {
    std::optional<double> fill = splatFloat(w.getLhs());
    if (!fill || !(*fill <= -1e9) || !isCausal(w.getCond()))
      return failure();
    scores = w.getRhs();
    causal = true;
  }
  if (!matchScaled(scores, q, k))
    return failure();
  Value v = out.getRhs();
  if (typeOf(v).getRank() != rank || typeOf(q).getElementType() != typeOf(v).getElementType())
    return failure();
  // graph.attention takes one set of batch dimensions; the matmuls may have
  // broadcast them (a key and value shared by the heads).
  ArrayRef<int64_t> qs = typeOf(q).getShape(), ks = typeOf(k).getShape(),
                    vs = typeOf(v).getShape();
  if (int64_t(qs.size()) != rank || int64_t(ks.size()) != rank ||
      qs.drop_back(2) != ks.drop_back(2) || ks.drop_back(2) != vs.drop_back(2) ||
      ks[rank - 2] != vs[rank - 2])
    return failure();
  OpBuilder b(out);
  auto fused = AttentionOp::create(b, out.getLoc(), out.getType(), q, k, v,
                                   b.getBoolAttr(causal));
  out.replaceAllUsesWith(fused.getResult());
  out.erase();
  return success();
}

struct GraphFuseAttention : public impl::GraphFuseAttentionBase<GraphFuseAttention> {
  void runOnOperation() override {
    SmallVector<MatmulOp> matmuls;
    getOperation().walk([&](MatmulOp op) { matmuls.push_back(op); });
    for (MatmulOp op : matmuls)
      (void)fuse(op);
  }
};

} // namespace
} // namespace sinter::graph
