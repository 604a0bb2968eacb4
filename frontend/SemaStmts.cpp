//===- SemaStmts.cpp - Statements -----------------------------------------===//
//
// Each statement of a model or def: declarations of inputs, params and
// states, bindings, state updates, `repeat`, compile-time `if`, `return`,
// and the loss, metrics and outputs.
//
//===----------------------------------------------------------------------===//

#include "frontend/Elaborator.h"

namespace sinter {
using namespace ast;

bool Elaborator::execBlock(const Block &block) {
  for (const StmtPtr &s : block) {
    if (!execStmt(*s))
      return false;
    if (!frames_.empty() && frames_.back().hasReturned)
      return true;
  }
  return true;
}

bool Elaborator::execStmt(const Stmt &stmt) {
  if (!step(stmt.loc()))
    return false;
  if (auto *s = dyn<InputStmt>(&stmt))
    return execInput(*s);
  if (auto *s = dyn<ParamStmt>(&stmt))
    return execParam(*s);
  if (auto *s = dyn<AssignStmt>(&stmt))
    return execAssign(*s);
  if (auto *s = dyn<StateUpdateStmt>(&stmt))
    return execStateUpdate(*s);
  if (auto *s = dyn<RepeatStmt>(&stmt))
    return execRepeat(*s);
  if (auto *s = dyn<IfStmt>(&stmt))
    return execIf(*s);
  if (auto *s = dyn<ReturnStmt>(&stmt))
    return execReturn(*s);
  if (auto *s = dyn<LossStmt>(&stmt))
    return execLoss(*s);
  if (auto *s = dyn<OutputStmt>(&stmt))
    return execOutput(*s);
  if (auto *s = dyn<MetricStmt>(&stmt))
    return execMetric(*s);
  fail(stmt.loc(), "unsupported statement");
  return false;
}

bool Elaborator::execIf(const IfStmt &stmt) {
  Value c = eval(*stmt.cond);
  if (c.isError())
    return false;
  if (c.kind != Value::Kind::Bool) {
    fail(stmt.cond->loc(),
         c.isTensor() ? "the condition of 'if' must be known at compile "
                        "time; use where(c, a, b) to select tensor values"
                      : "the condition of 'if' must be true or false, not " +
                            c.describe());
    return false;
  }
  return execBlock(c.b ? stmt.thenBody : stmt.elseBody);
}

bool Elaborator::execReturn(const ReturnStmt &stmt) {
  std::vector<Value> values;
  for (const ExprPtr &e : stmt.values) {
    Value v = eval(*e);
    if (v.isError())
      return false;
    values.push_back(v);
  }
  // Evaluation may call defs and grow frames_: look the frame up only now.
  frames_.back().returned = std::move(values);
  frames_.back().hasReturned = true;
  return true;
}

bool Elaborator::execLoss(const LossStmt &stmt) {
  Value v = eval(*stmt.value);
  if (v.isError())
    return false;
  if (sawLoss_) {
    fail(stmt.loc(), "a model has one 'loss'; add the terms into one "
                     "expression");
    return false;
  }
  if (!v.isTensor() || !typeOf(v).shape.empty() ||
      !shape::isFloat(typeOf(v).dtype)) {
    fail(stmt.value->loc(), "the loss must be a scalar floating-point tensor, "
                            "not " + (v.isTensor() ? typeOf(v).str()
                                                   : v.describe()) +
                                "; reduce it with mean(...) or sum(...)");
    return false;
  }
  sawLoss_ = true;
  emit("loss", stmt.loc(), {v}, {}, {});
  return !diags_.hadError();
}

bool Elaborator::execOutput(const OutputStmt &stmt) {
  if (graph_.training)
    return true; // Outputs belong to the eval step.
  Value v = eval(*stmt.value);
  if (v.isError())
    return false;
  if (!v.isTensor()) {
    fail(stmt.value->loc(), "output '" + stmt.name +
                                "' must be a tensor, not " + v.describe());
    return false;
  }
  if (!claimName("output", stmt.name, stmt.loc()))
    return false;
  emit("output", stmt.loc(), {v}, {{"name", stmt.name}}, {});
  return !diags_.hadError();
}

bool Elaborator::execMetric(const MetricStmt &stmt) {
  Value v = eval(*stmt.value);
  if (v.isError())
    return false;
  if (!v.isTensor() || !typeOf(v).shape.empty() ||
      !shape::isFloat(typeOf(v).dtype)) {
    fail(stmt.value->loc(), "metric '" + stmt.name +
                                "' must be a scalar floating-point tensor, "
                                "not " + (v.isTensor() ? typeOf(v).str()
                                                       : v.describe()));
    return false;
  }
  if (!claimName("metric", stmt.name, stmt.loc()))
    return false;
  emit("metric", stmt.loc(), {v}, {{"name", stmt.name}}, {});
  return !diags_.hadError();
}

std::optional<TensorType> Elaborator::evalType(const TypeExpr &type,
                                               bool isStatic) {
  std::optional<shape::DType> dtype = shape::parseDType(type.dtype);
  if (!dtype) {
    fail(type.loc, "unknown element type '" + type.dtype +
                       "'; expected f64, f32, bf16, f16, i64, i32 or bool");
    return std::nullopt;
  }
  TensorType t;
  t.dtype = *dtype;
  for (const ExprPtr &d : type.dims) {
    Value v = eval(*d);
    if (v.isError())
      return std::nullopt;
    if (v.kind != Value::Kind::Int) {
      fail(d->loc(), "a dimension must be an integer, not " + v.describe());
      return std::nullopt;
    }
    if (v.dim.isKnown() && v.dim.value() <= 0) {
      fail(d->loc(), "a dimension must be positive, not " + v.dim.str());
      return std::nullopt;
    }
    if (isStatic && !v.dim.isKnown()) {
      fail(d->loc(), "the size of a param or state must be known at compile "
                     "time, but " + v.dim.str() + " is symbolic");
      return std::nullopt;
    }
    t.shape.push_back(v.dim);
  }
  std::optional<shape::Dim> n = shape::numElements(t.shape);
  if (!n || (n->isKnown() && n->value() > kMaxElements)) {
    fail(type.loc, "tensor " + t.str() + " is too large");
    return std::nullopt;
  }
  return t;
}

bool Elaborator::execInput(const InputStmt &stmt) {
  std::optional<TensorType> type = evalType(stmt.type, /*isStatic=*/false);
  if (!type)
    return false;
  const auto *lead = stmt.type.dims.empty()
                         ? nullptr
                         : dyn<NameExpr>(stmt.type.dims.front().get());
  if (!lead || lead->name != "B") {
    fail(stmt.type.loc, "the leading dimension of input '" + stmt.name +
                            "' must be B, the micro-batch size");
    return false;
  }
  if (!claimName("input", stmt.name, stmt.loc()))
    return false;
  Value v = emit1("input", stmt.loc(), {}, {{"name", stmt.name}}, *type);
  frames_.back().vars[stmt.name] = v;
  return !v.isError();
}

bool Elaborator::execParam(const ParamStmt &stmt) {
  std::optional<TensorType> type = evalType(stmt.type, /*isStatic=*/true);
  if (!type)
    return false;
  const char *kind = stmt.isState ? "state" : "param";
  if (!stmt.isState && !shape::isFloat(type->dtype)) {
    fail(stmt.type.loc, "a param must have a floating-point type, not " +
                            type->str() + "; use 'state' for integer tensors");
    return false;
  }
  Value init = eval(*stmt.init);
  if (init.isError())
    return false;
  if (init.kind != Value::Kind::Init) {
    fail(stmt.init->loc(), std::string("the initialiser of a ") + kind +
                               " must be one of zeros, ones, constant(v), "
                               "normal, uniform, trunc_normal, "
                               "kaiming_uniform, kaiming_normal, "
                               "xavier_uniform; got " + init.describe());
    return false;
  }
  const std::string &prefix = scopes_.back().path;
  std::string full = prefix.empty() ? stmt.name : prefix + "." + stmt.name;
  SourceStack where = stackAt(stmt.loc());
  if (auto it = paramIndex_.find(full); it != paramIndex_.end()) {
    const ParamInfo &first = graph_.params[it->second];
    fail(stmt.loc(), std::string(kind) + " '" + full + "' is declared twice");
    diags_.note(first.where.back(), "the first '" + full +
                                        "' was declared here");
    if (first.where.size() > 1)
      diags_.note(first.where.front(), "by this declaration");
    return false;
  }
  ParamInfo info;
  info.name = full;
  info.isState = stmt.isState;
  info.type = *type;
  info.init = init.s;
  info.initArgs = init.args;
  info.where = where;
  paramIndex_[full] = graph_.params.size();
  graph_.params.push_back(info);
  Value v = emit1(kind, stmt.loc(), {},
                  {{"name", full}, {"init", init.s}, {"init_args", init.args}},
                  *type);
  frames_.back().vars[stmt.name] = v;
  if (stmt.isState)
    frames_.back().states[stmt.name] = full;
  return !v.isError();
}

bool Elaborator::execAssign(const AssignStmt &stmt) {
  Value v = eval(*stmt.value);
  if (v.isError())
    return false;
  Frame &frame = frames_.back();
  if (stmt.targets.size() == 1) {
    frame.vars[stmt.targets[0]] = v;
    return true;
  }
  if (v.kind != Value::Kind::List || v.list.size() != stmt.targets.size()) {
    fail(stmt.loc(), "cannot bind " + std::to_string(stmt.targets.size()) +
                         " names to " + v.describe());
    return false;
  }
  for (size_t i = 0; i < stmt.targets.size(); ++i)
    frame.vars[stmt.targets[i]] = v.list[i];
  return true;
}

bool Elaborator::execStateUpdate(const StateUpdateStmt &stmt) {
  Frame &frame = frames_.back();
  auto it = frame.states.find(stmt.name);
  if (it == frame.states.end()) {
    fail(stmt.loc(), "'" + stmt.name + "' is not a state declared in this " +
                         (frame.isDef ? "def" : "model") +
                         "; only states can be updated with '<-'");
    return false;
  }
  if (!graph_.training)
    return true; // State updates belong to the train step only.
  std::string full = it->second;
  const TensorType stateType = graph_.params[paramIndex_.at(full)].type;
  Value v = eval(*stmt.value);
  if (v.isError())
    return false;
  v = toTensor(v, stmt.value->loc(), "the new value", stateType.dtype);
  if (v.isError())
    return false;
  if (typeOf(v).dtype != stateType.dtype ||
      typeOf(v).shape != stateType.shape) {
    fail(stmt.value->loc(), "the new value of state '" + full + "' is " +
                                typeOf(v).str() + " but the state is " +
                                stateType.str());
    return false;
  }
  auto [prev, inserted] = stateUpdated_.emplace(full, stmt.loc());
  if (!inserted) {
    fail(stmt.loc(), "state '" + full + "' is updated twice in one step");
    diags_.note(prev->second, "the first update is here");
    return false;
  }
  emit("state_update", stmt.loc(), {v}, {{"name", full}}, {});
  return !diags_.hadError();
}

bool Elaborator::execRepeat(const RepeatStmt &stmt) {
  Value count = eval(*stmt.count);
  if (count.isError())
    return false;
  std::optional<int64_t> n = intArg(count, stmt.count->loc(), "the repeat count");
  if (!n)
    return false;
  if (*n < 0 || *n > kMaxRepeat) {
    fail(stmt.count->loc(), "the repeat count must be between 0 and " +
                                std::to_string(kMaxRepeat) + ", not " +
                                std::to_string(*n));
    return false;
  }
  // A repeated body is compiled once: each iteration is elaborated (its
  // shapes, names and compile-time values may depend on the index), then
  // becomes a call of the block it shares with the equal iterations.
  bool outline = *n >= 2 && outlining_ == 0;
  for (int64_t k = 0; k < *n; ++k) {
    std::string parent = scopes_.back().path;
    std::string path = (parent.empty() ? "" : parent + ".") + stmt.scope + "." +
                       std::to_string(k);
    scopes_.push_back({path, {}});
    if (!stmt.var.empty())
      frames_.back().vars[stmt.var] = Value::integer(k);
    size_t firstNode = graph_.nodes.size();
    int firstValue = int(graph_.values.size());
    int64_t firstIndex = emitted_;
    outlining_ += outline;
    bool ok = execBlock(stmt.body);
    outlining_ -= outline;
    scopes_.pop_back();
    if (!ok)
      return false;
    if (frames_.back().hasReturned)
      return true;
    if (outline)
      outlineIteration(stmt, firstNode, firstValue, firstIndex);
  }
  return true;
}

} // namespace sinter
