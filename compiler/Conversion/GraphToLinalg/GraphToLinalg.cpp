//===- GraphToLinalg.cpp - graph ops to linalg/tensor/arith/math ----------===//
//
// Each graph op is replaced, in program order, by the structured ops that
// compute it (TensorBuilder.h holds the vocabulary). Shapes must be static;
// a dynamic dimension is reported at the op with the way to bind it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/GraphToLinalg/Dropout.h"
#include "compiler/Conversion/GraphToLinalg/Pooling.h"
#include "compiler/Conversion/GraphToLinalg/TensorBuilder.h"
#include "compiler/Conversion/Passes.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Train/IR/TrainDialect.h"
#include "dialects/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

namespace sinter {
#define GEN_PASS_DEF_CONVERTGRAPHTOLINALG
#include "compiler/Conversion/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace sinter::lowering {
namespace {

using Results = FailureOr<SmallVector<Value>>;

Results one(Value v) { return SmallVector<Value>{v}; }

RankedTensorType typeOf(Value v) { return TensorBuilder::typeOf(v); }
ArrayRef<int64_t> shapeOf(Value v) { return typeOf(v).getShape(); }
Type elementOf(Value v) { return typeOf(v).getElementType(); }

/// The result of an elementwise op: its own type says shape and dtype.
Value mapTo(TensorBuilder &tb, Operation *op, ValueRange inputs,
            const ScalarFn &fn) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  return tb.elementwise(type.getShape(), type.getElementType(), inputs, fn);
}

ScalarFn binaryFn(Operation *op) {
  return TypeSwitch<Operation *, ScalarFn>(op)
      .Case([](AddOp) {
        return [](OpBuilder &b, Location l, ValueRange a) {
          return scalar::add(b, l, a[0], a[1]);
        };
      })
      .Case([](SubOp) {
        return [](OpBuilder &b, Location l, ValueRange a) {
          return scalar::sub(b, l, a[0], a[1]);
        };
      })
      .Case([](MulOp) {
        return [](OpBuilder &b, Location l, ValueRange a) {
          return scalar::mul(b, l, a[0], a[1]);
        };
      })
      .Case([](DivOp) {
        return [](OpBuilder &b, Location l, ValueRange a) {
          return Value(arith::DivFOp::create(b, l, a[0], a[1]));
        };
      })
      .Case([](PowOp) {
        return [](OpBuilder &b, Location l, ValueRange a) {
          return Value(math::PowFOp::create(b, l, a[0], a[1]));
        };
      })
      .Case([](MaximumOp) {
        return [](OpBuilder &b, Location l, ValueRange a) {
          return scalar::max(b, l, a[0], a[1]);
        };
      })
      .Case([](MinimumOp) {
        return [](OpBuilder &b, Location l, ValueRange a) {
          return scalar::min(b, l, a[0], a[1]);
        };
      })
      .Default([](Operation *) { return ScalarFn(); });
}

ScalarFn compareFn(CompareOp op) {
  StringRef p = op.getPredicate();
  bool isFloat = isa<FloatType>(elementOf(op.getLhs()));
  // Ordered float predicates: a comparison with NaN is false, as in NumPy
  // (except !=, which is true).
  auto fp = llvm::StringSwitch<arith::CmpFPredicate>(p)
                .Case("lt", arith::CmpFPredicate::OLT)
                .Case("le", arith::CmpFPredicate::OLE)
                .Case("gt", arith::CmpFPredicate::OGT)
                .Case("ge", arith::CmpFPredicate::OGE)
                .Case("eq", arith::CmpFPredicate::OEQ)
                .Default(arith::CmpFPredicate::UNE);
  auto ip = llvm::StringSwitch<arith::CmpIPredicate>(p)
                .Case("lt", arith::CmpIPredicate::slt)
                .Case("le", arith::CmpIPredicate::sle)
                .Case("gt", arith::CmpIPredicate::sgt)
                .Case("ge", arith::CmpIPredicate::sge)
                .Case("eq", arith::CmpIPredicate::eq)
                .Default(arith::CmpIPredicate::ne);
  return [=](OpBuilder &b, Location l, ValueRange a) -> Value {
    if (isFloat)
      return arith::CmpFOp::create(b, l, fp, a[0], a[1]);
    return arith::CmpIOp::create(b, l, ip, a[0], a[1]);
  };
}

ScalarFn unaryFn(Operation *op) {
  using F = ScalarFn;
  return TypeSwitch<Operation *, F>(op)
      .Case([](NegOp) -> F {
        return [](OpBuilder &b, Location l, ValueRange a) -> Value {
          if (isa<FloatType>(a[0].getType()))
            return arith::NegFOp::create(b, l, a[0]);
          return scalar::sub(b, l, TensorBuilder::scalarAt(b, l, 0, a[0].getType()),
                             a[0]);
        };
      })
      .Case([](AbsOp) -> F {
        return [](OpBuilder &b, Location l, ValueRange a) -> Value {
          if (isa<FloatType>(a[0].getType()))
            return math::AbsFOp::create(b, l, a[0]);
          return math::AbsIOp::create(b, l, a[0]);
        };
      })
      .Case([](ReluOp) -> F {
        return [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return scalar::max(b, l, a[0],
                             TensorBuilder::scalarAt(b, l, 0, a[0].getType()));
        };
      })
      .Case([](ExpOp) -> F {
        return [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return math::ExpOp::create(b, l, a[0]);
        };
      })
      .Case([](LogOp) -> F {
        return [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return math::LogOp::create(b, l, a[0]);
        };
      })
      .Case([](SqrtOp) -> F {
        return [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return math::SqrtOp::create(b, l, a[0]);
        };
      })
      .Case([](RsqrtOp) -> F {
        return [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return math::RsqrtOp::create(b, l, a[0]);
        };
      })
      .Case([](TanhOp) -> F {
        return [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return math::TanhOp::create(b, l, a[0]);
        };
      })
      .Case([](SigmoidOp) -> F {
        return [](OpBuilder &b, Location l, ValueRange a) {
          return scalar::sigmoid(b, l, a[0]);
        };
      })
      .Case([](SiluOp) -> F {
        return [](OpBuilder &b, Location l, ValueRange a) {
          return scalar::mul(b, l, a[0], scalar::sigmoid(b, l, a[0]));
        };
      })
      .Case([](GeluOp gelu) -> F {
        bool tanhApprox = gelu.getApproximate() == "tanh";
        return [tanhApprox](OpBuilder &b, Location l, ValueRange a) -> Value {
          Type t = a[0].getType();
          auto c = [&](double v) { return TensorBuilder::scalarAt(b, l, v, t); };
          Value x = a[0];
          Value inner;
          if (tanhApprox) {
            // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
            Value x3 = scalar::mul(b, l, x, scalar::mul(b, l, x, x));
            Value u = scalar::add(b, l, x, scalar::mul(b, l, c(0.044715), x3));
            inner = math::TanhOp::create(
                b, l, scalar::mul(b, l, c(std::sqrt(2.0 / M_PI)), u));
          } else {
            // 0.5 x (1 + erf(x / sqrt(2)))
            inner = math::ErfOp::create(b, l,
                                        scalar::mul(b, l, x, c(M_SQRT1_2)));
          }
          Value half = scalar::mul(b, l, c(0.5), x);
          return scalar::mul(b, l, half, scalar::add(b, l, c(1.0), inner));
        };
      })
      .Default([](Operation *) { return F(); });
}

//===----------------------------------------------------------------------===//
// Ops that need more than one map
//===----------------------------------------------------------------------===//

Results lowerConcat(TensorBuilder &tb, ConcatOp op) {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  auto type = cast<RankedTensorType>(op.getType());
  Value acc = tb.empty(type.getShape(), type.getElementType());
  int64_t axis = op.getAxis();
  int64_t offset = 0;
  for (Value in : op.getInputs()) {
    ArrayRef<int64_t> s = shapeOf(in);
    SmallVector<OpFoldResult> offsets(s.size(), b.getIndexAttr(0)), sizes,
        strides(s.size(), b.getIndexAttr(1));
    for (int64_t d : s)
      sizes.push_back(b.getIndexAttr(d));
    offsets[axis] = b.getIndexAttr(offset);
    acc = tensor::InsertSliceOp::create(b, loc, in, acc, offsets, sizes, strides);
    offset += s[axis];
  }
  return one(acc);
}

Results lowerSlice(TensorBuilder &tb, SliceOp op) {
  OpBuilder &b = tb.builder();
  ArrayRef<int64_t> s = shapeOf(op.getInput());
  SmallVector<OpFoldResult> offsets(s.size(), b.getIndexAttr(0)), sizes,
      strides(s.size(), b.getIndexAttr(1));
  for (int64_t d : op.getType().getShape())
    sizes.push_back(b.getIndexAttr(d));
  offsets[op.getAxis()] = b.getIndexAttr(op.getStart());
  return one(tensor::ExtractSliceOp::create(b, tb.location(), op.getType(),
                                            op.getInput(), offsets, sizes,
                                            strides));
}

/// A generic over the result's shape whose body sees linalg.index values;
/// used by ops that compute from coordinates (arange, one_hot, gathers).
Value indexedMap(TensorBuilder &tb, RankedTensorType type, ValueRange inputs,
                 ArrayRef<AffineMap> inputMaps,
                 function_ref<Value(OpBuilder &, Location, ValueRange,
                                    ArrayRef<Value>)> body) {
  OpBuilder &b = tb.builder();
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, b.getContext()));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  Value init = tb.empty(type.getShape(), type.getElementType());
  auto generic = linalg::GenericOp::create(
      b, tb.location(), TypeRange{type}, inputs, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        SmallVector<Value> idx;
        for (int64_t d = 0; d < rank; ++d)
          idx.push_back(linalg::IndexOp::create(nb, nloc, d));
        linalg::YieldOp::create(nb, nloc, body(nb, nloc, args.drop_back(), idx));
      });
  return generic.getResult(0);
}

