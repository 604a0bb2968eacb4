//===- RepeatBlocks.cpp - `repeat` iterations as calls of shared blocks ---===//
//
// Every iteration of a `repeat` is elaborated, since its shapes, parameter
// names and compile-time values may depend on the index. What it added to
// the graph then moves into a block: its parameters and states stay
// declarations of the model, the tensors it uses from before become the
// block's arguments, and the variables it rebinds to new tensors (and the
// states it updates) its results. An iteration that elaborates to the same
// operations as an earlier one, up to its arguments, calls that block: GPT's
// twelve layers are one block called twelve times, so everything after the
// frontend sees each layer's code once, whatever the depth.
//
// A dropout's mask is keyed by its position in the program (its stream):
// in a block, the stream counts from the iteration's first node, and each
// call passes where its iteration began, so every layer draws the masks the
// unrolled program would. An iteration stays unrolled when it holds what
// belongs to the model alone (inputs, the loss, metrics, outputs) or binds a
// list of new tensors.
//
//===----------------------------------------------------------------------===//

#include "frontend/Elaborator.h"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

namespace sinter {
namespace {

/// Declarations that stay in the model: the block receives their values.
bool isDeclaration(const Node &node) {
  return node.op == "param" || node.op == "state";
}

/// Ops a block cannot hold.
bool preventsBlock(const Node &node) {
  return node.op == "input" || node.op == "loss" || node.op == "metric" ||
         node.op == "output" || node.op == "call";
}

/// Appends `value` exactly (floats in hexadecimal) to a structural key.
void appendAttr(std::string &key, const AttrValue &value) {
  auto number = [&](double d) {
    char text[40];
    std::snprintf(text, sizeof text, "%a,", d);
    key += text;
  };
  if (auto *i = std::get_if<int64_t>(&value)) {
    key += "i" + std::to_string(*i);
  } else if (auto *d = std::get_if<double>(&value)) {
    key += "f";
    number(*d);
  } else if (auto *b = std::get_if<bool>(&value)) {
    key += *b ? "T" : "F";
  } else if (auto *s = std::get_if<std::string>(&value)) {
    key += "s" + std::to_string(s->size()) + ":" + *s;
  } else if (auto *v = std::get_if<std::vector<int64_t>>(&value)) {
    key += "I[";
    for (int64_t x : *v)
      key += std::to_string(x) + ",";
    key += "]";
  } else if (auto *f = std::get_if<std::vector<double>>(&value)) {
    key += "F[";
    for (double x : *f)
      number(x);
    key += "]";
  } else {
    key += "S[";
    for (const std::string &s : std::get<std::vector<std::string>>(value))
      key += std::to_string(s.size()) + ":" + s;
    key += "]";
  }
}

void appendStack(std::string &key, const SourceStack &where) {
  for (const Loc &l : where)
    key += std::to_string(l.file) + ":" + std::to_string(l.line) + ":" +
           std::to_string(l.col) + ";";
}

/// Everything that makes two blocks the same code: argument types, each
/// node (op, attributes, operands, result types, source) and the results.
/// Names of variables bound to results are part of it too, so that a call
/// rebinds the same variables.
std::string structuralKey(const BlockGraph &block,
                          const std::vector<std::string> &boundNames) {
  std::string key;
  for (int i = 0; i < block.numArgs; ++i)
    key += block.values[i].str() + ",";
  key += "|";
  for (const Node &node : block.nodes) {
    key += node.op + "(";
    for (int id : node.operands)
      key += std::to_string(id) + ",";
    key += "){";
    for (const auto &[name, value] : node.attrs) {
      key += name + "=";
      appendAttr(key, value);
      key += ";";
    }
    key += "}->";
    for (int i = 0; i < node.numResults; ++i)
      key += block.values[node.firstResult + i].str() + ",";
    key += "@";
    appendStack(key, node.where);
    key += "\n";
  }
  key += "=>";
  for (int id : block.results)
    key += std::to_string(id) + ",";
  for (const std::string &name : boundNames)
    key += name + ",";
  return key;
}

/// Whether `v` holds a tensor for which `isNew` holds, looking into lists.
template <typename Pred> bool holdsTensor(const Value &v, const Pred &isNew) {
  if (v.isTensor())
    return isNew(v.tensor);
  for (const Value &item : v.list)
    if (holdsTensor(item, isNew))
      return true;
  return false;
}

/// The values an iteration made, as opposed to those it received: the
/// values of its declarations stay the model's.
struct NewValues {
  int firstValue;
  std::unordered_set<int> declared;
  bool operator()(int id) const {
    return id >= firstValue && !declared.count(id);
  }
};

/// What an iteration's nodes become: a block, and what its call needs.
struct IterationBlock {
  BlockGraph block;
  /// The values from before the iteration that the block receives.
  std::vector<int> captured;
  /// The argument that carries the dropouts' stream offset; -1 for none.
  int offsetArg = -1;
  /// The variables the iteration bound to new tensors, by name.
  std::vector<std::string> boundNames;
  std::vector<const Node *> stateUpdates;
  /// The values the block's results stand for, in order.
  std::vector<int> returned;
};

/// The scalar type of the dropouts' stream offset.
TensorType offsetType() { return {shape::DType::I64, {}}; }

/// The new values of the nodes `added` (from `firstValue`); nullopt when the
/// nodes cannot form a block or compute nothing.
std::optional<NewValues> newValuesOf(const std::vector<Node> &added,
                                     int firstValue) {
  NewValues isNew{firstValue, {}};
  bool computes = false;
  for (const Node &node : added) {
    if (preventsBlock(node))
      return std::nullopt;
    if (isDeclaration(node))
      isNew.declared.insert(node.firstResult);
    else
      computes |= node.op != "state_update";
  }
  if (!computes)
    return std::nullopt;
  return isNew;
}

/// Results: the variables the iteration bound to new tensors, by name
/// (deterministic). False when a variable holds a list of new tensors.
bool collectBoundNames(const std::unordered_map<std::string, Value> &vars,
                       const NewValues &isNew,
                       std::vector<std::string> &boundNames) {
  for (const auto &[name, value] : vars) {
    if (!holdsTensor(value, isNew))
      continue;
    if (!value.isTensor())
      return false; // A list of new tensors: no block result can stand for it.
    boundNames.push_back(name);
  }
  std::sort(boundNames.begin(), boundNames.end());
  return true;
}

/// Moves the nodes `added` into `out.block`, which then returns the bound
/// variables (`out.boundNames`, looked up in `vars`) and then the new values
/// of updated states. False when they cannot form a block.
bool buildBlock(const std::vector<Node> &added,
                const std::vector<TensorType> &values, const NewValues &isNew,
                int64_t firstIndex,
                const std::unordered_map<std::string, Value> &vars,
                IterationBlock &out) {
  // Arguments first, in order of first use; then the new values.
  BlockGraph &block = out.block;
  std::unordered_map<int, int> local;
  for (const Node &node : added) {
    if (isDeclaration(node))
      continue;
    for (int id : node.operands) {
      if (isNew(id) || local.count(id))
        continue;
      local[id] = int(out.captured.size());
      out.captured.push_back(id);
      block.values.push_back(values[id]);
    }
  }
  // The dropouts' stream offset: the last argument.
  if (std::any_of(added.begin(), added.end(),
                  [](const Node &node) { return node.op == "dropout"; })) {
    out.offsetArg = int(block.values.size());
    block.values.push_back(offsetType());
  }
  block.numArgs = int(block.values.size());
  for (const Node &node : added) {
    if (isDeclaration(node))
      continue;
    if (node.op == "state_update") {
      if (!isNew(node.operands[0]))
        return false; // `s <- t` of an older tensor: nothing new to return.
      out.stateUpdates.push_back(&node);
      continue;
    }
    Node copy = node;
    for (int &id : copy.operands)
      id = local.at(id);
    if (node.op == "dropout") {
      copy.operands.push_back(out.offsetArg);
      for (auto &[name, value] : copy.attrs)
        if (name == "stream")
          value = std::get<int64_t>(value) - firstIndex;
    }
    copy.firstResult = int(block.values.size());
    for (int i = 0; i < node.numResults; ++i) {
      local[node.firstResult + i] = int(block.values.size());
      block.values.push_back(values[node.firstResult + i]);
    }
    block.nodes.push_back(std::move(copy));
  }
  for (const std::string &name : out.boundNames)
    out.returned.push_back(vars.at(name).tensor);
  for (const Node *update : out.stateUpdates)
    out.returned.push_back(update->operands[0]);
  for (int id : out.returned)
    block.results.push_back(local.at(id));
  return true;
}

/// `base`, or `base_N` with the first N that no block of `blocks` is named.
std::string freshBlockName(const std::vector<BlockGraph> &blocks,
                           const std::string &base) {
  std::string name = base;
  for (int n = 1; std::any_of(blocks.begin(), blocks.end(),
                              [&](const BlockGraph &b) { return b.name == name; });
       ++n)
    name = base + "_" + std::to_string(n);
  return name;
}

} // namespace

void Elaborator::outlineIteration(const ast::RepeatStmt &stmt,
                                  size_t firstNode, int firstValue,
                                  int64_t firstIndex) {
  std::vector<Node> added(graph_.nodes.begin() + firstNode, graph_.nodes.end());
  std::optional<NewValues> isNew = newValuesOf(added, firstValue);
  if (!isNew)
    return;
  Frame &frame = frames_.back();
  IterationBlock outlined;
  if (!collectBoundNames(frame.vars, *isNew, outlined.boundNames) ||
      !buildBlock(added, graph_.values, *isNew, firstIndex, frame.vars,
                  outlined))
    return;
  const std::vector<std::string> &boundNames = outlined.boundNames;
  const std::vector<const Node *> &stateUpdates = outlined.stateUpdates;
  const std::vector<int> &returned = outlined.returned;

  std::string key = structuralKey(outlined.block, boundNames);
  key += "|states:" + std::to_string(stateUpdates.size());
  auto [known, isFirst] = blockKeys_.emplace(key, graph_.blocks.size());
  if (isFirst) {
    std::string parent = scopes_.back().path;
    std::string base = (parent.empty() ? "" : parent + ".") + stmt.scope;
    outlined.block.name = freshBlockName(graph_.blocks, base);
    outlined.block.where = stackAt(stmt.loc());
    graph_.blocks.push_back(std::move(outlined.block));
  }
  const BlockGraph &callee = graph_.blocks[known->second];

  // The iteration's nodes become its declarations, the call and the state
  // updates of its results.
  std::vector<Node> declarations;
  for (const Node &node : added)
    if (isDeclaration(node))
      declarations.push_back(node);
  graph_.nodes.resize(firstNode);
  for (Node &node : declarations)
    graph_.nodes.push_back(std::move(node));
  Node call;
  call.op = "call";
  call.operands = outlined.captured;
  call.where = stackAt(stmt.loc());
  if (outlined.offsetArg >= 0) {
    Node offset;
    offset.op = "constant";
    offset.attrs = {{"value", double(firstIndex)}};
    offset.firstResult = int(graph_.values.size());
    offset.numResults = 1;
    offset.where = call.where;
    graph_.values.push_back(offsetType());
    graph_.nodes.push_back(offset);
    call.operands.push_back(offset.firstResult);
  }
  call.attrs = {{"callee", callee.name}};
  call.firstResult = int(graph_.values.size());
  call.numResults = int(callee.results.size());
  for (int id : callee.results)
    graph_.values.push_back(callee.values[id]);
  graph_.nodes.push_back(call);

  auto resultFor = [&](int oldId) {
    auto at = std::find(returned.begin(), returned.end(), oldId);
    return call.firstResult + int(at - returned.begin());
  };
  for (const std::string &name : boundNames) {
    int oldId = frame.vars.at(name).tensor;
    int newId = resultFor(oldId);
    if (auto bound = bounds_.find(oldId); bound != bounds_.end())
      bounds_[newId] = bound->second;
    frame.vars[name] = Value::tensorRef(newId);
  }
  for (const Node *update : stateUpdates) {
    Node node = *update;
    node.operands = {resultFor(update->operands[0])};
    graph_.nodes.push_back(std::move(node));
  }
}

} // namespace sinter
