//===- PitchMatmulRows.cpp - Matmul operands in rows of 16-byte multiples ===//
//
// cuBLASLt's fast kernels (TMA on Hopper) need every row of every operand
// to start on a 16-byte boundary. A row of GPT-2's 50,257 logits is
// 201,028 bytes in f32 and 100,514 in bf16, and with it the language
// model head's three matmuls ran at a sixth of the others' rate. A tensor
// that a matmul reads or writes and that the step makes itself (not a
// parameter, whose layout the runtime owns) gets a buffer with a few more
// elements a row, and the matmul and everything else use a view of the
// first columns: the same values, rows 16-byte aligned.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CUDA/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDAPITCHMATMULROWS
#include "compiler/Target/CUDA/Passes.h.inc"
} // namespace sinter::cuda

using namespace mlir;

namespace sinter::cuda {
namespace {

constexpr int64_t kRowAlignmentBytes = 16;

/// Whether a reshape keeps the innermost dimension as it is: the rows stay
/// rows, so a padded one stays a view of the padded buffer.
template <typename Reshape> bool keepsRows(Reshape op) {
  SmallVector<ReassociationIndices> groups = op.getReassociationIndices();
  return !groups.empty() && groups.back().size() == 1;
}

bool keepsRows(Operation *op) {
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return keepsRows(expand);
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return keepsRows(collapse);
  return false;
}

/// The tensor.empty whose buffer `v` will be, through the ops that write
/// it in place (a fill, a generic's init) and reshapes that keep its rows.
tensor::EmptyOp emptyBehind(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto empty = dyn_cast<tensor::EmptyOp>(def))
      return empty;
    if (keepsRows(def)) {
      v = def->getOperand(0);
    } else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(def);
               linalgOp && linalgOp.hasPureTensorSemantics()) {
      v = linalgOp.getDpsInits()[cast<OpResult>(v).getResultNumber()];
    } else {
      return {};
    }
  }
  return {};
}

/// Whether every use of `empty`'s buffer reads or writes it in place
/// through indices, so that a view of a wider buffer serves the same: linalg
/// ops other than those the libraries take dense (batched matmuls,
/// convolutions), element reads, and reshapes that keep the rows. A
/// call, a return, a loop's result or any other op may need the dense
/// layout, and keeps it.
bool onlyIndexedUses(tensor::EmptyOp empty) {
  SmallVector<Value> values = {empty.getResult()};
  llvm::SmallPtrSet<Value, 8> seen;
  while (!values.empty()) {
    Value v = values.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isa<tensor::ExtractOp, tensor::DimOp>(user))
        continue;
      if (keepsRows(user)) {
        values.push_back(user->getResult(0));
        continue;
      }
      auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
      if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
          isa<linalg::BatchMatmulOp, linalg::ConvolutionOpInterface>(user))
        return false;
      if (linalgOp.isDpsInit(&use))
        values.push_back(linalgOp.getTiedOpResult(&use));
    }
  }
  return true;
}

/// `empty` as the first columns of a buffer whose rows are `padded`
/// elements long.
void pitch(tensor::EmptyOp empty, int64_t padded) {
  auto type = cast<RankedTensorType>(empty.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = padded;
  OpBuilder b(empty);
  Location loc = empty.getLoc();
  auto wide = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> zeros(rank, b.getIndexAttr(0)), ones(rank, b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes;
  for (int64_t size : type.getShape())
    sizes.push_back(b.getIndexAttr(size));
  auto columns = tensor::ExtractSliceOp::create(b, loc, type, wide, zeros, sizes, ones);
  empty.replaceAllUsesWith(columns.getResult());
  empty.erase();
}

struct CUDAPitchMatmulRows : public impl::CUDAPitchMatmulRowsBase<CUDAPitchMatmulRows> {
  void runOnOperation() override {
    llvm::SetVector<tensor::EmptyOp> empties;
    getOperation().walk([&](linalg::MatmulOp mm) {
      if (!mm.hasPureTensorSemantics())
        return;
      for (Value operand : mm->getOperands())
        if (tensor::EmptyOp empty = emptyBehind(operand))
          empties.insert(empty);
    });
    for (tensor::EmptyOp empty : empties) {
      auto type = cast<RankedTensorType>(empty.getType());
      Type element = type.getElementType();
      if (type.getRank() < 2 || !type.hasStaticShape() ||
          !(element.isF32() || element.isBF16()))
        continue;
      int64_t bytes = element.getIntOrFloatBitWidth() / 8;
      int64_t row = type.getShape().back() * bytes;
      if (row % kRowAlignmentBytes == 0 || !onlyIndexedUses(empty))
        continue;
      pitch(empty, llvm::alignTo(row, kRowAlignmentBytes) / bytes);
    }
  }
};

} // namespace
} // namespace sinter::cuda
