//===- MLIRGen.cpp - Model graphs to the `graph` dialect ------------------===//
//
// A direct translation: Sema has already checked everything, and the graph
// dialect's verifiers check it again, so a verifier failure here is a
// compiler bug that still points at the user's line. Each block of a phase
// becomes a private function, `@<model symbol>.<block>`, that returns what
// some call uses.
//
//===----------------------------------------------------------------------===//

#include "frontend/MLIRGen.h"

#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Verifier.h"

#include <map>

namespace sinter {
namespace {

class Generator {
public:
  Generator(mlir::MLIRContext &context, const SourceManager &sources)
      : context_(context), builder_(&context), sources_(sources) {}

  mlir::OwningOpRef<mlir::ModuleOp> run(const std::vector<ModelGraph> &phases) {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::ModuleOp::create(builder_.getUnknownLoc());
    for (const ModelGraph &graph : phases) {
      builder_.setInsertionPointToEnd(module->getBody());
      if (!emitModel(graph))
        return nullptr;
    }
    if (mlir::failed(mlir::verify(*module)))
      return nullptr;
    return module;
  }

private:
  mlir::Location location(const SourceStack &stack) {
    auto fileLoc = [&](Loc l) -> mlir::Location {
      if (!l.valid())
        return builder_.getUnknownLoc();
      return mlir::FileLineColLoc::get(&context_, sources_.path(l.file), l.line,
                                       l.col);
    };
    mlir::Location loc = fileLoc(stack.back());
    for (size_t i = stack.size() - 1; i-- > 0;)
      loc = mlir::CallSiteLoc::get(fileLoc(stack[i]), loc);
    return loc;
  }

  mlir::Type elementType(shape::DType t) {
    switch (t) {
    case shape::DType::F64: return builder_.getF64Type();
    case shape::DType::F32: return builder_.getF32Type();
    case shape::DType::BF16: return builder_.getBF16Type();
    case shape::DType::F16: return builder_.getF16Type();
    case shape::DType::I64: return builder_.getI64Type();
    case shape::DType::I32: return builder_.getI32Type();
    case shape::DType::Bool: return builder_.getI1Type();
    }
    return {};
  }

  mlir::RankedTensorType tensorType(const TensorType &t) {
    llvm::SmallVector<int64_t> dims;
    for (const shape::Dim &d : t.shape)
      dims.push_back(d.isKnown() ? d.value() : mlir::ShapedType::kDynamic);
    return mlir::RankedTensorType::get(dims, elementType(t.dtype));
  }

  mlir::Attribute attribute(const AttrValue &value) {
    if (auto *i = std::get_if<int64_t>(&value))
      return builder_.getI64IntegerAttr(*i);
    if (auto *d = std::get_if<double>(&value))
      return builder_.getF64FloatAttr(*d);
    if (auto *b = std::get_if<bool>(&value))
      return builder_.getBoolAttr(*b);
    if (auto *s = std::get_if<std::string>(&value))
      return builder_.getStringAttr(*s);
    if (auto *v = std::get_if<std::vector<int64_t>>(&value))
      return builder_.getDenseI64ArrayAttr(*v);
    if (auto *f = std::get_if<std::vector<double>>(&value))
      return builder_.getDenseF64ArrayAttr(*f);
    const auto &strings = std::get<std::vector<std::string>>(value);
    llvm::SmallVector<llvm::StringRef> refs(strings.begin(), strings.end());
    return builder_.getStrArrayAttr(refs);
  }

  /// The splat value of a `constant` node, in the result's element type.
  mlir::Attribute splat(const Node &node, mlir::RankedTensorType type) {
    double v = std::get<double>(node.attrs.front().second);
    mlir::Type et = type.getElementType();
    if (auto ft = mlir::dyn_cast<mlir::FloatType>(et))
      return mlir::DenseElementsAttr::get(type, builder_.getFloatAttr(ft, v));
    if (et.isInteger(1))
      return mlir::DenseElementsAttr::get(type, v != 0);
    return mlir::DenseElementsAttr::get(
        type, builder_.getIntegerAttr(et, static_cast<int64_t>(v)));
  }

  /// The op of `node`, its operands and results looked up in `values`.
  void emitNode(const Node &node, const std::vector<TensorType> &types,
                std::vector<mlir::Value> &values) {
    if (node.op == "call") {
      const Callee &callee = callees_.at(std::get<std::string>(node.attrs[0].second));
      llvm::SmallVector<mlir::Value> operands;
      for (int id : node.operands)
        operands.push_back(values[id]);
      auto call = mlir::func::CallOp::create(builder_, location(node.where),
                                             callee.func, operands);
      for (auto [i, j] : llvm::enumerate(callee.kept))
        values[node.firstResult + j] = call.getResult(i);
      return;
    }
    mlir::OperationState op(location(node.where), "graph." + node.op);
    for (int id : node.operands)
      op.addOperands(values[id]);
    for (int i = 0; i < node.numResults; ++i)
      op.addTypes(tensorType(types[node.firstResult + i]));
    if (node.op == "constant") {
      op.addAttribute("value", splat(node, tensorType(types[node.firstResult])));
    } else {
      for (const auto &[name, value] : node.attrs)
        op.addAttribute(name, attribute(value));
    }
    mlir::Operation *created = builder_.create(op);
    for (int i = 0; i < node.numResults; ++i)
      values[node.firstResult + i] = created->getResult(i);
  }