/// The map of an operand that covers the leading `n` dims of a rank-`rank`
/// iteration space.
AffineMap leadingMap(int64_t rank, int64_t n, MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < n; ++i)
    exprs.push_back(getAffineDimExpr(i, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

/// An integer id as an index clamped into [0, n): an id outside the table is
/// an error of the data, and must not become an out-of-bounds read.
Value clampedIndex(OpBuilder &b, Location loc, Value id, int64_t n) {
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), id);
  Value lo = arith::ConstantIndexOp::create(b, loc, 0);
  Value hi = arith::ConstantIndexOp::create(b, loc, n - 1);
  return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, i, lo), hi);
}

Results lowerEmbedding(TensorBuilder &tb, EmbeddingOp op) {
  RankedTensorType type = op.getType();
  Value table = op.getTable();
  int64_t rows = shapeOf(table)[0];
  int64_t rank = type.getRank();
  AffineMap idsMap = leadingMap(rank, rank - 1, tb.builder().getContext());
  return one(indexedMap(tb, type, {op.getIds()}, {idsMap},
                        [&](OpBuilder &b, Location l, ValueRange a,
                            ArrayRef<Value> idx) -> Value {
                          Value row = clampedIndex(b, l, a[0], rows);
                          return tensor::ExtractOp::create(
                              b, l, table, ValueRange{row, idx.back()});
                        }));
}

