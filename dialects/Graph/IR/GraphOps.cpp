//===- GraphOps.cpp - Verifiers of the graph ops --------------------------===//
//
// The conversions between tensor types and shapes, the model's structure
// and the verifiers of the graph ops; every shape decision is delegated to
// ShapeRules.h. Result type inference is in GraphTypeInference.cpp.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Graph/IR/GraphOpsInternal.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace sinter::graph {

//===----------------------------------------------------------------------===//
// Tensor types and shapes
//===----------------------------------------------------------------------===//

shape::Shape toShape(RankedTensorType type) {
  shape::Shape result;
  result.reserve(type.getRank());
  for (int64_t size : type.getShape())
    result.push_back(ShapedType::isDynamic(size) ? shape::Dim::unknown()
                                                 : shape::Dim::known(size));
  return result;
}

RankedTensorType toTensorType(const shape::Shape &shape, Type elementType) {
  SmallVector<int64_t> sizes;
  sizes.reserve(shape.size());
  for (const shape::Dim &dim : shape)
    sizes.push_back(dim.isKnown() && dim.value() >= 0 ? dim.value()
                                                      : ShapedType::kDynamic);
  return RankedTensorType::get(sizes, elementType);
}

std::optional<shape::DType> toDType(Type elementType) {
  if (elementType.isF64())
    return shape::DType::F64;
  if (elementType.isF32())
    return shape::DType::F32;
  if (elementType.isBF16())
    return shape::DType::BF16;
  if (elementType.isF16())
    return shape::DType::F16;
  if (elementType.isSignlessInteger(64))
    return shape::DType::I64;
  if (elementType.isSignlessInteger(32))
    return shape::DType::I32;
  if (elementType.isSignlessInteger(1))
    return shape::DType::Bool;
  return std::nullopt;
}

Type toElementType(MLIRContext *context, shape::DType dtype) {
  Builder builder(context);
  switch (dtype) {
  case shape::DType::F64:
    return builder.getF64Type();
  case shape::DType::F32:
    return builder.getF32Type();
  case shape::DType::BF16:
    return builder.getBF16Type();
  case shape::DType::F16:
    return builder.getF16Type();
  case shape::DType::I64:
    return builder.getI64Type();
  case shape::DType::I32:
    return builder.getI32Type();
  case shape::DType::Bool:
    return builder.getI1Type();
  }
  llvm_unreachable("unknown dtype");
}

bool areCompatibleResultTypes(TypeRange lhs, TypeRange rhs) {
  if (lhs.size() != rhs.size())
    return false;
  for (auto [l, r] : llvm::zip_equal(lhs, rhs)) {
    auto lhsType = dyn_cast<RankedTensorType>(l);
    auto rhsType = dyn_cast<RankedTensorType>(r);
    if (!lhsType || !rhsType ||
        lhsType.getElementType() != rhsType.getElementType() ||
        failed(verifyCompatibleShape(lhsType.getShape(), rhsType.getShape())))
      return false;
  }
  return true;
}

LogicalResult detail::verifyInferredTypes(Operation *op, TypeRange inferred) {
  if (areCompatibleResultTypes(inferred, op->getResultTypes()))
    return success();
  bool plural = inferred.size() != 1;
  return op->emitOpError()
         << (plural ? "result types " : "result type ") << op->getResultTypes()
         << (plural ? " do not match the inferred types "
                    : " does not match the inferred type ")
         << inferred;
}

//===----------------------------------------------------------------------===//
// ModelOp
//===----------------------------------------------------------------------===//

void ModelOp::build(OpBuilder &builder, OperationState &state,
                    StringRef symName, StringRef phase) {
  Properties &properties = state.getOrAddProperties<Properties>();
  properties.sym_name = builder.getStringAttr(symName);
  properties.phase = builder.getStringAttr(phase);
  state.addRegion()->emplaceBlock();
}

/// Records `op` as the definition of `name` in `seen`; reports a second
/// definition, with a note at the first.
static LogicalResult defineOnce(llvm::StringMap<Operation *> &seen,
                                StringRef name, Operation *op,
                                StringRef what) {
  auto [it, inserted] = seen.try_emplace(name, op);
  if (inserted)
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << "redefines " << what << " '" << name << "'";
  diag.attachNote(it->second->getLoc()) << "first defined here";
  return diag;
}

