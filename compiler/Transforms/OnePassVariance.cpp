//===- OnePassVariance.cpp - A sum of squared deviations in one pass ------===//
//
// Layer norm sums (x - m)^2 over a row after a first pass found the row's
// mean m: two passes over x. With m constant along the sum,
//   sum (x - m)^2 = sum x^2 - 2 m sum x + n m^2,
// and sum x is the mean's own sum: sum x^2 joins it (a sibling reduction
// over the same x), and x is read once. The sums are f64 and x^2 of an
// f32 x is exact in f64; the cancellation loses about 2^-53 (m / spread)^2
// of the result, less than the f32 inputs themselves carry (2^-24
// m / spread) until m is some 10^7 spreads from 0. A row without spread
// may come out a little below 0, so the result is clamped at 0.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace sinter {
#define GEN_PASS_DEF_ONEPASSVARIANCE
#include "compiler/Transforms/Passes.h.inc"

namespace {

/// What a sum of squared deviations reads: x (each element once) and m
/// (constant along the reduced loops), both f32, into an f64 sum from 0.
struct Deviations {
  OpOperand *x;
  OpOperand *m;
};

/// Whether `v` is a fill of zero.
bool isZeroFill(Value v) {
  auto fill = v.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

/// `op` as sum((x - m)^2): parallel and reduced loops, one f64 output from
/// a fill of 0, two f32 inputs, a body `d = x - m (or m - x); d * d;
/// extf to f64; add to the accumulator`.
std::optional<Deviations> deviationsOf(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0 ||
      !isZeroFill(op.getDpsInits()[0]) ||
      !cast<RankedTensorType>(op.getResult(0).getType()).getElementType().isF64())
    return std::nullopt;
  Block *body = op.getBody();
  if (body->getOperations().size() != 5)
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return std::nullopt;
  Value acc = body->getArgument(2);
  Value term = add.getLhs() == acc ? add.getRhs() : add.getLhs();
  auto ext = term.getDefiningOp<arith::ExtFOp>();
  auto square = ext ? ext.getIn().getDefiningOp<arith::MulFOp>() : nullptr;
  auto sub = square && square.getLhs() == square.getRhs()
                 ? square.getLhs().getDefiningOp<arith::SubFOp>()
                 : nullptr;
  if (!sub || (add.getLhs() != acc && add.getRhs() != acc) || !square.getType().isF32())
    return std::nullopt;
  // Which input is x (read at every loop) and which m (not at the reduced
  // ones).
  for (unsigned xi : {0u, 1u}) {
    OpOperand *x = op.getDpsInputOperand(xi), *m = op.getDpsInputOperand(1 - xi);
    Value xa = body->getArgument(xi), ma = body->getArgument(1 - xi);
    if (!((sub.getLhs() == xa && sub.getRhs() == ma) ||
          (sub.getLhs() == ma && sub.getRhs() == xa)))
      continue;
    if (!op.getMatchingIndexingMap(x).isPermutation())
      continue;
    bool mAlongSum = false;
    for (auto [loop, iterator] : llvm::enumerate(op.getIteratorTypesArray()))
      mAlongSum |= iterator == utils::IteratorType::reduction &&
                   op.getMatchingIndexingMap(m).isFunctionOfDim(loop);
    if (!mAlongSum)
      return Deviations{x, m};
  }
  return std::nullopt;
}

/// A reduction like `op` (its loops, its output and init) folding `term(x)`
/// of its input x alone.
Value sumOf(OpBuilder &b, linalg::GenericOp op, OpOperand *x, bool squared) {
  Location loc = op.getLoc();
  AffineMap xMap = op.getMatchingIndexingMap(x);
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  auto sum = linalg::GenericOp::create(
      b, loc, op.getResultTypes(), ValueRange{x->get()}, op.getDpsInits(),
      ArrayRef<AffineMap>{xMap, outMap}, op.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value wide = arith::ExtFOp::create(nb, l, nb.getF64Type(), args[0]);
        if (squared)
          wide = arith::MulFOp::create(nb, l, wide, wide);
        Value total = arith::AddFOp::create(nb, l, args[1], wide);
        linalg::YieldOp::create(nb, l, total);
      });
  return sum.getResult(0);
}