/// Scatter-add of rows: a loop over positions, each adding its gradient
/// row into the row of its id (ids outside the table are clamped, as in the
/// forward gather).
Results lowerEmbeddingGrad(TensorBuilder &tb, EmbeddingGradOp op) {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  RankedTensorType out = op.getType();
  int64_t rows = out.getDimSize(0), width = out.getDimSize(1);
  Value ids = op.getIds(), grad = op.getGrad();
  int64_t n = typeOf(ids).getNumElements();
  Value flatIds = tb.reshape(ids, {n});
  Value flatGrad = tb.reshape(grad, {n, width});
  Value init = tb.filled(out.getShape(), out.getElementType(), 0.0);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value unit = arith::ConstantIndexOp::create(b, loc, 1);
  Value count = arith::ConstantIndexOp::create(b, loc, n);
  Value widthV = arith::ConstantIndexOp::create(b, loc, width);
  auto positions = scf::ForOp::create(
      b, loc, zero, count, unit, ValueRange{init},
      [&](OpBuilder &lb, Location l, Value p, ValueRange acc) {
        Value id = tensor::ExtractOp::create(lb, l, flatIds, ValueRange{p});
        Value row = clampedIndex(lb, l, id, rows);
        auto columns = scf::ForOp::create(
            lb, l, zero, widthV, unit, acc,
            [&](OpBuilder &cb, Location cl, Value d, ValueRange inner) {
              Value g = tensor::ExtractOp::create(cb, cl, flatGrad,
                                                  ValueRange{p, d});
              Value old = tensor::ExtractOp::create(cb, cl, inner[0],
                                                    ValueRange{row, d});
              Value sum = scalar::add(cb, cl, old, g);
              Value next = tensor::InsertOp::create(cb, cl, sum, inner[0],
                                                    ValueRange{row, d});
              scf::YieldOp::create(cb, cl, next);
            });
        scf::YieldOp::create(lb, l, columns.getResults());
      });
  return one(positions.getResult(0));
}

Results lowerOneHot(TensorBuilder &tb, OneHotOp op) {
  RankedTensorType type = op.getType();
  int64_t rank = type.getRank();
  AffineMap idsMap = leadingMap(rank, rank - 1, tb.builder().getContext());
  return one(indexedMap(
      tb, type, {op.getIds()}, {idsMap},
      [&](OpBuilder &b, Location l, ValueRange a, ArrayRef<Value> idx) -> Value {
        Value id = arith::IndexCastOp::create(b, l, b.getIndexType(), a[0]);
        Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, id,
                                          idx.back());
        return scalar::convert(b, l, hit, type.getElementType());
      }));
}