  /// The results of each block that some call of `graph` uses.
  std::map<std::string, std::vector<bool>> usedResults(const ModelGraph &graph) {
    std::vector<bool> used(graph.values.size());
    for (const Node &node : graph.nodes)
      for (int id : node.operands)
        used[id] = true;
    std::map<std::string, std::vector<bool>> out;
    for (const BlockGraph &block : graph.blocks)
      out[block.name].assign(block.results.size(), false);
    for (const Node &node : graph.nodes) {
      if (node.op != "call")
        continue;
      std::vector<bool> &keep = out[std::get<std::string>(node.attrs[0].second)];
      for (int j = 0; j < node.numResults; ++j)
        if (used[node.firstResult + j])
          keep[j] = true;
    }
    return out;
  }

  /// A private function for `block` returning the `keep` results; only the
  /// nodes they need.
  void emitBlock(const ModelGraph &graph, const BlockGraph &block,
                 const std::vector<bool> &keep) {
    Callee &callee = callees_[block.name];
    std::vector<bool> live(block.values.size());
    llvm::SmallVector<mlir::Type> argTypes, resultTypes;
    for (int i = 0; i < block.numArgs; ++i)
      argTypes.push_back(tensorType(block.values[i]));
    for (size_t j = 0; j < block.results.size(); ++j) {
      if (!keep[j])
        continue;
      callee.kept.push_back(int(j));
      live[block.results[j]] = true;
      resultTypes.push_back(tensorType(block.values[block.results[j]]));
    }
    std::vector<bool> liveNode(block.nodes.size());
    for (size_t n = block.nodes.size(); n-- > 0;) {
      const Node &node = block.nodes[n];
      for (int i = 0; i < node.numResults; ++i)
        liveNode[n] = liveNode[n] || live[node.firstResult + i];
      if (liveNode[n])
        for (int id : node.operands)
          live[id] = true;
    }
    std::string symbol = modelSymbol(graph) + "." + block.name;
    callee.func = mlir::func::FuncOp::create(
        builder_, location(block.where), symbol,
        builder_.getFunctionType(argTypes, resultTypes));
    callee.func.setPrivate();
    attrs::block.set(callee.func, builder_.getStringAttr(block.name));
    mlir::Block *entry = callee.func.addEntryBlock();
    mlir::OpBuilder::InsertionGuard guard(builder_);
    builder_.setInsertionPointToEnd(entry);
    std::vector<mlir::Value> values(block.values.size());
    for (int i = 0; i < block.numArgs; ++i)
      values[i] = entry->getArgument(i);
    for (size_t n = 0; n < block.nodes.size(); ++n)
      if (liveNode[n])
        emitNode(block.nodes[n], block.values, values);
    llvm::SmallVector<mlir::Value> results;
    for (int j : callee.kept)
      results.push_back(values[block.results[j]]);
    mlir::func::ReturnOp::create(builder_, location(block.where), results);
  }

  /// One symbol per phase: `mlp` is the train step, `mlp.eval` evaluation.
  static std::string modelSymbol(const ModelGraph &graph) {
    return graph.training ? graph.name : graph.name + ".eval";
  }

  bool emitModel(const ModelGraph &graph) {
    callees_.clear();
    std::map<std::string, std::vector<bool>> used = usedResults(graph);
    for (const BlockGraph &block : graph.blocks)
      emitBlock(graph, block, used.at(block.name));

    mlir::OperationState state(location({graph.loc}), "graph.model");
    state.addAttribute("sym_name", builder_.getStringAttr(modelSymbol(graph)));
    state.addAttribute("phase",
                       builder_.getStringAttr(graph.training ? "train" : "eval"));
    mlir::Region *region = state.addRegion();
    mlir::Block *body = new mlir::Block();
    region->push_back(body);
    mlir::Operation *model = builder_.create(state);
    if (!model)
      return false;

    mlir::OpBuilder::InsertionGuard guard(builder_);
    builder_.setInsertionPointToEnd(body);
    std::vector<mlir::Value> values(graph.values.size());
    for (const Node &node : graph.nodes)
      emitNode(node, graph.values, values);
    return true;
  }

  /// A block's function and which of its results it returns.
  struct Callee {
    mlir::func::FuncOp func;
    std::vector<int> kept;
  };

  mlir::MLIRContext &context_;
  mlir::OpBuilder builder_;
  const SourceManager &sources_;
  std::map<std::string, Callee> callees_; ///< of the model being emitted
};

} // namespace

mlir::OwningOpRef<mlir::ModuleOp>
generateModule(mlir::MLIRContext &context, const std::vector<ModelGraph> &phases,
               const SourceManager &sources) {
  return Generator(context, sources).run(phases);
}

} // namespace sinter
