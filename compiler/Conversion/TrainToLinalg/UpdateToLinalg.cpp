//===- UpdateToLinalg.cpp - The optimizer's ops as linalg -----------------===//
//
// The update of a training step is elementwise over each parameter and its
// moments, so each update op becomes one parallel linalg.generic whose
// outputs are the parameter and its moments themselves: bufferization
// writes them in place. The scalars of the update (bias corrections, decay
// factors) are computed once in f64 and rounded to the parameter's type.
// The global norm is one f64 reduction per gradient, then their sums added
// in order.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Passes.h"
#include "dialects/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace sinter::train;

namespace sinter {
#define GEN_PASS_DEF_CONVERTTRAINUPDATETOLINALG
#include "compiler/Conversion/Passes.h.inc"

namespace {

/// Arithmetic on scalars of one float type, at one location.
struct Scalars {
  OpBuilder &b;
  Location loc;
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value sqrt(Value x) { return math::SqrtOp::create(b, loc, x); }
  Value constant(Type t, double v) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(t, v));
  }
  /// An f64 scalar in the parameters' element type.
  Value narrow(Value x, Type t) {
    return t == x.getType() ? x : Value(arith::TruncFOp::create(b, loc, t, x));
  }
};

Type elementTypeOf(Value tensor) {
  return cast<RankedTensorType>(tensor.getType()).getElementType();
}

/// One all-parallel generic: reads `inputs`, updates `outputs` in place;
/// `body` gets the inputs' then the outputs' elements and returns the new
/// outputs.
ValueRange elementwise(OpBuilder &b, Location loc, ValueRange inputs,
                       ValueRange outputs,
                       function_ref<SmallVector<Value>(Scalars &, ValueRange)> body) {
  int64_t rank = cast<RankedTensorType>(outputs[0].getType()).getRank();
  SmallVector<AffineMap> maps(inputs.size() + outputs.size(),
                              b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto op = linalg::GenericOp::create(
      b, loc, ValueRange(outputs).getTypes(), inputs, outputs, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Scalars s{nb, l};
        linalg::YieldOp::create(nb, l, body(s, args));
      });
  return op.getResults();
}

/// The sum of the squares of `g`'s elements, in f64, as a rank-0 tensor of
/// its own.
Value sumOfSquares(OpBuilder &b, Location loc, Value g) {
  Scalars s{b, loc};
  Type f64 = b.getF64Type();
  Value zero = linalg::FillOp::create(
                   b, loc, s.constant(f64, 0.0),
                   tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, f64).getResult())
                   .getResult(0);
  int64_t rank = cast<RankedTensorType>(g.getType()).getRank();
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 AffineMap::get(rank, 0, {}, b.getContext())};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             b, loc, TypeRange{zero.getType()}, ValueRange{g}, ValueRange{zero}, maps,
             iterators,
             [&](OpBuilder &nb, Location l, ValueRange a) {
               Scalars e{nb, l};
               Value x = a[0].getType() == f64
                             ? a[0]
                             : Value(arith::ExtFOp::create(nb, l, f64, a[0]));
               linalg::YieldOp::create(nb, l, e.add(a[1], e.mul(x, x)));
             })
      .getResult(0);
}

/// How many partial sums one generic adds: few enough that a GPU kernel's
/// arguments stay small.
constexpr size_t kSumsPerAdd = 16;

/// The partial sums (rank-0 f64 tensors) added in order, in a tree of
/// generics of at most kSumsPerAdd inputs: each adds its later inputs into
/// its first.
Value addInOrder(OpBuilder &b, Location loc, SmallVector<Value> sums) {
  while (sums.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i < sums.size(); i += kSumsPerAdd) {
      ArrayRef<Value> group = ArrayRef<Value>(sums).slice(i, std::min(kSumsPerAdd, sums.size() - i));
      if (group.size() == 1) {
        next.push_back(group[0]);
        continue;
      }
      SmallVector<AffineMap> maps(group.size(), AffineMap::get(0, 0, {}, b.getContext()));
      next.push_back(linalg::GenericOp::create(
                         b, loc, TypeRange{group[0].getType()}, group.drop_front(),
                         ValueRange{group[0]}, maps, {},
                         [&](OpBuilder &nb, Location l, ValueRange a) {
                           Scalars e{nb, l};
                           Value total = a.back();
                           for (Value v : a.drop_back())
                             total = e.add(total, v);
                           linalg::YieldOp::create(nb, l, total);
                         })
                         .getResult(0));
    }
    sums = std::move(next);
  }
  return sums.front();
}

