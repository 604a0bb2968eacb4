//===- EntryPoints.cpp - C entry points and embedded plans ----------------===//
//
// The runtime does not know a step's arity when it is built, so each step
// takes an array of buffer pointers behind an entry point of a fixed name,
// with its plan (which pointer is which) embedded next to it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Host/CallBuilder.h"
#include "compiler/Target/Host/Passes.h"
#include "compiler/Target/Host/StepPlan.h"
#include "dialects/Sinter/IR/SinterAttrs.h"
#include "runtime/contract/AbiNames.h"
#include "runtime/contract/abi.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace sinter::host {
#define GEN_PASS_DEF_ENTRYPOINTS
#include "compiler/Target/Host/Passes.h.inc"

namespace {

/// The step takes the runtime's buffer table instead of one pointer per
/// buffer, loading each where the old argument was: a step of a deep model
/// has thousands of buffers, and as arguments they would all be live through
/// the whole step. The table is read-only and unaliased while the step runs,
/// so code generation may load a pointer again wherever it is used.
void takeBufferTable(LLVM::LLVMFuncOp step) {
  MLIRContext *context = step.getContext();
  auto ptr = LLVM::LLVMPointerType::get(context);
  Block &entry = step.getBody().front();
  unsigned buffers = entry.getNumArguments();
  BlockArgument table = entry.insertArgument(0u, ptr, step.getLoc());
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  for (unsigned i = 0; i < buffers; ++i) {
    BlockArgument buffer = entry.getArgument(i + 1);
    Value slot = LLVM::GEPOp::create(b, buffer.getLoc(), ptr, ptr, table,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    buffer.replaceAllUsesWith(
        LLVM::LoadOp::create(b, buffer.getLoc(), ptr, slot));
  }
  entry.eraseArguments(1, buffers);
  step.setFunctionType(
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context), {ptr}));
  Builder attrs(context);
  step.setArgAttrsAttr(attrs.getArrayAttr(attrs.getDictionaryAttr(
      {attrs.getNamedAttr(LLVM::LLVMDialect::getNoAliasAttrName(),
                          attrs.getUnitAttr()),
       attrs.getNamedAttr(LLVM::LLVMDialect::getReadonlyAttrName(),
                          attrs.getUnitAttr())})));
}

LogicalResult addEntryPoint(LLVM::LLVMFuncOp step, StringRef phase) {
  LLVM::LLVMFunctionType type = step.getFunctionType();
  auto ptr = LLVM::LLVMPointerType::get(step.getContext());
  if (!isa<LLVM::LLVMVoidType>(type.getReturnType()) ||
      llvm::any_of(type.getParams(), [&](Type t) { return t != ptr; }))
    return step.emitError("a step must take only buffer pointers and return "
                          "nothing; was it lowered with the bare-pointer "
                          "calling convention and out-params?");
  takeBufferTable(step);
  OpBuilder b(step);
  Location loc = step.getLoc();
  auto entry = LLVM::LLVMFuncOp::create(b, loc, phase == "train" ? abi::sinter_step_train : abi::sinter_step_eval,
                                        step.getFunctionType());
  Block *body = entry.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  LLVM::CallOp::create(b, loc, step, body->getArguments());
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return success();
}

/// The module-wide symbols of abi.h: the ABI version, the embedded config,
/// from the module's `sinter.config` and `sinter.config_dir`, and the
/// library calls' sites (`sinter.library_sites`).
void addProgramConstants(ModuleOp module) {
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = module.getLoc();
  LLVM::GlobalOp::create(b, loc, b.getI64Type(), /*isConstant=*/true,
                         LLVM::Linkage::External, abi::sinter_abi_version,
                         b.getI64IntegerAttr(SINTER_ABI_VERSION));
  auto text = [](StringAttr value) {
    return value ? value.getValue() : StringRef();
  };
  addByteConstant(b, loc, abi::sinter_config, text(attrs::config.get(module)));
  addByteConstant(b, loc, abi::sinter_config_dir, text(attrs::configDir.get(module)));
  // Each library call's op, by the index the call names (CallBuilder).
  if (ArrayAttr sites = attrs::librarySites.get(module)) {
    std::string table;
    for (Attribute site : sites)
      table += cast<StringAttr>(site).getValue().str() + '\0';
    addByteConstant(b, loc, abi::sinter_library_sites, table);
  }
}

struct EntryPoints : public impl::EntryPointsBase<EntryPoints> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    addProgramConstants(module);
    for (auto step : llvm::to_vector(module.getOps<LLVM::LLVMFuncOp>())) {
      auto plan = attrs::plan.get(step);
      auto phase = attrs::phase.get(step);
      if (!plan || !phase)
        continue;
      if (failed(addEntryPoint(step, phase.getValue())))
        return signalPassFailure();
      std::string bytes = *completePlan(step);
      OpBuilder b(step);
      addByteConstant(b, step.getLoc(),
                      phase == "train" ? abi::sinter_plan_train : abi::sinter_plan_eval, bytes);
    }
  }
};

} // namespace
} // namespace sinter::host
