//===- SemaGraph.cpp - Diagnostics and graph building ---------------------===//
//
// How the elaborator reports errors (with the chain of calls) and appends
// nodes to the graph, with the conversions and checks the operations share.
//
//===----------------------------------------------------------------------===//

#include "frontend/Elaborator.h"

namespace sinter {
using namespace ast;

SourceStack Elaborator::stackAt(Loc loc) const {
  SourceStack stack = {loc};
  for (auto it = callSites_.rbegin(); it != callSites_.rend(); ++it)
    stack.push_back(*it);
  return stack;
}

Value Elaborator::fail(Loc loc, const std::string &message) {
  if (diags_.hadError())
    return Value::error(); // Report only the first error of a chain.
  diags_.error(loc, message);
  for (auto it = callSites_.rbegin(); it != callSites_.rend(); ++it)
    diags_.note(*it, "in the call from here");
  return Value::error();
}

void Elaborator::warn(Loc loc, const std::string &message) {
  // Elaboration runs once per phase; warn once.
  if (graph_.training)
    diags_.warning(loc, message);
}

bool Elaborator::claimName(const std::string &kind, const std::string &name,
                           Loc loc) {
  auto [it, inserted] = claimed_[kind].emplace(name, loc);
  if (inserted)
    return true;
  fail(loc, kind + " '" + name + "' is defined twice");
  diags_.note(it->second, "the first '" + name + "' is here");
  return false;
}

bool Elaborator::step(Loc loc) {
  if (++steps_ <= kMaxSteps)
    return true;
  fail(loc, "the program is too large to elaborate (more than " +
                std::to_string(kMaxSteps) + " steps); check 'repeat' counts");
  return false;
}

std::vector<Value>
Elaborator::emit(const std::string &op, Loc loc,
                 const std::vector<Value> &operands,
                 std::vector<std::pair<std::string, AttrValue>> attrs,
                 const std::vector<TensorType> &results) {
  if (graph_.nodes.size() >= kMaxNodes) {
    fail(loc, "the graph is too large (more than " + std::to_string(kMaxNodes) +
                  " operations)");
    return std::vector<Value>(results.size(), Value::error());
  }
  Node node;
  node.op = op;
  for (const Value &v : operands)
    node.operands.push_back(v.tensor);
  node.attrs = std::move(attrs);
  node.firstResult = graph_.values.size();
  node.numResults = results.size();
  node.where = stackAt(loc);
  ++emitted_;
  std::vector<Value> out;
  for (const TensorType &t : results) {
    out.push_back(Value::tensorRef(graph_.values.size()));
    graph_.values.push_back(t);
  }
  graph_.nodes.push_back(std::move(node));
  return out;
}

Value Elaborator::constant(double value, shape::DType dtype, Loc loc) {
  return emit1("constant", loc, {}, {{"value", value}}, {dtype, {}});
}

Value Elaborator::toTensor(const Value &v, Loc loc, const char *what,
                           std::optional<shape::DType> like) {
  if (v.isTensor() || v.isError())
    return v;
  if (v.isNumber()) {
    shape::DType dtype = like ? *like
                              : (v.kind == Value::Kind::Float ? shape::DType::F32
                                                              : shape::DType::I64);
    if (v.kind == Value::Kind::Float && !shape::isFloat(dtype))
      return fail(loc, std::string(what) + ": cannot use " + v.describe() +
                           " with a tensor of dtype " +
                           shape::dtypeName(dtype) + "; cast the tensor first");
    return constant(v.number(), dtype, loc);
  }
  if (v.kind == Value::Kind::Bool)
    return constant(v.b ? 1 : 0, shape::DType::Bool, loc);
  if (v.kind == Value::Kind::Int) {
    // A symbolic size (B, 4*T, ...) used as a number: its value is known once
    // the symbols are bound, so it becomes a scalar of the graph.
    shape::DType dtype = like ? *like : shape::DType::I64;
    if (dtype == shape::DType::Bool)
      return fail(loc, std::string(what) + ": cannot use a size as a bool");
    return emit1("symbolic_size", loc, {},
                 {{"coefficient", v.dim.coefficient()},
                  {"symbols", v.dim.symbols()}},
                 {dtype, {}});
  }
  return fail(loc, std::string(what) + " must be a tensor or a number, not " +
                       v.describe());
}

Value Elaborator::checkedShape(const shape::Result &r, Loc loc,
                               const std::string &what) {
  if (r.ok())
    return Value::none();
  return fail(loc, what + ": " + r.error);
}

Value Elaborator::binary(const std::string &op, Loc loc, const Value &a,
                         const Value &b) {
  std::optional<shape::DType> hint;
  if (a.isTensor())
    hint = typeOf(a).dtype;
  else if (b.isTensor())
    hint = typeOf(b).dtype;
  Value ta = toTensor(a, loc, "left operand", hint);
  if (ta.isError())
    return ta;
  Value tb = toTensor(b, loc, "right operand", hint);
  if (tb.isError())
    return tb;
  const TensorType &x = typeOf(ta), &y = typeOf(tb);
  if (x.dtype != y.dtype)
    return fail(loc, "operands have different dtypes: " + x.str() + " and " +
                         y.str() + "; use cast(x, DTYPE)");
  if (x.dtype == shape::DType::Bool && op != "compare")
    return fail(loc, "arithmetic on bool tensors; cast them first");
  shape::Result r = shape::broadcast(x.shape, y.shape);
  if (!r.ok())
    return fail(loc, r.error);
  return emit1(op, loc, {ta, tb}, {}, {x.dtype, r.shape});
}

std::optional<int64_t> Elaborator::valueBound(const Value &v) const {
  auto it = bounds_.find(v.tensor);
  if (it == bounds_.end())
    return std::nullopt;
  return it->second;
}

} // namespace sinter