struct LowerGlobalNorm : OpConversionPattern<GlobalNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GlobalNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Scalars s{rewriter, loc};
    // Each gradient's sum of squares on its own, then the sums added: one
    // accumulator carried through every gradient would make bufferization's
    // analysis quadratic in the number of parameters. The sum stays a tensor
    // until its square root, so a device computes it on its own.
    SmallVector<Value> sums;
    for (Value g : adaptor.getGradients())
      sums.push_back(sumOfSquares(rewriter, loc, g));
    if (sums.empty())
      return rewriter.notifyMatchFailure(op, "a global norm of no gradients");
    Value sum = addInOrder(rewriter, loc, std::move(sums));
    rewriter.replaceOp(
        op, s.sqrt(tensor::ExtractOp::create(rewriter, loc, sum, ValueRange{})));
    return success();
  }
};

struct LowerAdamW : OpConversionPattern<AdamWUpdateOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AdamWUpdateOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Scalars s{rewriter, loc};
    Type f64 = rewriter.getF64Type(), et = elementTypeOf(a.getParam());
    Value one = s.constant(f64, 1.0);
    auto power = [&](Value base) {
      return math::PowFOp::create(rewriter, loc, base, a.getStep());
    };
    // torch.optim.AdamW's scalars, in f64.
    Value decay = s.sub(one, s.mul(a.getLr(), a.getWeightDecay()));
    Value stepSize = s.div(a.getLr(), s.sub(one, power(a.getBeta1())));
    Value root2 = s.sqrt(s.sub(one, power(a.getBeta2())));
    Value scale = s.narrow(a.getGradScale(), et);
    Value decayFactor = s.narrow(decay, et);
    Value oneMinusB1 = s.narrow(s.sub(one, a.getBeta1()), et);
    Value b2 = s.narrow(a.getBeta2(), et);
    Value oneMinusB2 = s.narrow(s.sub(one, a.getBeta2()), et);
    Value root = s.narrow(root2, et), eps = s.narrow(a.getEps(), et);
    Value size = s.narrow(stepSize, et);
    ValueRange results = elementwise(
        rewriter, loc, ValueRange{a.getGrad()},
        ValueRange{a.getParam(), a.getExpAvg(), a.getExpAvgSq()},
        [&](Scalars &e, ValueRange x) -> SmallVector<Value> {
          Value g = e.mul(x[0], scale);
          Value p = e.mul(x[1], decayFactor); // decoupled decay first
          Value m = e.add(x[2], e.mul(oneMinusB1, e.sub(g, x[2])));
          Value v = e.add(e.mul(x[3], b2), e.mul(oneMinusB2, e.mul(g, g)));
          Value denom = e.add(e.div(e.sqrt(v), root), eps);
          p = e.sub(p, e.mul(size, e.div(m, denom)));
          return {p, m, v};
        });
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct LowerSGD : OpConversionPattern<SGDUpdateOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SGDUpdateOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Scalars s{rewriter, loc};
    Type et = elementTypeOf(a.getParam());
    Value scale = s.narrow(a.getGradScale(), et);
    Value decay = s.narrow(a.getWeightDecay(), et);
    Value lr = s.narrow(a.getLr(), et);
    Value mu = s.narrow(a.getMomentum(), et);
    Value nesterov = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::ONE, a.getNesterov(),
        s.constant(rewriter.getF64Type(), 0.0));
    SmallVector<Value> outputs = {a.getParam()};
    if (a.getMomentumBuffer())
      outputs.push_back(a.getMomentumBuffer());
    ValueRange results = elementwise(
        rewriter, loc, ValueRange{a.getGrad()}, outputs,
        [&](Scalars &e, ValueRange x) -> SmallVector<Value> {
          Value d = e.add(e.mul(x[0], scale), e.mul(decay, x[1]));
          SmallVector<Value> out = {Value()};
          if (x.size() == 3) {
            Value buffer = e.add(e.mul(mu, x[2]), d);
            Value ahead = e.add(d, e.mul(mu, buffer));
            d = arith::SelectOp::create(e.b, e.loc, nesterov, ahead, buffer);
            out.push_back(buffer);
          }
          out[0] = e.sub(x[1], e.mul(lr, d));
          return out;
        });
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct ConvertTrainUpdateToLinalg
    : public impl::ConvertTrainUpdateToLinalgBase<ConvertTrainUpdateToLinalg> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    ConversionTarget target(*context);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect>();
    target.addIllegalOp<GlobalNormOp, AdamWUpdateOp, SGDUpdateOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(context);
    patterns.add<LowerGlobalNorm, LowerAdamW, LowerSGD>(context);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace sinter
