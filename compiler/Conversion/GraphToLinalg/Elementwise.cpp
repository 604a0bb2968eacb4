//===- Elementwise.cpp - Elementwise graph ops as linalg maps -------------===//
//
// Arithmetic, comparisons, activations, where and casts: one linalg.generic
// over the result's shape each, with NumPy broadcasting in its maps.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/GraphToLinalg/Lowering.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace sinter::graph;

namespace sinter::lowering {
namespace {

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

/// The scalar function of an elementwise op, or null.
ScalarFn scalarFn(Operation *op) {
  if (ScalarFn fn = binaryFn(op))
    return fn;
  if (ScalarFn fn = unaryFn(op))
    return fn;
  return TypeSwitch<Operation *, ScalarFn>(op)
      .Case([](CompareOp c) { return compareFn(c); })
      .Case([](WhereOp) -> ScalarFn {
        return [](OpBuilder &b, Location l, ValueRange a) {
          return Value(arith::SelectOp::create(b, l, a[0], a[1], a[2]));
        };
      })
      .Case([](CastOp c) -> ScalarFn {
        Type to = c.getType().getElementType();
        return [to](OpBuilder &b, Location l, ValueRange a) {
          return scalar::convert(b, l, a[0], to);
        };
      })
      .Default([](Operation *) { return ScalarFn(); });
}

/// Every elementwise op: a map over its result's shape (its own type says
/// shape and dtype).
struct ElementwiseLowering : public ConversionPattern {
  explicit ElementwiseLowering(MLIRContext *context)
      : ConversionPattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<GraphDialect>(op->getDialect()))
      return failure();
    ScalarFn fn = scalarFn(op);
    if (!fn)
      return failure();
    TensorBuilder tb(rewriter, op->getLoc());
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    rewriter.replaceOp(op, tb.elementwise(type.getShape(), type.getElementType(),
                                          operands, fn));
    return success();
  }
};

/// Constants up to this many elements are data of the program; larger
/// splats (the zeros around a slice's gradient) are filled when needed
/// instead, so the program does not carry megabytes of one value.
constexpr int64_t kMaxEmbeddedSplat = 4096;

Results lowerConstant(TensorBuilder &tb, ConstantOp op, ConstantOp::Adaptor) {
  auto value = cast<DenseElementsAttr>(op.getValue());
  auto type = cast<RankedTensorType>(value.getType());
  if (value.isSplat() && type.getNumElements() > kMaxEmbeddedSplat) {
    Value scalar = arith::ConstantOp::create(
        tb.builder(), op.getLoc(), cast<TypedAttr>(value.getSplatValue<Attribute>()));
    Value empty = tb.empty(type.getShape(), type.getElementType());
    return one(linalg::FillOp::create(tb.builder(), op.getLoc(), scalar, empty)
                   .getResult(0));
  }
  return one(arith::ConstantOp::create(tb.builder(), op.getLoc(),
                                       cast<TypedAttr>(op.getValue())));
}

} // namespace

void populateElementwisePatterns(RewritePatternSet &patterns) {
  patterns.add<ElementwiseLowering>(patterns.getContext());
  addLowering<ConstantOp>(patterns, lowerConstant);
}

} // namespace sinter::lowering
