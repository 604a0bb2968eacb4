//===- SplitLargeFunctionsTest.cpp - Long steps become bounded pieces -----===//

#include "compiler/Target/Host/SplitLargeFunctions.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

namespace {

/// A step in the shape sinterc emits: every buffer pointer loaded from the
/// read-only table up front, then one kernel call per buffer, and a result
/// (the call to @count) that a later call uses.
std::string step(int buffers) {
  std::string ir = "declare void @kernel(ptr)\n"
                   "declare i64 @count()\n"
                   "declare void @report(i64)\n"
                   "define void @step(ptr noalias readonly %table) {\n";
  for (int i = 0; i < buffers; ++i)
    ir += "  %p" + std::to_string(i) + " = getelementptr ptr, ptr %table, i64 " +
          std::to_string(i) + "\n  %b" + std::to_string(i) +
          " = load ptr, ptr %p" + std::to_string(i) + "\n";
  ir += "  %n = call i64 @count()\n";
  for (int i = 0; i < buffers; ++i)
    ir += "  call void @kernel(ptr %b" + std::to_string(i) + ")\n";
  ir += "  call void @report(i64 %n)\n  ret void\n}\n"
        "define void @small(ptr %x) {\n"
        "  call void @kernel(ptr %x)\n  ret void\n}\n";
  return ir;
}

std::unique_ptr<llvm::Module> parse(const std::string &ir,
                                    llvm::LLVMContext &context) {
  llvm::SMDiagnostic error;
  auto module = llvm::parseAssemblyString(ir, error, context);
  if (!module)
    error.print("test", llvm::errs());
  return module;
}

unsigned callsTo(const llvm::Module &module, llvm::StringRef callee) {
  unsigned calls = 0;
  for (const llvm::Function &function : module)
    for (const llvm::BasicBlock &block : function)
      for (const llvm::Instruction &inst : block)
        if (auto *call = llvm::dyn_cast<llvm::CallInst>(&inst))
          if (call->getCalledFunction() &&
              call->getCalledFunction()->getName() == callee)
            ++calls;
  return calls;
}

TEST(SplitLargeFunctions, EveryFunctionStaysNearTheLimit) {
  llvm::LLVMContext context;
  auto module = parse(step(200), context);
  ASSERT_TRUE(module);
  sinter::host::splitLargeFunctions(*module, 50);
  std::string errors;
  llvm::raw_string_ostream os(errors);
  ASSERT_FALSE(llvm::verifyModule(*module, &os)) << errors;
  unsigned pieces = 0;
  for (const llvm::Function &function : *module) {
    if (function.isDeclaration())
      continue;
    pieces += function.getName().contains(".piece");
    // A piece holds at most 50 of the step's instructions, plus the two
    // that load each buffer it uses again, and its inputs.
    EXPECT_LE(function.getInstructionCount(), 3u * 50 + 10)
        << function.getName().str();
  }
  // The 200 kernel calls at least; the loads move to their users.
  EXPECT_GE(pieces, 200u / 50);
  // Nothing lost, nothing duplicated.
  EXPECT_EQ(callsTo(*module, "kernel"), 201u);
  EXPECT_EQ(callsTo(*module, "count"), 1u);
  EXPECT_EQ(callsTo(*module, "report"), 1u);
}

TEST(SplitLargeFunctions, PiecesLoadTheirOwnBuffers) {
  llvm::LLVMContext context;
  auto module = parse(step(200), context);
  ASSERT_TRUE(module);
  sinter::host::splitLargeFunctions(*module, 50);
  // The step keeps no buffer pointer live: each piece loads what it uses
  // from the table, so the step itself loads nothing.
  for (const llvm::BasicBlock &block : *module->getFunction("step"))
    for (const llvm::Instruction &inst : block)
      EXPECT_FALSE(llvm::isa<llvm::LoadInst>(inst) &&
                   llvm::isa<llvm::Argument>(
                       llvm::getLoadStorePointerOperand(&inst)
                           ->stripInBoundsOffsets()))
          << "the step loads a buffer pointer itself";
}

TEST(SplitLargeFunctions, ShortFunctionsAreLeftAlone) {
  llvm::LLVMContext context;
  auto module = parse(step(10), context);
  ASSERT_TRUE(module);
  sinter::host::splitLargeFunctions(*module, 50);
  for (const llvm::Function &function : *module)
    EXPECT_FALSE(function.getName().contains(".piece"));
  EXPECT_EQ(module->getFunction("step")->size(), 1u);
}

} // namespace
