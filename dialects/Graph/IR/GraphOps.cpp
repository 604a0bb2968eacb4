//===- GraphOps.cpp - Verifiers and type inference of the graph ops -------===//
//
// Every shape decision is delegated to ShapeRules.h; this file converts
// between tensor types and shapes and turns the rules' messages into
// diagnostics.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"

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
// Inference helpers, shared by families of ops (see GraphOps.td)
//===----------------------------------------------------------------------===//

/// Reports an error of the op `opName` at `loc`, when there is one, and
/// fails. The arguments are streamed into the diagnostic.
template <typename... Args>
static LogicalResult failInference(std::optional<Location> loc,
                                   StringRef opName, Args &&...args) {
  return emitOptionalError(loc, "'", opName, "' op ",
                           std::forward<Args>(args)...);
}

/// The type of `value` as a ranked tensor, or null. Only a builder given
/// invalid operands sees null: verification checks the operand types first.
static RankedTensorType tensorType(Value value) {
  return value ? dyn_cast<RankedTensorType>(value.getType()) : nullptr;
}

/// Fails unless `types` are ranked tensors that share an element type.
static LogicalResult checkTensors(std::optional<Location> loc,
                                  StringRef opName,
                                  ArrayRef<RankedTensorType> types) {
  for (RankedTensorType type : types)
    if (!type)
      return failInference(loc, opName, "expects ranked tensor operands");
  for (RankedTensorType type : types.drop_front())
    if (type.getElementType() != types.front().getElementType())
      return failInference(loc, opName, "operands of types ", types.front(),
                           " and ", type, " have different element types");
  return success();
}

/// Appends a tensor of the rule's shape and `elementType` to `types`, or
/// reports the rule's error.
static LogicalResult addResult(std::optional<Location> loc, StringRef opName,
                               const shape::Result &result, Type elementType,
                               SmallVectorImpl<Type> &types) {
  if (!result.ok())
    return failInference(loc, opName, result.error);
  types.push_back(toTensorType(result.shape, elementType));
  return success();
}

/// Reads a (height, width) attribute; nullptr when it is not a pair.
static const int64_t *pair(ArrayRef<int64_t> values) {
  return values.size() == 2 ? values.data() : nullptr;
}

static std::vector<int64_t> toVector(ArrayRef<int64_t> values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

/// Binary elementwise ops: the broadcast shape, with `resultElementType` or
/// else the operands' element type.
static LogicalResult inferBroadcast(std::optional<Location> loc,
                                    StringRef opName, Value lhs, Value rhs,
                                    Type resultElementType,
                                    SmallVectorImpl<Type> &types) {
  RankedTensorType lhsType = tensorType(lhs), rhsType = tensorType(rhs);
  if (failed(checkTensors(loc, opName, {lhsType, rhsType})))
    return failure();
  if (!resultElementType)
    resultElementType = lhsType.getElementType();
  return addResult(loc, opName,
                   shape::broadcast(toShape(lhsType), toShape(rhsType)),
                   resultElementType, types);
}

static LogicalResult inferReduce(std::optional<Location> loc, StringRef opName,
                                 Value input, ArrayRef<int64_t> axes,
                                 bool keepdim, SmallVectorImpl<Type> &types) {
  RankedTensorType inputType = tensorType(input);
  if (failed(checkTensors(loc, opName, {inputType})))
    return failure();
  return addResult(loc, opName,
                   shape::reduce(toShape(inputType), toVector(axes), keepdim),
                   inputType.getElementType(), types);
}

static LogicalResult inferSoftmax(std::optional<Location> loc,
                                  StringRef opName, Value input, int64_t axis,
                                  SmallVectorImpl<Type> &types) {
  RankedTensorType inputType = tensorType(input);
  if (failed(checkTensors(loc, opName, {inputType})))
    return failure();
  return addResult(loc, opName, shape::softmax(toShape(inputType), axis),
                   inputType.getElementType(), types);
}

static LogicalResult inferPool2d(std::optional<Location> loc, StringRef opName,
                                 Value input, ArrayRef<int64_t> kernel,
                                 ArrayRef<int64_t> stride,
                                 ArrayRef<int64_t> padding,
                                 SmallVectorImpl<Type> &types) {
  RankedTensorType inputType = tensorType(input);
  if (failed(checkTensors(loc, opName, {inputType})))
    return failure();
  if (!pair(kernel) || !pair(stride) || !pair(padding))
    return failInference(loc, opName,
                         "expects (height, width) pairs for kernel, stride "
                         "and padding");
  return addResult(loc, opName,
                   shape::pool2d(toShape(inputType), pair(kernel), pair(stride),
                                 pair(padding)),
                   inputType.getElementType(), types);
}

/// The result of a loss: rank 0 for "mean" and "sum", `perSample` for "none".
static LogicalResult addLossResult(std::optional<Location> loc,
                                   StringRef opName,
                                   const shape::Result &perSample,
                                   StringRef reduction, Type elementType,
                                   SmallVectorImpl<Type> &types) {
  if (!perSample.ok() || reduction == "none")
    return addResult(loc, opName, perSample, elementType, types);
  types.push_back(RankedTensorType::get({}, elementType));
  return success();
}

/// cross_entropy and nll_loss: logits [..., C] against integer targets [...].
static LogicalResult inferClassLoss(std::optional<Location> loc,
                                    StringRef opName, Value logits,
                                    Value target, StringRef reduction,
                                    SmallVectorImpl<Type> &types) {
  RankedTensorType logitsType = tensorType(logits);
  RankedTensorType targetType = tensorType(target);
  if (failed(checkTensors(loc, opName, {logitsType})) ||
      failed(checkTensors(loc, opName, {targetType})))
    return failure();
  return addLossResult(
      loc, opName,
      shape::classTargets(toShape(logitsType), toShape(targetType)), reduction,
      logitsType.getElementType(), types);
}

/// mse_loss, l1_loss and bce_with_logits: two tensors of one shape.
static LogicalResult inferPairLoss(std::optional<Location> loc,
                                   StringRef opName, Value lhs, Value rhs,
                                   StringRef reduction,
                                   SmallVectorImpl<Type> &types) {
  RankedTensorType lhsType = tensorType(lhs), rhsType = tensorType(rhs);
  if (failed(checkTensors(loc, opName, {lhsType, rhsType})))
    return failure();
  return addLossResult(loc, opName,
                       shape::sameShape(toShape(lhsType), toShape(rhsType)),
                       reduction, lhsType.getElementType(), types);
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

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *context,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  ElementsAttr value = adaptor.getValueAttr();
  if (!value)
    return failInference(loc, getOperationName(), "expects a value");
  types.push_back(value.getType());
  return success();
}

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
                         getStride(), getPadding(), pooled)))
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

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferBroadcast(loc, getOperationName(), adaptor.getLhs(),
                        adaptor.getRhs(), IntegerType::get(context, 1), types);
}

