//===- ArgumentSlots.cpp - Values in the runtime's 8-byte slots -----------===//

#include "compiler/Target/CUDA/ArgumentSlots.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <algorithm>

using namespace mlir;

namespace sinter::cuda {

FailureOr<Value> asSlot(OpBuilder &b, Location loc, Value v) {
  Type i64 = b.getI64Type();
  Type t = v.getType();
  if (isa<MemRefType>(t)) {
    Value p = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, v);
    return Value(arith::IndexCastOp::create(b, loc, i64, p));
  }
  if (isa<LLVM::LLVMPointerType>(t))
    return Value(LLVM::PtrToIntOp::create(b, loc, i64, v));
  if (t.isIndex())
    return Value(arith::IndexCastOp::create(b, loc, i64, v));
  if (auto ft = dyn_cast<FloatType>(t)) {
    Value bits = arith::BitcastOp::create(b, loc, b.getIntegerType(ft.getWidth()), v);
    return ft.getWidth() == 64 ? bits : Value(arith::ExtUIOp::create(b, loc, i64, bits));
  }
  if (auto it = dyn_cast<IntegerType>(t)) {
    if (it.getWidth() == 64)
      return v;
    if (it.getWidth() < 64)
      return Value(arith::ExtUIOp::create(b, loc, i64, v));
  }
  return failure();
}

Value slotArray(Operation *function, int64_t count) {
  auto f = cast<func::FuncOp>(function);
  OpBuilder b = OpBuilder::atBlockBegin(&f.getBody().front());
  return memref::AllocaOp::create(
      b, f.getLoc(), MemRefType::get({std::max<int64_t>(1, count)}, b.getI64Type()));
}

} // namespace sinter::cuda