LogicalResult ModelOp::verifyRegions() {
  llvm::StringMap<Operation *> inputs, variables, metrics, outputs, updated;
  SmallVector<StateUpdateOp> updates;
  Operation *loss = nullptr;
  for (Operation &op : getBody()->getOperations()) {
    LogicalResult result = success();
    if (auto input = dyn_cast<InputOp>(op))
      result = defineOnce(inputs, input.getName(), &op, "input");
    else if (auto param = dyn_cast<ParamOp>(op))
      result = defineOnce(variables, param.getName(), &op,
                          "the parameter or state");
    else if (auto state = dyn_cast<StateOp>(op))
      result = defineOnce(variables, state.getName(), &op,
                          "the parameter or state");
    else if (auto metric = dyn_cast<MetricOp>(op))
      result = defineOnce(metrics, metric.getName(), &op, "metric");
    else if (auto output = dyn_cast<OutputOp>(op))
      result = defineOnce(outputs, output.getName(), &op, "output");
    else if (auto update = dyn_cast<StateUpdateOp>(op))
      updates.push_back(update);
    if (failed(result))
      return failure();
    if (!isa<LossOp>(op))
      continue;
    if (loss) {
      InFlightDiagnostic diag =
          op.emitOpError() << "is a second loss of model '" << getSymName()
                           << "'; a model has at most one";
      diag.attachNote(loss->getLoc()) << "first loss here";
      return diag;
    }
    loss = &op;
  }

  // State updates may precede the declaration of their state.
  for (StateUpdateOp update : updates) {
    StringRef name = update.getName();
    Operation *target = variables.lookup(name);
    if (!target)
      return update.emitOpError()
             << "updates '" << name
             << "', but the model has no graph.state of that name";
    auto state = dyn_cast<StateOp>(target);
    if (!state)
      return update.emitOpError()
             << "updates '" << name
             << "', which is a graph.param; only a graph.state can be updated";
    if (!areCompatibleResultTypes(state.getType(), update.getValue().getType()))
      return update.emitOpError()
             << "updates state '" << name << "' of type " << state.getType()
             << " with a value of type " << update.getValue().getType();
    if (failed(defineOnce(updated, name, update, "the update of state")))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// InputOp, ParamOp, StateOp
//===----------------------------------------------------------------------===//

void InputOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), getName());
}

void ParamOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), getName());
}

void StateOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), getName());
}

/// Checks the number of initialiser arguments (LANGUAGE.md section 6).
static LogicalResult verifyInitializer(Operation *op, StringRef init,
                                       ArrayRef<double> args) {
  size_t arity = llvm::StringSwitch<size_t>(init)
                     .Cases({"zeros", "ones"}, 0)
                     .Case("constant", 1)
                     .Case("trunc_normal", 4)
                     .Default(2);
  if (args.size() == arity)
    return success();
  return op->emitOpError() << "initializer '" << init << "' takes " << arity
                           << (arity == 1 ? " argument" : " arguments")
                           << ", got " << args.size();
}

LogicalResult ParamOp::verify() {
  return verifyInitializer(*this, getInit(), getInitArgs());
}