LogicalResult WhereOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  RankedTensorType condType = tensorType(adaptor.getCond());
  RankedTensorType lhsType = tensorType(adaptor.getLhs());
  RankedTensorType rhsType = tensorType(adaptor.getRhs());
  if (failed(checkTensors(loc, getOperationName(), {condType})) ||
      failed(checkTensors(loc, getOperationName(), {lhsType, rhsType})))
    return failure();
  shape::Result values = shape::broadcast(toShape(lhsType), toShape(rhsType));
  if (!values.ok())
    return failInference(loc, getOperationName(), values.error);
  return addResult(loc, getOperationName(),
                   shape::broadcast(toShape(condType), values.shape),
                   lhsType.getElementType(), types);
}

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

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  RankedTensorType lhsType = tensorType(adaptor.getLhs());
  RankedTensorType rhsType = tensorType(adaptor.getRhs());
  if (failed(checkTensors(loc, getOperationName(), {lhsType, rhsType})))
    return failure();
  return addResult(loc, getOperationName(),
                   shape::matmul(toShape(lhsType), toShape(rhsType)),
                   lhsType.getElementType(), types);
}

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

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType inputType = tensorType(adaptor.getInput());
  if (failed(checkTensors(loc, getOperationName(), {inputType})))
    return failure();
  return addResult(
      loc, getOperationName(),
      shape::transpose(toShape(inputType), toVector(adaptor.getPermutation())),
      inputType.getElementType(), types);
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  SmallVector<RankedTensorType> inputTypes =
      llvm::map_to_vector(adaptor.getInputs(), tensorType);
  if (inputTypes.empty())
    return failInference(loc, getOperationName(),
                         "needs at least one tensor to concatenate");
  if (failed(checkTensors(loc, getOperationName(), inputTypes)))
    return failure();
  std::vector<shape::Shape> shapes;
  for (RankedTensorType type : inputTypes)
    shapes.push_back(toShape(type));
  return addResult(loc, getOperationName(),
                   shape::concat(shapes, adaptor.getAxis()),
                   inputTypes.front().getElementType(), types);
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  RankedTensorType inputType = tensorType(adaptor.getInput());
  if (failed(checkTensors(loc, getOperationName(), {inputType})))
    return failure();
  return addResult(loc, getOperationName(),
                   shape::slice(toShape(inputType), adaptor.getAxis(),
                                adaptor.getStart(), adaptor.getEnd()),
                   inputType.getElementType(), types);
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