Results lowerArange(TensorBuilder &tb, ArangeOp op) {
  RankedTensorType type = op.getType();
  return one(indexedMap(tb, type, {}, {},
                        [&](OpBuilder &b, Location l, ValueRange,
                            ArrayRef<Value> idx) -> Value {
                          return arith::IndexCastOp::create(
                              b, l, type.getElementType(), idx[0]);
                        }));
}

/// `x[..., target]` along the last axis, for targets of shape x.shape[:-1].
Value pickClass(TensorBuilder &tb, Value x, Value target) {
  RankedTensorType xt = typeOf(x);
  int64_t classes = xt.getShape().back();
  auto type = RankedTensorType::get(shapeOf(target), xt.getElementType());
  int64_t rank = type.getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, tb.builder().getContext());
  return indexedMap(tb, type, {target}, {id},
                    [&](OpBuilder &b, Location l, ValueRange a,
                        ArrayRef<Value> idx) -> Value {
                      SmallVector<Value> at(idx.begin(), idx.end());
                      at.push_back(clampedIndex(b, l, a[0], classes));
                      return tensor::ExtractOp::create(b, l, x, at);
                    });
}

/// 1 where the target is not `ignore`, else 0, in `type`'s element type.
Value validMask(TensorBuilder &tb, Value target, std::optional<int64_t> ignore,
                Type elementType) {
  int64_t value = ignore ? *ignore : 0;
  bool any = ignore.has_value();
  return tb.elementwise(shapeOf(target), elementType, {target},
                        [=](OpBuilder &b, Location l, ValueRange a) -> Value {
                          if (!any)
                            return TensorBuilder::scalarAt(b, l, 1, elementType);
                          Value ig = TensorBuilder::scalarAt(b, l, value,
                                                             a[0].getType());
                          Value ok = arith::CmpIOp::create(
                              b, l, arith::CmpIPredicate::ne, a[0], ig);
                          return scalar::convert(b, l, ok, elementType);
                        });
}

/// Applies a loss's reduction to per-sample values `perSample` whose valid
/// entries are marked by `mask` (null: all valid).
Value reduceLoss(TensorBuilder &tb, Value perSample, Value mask,
                 StringRef reduction) {
  if (mask)
    perSample = tb.mul(perSample, mask);
  if (reduction == "none")
    return perSample;
  Value sum = tb.reduce(perSample, {}, ReduceKind::Sum, false);
  if (reduction == "sum")
    return sum;
  if (!mask)
    return tb.mean(perSample, {}, false);
  return tb.div(sum, tb.reduce(mask, {}, ReduceKind::Sum, false));
}

Results lowerCrossEntropy(TensorBuilder &tb, Value logits, Value target,
                          StringRef reduction, std::optional<int64_t> ignore,
                          double smoothing, bool inputIsLogProb) {
  int64_t axis = typeOf(logits).getRank() - 1;
  int64_t classes = shapeOf(logits).back();
  Value logp = inputIsLogProb ? logits : tb.logSoftmax(logits, axis);
  // -(1-e) logp[t] - e/C sum_c logp[c]
  Value picked = pickClass(tb, logp, target);
  Value loss = tb.scale(picked, -(1.0 - smoothing));
  if (smoothing > 0) {
    Value all = tb.reduce(logp, {axis}, ReduceKind::Sum, false);
    loss = tb.sub(loss, tb.scale(all, smoothing / double(classes)));
  }
  Value mask = ignore ? validMask(tb, target, ignore, elementOf(logits)) : Value();
  return one(reduceLoss(tb, loss, mask, reduction));
}

Results lowerPairLoss(TensorBuilder &tb, Operation *op, Value x, Value y,
                      StringRef reduction) {
  Type et = elementOf(x);
  Value perElement = tb.elementwise(
      shapeOf(x), et, {x, y},
      [op, et](OpBuilder &b, Location l, ValueRange a) -> Value {
        if (isa<MseLossOp>(op)) {
          Value d = scalar::sub(b, l, a[0], a[1]);
          return scalar::mul(b, l, d, d);
        }
        if (isa<L1LossOp>(op))
          return math::AbsFOp::create(b, l, scalar::sub(b, l, a[0], a[1]));
        // bce_with_logits: max(x, 0) - x t + log1p(exp(-|x|)), stable.
        Value zero = TensorBuilder::scalarAt(b, l, 0, et);
        Value pos = scalar::max(b, l, a[0], zero);
        Value xt = scalar::mul(b, l, a[0], a[1]);
        Value e = math::ExpOp::create(
            b, l, arith::NegFOp::create(b, l, math::AbsFOp::create(b, l, a[0])));
        return scalar::add(b, l, scalar::sub(b, l, pos, xt),
                           math::Log1pOp::create(b, l, e));
      });
  return one(reduceLoss(tb, perElement, Value(), reduction));
}