/// sum (x - m)^2 = s2 - 2 m s1 + n m^2, elementwise over the outputs.
void rewrite(linalg::GenericOp op, Deviations d) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value s1 = sumOf(b, op, d.x, /*squared=*/false);
  Value s2 = sumOf(b, op, d.x, /*squared=*/true);
  int64_t count = 1;
  for (auto [range, iterator] :
       llvm::zip_equal(op.getStaticLoopRanges(), op.getIteratorTypesArray()))
    if (iterator == utils::IteratorType::reduction)
      count *= range;
  // The output's loops, and m read at them (m's map names no reduced loop).
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  AffineMap mMap = op.getMatchingIndexingMap(d.m);
  SmallVector<AffineExpr> mAtOutput;
  for (AffineExpr e : mMap.getResults())
    mAtOutput.push_back(isa<AffineConstantExpr>(e)
                            ? e
                            : b.getAffineDimExpr(*outMap.getResultPosition(e)));
  unsigned rank = outMap.getNumResults();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap mAt = AffineMap::get(rank, 0, mAtOutput, b.getContext());
  // A fresh output: the combination writes every element, so the sum's
  // fill would be a loop of its own for nothing.
  auto type = cast<RankedTensorType>(op.getResult(0).getType());
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
  auto combined = linalg::GenericOp::create(
      b, loc, op.getResultTypes(), ValueRange{s1, s2, d.m->get()}, ValueRange{empty},
      ArrayRef<AffineMap>{id, id, mAt, id}, parallel,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Type f64 = nb.getF64Type();
        Value m = arith::ExtFOp::create(nb, l, f64, args[2]);
        Value n = arith::ConstantOp::create(nb, l, nb.getF64FloatAttr(double(count)));
        Value two = arith::ConstantOp::create(nb, l, nb.getF64FloatAttr(2.0));
        // s2 - m (2 s1 - n m)
        Value nm = arith::MulFOp::create(nb, l, n, m);
        Value twoS1 = arith::MulFOp::create(nb, l, two, args[0]);
        Value inner = arith::SubFOp::create(nb, l, twoS1, nm);
        Value mInner = arith::MulFOp::create(nb, l, m, inner);
        Value result = arith::SubFOp::create(nb, l, args[1], mInner);
        // Rounding may leave a row without spread a little below 0.
        Value zero = arith::ConstantOp::create(nb, l, nb.getF64FloatAttr(0.0));
        result = arith::MaximumFOp::create(nb, l, result, zero);
        linalg::YieldOp::create(nb, l, result);
      });
  op.getResult(0).replaceAllUsesWith(combined.getResult(0));
  op->erase();
}

struct OnePassVariance : impl::OnePassVarianceBase<OnePassVariance> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, Deviations>> found;
    getOperation().walk([&](linalg::GenericOp op) {
      // Only where every loop range is known and m's map is plain dims and
      // constants the output's map names.
      if (llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
        return;
      if (std::optional<Deviations> d = deviationsOf(op)) {
        AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
        bool named =
            llvm::all_of(op.getMatchingIndexingMap(d->m).getResults(), [&](AffineExpr e) {
              return isa<AffineConstantExpr>(e) ||
                     (isa<AffineDimExpr>(e) && outMap.getResultPosition(e));
            });
        // n counts the reduced loops: the output must name every other.
        bool allParallelNamed =
            llvm::all_of(llvm::enumerate(op.getIteratorTypesArray()), [&](auto loop) {
              return loop.value() == utils::IteratorType::reduction ||
                     outMap.isFunctionOfDim(loop.index());
            });
        if (named && allParallelNamed && outMap.isProjectedPermutation())
          found.push_back({op, *d});
      }
    });
    for (auto [op, d] : found)
      rewrite(op, d);
  }
};

} // namespace
} // namespace sinter