//===----------------------------------------------------------------------===//
// Neural-network primitives
//===----------------------------------------------------------------------===//

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  RankedTensorType inputType = tensorType(adaptor.getInput());
  RankedTensorType weightType = tensorType(adaptor.getWeight());
  if (failed(checkTensors(loc, getOperationName(), {inputType, weightType})))
    return failure();
  const int64_t *stride = pair(adaptor.getStride());
  const int64_t *padding = pair(adaptor.getPadding());
  const int64_t *dilation = pair(adaptor.getDilation());
  if (!stride || !padding || !dilation)
    return failInference(loc, getOperationName(),
                         "expects (height, width) pairs for stride, padding "
                         "and dilation");
  return addResult(loc, getOperationName(),
                   shape::conv2d(toShape(inputType), toShape(weightType),
                                 stride, padding, dilation,
                                 adaptor.getGroups()),
                   inputType.getElementType(), types);
}

LogicalResult GlobalAvgPool2dOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  RankedTensorType inputType = tensorType(adaptor.getInput());
  if (failed(checkTensors(loc, getOperationName(), {inputType})))
    return failure();
  return addResult(loc, getOperationName(),
                   shape::globalPool2d(toShape(inputType)),
                   inputType.getElementType(), types);
}

/// Both statistics (mean and variance) have the reduced shape.
static LogicalResult addStatistics(std::optional<Location> loc,
                                   StringRef opName, const shape::Result &rule,
                                   Type elementType,
                                   SmallVectorImpl<Type> &types) {
  if (failed(addResult(loc, opName, rule, elementType, types)))
    return failure();
  types.push_back(types.back());
  return success();
}

LogicalResult BatchNormStatsOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  RankedTensorType inputType = tensorType(adaptor.getInput());
  if (failed(checkTensors(loc, getOperationName(), {inputType})))
    return failure();
  return addStatistics(loc, getOperationName(),
                       shape::reduce(toShape(inputType),
                                     toVector(adaptor.getAxes()),
                                     /*keepdim=*/false),
                       inputType.getElementType(), types);
}

LogicalResult LayerNormStatsOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  RankedTensorType inputType = tensorType(adaptor.getInput());
  if (failed(checkTensors(loc, getOperationName(), {inputType})))
    return failure();
  return addStatistics(loc, getOperationName(),
                       shape::reduce(toShape(inputType), {-1},
                                     /*keepdim=*/true),
                       inputType.getElementType(), types);
}

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType idsType = tensorType(adaptor.getIds());
  RankedTensorType tableType = tensorType(adaptor.getTable());
  if (failed(checkTensors(loc, getOperationName(), {idsType})) ||
      failed(checkTensors(loc, getOperationName(), {tableType})))
    return failure();
  return addResult(loc, getOperationName(),
                   shape::embedding(toShape(idsType), toShape(tableType)),
                   tableType.getElementType(), types);
}

LogicalResult DropoutOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType queryType = tensorType(adaptor.getQuery());
  RankedTensorType keyType = tensorType(adaptor.getKey());
  RankedTensorType valueType = tensorType(adaptor.getValue());
  if (failed(checkTensors(loc, getOperationName(),
                          {queryType, keyType, valueType})))
    return failure();
  return addResult(loc, getOperationName(),
                   shape::attention(toShape(queryType), toShape(keyType),
                                    toShape(valueType)),
                   queryType.getElementType(), types);
}

//===----------------------------------------------------------------------===//
// Losses and metrics
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *context,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &types) {
  return inferClassLoss(loc, getOperationName(), adaptor.getLogits(),
                        adaptor.getTarget(), adaptor.getReduction(), types);
}

LogicalResult NllLossOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferClassLoss(loc, getOperationName(), adaptor.getLogp(),
                        adaptor.getTarget(), adaptor.getReduction(), types);
}

LogicalResult AccuracyOp::inferReturnTypes(MLIRContext *context,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  RankedTensorType logitsType = tensorType(adaptor.getLogits());
  RankedTensorType targetType = tensorType(adaptor.getTarget());
  if (failed(checkTensors(loc, getOperationName(), {logitsType})) ||
      failed(checkTensors(loc, getOperationName(), {targetType})))
    return failure();
  shape::Result rule =
      shape::classTargets(toShape(logitsType), toShape(targetType));
  if (!rule.ok())
    return failInference(loc, getOperationName(), rule.error);
  types.push_back(RankedTensorType::get({}, Float32Type::get(context)));
  return success();
}

} // namespace sinter::graph

#include "dialects/Graph/IR/GraphInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "dialects/Graph/IR/GraphOps.cpp.inc"
