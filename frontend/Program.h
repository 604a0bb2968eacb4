//===- Program.h - The elaborated model: a flat list of graph operations --===//
//
// What semantic analysis produces: every def inlined, every compile-time
// value folded, every shape checked, and each `repeat` iteration either a
// call of a block shared by equal iterations or, where it cannot be shared,
// unrolled. Each node names a `graph` dialect operation (or `call`) and
// carries its source stack, so MLIRGen only translates and `--list-params`
// only reads. No MLIR here.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_FRONTEND_PROGRAM_H
#define SINTER_FRONTEND_PROGRAM_H

#include "dialects/Graph/IR/ShapeRules.h"
#include "frontend/Diagnostics.h"

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace sinter {

struct TensorType {
  shape::DType dtype = shape::DType::F32;
  shape::Shape shape;
  std::string str() const;
};

/// The location of a node and the call sites that led to it, innermost first.
using SourceStack = std::vector<Loc>;

/// An attribute of a node, converted by MLIRGen to the matching MLIR kind.
using AttrValue =
    std::variant<int64_t, double, bool, std::string, std::vector<int64_t>,
                 std::vector<double>, std::vector<std::string>>;

struct Node {
  std::string op; ///< graph dialect op name without the `graph.` prefix
  std::vector<int> operands;
  std::vector<std::pair<std::string, AttrValue>> attrs;
  int firstResult = -1; ///< id of the first result in ModelGraph::values
  int numResults = 0;
  SourceStack where;
};

/// A trainable parameter or a state, in declaration order.
struct ParamInfo {
  std::string name; ///< dotted, stable name: the checkpoint key
  bool isState = false;
  TensorType type;
  std::string init;
  std::vector<double> initArgs;
  SourceStack where;
  int64_t numElements() const;
};

/// The body of a `repeat` compiled once: every iteration that elaborated to
/// the same operations is a `call` node of the model, with that layer's
/// parameters as arguments. Value ids are the block's own: [0, numArgs) are
/// its arguments, in the order of the call's operands.
struct BlockGraph {
  std::string name; ///< unique in the model: the repeat's scope ("h", "h_1")
  SourceStack where; ///< the `repeat` statement
  std::vector<TensorType> values;
  int numArgs = 0;
  std::vector<Node> nodes;
  std::vector<int> results;
};

/// One phase of a model: the train step sees `training` true, eval false.
struct ModelGraph {
  std::string name;
  Loc loc; ///< the `model` declaration
  bool training = true;
  std::vector<TensorType> values;
  std::vector<Node> nodes;
  std::vector<ParamInfo> params;
  std::vector<BlockGraph> blocks; ///< called by `call` nodes, by `callee` name
};

} // namespace sinter

#endif // SINTER_FRONTEND_PROGRAM_H
