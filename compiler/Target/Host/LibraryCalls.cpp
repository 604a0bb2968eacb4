//===- LibraryCalls.cpp - Matmul and convolution to the device library ---===//

#include "compiler/MemoryPlan/MemoryPlanner.h"
#include "compiler/Target/Host/CallBuilder.h"
#include "compiler/Target/Host/MatmulExtents.h"
#include "compiler/Target/Host/MatmulForm.h"
#include "compiler/Target/Host/MemoryOpBefore.h"
#include "compiler/Target/Host/Passes.h"
#include "runtime/contract/AbiNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace sinter::host {
#define GEN_PASS_DEF_LIBRARYCALLS
#include "compiler/Target/Host/Passes.h.inc"

namespace {

/// A dense buffer the library can take as a pointer.
bool isDense(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.hasStaticShape() && type.getLayout().isIdentity();
}

bool isDenseF32(Value v) {
  return isDense(v) && cast<MemRefType>(v.getType()).getElementType().isF32();
}

/// The elements between consecutive rows of a matrix the library can read
/// in place: its row length when dense; on CUDA, also a static view whose
/// rows are padded (sinter-cuda-pitch-matmul-rows) and that starts as
/// aligned as the plan's buffers (what cuBLASLt is told of every pointer).
std::optional<int64_t> leadingDimension(Value v, StringRef device) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  if (type.getLayout().isIdentity())
    return type.getRank() == 0 ? 1 : type.getShape().back();
  SmallVector<int64_t> strides;
  int64_t offset;
  if (device != "cuda" || type.getRank() != 2 ||
      failed(type.getStridesAndOffset(strides, offset)) || strides[1] != 1 ||
      ShapedType::isDynamic(strides[0]) || strides[0] < type.getDimSize(1) ||
      ShapedType::isDynamic(offset) ||
      uint64_t(offset) * (type.getElementTypeBitWidth() / 8) % memory::kBufferAlignment)
    return std::nullopt;
  return strides[0];
}

Type elementOf(Value v) { return cast<MemRefType>(v.getType()).getElementType(); }

/// The library's name for a matmul's types: f32; bf16 inputs into an f32
/// result (compute: BF16); all bf16, the f32 sum rounded once as it is
/// written (activations: BF16); none for any other mix, or for an operand
/// it cannot read in place.
StringRef matmulTypes(linalg::LinalgOp op, StringRef device) {
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1], c = op.getDpsInits()[0];
  if (!leadingDimension(a, device) || !leadingDimension(b, device) ||
      !leadingDimension(c, device) || elementOf(a) != elementOf(b))
    return "";
  Type inputs = elementOf(a), result = elementOf(c);
  if (inputs.isF32() && result.isF32())
    return "f32";
  if (inputs.isBF16())
    return result.isF32() ? "bf16" : result.isBF16() ? "bf16_rounded" : "";
  return "";
}

/// The fill of zeros that writes `op`'s output just before it, if any.
linalg::FillOp zerosBefore(linalg::LinalgOp op) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(memoryOpBefore(op));
  return fill && fill.getDpsInits()[0] == op.getDpsInits()[0] && fillsZeros(fill)
             ? fill
             : linalg::FillOp();
}

/// The broadcast of a bias over the rows of `op`'s output, written just
/// before it (sinter-matmul-bias), if any: of the output's element type.
linalg::BroadcastOp biasBefore(linalg::LinalgOp op) {
  auto rows = dyn_cast_or_null<linalg::BroadcastOp>(memoryOpBefore(op));
  if (!rows || rows.getInit() != op.getDpsInits()[0] || !isDense(rows.getInput()) ||
      elementOf(rows.getInput()) != elementOf(rows.getInit()) ||
      cast<MemRefType>(rows.getInput().getType()).getRank() != 1 ||
      rows.getDimensions() != ArrayRef<int64_t>{0})
    return {};
  return rows;
}