/// Fraction of rows whose first largest logit is the target.
Results lowerAccuracy(TensorBuilder &tb, AccuracyOp op) {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  Value logits = op.getLogits();
  RankedTensorType lt = typeOf(logits);
  int64_t rank = lt.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> rows(lt.getShape().drop_back());
  Type et = lt.getElementType();
  Value best = tb.filled(rows, et, -std::numeric_limits<double>::infinity());
  Value bestIndex = tb.filled(rows, b.getI64Type(), -1);
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 leadingMap(rank, rank - 1, ctx),
                                 leadingMap(rank, rank - 1, ctx)};
  SmallVector<utils::IteratorType> iterators(rank - 1,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  auto argmax = linalg::GenericOp::create(
      b, loc, TypeRange{best.getType(), bestIndex.getType()}, ValueRange{logits},
      ValueRange{best, bestIndex}, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value c = linalg::IndexOp::create(nb, l, rank - 1);
        Value ci = arith::IndexCastOp::create(nb, l, nb.getI64Type(), c);
        // Strictly greater: ties keep the first index, like argmax.
        Value better = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT,
                                             a[0], a[1]);
        Value first = arith::CmpIOp::create(
            nb, l, arith::CmpIPredicate::slt, a[2],
            TensorBuilder::scalarAt(nb, l, 0, nb.getI64Type()));
        Value take = arith::OrIOp::create(nb, l, better, first);
        linalg::YieldOp::create(
            nb, l,
            ValueRange{arith::SelectOp::create(nb, l, take, a[0], a[1]),
                       arith::SelectOp::create(nb, l, take, ci, a[2])});
      });
  Value predicted = argmax.getResult(1);
  Type ft = op.getType().getElementType();
  Value correct = tb.elementwise(
      rows, ft, {predicted, op.getTarget()},
      [ft](OpBuilder &nb, Location l, ValueRange a) {
        Value t = scalar::convert(nb, l, a[1], nb.getI64Type());
        Value eq = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, a[0], t);
        return scalar::convert(nb, l, eq, ft);
      });
  return one(tb.mean(correct, {}, false));
}

Results lowerAttention(TensorBuilder &tb, AttentionOp op) {
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  ArrayRef<int64_t> qs = shapeOf(q), ks = shapeOf(k);
  int64_t rank = qs.size();
  SmallVector<int64_t> scoreShape(qs.drop_back());
  scoreShape.push_back(ks[rank - 2]);
  Value scores = tb.matmul(q, tb.transposeLast(k), scoreShape);
  scores = tb.scale(scores, 1.0 / std::sqrt(double(qs.back())));
  if (op.getCausal()) {
    // Query i sees keys j <= i (top-left aligned, like is_causal=True).
    Type et = elementOf(scores);
    auto type = cast<RankedTensorType>(scores.getType());
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, tb.builder().getContext());
    scores = indexedMap(
        tb, type, {scores}, {id},
        [&](OpBuilder &b, Location l, ValueRange a, ArrayRef<Value> idx) -> Value {
          Value future = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ugt,
                                               idx[rank - 1], idx[rank - 2]);
          Value ninf = TensorBuilder::scalarAt(
              b, l, -std::numeric_limits<double>::infinity(), et);
          return arith::SelectOp::create(b, l, future, ninf, a[0]);
        });
  }
  Value p = tb.softmax(scores, rank - 1);
  return one(tb.matmul(p, v, op.getType().getShape()));
}

Results lowerConv(TensorBuilder &tb, Conv2dOp op) {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  ArrayRef<int64_t> stride = op.getStride(), pad = op.getPadding(),
                    dil = op.getDilation();
  int64_t padding[2] = {pad[0], pad[1]};
  Value x = tb.padSpatial(op.getInput(), padding, 0.0);
  Value w = op.getWeight();
  RankedTensorType out = op.getType();
  // The linalg named ops take these as dense tensors, not arrays.
  auto strides = b.getI64TensorAttr(stride);
  auto dilations = b.getI64TensorAttr(dil);
  int64_t g = op.getGroups();
  Type et = out.getElementType();
  if (g == 1) {
    Value init = tb.filled(out.getShape(), et, 0.0);
    return one(linalg::Conv2DNchwFchwOp::create(b, loc, TypeRange{out},
                                                ValueRange{x, w},
                                                ValueRange{init}, strides,
                                                dilations)
                   .getResult(0));
  }
  // Groups: split the channel axes and use the grouped named op.
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w), os = out.getShape();
  Value xg = tb.reshape(x, {xs[0], g, xs[1] / g, xs[2], xs[3]});
  Value wg = tb.reshape(w, {g, ws[0] / g, ws[1], ws[2], ws[3]});
  SmallVector<int64_t> og = {os[0], g, os[1] / g, os[2], os[3]};
  Value init = tb.filled(og, et, 0.0);
  Value y = linalg::Conv2DNgchwGfchwOp::create(
                b, loc, TypeRange{init.getType()}, ValueRange{xg, wg},
                ValueRange{init}, strides, dilations)
                .getResult(0);
  return one(tb.reshape(y, os));
}

