//===- CallBuilder.h - Calls into the runtime's C ABI -----------*- C++ -*-===//
//
// Compiled code reaches the runtime only through functions of abi.h. They
// take bare pointers and 64-bit integers; buffers here are static, dense
// memrefs (or dense views of them), so a call passes where each one's
// elements start.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TARGET_HOST_CALLBUILDER_H
#define SINTER_TARGET_HOST_CALLBUILDER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace sinter::host {

class CallBuilder {
public:
  /// Builds before `at`.
  CallBuilder(mlir::ModuleOp module, mlir::Operation *at)
      : module(module), b(at) {}

  /// Where a memref's elements start (its aligned pointer, plus its offset
  /// for a view), as `!llvm.ptr`.
  mlir::Value pointer(mlir::Value memref);
  /// A null `!llvm.ptr`: an optional buffer not given.
  mlir::Value nullPointer(mlir::Location loc);
  mlir::Value constant(mlir::Location loc, int64_t v);
  /// Calls `name`, declaring it on first use with these argument and result
  /// types; returns its results.
  mlir::ValueRange call(mlir::Location loc, llvm::StringRef name,
                        mlir::ValueRange args, mlir::TypeRange results = {});
  /// Calls the device library's function `name` for the op at `loc`, after
  /// naming that op's .sn position to the runtime (for the call's messages):
  /// its index in the module's table of library sites, added on first use.
  void libraryCall(mlir::Location loc, llvm::StringRef name, mlir::ValueRange args);

  mlir::OpBuilder &builder() { return b; }

private:
  mlir::ModuleOp module;
  mlir::OpBuilder b;
};

/// `name` (a constant byte array) and `name_size` (its length, i64), as
/// abi.h declares its embedded data, at `b`'s insertion point.
void addByteConstant(mlir::OpBuilder &b, mlir::Location loc,
                     llvm::StringRef name, llvm::StringRef bytes);

} // namespace sinter::host

#endif // SINTER_TARGET_HOST_CALLBUILDER_H
