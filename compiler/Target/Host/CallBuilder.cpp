//===- CallBuilder.cpp - Calls into the runtime's C ABI -------------------===//

#include "compiler/Target/Host/CallBuilder.h"

#include "compiler/Target/Host/SourceText.h"
#include "dialects/Sinter/IR/SinterAttrs.h"
#include "runtime/contract/AbiNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace sinter::host {

Value CallBuilder::pointer(Value memref) {
  Location loc = memref.getLoc();
  auto type = cast<MemRefType>(memref.getType());
  Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  // A view (a slice at a run-time offset) starts `offset` elements past its
  // buffer's aligned pointer.
  if (!type.getLayout().isIdentity()) {
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
    int64_t bytes = (type.getElementTypeBitWidth() + 7) / 8;
    Value offset = arith::MulIOp::create(
        b, loc, meta.getOffset(), arith::ConstantIndexOp::create(b, loc, bytes));
    index = arith::AddIOp::create(b, loc, index, offset);
  }
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return LLVM::IntToPtrOp::create(b, loc,
                                  LLVM::LLVMPointerType::get(b.getContext()), i64);
}

Value CallBuilder::nullPointer(Location loc) {
  return LLVM::ZeroOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()));
}

Value CallBuilder::constant(Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
}

ValueRange CallBuilder::call(Location loc, StringRef name, ValueRange args,
                             TypeRange results) {
  auto callee = module.lookupSymbol<func::FuncOp>(name);
  if (!callee) {
    OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
    callee = func::FuncOp::create(
        top, loc, name, top.getFunctionType(args.getTypes(), results));
    callee.setPrivate();
  }
  return func::CallOp::create(b, loc, callee, args).getResults();
}

void CallBuilder::libraryCall(Location loc, StringRef name, ValueRange args) {
  std::string text = sourceWithCaller(loc);
  SmallVector<Attribute> sites;
  if (ArrayAttr known = attrs::librarySites.get(module))
    sites.assign(known.begin(), known.end());
  StringAttr site = b.getStringAttr(text);
  int64_t index = llvm::find(sites, site) - sites.begin();
  if (index == int64_t(sites.size())) {
    sites.push_back(site);
    attrs::librarySites.set(module, b.getArrayAttr(sites));
  }
  call(loc, abi::sinter_rt_library_site, {constant(loc, index)});
  call(loc, name, args);
}

void addByteConstant(OpBuilder &b, Location loc, StringRef name,
                     StringRef bytes) {
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), bytes.size());
  LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                         LLVM::Linkage::External, name, b.getStringAttr(bytes));
  LLVM::GlobalOp::create(b, loc, b.getI64Type(), /*isConstant=*/true,
                         LLVM::Linkage::External, (name + "_size").str(),
                         b.getI64IntegerAttr(bytes.size()));
}

} // namespace sinter::host
