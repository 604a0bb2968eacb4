//===- Program.h - The elaborated model: a flat list of graph operations --===//
//
// What semantic analysis produces: every def inlined, every `repeat`
// unrolled, every compile-time value folded, every shape checked. Each node
// names a `graph` dialect operation and carries its source stack, so MLIRGen
// only translates and `--list-params` only reads. No MLIR here.
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

/// One phase of a model: the train step sees `training` true, eval false.
struct ModelGraph {
  std::string name;
  Loc loc; ///< the `model` declaration
  bool training = true;
  std::vector<TensorType> values;
  std::vector<Node> nodes;
  std::vector<ParamInfo> params;
};

} // namespace sinter

#endif // SINTER_FRONTEND_PROGRAM_H
