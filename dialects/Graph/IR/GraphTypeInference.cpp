//===- GraphTypeInference.cpp - Result types of the graph ops -------------===//
//
// The inferReturnTypes of the graph ops and the helpers they share. Every
// shape decision is delegated to ShapeRules.h; this file converts operand
// types to shapes and turns the rules' messages into diagnostics. The
// families of ops of GraphOps.td call the helpers that GraphOpsInternal.h
// declares.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Graph/IR/GraphOpsInternal.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"

#include <vector>

using namespace mlir;

namespace sinter::graph {

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
LogicalResult inferBroadcast(std::optional<Location> loc,
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

LogicalResult inferReduce(std::optional<Location> loc, StringRef opName,
                          Value input, ArrayRef<int64_t> axes,
                          bool keepdim, SmallVectorImpl<Type> &types) {
  RankedTensorType inputType = tensorType(input);
  if (failed(checkTensors(loc, opName, {inputType})))
    return failure();
  return addResult(loc, opName,
                   shape::reduce(toShape(inputType), toVector(axes), keepdim),
                   inputType.getElementType(), types);
}

LogicalResult inferSoftmax(std::optional<Location> loc,
                           StringRef opName, Value input, int64_t axis,
                           SmallVectorImpl<Type> &types) {
  RankedTensorType inputType = tensorType(input);
  if (failed(checkTensors(loc, opName, {inputType})))
    return failure();
  return addResult(loc, opName, shape::softmax(toShape(inputType), axis),
                   inputType.getElementType(), types);
}

LogicalResult inferPool2d(std::optional<Location> loc, StringRef opName,
                          Value input, ArrayRef<int64_t> kernel,
                          ArrayRef<int64_t> stride,
                          ArrayRef<int64_t> padding, bool channelsLast,
                          SmallVectorImpl<Type> &types) {
  RankedTensorType inputType = tensorType(input);
  if (failed(checkTensors(loc, opName, {inputType})))
    return failure();
  if (!pair(kernel) || !pair(stride) || !pair(padding))
    return failInference(loc, opName,
                         "expects (height, width) pairs for kernel, stride "
                         "and padding");
  // Channels last: the rule's NCHW shapes, permuted in and out.
  shape::Shape x = toShape(inputType);
  if (channelsLast && x.size() == 4)
    x = {x[0], x[3], x[1], x[2]};
  shape::Result rule = shape::pool2d(x, pair(kernel), pair(stride), pair(padding));
  if (channelsLast && rule.ok())
    rule.shape = {rule.shape[0], rule.shape[2], rule.shape[3], rule.shape[1]};
  return addResult(loc, opName, rule, inputType.getElementType(), types);
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
LogicalResult inferPairLoss(std::optional<Location> loc,
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
  // Channels last: the rule's NCHW shapes, permuted in and out.
  bool last = adaptor.getChannelsLast();
  shape::Shape input = toShape(inputType);
  if (last && input.size() == 4)
    input = {input[0], input[3], input[1], input[2]};
  shape::Result rule = shape::conv2d(input, toShape(weightType), stride,
                                     padding, dilation, adaptor.getGroups());
  if (last && rule.ok())
    rule.shape = {rule.shape[0], rule.shape[2], rule.shape[3], rule.shape[1]};
  return addResult(loc, getOperationName(), rule, inputType.getElementType(),
                   types);
}

LogicalResult GlobalAvgPool2dOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  RankedTensorType inputType = tensorType(adaptor.getInput());
  if (failed(checkTensors(loc, getOperationName(), {inputType})))
    return failure();
  shape::Shape x = toShape(inputType);
  if (adaptor.getChannelsLast() && x.size() == 4)
    x = {x[0], x[3], x[1], x[2]};
  return addResult(loc, getOperationName(), shape::globalPool2d(x),
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