LogicalResult StateOp::verify() {
  return verifyInitializer(*this, getInit(), getInitArgs());
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::verify() {
  if (getValue().getType() != getType())
    return emitOpError() << "result type " << getType()
                         << " differs from the type " << getValue().getType()
                         << " of the value";
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

std::optional<double> splatFloat(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  auto dense = c ? dyn_cast<DenseElementsAttr>(c.getValue()) : DenseElementsAttr();
  if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

LogicalResult EmbeddingGradOp::verify() {
  ArrayRef<int64_t> ids = getIds().getType().getShape(),
                    grad = getGrad().getType().getShape(),
                    out = getType().getShape();
  if (grad.size() != ids.size() + 1 || out.size() != 2 ||
      !shape::sameShape(toShape(getIds().getType()),
                        toShape(RankedTensorType::get(grad.drop_back(),
                                                      getType().getElementType())))
           .ok() ||
      (!ShapedType::isDynamic(out[1]) && !ShapedType::isDynamic(grad.back()) &&
       out[1] != grad.back()))
    return emitOpError() << "expects grad of shape ids.shape + [D] and a "
                            "result [rows, D], got ids "
                         << getIds().getType() << ", grad "
                         << getGrad().getType() << ", result " << getType();
  if (getGrad().getType().getElementType() != getType().getElementType())
    return emitOpError() << "result element type must be the grad's";
  return success();
}

/// Batch normalization's operands: `input` [N, C, ...] and the per-channel
/// tensors, each [C] of the input's element type.
static LogicalResult verifyBatchNorm(Operation *op, Value input, ValueRange channels,
                                     Value result) {
  auto in = cast<RankedTensorType>(input.getType());
  if (in.getRank() < 2)
    return op->emitOpError("takes an input [N, C, ...] of rank 2 or more, got ") << in;
  if (result.getType() != in)
    return op->emitOpError("result must have the input's type ") << in;
  int64_t c = in.getDimSize(1);
  for (Value v : channels) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 1 || t.getElementType() != in.getElementType() ||
        (!ShapedType::isDynamic(c) && !ShapedType::isDynamic(t.getDimSize(0)) &&
         t.getDimSize(0) != c))
      return op->emitOpError("expects per-channel tensors [")
             << c << "] of " << in.getElementType() << ", got " << t;
  }
  return success();
}

LogicalResult BatchNormOp::verify() {
  return verifyBatchNorm(*this, getInput(),
                         {getWeight(), getBias(), getMean(), getVar()}, getResult());
}

LogicalResult BatchNormGradOp::verify() {
  if (getGrad().getType() != getInput().getType())
    return emitOpError("grad must have the input's type");
  return verifyBatchNorm(*this, getInput(),
                         {getWeight(), getMean(), getVar(), getDweight()}, getDinput());
}

LogicalResult Pool2dGradOp::verify() {
  SmallVector<Type> pooled;
  if (failed(inferPool2d(getLoc(), getOperationName(), getInput(), getKernel(),
                         getStride(), getPadding(), getChannelsLast(), pooled)))
    return failure();
  if (getGrad().getType() != pooled.front())
    return emitOpError() << "expects grad of the pooling's result type "
                         << pooled.front() << ", got " << getGrad().getType();
  if (getType() != getInput().getType())
    return emitOpError() << "result type must be the input's, "
                         << getInput().getType();
  return success();
}

LogicalResult SymbolicSizeOp::verify() {
  if (getSymbols().empty())
    return emitOpError() << "needs at least one shape symbol; a known size is "
                            "a graph.constant";
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  shape::Result same = shape::sameShape(toShape(getInput().getType()),
                                        toShape(getType()));
  if (!same.ok())
    return emitOpError() << "must keep the operand's shape: " << same.error;
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra and shape ops
//===----------------------------------------------------------------------===//

LogicalResult MatmulTransposedOp::verify() {
  auto lhs = cast<RankedTensorType>(getLhs().getType());
  auto rhs = cast<RankedTensorType>(getRhs().getType());
  auto result = cast<RankedTensorType>(getType());
  if (lhs.getRank() < 2 || rhs.getRank() != 2)
    return emitOpError("takes an lhs of rank 2 or more and an rhs of rank 2");
  if (lhs.getElementType() != rhs.getElementType() ||
      result.getElementType() != lhs.getElementType())
    return emitOpError("operands and result must share an element type");
  SmallVector<int64_t> expected(lhs.getShape().drop_back());
  expected.push_back(rhs.getDimSize(0));
  if (lhs.getShape().back() != rhs.getDimSize(1) ||
      result.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "expects [..., M, K] and [N, K] to give [..., M, N], got "
                         << lhs << ", " << rhs << " and " << result;
  return success();
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType inputType = getInput().getType();
  if (inputType.getElementType() != getType().getElementType())
    return emitOpError() << "changes the element type from " << inputType
                         << " to " << getType() << "; use graph.cast";
  shape::Result result =
      shape::reshape(toShape(inputType), toShape(getType()));
  if (!result.ok())
    return emitOpError() << result.error;
  return success();
}

/// A packed projection qkv [B, T, 3C] of `heads` heads, its attention's
/// result [B, T, C] of qkv's element type and row statistics [B, heads, T]
/// in f32 (a log-sum-exp near 10 rounded to bf16 would be 0.03 off).
static LogicalResult verifyPackedAttention(Operation *op, RankedTensorType qkv,
                                           RankedTensorType result,
                                           RankedTensorType lse, int64_t heads) {
  if (qkv.getRank() != 3 || !qkv.hasStaticShape() || qkv.getDimSize(2) % 3 != 0)
    return op->emitOpError("takes a static qkv [B, T, 3 * C], not ") << qkv;
  int64_t b = qkv.getDimSize(0), t = qkv.getDimSize(1), c = qkv.getDimSize(2) / 3;
  if (heads < 1 || c % heads != 0)
    return op->emitOpError() << "splits " << c << " columns into " << heads << " heads";
  Type element = qkv.getElementType();
  auto expect = [&](RankedTensorType actual, ArrayRef<int64_t> shape,
                    StringRef what) -> LogicalResult {
    auto wanted = RankedTensorType::get(shape, element);
    if (actual != wanted)
      return op->emitOpError() << what << " should be " << wanted << ", not " << actual;
    return success();
  };
  if (failed(expect(result, {b, t, c}, "the result")))
    return failure();
  element = Float32Type::get(op->getContext());
  return expect(lse, {b, heads, t}, "the row statistics");
}

LogicalResult AttentionQkvOp::verify() {
  return verifyPackedAttention(*this, getQkv().getType(), getResult().getType(),
                               getLse().getType(), int64_t(getHeads()));
}

LogicalResult AttentionQkvGradOp::verify() {
  if (getGrad().getType() != getResult().getType())
    return emitOpError("takes the result's gradient in the result's type");
  return verifyPackedAttention(*this, getQkv().getType(), getResult().getType(),
                               getLse().getType(), int64_t(getHeads()));
}

LogicalResult OneHotOp::verify() {
  shape::Result expected =
      shape::oneHot(toShape(getIds().getType()), getNumClasses());
  if (!expected.ok())
    return emitOpError() << expected.error;
  shape::Shape actual = toShape(getType());
  if (!shape::sameShape(expected.shape, actual).ok())
    return emitOpError() << "result shape " << shape::str(actual)
                         << " should be the ids' shape followed by "
                         << getNumClasses() << ": "
                         << shape::str(expected.shape);
  return success();
}

} // namespace sinter::graph

#include "dialects/Graph/IR/GraphInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "dialects/Graph/IR/GraphOps.cpp.inc"
