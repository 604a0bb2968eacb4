//===- PitchMatmulRows.cpp - Matmul operands in rows of 16-byte multiples ===//
//
// cuBLASLt's fast kernels (TMA on Hopper) need every row of every operand
// to start on a 16-byte boundary, and run at full rate on extents that are
// multiples of 16. A row of GPT-2's 50,257 logits is 201,028 bytes in f32
// and 100,514 in bf16, and with it the language model head's matmuls ran
// at a sixth of the others' rate. A tensor that a matmul reads or writes
// and that the step makes itself (not a parameter, whose layout the
// runtime owns) gets a buffer with rows padded to 16 elements, and the
// matmul and everything else use a view of its first columns: the same
// values, rows 16-byte aligned. A matmul's second operand whose rows are
// one of its extents (the head's bf16 copy of the embedding) gets padded
// rows as well, so that sinter-library-calls can run the matmul over the
// padded extents (the padding's products never reach the values).
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CUDA/Passes.h"
#include "compiler/Target/Host/MatmulExtents.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDAPITCHMATMULROWS
#include "compiler/Target/CUDA/Passes.h.inc"

namespace {

constexpr int64_t kRowAlignmentBytes = 16;

/// Whether a reshape keeps the innermost dimension as it is: the rows stay
/// rows, so a padded one stays a view of the padded buffer.
bool keepsRows(Operation *op) {
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return host::keepsRows(expand);
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return host::keepsRows(collapse);
  return false;
}

/// The tensor.empty whose buffer `v` will be, through the ops that write
/// it in place (a fill, a generic's init) and, with `throughReshapes`,
/// reshapes that keep its rows.
tensor::EmptyOp emptyBehind(Value v, bool throughReshapes = true) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto empty = dyn_cast<tensor::EmptyOp>(def))
      return empty;
    if (throughReshapes && keepsRows(def)) {
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

/// `empty` as the leading part of an empty tensor of `shape`.
void widen(tensor::EmptyOp empty, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(empty.getType());
  OpBuilder b(empty);
  Location loc = empty.getLoc();
  auto wide = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> zeros(rank, b.getIndexAttr(0)), ones(rank, b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes;
  for (int64_t size : type.getShape())
    sizes.push_back(b.getIndexAttr(size));
  auto part = tensor::ExtractSliceOp::create(b, loc, type, wide, zeros, sizes, ones);
  empty.replaceAllUsesWith(part.getResult());
  empty.erase();
}

/// A tensor the step makes, of f32 or bf16, with a static shape.
bool isPaddable(tensor::EmptyOp empty) {
  auto type = cast<RankedTensorType>(empty.getType());
  Type element = type.getElementType();
  return type.getRank() >= 2 && type.hasStaticShape() &&
         (element.isF32() || element.isBF16());
}

struct CUDAPitchMatmulRows : public impl::CUDAPitchMatmulRowsBase<CUDAPitchMatmulRows> {
  void runOnOperation() override {
    // Each padded tensor's new shape.
    llvm::MapVector<tensor::EmptyOp, SmallVector<int64_t>> shapes;
    auto shapeOf = [&](tensor::EmptyOp empty) -> SmallVector<int64_t> & {
      auto it = shapes.find(empty);
      if (it == shapes.end())
        it = shapes.insert({empty, SmallVector<int64_t>(empty.getType().getShape())})
                 .first;
      return it->second;
    };
    getOperation().walk([&](linalg::MatmulOp mm) {
      if (!mm.hasPureTensorSemantics())
        return;
      // Rows whose length is not a multiple of 16 bytes.
      for (Value operand : mm->getOperands()) {
        tensor::EmptyOp empty = emptyBehind(operand);
        if (!empty || !isPaddable(empty))
          continue;
        RankedTensorType type = empty.getType();
        int64_t row = type.getShape().back();
        if (row * (type.getElementTypeBitWidth() / 8) % kRowAlignmentBytes)
          shapeOf(empty).back() = llvm::alignTo(row, host::kPaddedExtentMultiple);
      }
      // A second operand made where it is used, whose rows are an extent
      // of the product that is not a multiple of 16.
      tensor::EmptyOp empty =
          emptyBehind(mm.getDpsInputs()[1], /*throughReshapes=*/false);
      if (empty && isPaddable(empty) && empty.getType().getRank() == 2 &&
          empty.getType().getDimSize(0) % host::kPaddedExtentMultiple)
        shapeOf(empty).front() =
            llvm::alignTo(empty.getType().getDimSize(0), host::kPaddedExtentMultiple);
    });
    // Which operands of which matmul are about to be widened: the library
    // call may use their padding, theirs alone (sinter.padded_operands).
    llvm::SetVector<tensor::EmptyOp> widened;
    for (auto &[empty, shape] : shapes)
      if (ArrayRef<int64_t>(shape) != empty.getType().getShape() &&
          onlyIndexedUses(empty))
        widened.insert(empty);
    getOperation().walk([&](linalg::MatmulOp mm) {
      SmallVector<int64_t> padded;
      for (auto [i, operand] : llvm::enumerate(mm->getOperands()))
        if (tensor::EmptyOp empty = emptyBehind(operand);
            empty && widened.contains(empty))
          padded.push_back(int64_t(i));
      if (!padded.empty())
        attrs::paddedOperands.set(mm, DenseI64ArrayAttr::get(mm.getContext(), padded));
    });
    for (tensor::EmptyOp empty : widened)
      widen(empty, shapes.lookup(empty));
  }
};

} // namespace
} // namespace sinter::cuda
