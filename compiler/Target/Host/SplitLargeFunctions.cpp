//===- SplitLargeFunctions.cpp - No giant function reaches LLVM ----------===//
//
// Long blocks are cut into pieces, and each piece moves into a function of
// its own, never inlined back. What a piece uses from before it is computed
// again inside it when that is cheap and cannot change (address arithmetic,
// a buffer pointer loaded from the step's read-only table), so a piece's
// inputs are few: the table and what earlier pieces really computed. The
// inputs that remain cross in one struct.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Host/SplitLargeFunctions.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/CodeExtractor.h"

namespace sinter::host {

namespace {

/// Cuts `block` into pieces of `size` instructions, all of which can move:
/// the leading PHIs and allocas stay in `block`, and the block's terminator
/// in a block of its own.
llvm::SmallVector<llvm::BasicBlock *> cut(llvm::BasicBlock &block,
                                          unsigned size) {
  llvm::Instruction *start = &*block.getFirstNonPHIIt();
  while (llvm::isa<llvm::AllocaInst>(start))
    start = start->getNextNode();
  llvm::BasicBlock *rest = &block;
  if (start != &block.front() || block.isEntryBlock())
    rest = block.splitBasicBlock(start);
  llvm::SmallVector<llvm::BasicBlock *> pieces;
  while (rest->size() > 1) {
    unsigned length = std::min<size_t>(size, rest->size() - 1);
    llvm::BasicBlock *next =
        rest->splitBasicBlock(std::next(rest->begin(), length));
    pieces.push_back(rest);
    rest = next;
  }
  return pieces;
}

/// A pointer into memory that nothing writes while the function runs: an
/// argument marked noalias and readonly, or an offset from one.
bool isUnchangingMemory(const llvm::Value *pointer) {
  if (auto *gep = llvm::dyn_cast<llvm::GetElementPtrInst>(pointer))
    if (gep->hasAllConstantIndices())
      pointer = gep->getPointerOperand();
  auto *argument = llvm::dyn_cast<llvm::Argument>(pointer);
  return argument && argument->hasNoAliasAttr() &&
         argument->onlyReadsMemory();
}

/// Whether `inst` can be computed again anywhere its operands are: no side
/// effects, and the same value wherever it is computed.
bool isRecomputable(const llvm::Instruction &inst) {
  if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&inst))
    return load->isSimple() && isUnchangingMemory(load->getPointerOperand());
  return llvm::isa<llvm::GetElementPtrInst, llvm::CastInst,
                   llvm::BinaryOperator, llvm::CmpInst>(inst) &&
         !inst.mayHaveSideEffects();
}

/// Computes again, at the start of `piece`, every recomputable value it uses
/// from outside (and their recomputable operands), up to `depth` levels.
class Recomputer {
public:
  explicit Recomputer(llvm::BasicBlock &piece)
      : piece(piece), insertion(&*piece.getFirstInsertionPt()) {}

  void run() {
    llvm::SmallVector<llvm::Instruction *> own;
    for (llvm::Instruction &inst : piece)
      own.push_back(&inst);
    for (llvm::Instruction *inst : own)
      for (llvm::Use &use : inst->operands())
        if (llvm::Value *local = localCopy(use.get(), kMaxDepth))
          use.set(local);
  }

private:
  static constexpr unsigned kMaxDepth = 8;

  /// The local copy of `value`, or null when it stays an input.
  llvm::Value *localCopy(llvm::Value *value, unsigned depth) {
    auto *inst = llvm::dyn_cast<llvm::Instruction>(value);
    if (!inst || inst->getParent() == &piece)
      return nullptr;
    if (auto known = copies.find(inst); known != copies.end())
      return known->second;
    if (depth == 0 || !isRecomputable(*inst))
      return nullptr;
    llvm::SmallVector<std::pair<unsigned, llvm::Value *>> operands;
    for (llvm::Use &use : inst->operands()) {
      llvm::Value *operand = use.get();
      if (llvm::isa<llvm::Constant, llvm::Argument>(operand))
        continue;
      llvm::Value *local = localCopy(operand, depth - 1);
      if (!local)
        return nullptr; // computed from something that must stay an input
      operands.push_back({use.getOperandNo(), local});
    }
    llvm::Instruction *copy = inst->clone();
    for (auto [index, local] : operands)
      copy->setOperand(index, local);
    copy->insertBefore(insertion->getIterator());
    copies[inst] = copy;
    return copy;
  }

  llvm::BasicBlock &piece;
  llvm::Instruction *insertion;
  llvm::DenseMap<llvm::Instruction *, llvm::Instruction *> copies;
};

/// Recomputes in each block but the entry what it uses from other blocks,
/// then drops what is no longer used.
void recomputeLocally(llvm::Function &function) {
  for (llvm::BasicBlock &block : function)
    if (!block.isEntryBlock())
      Recomputer(block).run();
  for (llvm::BasicBlock &block : llvm::reverse(function))
    for (llvm::Instruction &inst :
         llvm::make_early_inc_range(llvm::reverse(block)))
      if (isRecomputable(inst) && inst.use_empty())
        inst.eraseFromParent();
}

} // namespace

void splitLargeFunctions(llvm::Module &module, unsigned maxInstructions) {
  llvm::SmallVector<llvm::Function *> large;
  for (llvm::Function &function : module)
    if (!function.isDeclaration() &&
        function.getInstructionCount() > maxInstructions)
      large.push_back(&function);
  for (llvm::Function *function : large) {
    // Every block computes what it can itself, before and after the cuts: a
    // value kept live from an early block or piece to a later one would be
    // an output of the piece that computes it.
    recomputeLocally(*function);
    llvm::SmallVector<llvm::BasicBlock *> longBlocks;
    for (llvm::BasicBlock &block : *function)
      if (block.size() > maxInstructions)
        longBlocks.push_back(&block);
    llvm::SmallVector<llvm::BasicBlock *> pieces;
    for (llvm::BasicBlock *block : longBlocks)
      pieces.append(cut(*block, maxInstructions));
    recomputeLocally(*function);
    llvm::CodeExtractorAnalysisCache cache(*function);
    for (llvm::BasicBlock *piece : pieces) {
      if (piece->size() < 2)
        continue; // only its branch is left
      llvm::CodeExtractor extractor(
          {piece}, /*DT=*/nullptr, /*AggregateArgs=*/true, /*BFI=*/nullptr,
          /*BPI=*/nullptr, /*AC=*/nullptr, /*AllowVarArgs=*/false,
          /*AllowAlloca=*/false, /*AllocationBlock=*/nullptr, "piece");
      if (!extractor.isEligible())
        continue;
      if (llvm::Function *outlined = extractor.extractCodeRegion(cache))
        outlined->addFnAttr(llvm::Attribute::NoInline);
    }
  }
}

} // namespace sinter::host
