//===- LibraryCalls.cpp - f32 matmul and convolution to the runtime -------===//

#include "compiler/Target/Host/CallBuilder.h"
#include "compiler/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace sinter::cpu {
#define GEN_PASS_DEF_CPULIBRARYCALLS
#include "compiler/Target/CPU/Passes.h.inc"
} // namespace sinter::cpu

using namespace mlir;

namespace sinter::cpu {
namespace {

/// A dense f32 buffer the library can take as a pointer.
bool isDenseF32(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.getElementType().isF32() && type.hasStaticShape() &&
         type.getLayout().isIdentity();
}

/// True for linalg.matmul's maps of C = A @ transpose(B).
bool isTransposedB(linalg::MatmulOp op) {
  MLIRContext *ctx = op.getContext();
  AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  SmallVector<AffineMap> want = {AffineMap::get(3, 0, {m, k}, ctx),
                                 AffineMap::get(3, 0, {n, k}, ctx),
                                 AffineMap::get(3, 0, {m, n}, ctx)};
  return op.getIndexingMapsArray() == want;
}

/// C[batch, m, n] = A[batch, m, k] @ B[batch or 1, k, n], or with B stored as
/// [n, k] when `transposedB`.
void callMatmul(ModuleOp module, linalg::LinalgOp op, bool batched,
                bool transposedB = false) {
  Value a = op.getDpsInputs()[0], bm = op.getDpsInputs()[1],
        c = op.getDpsInits()[0];
  auto at = cast<MemRefType>(a.getType());
  auto bt = cast<MemRefType>(bm.getType());
  int64_t batch = batched ? at.getDimSize(0) : 1;
  int64_t m = at.getDimSize(at.getRank() - 2), k = at.getDimSize(at.getRank() - 1);
  int64_t n = bt.getDimSize(bt.getRank() - (transposedB ? 2 : 1));
  host::CallBuilder cb(module, op);
  Location loc = op.getLoc();
  cb.call(loc, "sinter_cpu_matmul_f32",
          {cb.pointer(a), cb.pointer(bm), cb.pointer(c), cb.constant(loc, batch),
           cb.constant(loc, m), cb.constant(loc, n), cb.constant(loc, k),
           cb.constant(loc, (batched ? 0 : 1) | (transposedB ? 2 : 0))});
  op->erase();
}

void callConv(ModuleOp module, linalg::Conv2DNchwFchwOp op) {
  Value x = op.getDpsInputs()[0], w = op.getDpsInputs()[1],
        y = op.getDpsInits()[0];
  ArrayRef<int64_t> xs = cast<MemRefType>(x.getType()).getShape(),
                    ws = cast<MemRefType>(w.getType()).getShape(),
                    ys = cast<MemRefType>(y.getType()).getShape();
  auto strides = llvm::to_vector(op.getStrides().getValues<int64_t>());
  auto dilations = llvm::to_vector(op.getDilations().getValues<int64_t>());
  host::CallBuilder cb(module, op);
  Location loc = op.getLoc();
  SmallVector<Value> args = {cb.pointer(x), cb.pointer(w), cb.pointer(y)};
  for (int64_t v : {xs[0], xs[1], xs[2], xs[3], ws[0], ws[2], ws[3], ys[2],
                    ys[3], strides[0], strides[1], dilations[0], dilations[1]})
    args.push_back(cb.constant(loc, v));
  cb.call(loc, "sinter_cpu_conv2d_f32", args);
  op->erase();
}

bool allDenseF32(linalg::LinalgOp op) {
  return llvm::all_of(op->getOperands(), isDenseF32);
}

struct CPULibraryCalls : public impl::CPULibraryCallsBase<CPULibraryCalls> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> ops;
    module.walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && allDenseF32(op) &&
          isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNchwFchwOp>(
              op.getOperation()))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      // Only the plain forms: no transposed or broadcast indexing maps.
      if (auto mm = dyn_cast<linalg::MatmulOp>(op)) {
        bool transposed = mm.hasUserDefinedMaps() && isTransposedB(mm);
        if (mm.hasUserDefinedMaps() && !transposed)
          continue;
        callMatmul(module, mm, /*batched=*/false, transposed);
      } else if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(op)) {
        if (bmm.hasUserDefinedMaps())
          continue;
        callMatmul(module, bmm, /*batched=*/true);
      } else {
        callConv(module, cast<linalg::Conv2DNchwFchwOp>(op));
      }
    }
  }
};

} // namespace
} // namespace sinter::cpu
