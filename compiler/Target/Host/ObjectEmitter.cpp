//===- ObjectEmitter.cpp - LLVM IR to a native object file ----------------===//

#include "compiler/Target/Host/ObjectEmitter.h"

#include "compiler/Target/Host/SplitLargeFunctions.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

namespace sinter::host {

/// Longer functions are split before LLVM sees them: register allocation is
/// superlinear in a function's length.
constexpr unsigned kMaxFunctionInstructions = 1000;

static llvm::Expected<std::unique_ptr<llvm::TargetMachine>> hostMachine() {
  // Once, even when parts of a step are compiled on several threads.
  static const bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError("no LLVM target for " + triple.str() +
                                   ": " + error);
  llvm::SubtargetFeatures features;
  for (const auto &[name, enabled] : llvm::sys::getHostCPUFeatures())
    features.AddFeature(name, enabled);
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features.getString(),
      llvm::TargetOptions(), llvm::Reloc::PIC_));
  if (!machine)
    return llvm::createStringError("cannot create a target machine for " +
                                   triple.str());
  return machine;
}

llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &context) {
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, context, "sinter");
  if (!llvmModule)
    return llvm::createStringError("translation to LLVM IR failed");
  auto machine = hostMachine();
  if (!machine)
    return machine.takeError();
  llvmModule->setDataLayout((*machine)->createDataLayout());
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  splitLargeFunctions(*llvmModule, kMaxFunctionInstructions);
  return llvmModule;
}

llvm::Error optimizeLLVMIR(llvm::Module &module) {
  auto machine = hostMachine();
  if (!machine)
    return machine.takeError();
  return mlir::makeOptimizingTransformer(3, 0, machine->get())(&module);
}

llvm::Error emitObject(llvm::Module &module, llvm::raw_pwrite_stream &os) {
  auto machine = hostMachine();
  if (!machine)
    return machine.takeError();
  llvm::legacy::PassManager pm;
  if ((*machine)->addPassesToEmitFile(pm, os, nullptr,
                                      llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("the target cannot emit object files");
  pm.run(module);
  return llvm::Error::success();
}

} // namespace sinter::host