/// C[batch, m, n] (+)= A[batch, m, k] @ B[batch or 1, k, n], with A stored as
/// [k, m] when `transposedA` and B as [n, k] when `transposedB` (each
/// batch's). linalg adds the product to C; when C was just filled with
/// zeros the fill is dropped and the library writes C; when C was just
/// filled with a bias's rows, the library adds the bias as it writes C;
/// otherwise it adds into C.
void callMatmul(ModuleOp module, StringRef device, linalg::LinalgOp op, bool batched,
                bool transposedA = false, bool transposedB = false) {
  Value a = op.getDpsInputs()[0], bm = op.getDpsInputs()[1], c = op.getDpsInits()[0];
  auto at = cast<MemRefType>(a.getType());
  auto bt = cast<MemRefType>(bm.getType());
  int64_t batch = batched ? at.getDimSize(0) : 1;
  int64_t m = at.getDimSize(at.getRank() - (transposedA ? 1 : 2)),
          k = at.getDimSize(at.getRank() - (transposedA ? 2 : 1));
  int64_t n = bt.getDimSize(bt.getRank() - (transposedB ? 2 : 1));
  bool accumulate = true;
  Value bias;
  if (linalg::FillOp zeros = zerosBefore(op)) {
    zeros->erase();
    accumulate = false;
  } else if (linalg::BroadcastOp rows = batched ? nullptr : biasBefore(op)) {
    bias = rows.getInput();
    rows->erase();
    accumulate = false;
  }
  // On CUDA, over extents padded to multiples of 16 where the operands have
  // the room (their rows padded by sinter-cuda-pitch-matmul-rows).
  bool padded = false;
  if (auto mm = dyn_cast<linalg::MatmulOp>(op.getOperation()); mm && device == "cuda") {
    MatmulExtents extents = paddedExtents(mm, {transposedA, transposedB}, bool(bias));
    padded = extents.n != n || extents.k != k;
    n = extents.n;
    k = extents.k;
  }
  CallBuilder cb(module, op);
  Location loc = op.getLoc();
  SmallVector<Value> args = {cb.pointer(a), cb.pointer(bm), cb.pointer(c)};
  int64_t lda = *leadingDimension(a, device), ldb = *leadingDimension(bm, device),
          ldc = *leadingDimension(c, device);
  // Rows padded past their length take the call with leading dimensions.
  bool pitched = padded || !isDense(a) || !isDense(bm) || !isDense(c);
  if (!pitched)
    args.push_back(cb.constant(loc, batch));
  for (int64_t v :
       {m, n, k,
        int64_t((batched ? 0 : 1) | (transposedB ? 2 : 0) | (transposedA ? 4 : 0) |
                (accumulate ? 8 : 0) | (bias ? 16 : 0))})
    args.push_back(cb.constant(loc, v));
  args.push_back(bias ? cb.pointer(bias) : cb.nullPointer(loc));
  if (pitched)
    for (int64_t ld : {lda, ldb, ldc})
      args.push_back(cb.constant(loc, ld));
  std::string call = ("matmul_" + Twine(pitched ? "pitched_" : "") + matmulTypes(op, device)).str();
  std::string_view name = abi::libraryCall(device, call);
  assert(!name.empty() && "a matmul abi_names.def does not list");
  cb.libraryCall(loc, name, args);
  op->erase();
}

/// y = conv(x, w) of an x already padded (no padding left to the library),
/// when y was just filled with zeros (the fill is dropped: the library
/// writes y); any other convolution stays loops.
void callConv(ModuleOp module, StringRef device, linalg::Conv2DNchwFchwOp op) {
  linalg::FillOp zeros = zerosBefore(op);
  if (!zeros)
    return;
  zeros->erase();
  Value x = op.getDpsInputs()[0], w = op.getDpsInputs()[1], y = op.getDpsInits()[0];
  ArrayRef<int64_t> xs = cast<MemRefType>(x.getType()).getShape(),
                    ws = cast<MemRefType>(w.getType()).getShape(),
                    ys = cast<MemRefType>(y.getType()).getShape();
  auto strides = llvm::to_vector(op.getStrides().getValues<int64_t>());
  auto dilations = llvm::to_vector(op.getDilations().getValues<int64_t>());
  CallBuilder cb(module, op);
  Location loc = op.getLoc();
  SmallVector<Value> args = {cb.pointer(x), cb.pointer(w), cb.pointer(y)};
  const int64_t noPadding = 0;
  for (int64_t v :
       {xs[0], xs[1], xs[2], xs[3], ws[0], ws[2], ws[3], ys[2], ys[3], strides[0],
        strides[1], dilations[0], dilations[1], noPadding, noPadding})
    args.push_back(cb.constant(loc, v));
  cb.libraryCall(loc, abi::libraryCall(device, "conv2d_f32"), args);
  op->erase();
}

bool allDenseF32(linalg::LinalgOp op) {
  return llvm::all_of(op->getOperands(), isDenseF32);
}

struct LibraryCalls : public impl::LibraryCallsBase<LibraryCalls> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (device != "cpu" && device != "cuda") {
      module.emitError("sinter-library-calls: unknown device '")
          << device << "'; expected cpu or cuda";
      return signalPassFailure();
    }
    SmallVector<Operation *> ops;
    module.walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation())
              ? !matmulTypes(op, device).empty()
              : isa<linalg::Conv2DNchwFchwOp>(op.getOperation()) && allDenseF32(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      // Only the forms the library reads in place; the rest stay loops.
      if (auto mm = dyn_cast<linalg::MatmulOp>(op)) {
        std::optional<MatmulForm> form = matmulFormOf(mm);
        if (form)
          callMatmul(module, device, mm, /*batched=*/false, form->transposedA,
                     form->transposedB);
      } else if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(op)) {
        std::optional<MatmulForm> form = batchMatmulFormOf(bmm);
        // The CUDA device reads a batched A as stored only (abi.h).
        if (form && !(device == "cuda" && form->transposedA))
          callMatmul(module, device, bmm, /*batched=*/true, form->transposedA,
                     form->transposedB);
      } else {
        callConv(module, device, cast<linalg::Conv2DNchwFchwOp>(op));
      }
    }
    // A bf16 result is the library's f32 sum rounded (activations: BF16);
    // as loops it would be summed in bf16.
    WalkResult unsupported = module.walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation()) ||
          !op.hasPureBufferSemantics() || !elementOf(op.getDpsInits()[0]).isBF16())
        return WalkResult::advance();
      op.emitError("internal error: a matmul with a bf16 result that the library "
                   "cannot take in place");
      return WalkResult::interrupt();
    });
    if (unsupported.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
} // namespace sinter::host