/// dW[o, c, kh, kw] = sum over n, oh, ow of
///   g[n, o, oh, ow] * xpad[n, c, oh*s + kh*d, ow*s + kw*d].
Results lowerConvGradWeight(TensorBuilder &tb, Conv2dGradWeightOp op) {
  OpBuilder &b = tb.builder();
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> s = op.getStride(), p = op.getPadding(), d = op.getDilation();
  int64_t pad[2] = {p[0], p[1]};
  Value x = tb.padSpatial(op.getInput(), pad, 0.0);
  RankedTensorType out = op.getType();
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  // (o, c, kh, kw, n, oh, ow)
  SmallVector<AffineMap> maps = {
      AffineMap::get(7, 0, {dim(4), dim(0), dim(5), dim(6)}, ctx),
      AffineMap::get(7, 0,
                     {dim(4), dim(1), dim(5) * s[0] + dim(2) * d[0],
                      dim(6) * s[1] + dim(3) * d[1]},
                     ctx),
      AffineMap::get(7, 0, {dim(0), dim(1), dim(2), dim(3)}, ctx)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  Value init = tb.filled(out.getShape(), out.getElementType(), 0.0);
  auto generic = linalg::GenericOp::create(
      b, tb.location(), TypeRange{out}, ValueRange{op.getGrad(), x},
      ValueRange{init}, maps, iterators,
      [](OpBuilder &nb, Location l, ValueRange a) {
        linalg::YieldOp::create(
            nb, l, scalar::add(nb, l, a[2], scalar::mul(nb, l, a[0], a[1])));
      });
  return one(generic.getResult(0));
}

/// The transposed convolution: g dilated by the stride, padded so that
///   dXpad[n, c, i, j] = sum over o, kh, kw of
///     gpad[n, o, i + kh*d, j + kw*d] * flip(w)[o, c, kh, kw],
/// then the padding of the forward pass cut off.
Results lowerConvGradInput(TensorBuilder &tb, Conv2dGradInputOp op) {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> s = op.getStride(), p = op.getPadding(), d = op.getDilation();
  Value g = op.getGrad(), w = op.getWeight();
  RankedTensorType gt = typeOf(g), out = op.getType();
  ArrayRef<int64_t> gs = gt.getShape(), ws = typeOf(w).getShape();
  int64_t n = gs[0], c = ws[1], kh = ws[2], kw = ws[3];
  int64_t k[2] = {kh, kw};
  int64_t hp = out.getDimSize(2) + 2 * p[0], wp = out.getDimSize(3) + 2 * p[1];
  // Dilate by the stride: g lands every s-th position of a zero tensor.
  int64_t stride[2] = {s[0], s[1]};
  Value gdil = tb.dilateSpatial(g, stride);
  int64_t dil[2] = {shapeOf(gdil)[2], shapeOf(gdil)[3]};
  int64_t low[2], high[2];
  for (int i = 0; i < 2; ++i) {
    low[i] = (k[i] - 1) * d[i];
    high[i] = (i == 0 ? hp : wp) + (k[i] - 1) * d[i] - low[i] - dil[i];
  }
  Value gpad = tb.padSpatial(gdil, low, high, 0.0);
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  // The kernel flipped in space, materialized: linalg needs every loop to
  // appear as a plain dimension of some operand.
  RankedTensorType wt = typeOf(w);
  AffineMap flipMap = AffineMap::get(
      4, 0,
      {dim(0), dim(1), getAffineConstantExpr(kh - 1, ctx) - dim(2),
       getAffineConstantExpr(kw - 1, ctx) - dim(3)},
      ctx);
  Value flipped =
      linalg::GenericOp::create(
          b, loc, TypeRange{wt}, ValueRange{w},
          ValueRange{tb.empty(wt.getShape(), wt.getElementType())},
          {flipMap, AffineMap::getMultiDimIdentityMap(4, ctx)},
          SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
          [](OpBuilder &nb, Location l, ValueRange a) {
            linalg::YieldOp::create(nb, l, a[0]);
          })
          .getResult(0);
  // (n, c, i, j, o, kh, kw)
  SmallVector<AffineMap> maps = {
      AffineMap::get(7, 0,
                     {dim(0), dim(4), dim(2) + dim(5) * d[0], dim(3) + dim(6) * d[1]},
                     ctx),
      AffineMap::get(7, 0, {dim(4), dim(1), dim(5), dim(6)}, ctx),
      AffineMap::get(7, 0, {dim(0), dim(1), dim(2), dim(3)}, ctx)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  Value init = tb.filled({n, c, hp, wp}, out.getElementType(), 0.0);
  Value full = linalg::GenericOp::create(
                   b, loc, TypeRange{init.getType()}, ValueRange{gpad, flipped},
                   ValueRange{init}, maps, iterators,
                   [](OpBuilder &nb, Location l, ValueRange a) {
                     linalg::YieldOp::create(
                         nb, l,
                         scalar::add(nb, l, a[2], scalar::mul(nb, l, a[0], a[1])));
                   })
                   .getResult(0);
  int64_t pad[2] = {p[0], p[1]};
  return one(tb.cropSpatial(full, pad, out));
}

template <typename PoolOp> PoolWindow windowOf(PoolOp op, bool isMax) {
  PoolWindow w;
  for (int i = 0; i < 2; ++i) {
    w.kernel[i] = op.getKernel()[i];
    w.stride[i] = op.getStride()[i];
    w.padding[i] = op.getPadding()[i];
  }
  w.max = isMax;
  return w;
}

/// Mean and biased variance over `axes`, optionally keeping them.
Results lowerStats(TensorBuilder &tb, Value x, ArrayRef<int64_t> axes,
                   bool keepdim) {
  Value m = tb.mean(x, axes, /*keepdim=*/true);
  Value d = tb.sub(x, m);
  Value var = tb.mean(tb.mul(d, d), axes, keepdim);
  if (!keepdim)
    m = tb.reshape(m, shapeOf(var));
  return SmallVector<Value>{m, var};
}

Results lower(Operation *op) {
  OpBuilder b(op);
  TensorBuilder tb(b, op->getLoc());
  if (ScalarFn fn = binaryFn(op))
    return one(mapTo(tb, op, op->getOperands(), fn));
  if (ScalarFn fn = unaryFn(op))
    return one(mapTo(tb, op, op->getOperands(), fn));
  return TypeSwitch<Operation *, Results>(op)
      .Case([&](ConstantOp c) {
        return one(arith::ConstantOp::create(
            b, c.getLoc(), cast<TypedAttr>(c.getValue())));
      })
      .Case([&](CompareOp c) {
        return one(mapTo(tb, op, op->getOperands(), compareFn(c)));
      })
      .Case([&](WhereOp) {
        return one(mapTo(tb, op, op->getOperands(),
                         [](OpBuilder &nb, Location l, ValueRange a) {
                           return Value(
                               arith::SelectOp::create(nb, l, a[0], a[1], a[2]));
                         }));
      })
      .Case([&](CastOp c) {
        Type to = c.getType().getElementType();
        return one(mapTo(tb, op, op->getOperands(),
                         [to](OpBuilder &nb, Location l, ValueRange a) {
                           return scalar::convert(nb, l, a[0], to);
                         }));
      })
      .Case([&](MatmulOp m) {
        // x @ transpose(W) reads W in place: the library takes a transposed
        // weight, so no copy of W is made each step.
        auto t = m.getRhs().getDefiningOp<linalg::TransposeOp>();
        if (t && t.getPermutation() == ArrayRef<int64_t>{1, 0})
          return one(tb.matmulTransposedB(m.getLhs(), t.getInput(),
                                          m.getType().getShape()));
        return one(tb.matmul(m.getLhs(), m.getRhs(), m.getType().getShape()));
      })
      .Case([&](ReshapeOp r) {
        return one(tb.reshape(r.getInput(), r.getType().getShape()));
      })
      .Case([&](TransposeOp t) {
        return one(tb.transpose(t.getInput(), t.getPermutation()));
      })
      .Case([&](ConcatOp c) { return lowerConcat(tb, c); })
      .Case([&](SliceOp s) { return lowerSlice(tb, s); })
      .Case([&](ArangeOp a) { return lowerArange(tb, a); })
      .Case([&](OneHotOp o) { return lowerOneHot(tb, o); })
      .Case([&](ReduceSumOp r) {
        return one(tb.reduce(r.getInput(), r.getAxes(), ReduceKind::Sum,
                             r.getKeepdim()));
      })
      .Case([&](ReduceMeanOp r) {
        return one(tb.mean(r.getInput(), r.getAxes(), r.getKeepdim()));
      })
      .Case([&](ReduceMaxOp r) {
        return one(tb.reduce(r.getInput(), r.getAxes(), ReduceKind::Max,
                             r.getKeepdim()));
      })
      .Case([&](ReduceMinOp r) {
        return one(tb.reduce(r.getInput(), r.getAxes(), ReduceKind::Min,
                             r.getKeepdim()));
      })
      .Case([&](SoftmaxOp s) {
        return one(tb.softmax(s.getInput(), s.getAxis()));
      })
      .Case([&](LogSoftmaxOp s) {
        return one(tb.logSoftmax(s.getInput(), s.getAxis()));
      })
      .Case([&](Conv2dOp c) { return lowerConv(tb, c); })
      .Case([&](Conv2dGradInputOp c) { return lowerConvGradInput(tb, c); })
      .Case([&](Conv2dGradWeightOp c) { return lowerConvGradWeight(tb, c); })
      .Case([&](MaxPool2dOp p) {
        return one(pool2d(tb, p.getInput(), p.getType(), windowOf(p, true)));
      })
      .Case([&](AvgPool2dOp p) {
        return one(pool2d(tb, p.getInput(), p.getType(), windowOf(p, false)));
      })
      .Case([&](Pool2dGradOp p) {
        return one(pool2dGrad(tb, p.getInput(), p.getGrad(),
                              windowOf(p, p.getMax())));
      })
      .Case([&](GlobalAvgPool2dOp p) {
        return one(tb.mean(p.getInput(), {2, 3}, false));
      })
      .Case([&](BatchNormStatsOp s) {
        return lowerStats(tb, s.getInput(), s.getAxes(), false);
      })
      .Case([&](LayerNormStatsOp s) {
        int64_t last = typeOf(s.getInput()).getRank() - 1;
        return lowerStats(tb, s.getInput(), {last}, true);
      })
      .Case([&](EmbeddingOp e) { return lowerEmbedding(tb, e); })
      .Case([&](EmbeddingGradOp e) { return lowerEmbeddingGrad(tb, e); })
      .Case([&](AttentionOp a) { return lowerAttention(tb, a); })
      .Case([&](CrossEntropyOp c) {
        return lowerCrossEntropy(tb, c.getLogits(), c.getTarget(),
                                 c.getReduction(), c.getIgnoreIndex(),
                                 c.getLabelSmoothing().convertToDouble(),
                                 /*inputIsLogProb=*/false);
      })
      .Case([&](NllLossOp n) {
        return lowerCrossEntropy(tb, n.getLogp(), n.getTarget(),
                                 n.getReduction(), n.getIgnoreIndex(), 0.0,
                                 /*inputIsLogProb=*/true);
      })
      .Case<MseLossOp, L1LossOp, BceWithLogitsOp>([&](auto l) {
        return lowerPairLoss(tb, op, l.getLhs(), l.getRhs(), l.getReduction());
      })
      .Case([&](AccuracyOp a) { return lowerAccuracy(tb, a); })
      .Case([&](BatchNormCountOp n) {
        double count = 1;
        ArrayRef<int64_t> shape = shapeOf(n.getInput());
        for (int64_t axis : n.getAxes())
          count *= double(shape[axis]);
        return one(tb.filled({}, elementOf(n.getInput()), count));
      })
      .Case([&](AllReduceSumOp r) {
        return one(train::AllReduceSumOp::create(b, r.getLoc(), r.getType(),
                                                 r.getInput())
                       .getResult());
      })
      .Case([&](DropoutOp d) {
        return one(dropout(tb, d.getInput(), d.getP().convertToDouble(),
                           d.getStream()));
      })
      .Default([&](Operation *) -> Results {
        op->emitError() << "no lowering to linalg for '" << op->getName()
                        << "'";
        return failure();
      });
}

/// Code generation needs every size: report the first dynamic one.
LogicalResult checkStatic(Operation *op) {
  auto dynamic = [](Type t) {
    auto rt = dyn_cast<RankedTensorType>(t);
    return rt && !rt.hasStaticShape();
  };
  if (llvm::any_of(op->getResultTypes(), dynamic) ||
      llvm::any_of(op->getOperandTypes(), dynamic))
    return op->emitError("code generation needs static shapes, but this "
                         "operation has a dynamic dimension; bind B and the "
                         "other shape symbols with --config or -D B=...");
  if (isa<SymbolicSizeOp>(op))
    return op->emitError("code generation needs the shape symbols bound; use "
                         "--config or -D");
  return success();
}

struct ConvertGraphToLinalg
    : public impl::ConvertGraphToLinalgBase<ConvertGraphToLinalg> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<GraphDialect>(op->getDialect()))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      if (failed(checkStatic(op)))
        return signalPassFailure();
    for (Operation *op : ops) {
      if (isa<ModelOp>(op)) {
        op->emitError("run graph-model-to-func before convert-graph-to-linalg");
        return signalPassFailure();
      }
      Results replacement = lower(op);
      if (failed(replacement))
        return signalPassFailure();
      op->replaceAllUsesWith(*replacement);
      op->erase();
    }
  }
};

} // namespace
} // namespace sinter::lowering
