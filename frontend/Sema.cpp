//===- Sema.cpp - Semantic analysis: statements, expressions, scopes ------===//

#include "frontend/Elaborator.h"

#include <cctype>
#include <sstream>
#include <cmath>
#include <limits>

namespace sinter {
using namespace ast;

/// Bounds that turn runaway programs into errors instead of hangs.
static constexpr uint64_t kMaxSteps = 5'000'000;
static constexpr size_t kMaxNodes = 4'000'000;
static constexpr size_t kMaxCallDepth = 64;
static constexpr int64_t kMaxRepeat = 100'000;
static constexpr int64_t kMaxElements = int64_t(1) << 48;

std::string TensorType::str() const {
  return std::string(shape::dtypeName(dtype)) + shape::str(shape);
}

int64_t ParamInfo::numElements() const {
  int64_t n = 1;
  for (const shape::Dim &d : type.shape)
    n *= d.value();
  return n;
}

std::string Value::describe() const {
  switch (kind) {
  case Kind::Error: return "an invalid value";
  case Kind::None: return "none";
  case Kind::Int: return "the integer " + dim.str();
  case Kind::Float: {
    std::ostringstream os;
    os << f;
    return "the number " + os.str();
  }
  case Kind::Bool: return b ? "true" : "false";
  case Kind::String: return "the string \"" + s + "\"";
  case Kind::List: return "a list of " + std::to_string(list.size());
  case Kind::DType: return std::string("the dtype ") + shape::dtypeName(dtype);
  case Kind::Init: return "the initialiser " + s;
  case Kind::Tensor: return "a tensor";
  }
  return "a value";
}

Elaborator::Elaborator(const SourceSet &files, bool training,
                       const SemaOptions &options, DiagnosticEngine &diags)
    : files_(files), options_(options), diags_(diags) {
  graph_.training = training;
}

//===----------------------------------------------------------------------===//
// Diagnostics and graph building
//===----------------------------------------------------------------------===//

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

std::optional<int64_t> Elaborator::intArg(const Value &v, Loc loc,
                                          const char *what) {
  if (v.isKnownInt())
    return v.dim.value();
  if (v.kind == Value::Kind::Int)
    fail(loc, std::string(what) + " must be a known integer, but " +
                  v.dim.str() + " is symbolic; bind it with -D");
  else if (!v.isError())
    fail(loc, std::string(what) + " must be an integer, not " + v.describe());
  return std::nullopt;
}

std::optional<double> Elaborator::numberArg(const Value &v, Loc loc,
                                            const char *what) {
  if (v.isNumber())
    return v.number();
  if (!v.isError())
    fail(loc, std::string(what) + " must be a number, not " + v.describe());
  return std::nullopt;
}

std::optional<bool> Elaborator::boolArg(const Value &v, Loc loc,
                                        const char *what) {
  if (v.kind == Value::Kind::Bool)
    return v.b;
  if (!v.isError())
    fail(loc, std::string(what) + " must be true or false, not " +
                  v.describe());
  return std::nullopt;
}

std::optional<std::string> Elaborator::stringArg(const Value &v, Loc loc,
                                                 const char *what) {
  if (v.kind == Value::Kind::String)
    return v.s;
  if (!v.isError())
    fail(loc, std::string(what) + " must be a string, not " + v.describe());
  return std::nullopt;
}

std::optional<std::vector<int64_t>>
Elaborator::intListArg(const Value &v, Loc loc, const char *what) {
  std::vector<int64_t> out;
  if (v.kind != Value::Kind::List) {
    std::optional<int64_t> one = intArg(v, loc, what);
    if (!one)
      return std::nullopt;
    return std::vector<int64_t>{*one};
  }
  for (const Value &e : v.list) {
    std::optional<int64_t> i = intArg(e, loc, what);
    if (!i)
      return std::nullopt;
    out.push_back(*i);
  }
  return out;
}

std::optional<shape::Shape> Elaborator::shapeArg(const Value &v, Loc loc,
                                                 const char *what) {
  if (v.kind != Value::Kind::List) {
    fail(loc, std::string(what) + " must be a list of sizes, not " +
                  v.describe());
    return std::nullopt;
  }
  shape::Shape out;
  for (const Value &e : v.list) {
    if (e.kind != Value::Kind::Int) {
      fail(loc, std::string(what) + " must hold sizes, not " + e.describe());
      return std::nullopt;
    }
    out.push_back(e.dim);
  }
  return out;
}

std::optional<int> Elaborator::tensorArg(const Value &v, Loc loc,
                                         const char *what) {
  if (v.isTensor())
    return v.tensor;
  if (!v.isError())
    fail(loc, std::string(what) + " must be a tensor, not " + v.describe());
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Declarations, consts and -D
//===----------------------------------------------------------------------===//

bool Elaborator::collectDeclarations() {
  std::map<std::string, Loc> seen;
  auto declare = [&](const std::string &name, Loc loc, const char *what) {
    auto [it, inserted] = seen.emplace(name, loc);
    if (inserted)
      return true;
    diags_.error(loc, std::string(what) + " '" + name + "' is defined twice");
    diags_.note(it->second, "the first definition is here");
    return false;
  };
  for (const auto &file : files_.files()) {
    for (const Const &c : file->consts) {
      if (!declare(c.name, c.loc, "const"))
        return false;
      consts_[c.name] = &c;
    }
    for (const auto &d : file->defs) {
      if (!declare(d->name, d->loc, "def"))
        return false;
      defs_[d->name] = d.get();
    }
  }
  return true;
}

static Value parseDefine(const std::string &text) {
  if (text == "true" || text == "false")
    return Value::boolean(text == "true");
  char *end = nullptr;
  errno = 0;
  long long i = std::strtoll(text.c_str(), &end, 10);
  if (!text.empty() && *end == '\0' && errno == 0)
    return Value::integer(i);
  errno = 0;
  double d = std::strtod(text.c_str(), &end);
  if (!text.empty() && *end == '\0' && errno == 0 && std::isfinite(d))
    return Value::floating(d);
  return Value::string(text);
}

bool Elaborator::applyDefines() {
  for (const auto &[name, text] : options_.defines) {
    Value v = parseDefine(text);
    if (consts_.count(name)) {
      overrides_[name] = v;
      continue;
    }
    if (!name.empty() && std::isupper(static_cast<unsigned char>(name[0]))) {
      if (!v.isKnownInt() || v.dim.value() <= 0) {
        diags_.error(Loc(), "shape symbol " + name +
                                " must be bound to a positive integer, not '" +
                                text + "'");
        return false;
      }
      overrides_[name] = v;
      continue;
    }
    std::vector<std::string> names;
    for (const auto &c : consts_)
      names.push_back(c.first);
    std::string hint = closestMatch(name, names);
    diags_.error(Loc(), "'-D " + name + "' names no const" +
                            (hint.empty() ? std::string()
                                          : "; did you mean '" + hint + "'?"));
    return false;
  }
  return true;
}

Value Elaborator::constValue(const std::string &name, Loc useLoc) {
  if (auto it = overrides_.find(name); it != overrides_.end())
    return it->second;
  if (auto it = constValues_.find(name); it != constValues_.end())
    return it->second;
  const Const *c = consts_.at(name);
  for (const std::string &busy : constsInProgress_)
    if (busy == name)
      return fail(useLoc, "const '" + name + "' is defined in terms of itself");
  constsInProgress_.push_back(name);
  // A const sees only other consts: evaluate it in an empty frame, outside
  // any call.
  std::vector<Frame> savedFrames;
  std::vector<Loc> savedCalls;
  std::swap(savedFrames, frames_);
  std::swap(savedCalls, callSites_);
  frames_.emplace_back();
  Value v = eval(*c->value);
  std::swap(savedFrames, frames_);
  std::swap(savedCalls, callSites_);
  constsInProgress_.pop_back();
  if (v.isError())
    return v;
  if (v.kind != Value::Kind::Int && v.kind != Value::Kind::Float &&
      v.kind != Value::Kind::Bool && v.kind != Value::Kind::String)
    return fail(c->loc, "const '" + name +
                            "' must be an integer, a number, a bool or a "
                            "string, not " + v.describe());
  constValues_[name] = v;
  return v;
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

std::optional<ModelGraph> Elaborator::run(const std::string &modelName) {
  const File *main = files_.mainFile();
  if (!main || !collectDeclarations() || !applyDefines())
    return std::nullopt;
  const Model *model = nullptr;
  std::vector<std::string> names;
  for (const auto &m : main->models)
    names.push_back(m->name);
  if (modelName.empty()) {
    if (main->models.size() != 1) {
      std::string list;
      for (const std::string &n : names)
        list += (list.empty() ? "" : ", ") + n;
      diags_.error(Loc{main->id, 1, 1},
                   main->models.empty()
                       ? "this file defines no model"
                       : "this file defines several models (" + list +
                             "); choose one with --model NAME");
      return std::nullopt;
    }
    model = main->models.front().get();
  } else {
    for (const auto &m : main->models)
      if (m->name == modelName)
        model = m.get();
    if (!model) {
      std::string hint = closestMatch(modelName, names);
      diags_.error(Loc{main->id, 1, 1},
                   "no model named '" + modelName + "' in this file" +
                       (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
      return std::nullopt;
    }
  }
  graph_.name = model->name;
  graph_.loc = model->loc;
  frames_.emplace_back();
  scopes_.push_back({"", {}});
  if (!execBlock(model->body))
    return std::nullopt;
  if (!sawLoss_) {
    diags_.error(model->loc, "model '" + model->name +
                                 "' has no 'loss' statement");
    return std::nullopt;
  }
  if (diags_.hadError())
    return std::nullopt;
  return std::move(graph_);
}

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
  if (auto *s = dyn<IfStmt>(&stmt)) {
    Value c = eval(*s->cond);
    if (c.isError())
      return false;
    if (c.kind != Value::Kind::Bool) {
      fail(s->cond->loc(),
           c.isTensor() ? "the condition of 'if' must be known at compile "
                          "time; use where(c, a, b) to select tensor values"
                        : "the condition of 'if' must be true or false, not " +
                              c.describe());
      return false;
    }
    return execBlock(c.b ? s->thenBody : s->elseBody);
  }
  if (auto *s = dyn<ReturnStmt>(&stmt)) {
    std::vector<Value> values;
    for (const ExprPtr &e : s->values) {
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
  if (auto *s = dyn<LossStmt>(&stmt)) {
    Value v = eval(*s->value);
    if (v.isError())
      return false;
    if (sawLoss_) {
      fail(s->loc(), "a model has one 'loss'; add the terms into one "
                     "expression");
      return false;
    }
    if (!v.isTensor() || !typeOf(v).shape.empty() ||
        !shape::isFloat(typeOf(v).dtype)) {
      fail(s->value->loc(), "the loss must be a scalar floating-point tensor, "
                            "not " + (v.isTensor() ? typeOf(v).str()
                                                   : v.describe()) +
                                "; reduce it with mean(...) or sum(...)");
      return false;
    }
    sawLoss_ = true;
    emit("loss", s->loc(), {v}, {}, {});
    return !diags_.hadError();
  }
  if (auto *s = dyn<OutputStmt>(&stmt)) {
    if (graph_.training)
      return true; // Outputs belong to the eval step.
    Value v = eval(*s->value);
    if (v.isError())
      return false;
    if (!v.isTensor()) {
      fail(s->value->loc(), "output '" + s->name + "' must be a tensor, not " +
                                v.describe());
      return false;
    }
    if (!claimName("output", s->name, s->loc()))
      return false;
    emit("output", s->loc(), {v}, {{"name", s->name}}, {});
    return !diags_.hadError();
  }
  if (auto *s = dyn<MetricStmt>(&stmt)) {
    Value v = eval(*s->value);
    if (v.isError())
      return false;
    if (!v.isTensor() || !typeOf(v).shape.empty() ||
        !shape::isFloat(typeOf(v).dtype)) {
      fail(s->value->loc(), "metric '" + s->name +
                                "' must be a scalar floating-point tensor, "
                                "not " + (v.isTensor() ? typeOf(v).str()
                                                       : v.describe()));
      return false;
    }
    if (!claimName("metric", s->name, s->loc()))
      return false;
    emit("metric", s->loc(), {v}, {{"name", s->name}}, {});
    return !diags_.hadError();
  }
  fail(stmt.loc(), "unsupported statement");
  return false;
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

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Value Elaborator::eval(const Expr &expr) {
  if (!step(expr.loc()))
    return Value::error();
  switch (expr.kind()) {
  case Expr::Kind::Int:
    return Value::integer(static_cast<const IntExpr &>(expr).value);
  case Expr::Kind::Float:
    return Value::floating(static_cast<const FloatExpr &>(expr).value);
  case Expr::Kind::String:
    return Value::string(static_cast<const StringExpr &>(expr).value);
  case Expr::Kind::Bool:
    return Value::boolean(static_cast<const BoolExpr &>(expr).value);
  case Expr::Kind::Training:
    return Value::boolean(graph_.training);
  case Expr::Kind::Name:
    return evalName(static_cast<const NameExpr &>(expr));
  case Expr::Kind::Unary:
    return evalUnary(static_cast<const UnaryExpr &>(expr));
  case Expr::Kind::Binary:
    return evalBinary(static_cast<const BinaryExpr &>(expr));
  case Expr::Kind::Call:
    return evalCall(static_cast<const CallExpr &>(expr));
  case Expr::Kind::Attribute:
    return evalAttribute(static_cast<const AttributeExpr &>(expr));
  case Expr::Kind::Index:
    return evalIndex(static_cast<const IndexExpr &>(expr));
  case Expr::Kind::List: {
    std::vector<Value> items;
    for (const ExprPtr &e : static_cast<const ListExpr &>(expr).elements) {
      Value v = eval(*e);
      if (v.isError())
        return v;
      items.push_back(std::move(v));
    }
    return Value::makeList(std::move(items));
  }
  }
  return fail(expr.loc(), "unsupported expression");
}

std::vector<std::string> Elaborator::visibleNames() const {
  std::vector<std::string> names;
  if (!frames_.empty())
    for (const auto &v : frames_.back().vars)
      names.push_back(v.first);
  for (const auto &c : consts_)
    names.push_back(c.first);
  for (const auto &d : defs_)
    names.push_back(d.first);
  for (const auto &b : builtinTable())
    names.push_back(b.first);
  return names;
}

Value Elaborator::evalName(const NameExpr &expr) {
  const std::string &name = expr.name;
  if (!frames_.empty()) {
    auto &vars = frames_.back().vars;
    if (auto it = vars.find(name); it != vars.end())
      return it->second;
  }
  if (consts_.count(name))
    return constValue(name, expr.loc());
  if (auto it = overrides_.find(name); it != overrides_.end())
    return it->second;
  if (name == "none")
    return Value::none();
  if (std::optional<shape::DType> t = shape::parseDType(name))
    return Value::type(*t);
  // Initialisers without arguments may be written bare: `= zeros`.
  if (name == "zeros" || name == "ones")
    return Value::initializer(name, {});
  if (std::isupper(static_cast<unsigned char>(name[0])))
    return Value::size(shape::Dim::symbol(name));
  std::string hint = closestMatch(name, visibleNames());
  if (defs_.count(name) || builtinTable().count(name))
    return fail(expr.loc(), "'" + name + "' is a function; call it with "
                            "arguments");
  return fail(expr.loc(), "unknown name '" + name + "'" +
                              (hint.empty() ? "" : "; did you mean '" + hint +
                                                       "'?"));
}

Value Elaborator::evalUnary(const UnaryExpr &expr) {
  Value v = eval(*expr.operand);
  if (v.isError())
    return v;
  if (expr.op == UnaryOp::Not) {
    if (v.kind == Value::Kind::Bool)
      return Value::boolean(!v.b);
    return fail(expr.loc(), "'not' needs a compile-time bool, not " +
                                v.describe());
  }
  if (v.kind == Value::Kind::Float)
    return Value::floating(-v.f);
  if (v.kind == Value::Kind::Int) {
    std::optional<shape::Dim> d = v.dim.mul(shape::Dim::known(-1));
    if (!d)
      return fail(expr.loc(), "integer overflow");
    return Value::size(*d);
  }
  if (v.isTensor()) {
    const TensorType &t = typeOf(v);
    if (t.dtype == shape::DType::Bool)
      return fail(expr.loc(), "cannot negate a bool tensor");
    return emit1("neg", expr.loc(), {v}, {}, t);
  }
  return fail(expr.loc(), "cannot negate " + v.describe());
}

static const char *comparePredicate(BinaryOp op) {
  switch (op) {
  case BinaryOp::Lt: return "lt";
  case BinaryOp::Le: return "le";
  case BinaryOp::Gt: return "gt";
  case BinaryOp::Ge: return "ge";
  case BinaryOp::Eq: return "eq";
  case BinaryOp::Ne: return "ne";
  default: return nullptr;
  }
}

Value Elaborator::evalBinary(const BinaryExpr &expr) {
  if (expr.op == BinaryOp::And || expr.op == BinaryOp::Or) {
    Value a = eval(*expr.lhs);
    if (a.isError())
      return a;
    if (a.kind != Value::Kind::Bool)
      return fail(expr.lhs->loc(), std::string("'") + spelling(expr.op) +
                                       "' needs compile-time bools, not " +
                                       a.describe());
    if ((expr.op == BinaryOp::Or) == a.b)
      return a; // Short-circuit, as in Python.
    Value b = eval(*expr.rhs);
    if (b.isError())
      return b;
    if (b.kind != Value::Kind::Bool)
      return fail(expr.rhs->loc(), std::string("'") + spelling(expr.op) +
                                       "' needs compile-time bools, not " +
                                       b.describe());
    return b;
  }
  Value a = eval(*expr.lhs);
  if (a.isError())
    return a;
  Value b = eval(*expr.rhs);
  if (b.isError())
    return b;
  if (!a.isTensor() && !b.isTensor())
    return evalCompileTime(expr, a, b);

  Loc loc = expr.loc();
  switch (expr.op) {
  case BinaryOp::Add: return binary("add", loc, a, b);
  case BinaryOp::Sub: return binary("sub", loc, a, b);
  case BinaryOp::Mul: return binary("mul", loc, a, b);
  case BinaryOp::Div: return binary("div", loc, a, b);
  case BinaryOp::MatMul: {
    if (!a.isTensor() || !b.isTensor())
      return fail(loc, "'@' needs two tensors");
    const TensorType &x = typeOf(a), &y = typeOf(b);
    if (x.dtype != y.dtype || !shape::isFloat(x.dtype))
      return fail(loc, "'@' needs two floating-point tensors of one dtype, "
                       "got " + x.str() + " and " + y.str());
    shape::Result r = shape::matmul(x.shape, y.shape);
    if (!r.ok())
      return fail(loc, r.error);
    return emit1("matmul", loc, {a, b}, {}, {x.dtype, r.shape});
  }
  case BinaryOp::FloorDiv:
  case BinaryOp::Mod:
    return fail(loc, std::string("'") + spelling(expr.op) +
                         "' is for compile-time integers, not tensors");
  default:
    break;
  }
  const char *pred = comparePredicate(expr.op);
  Value cmp = binary("compare", loc, a, b);
  if (cmp.isError())
    return cmp;
  // `binary` typed the result like its operands; a comparison gives bools.
  graph_.values[cmp.tensor].dtype = shape::DType::Bool;
  graph_.nodes.back().attrs.push_back({"predicate", std::string(pred)});
  return cmp;
}

static double floorMod(double a, double b) {
  double r = std::fmod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

Value Elaborator::evalCompileTime(const BinaryExpr &expr, const Value &a,
                                  const Value &b) {
  using K = Value::Kind;
  Loc loc = expr.loc();
  BinaryOp op = expr.op;
  const char *pred = comparePredicate(op);

  // Sizes (known or symbolic integers).
  if (a.kind == K::Int && b.kind == K::Int) {
    const shape::Dim &x = a.dim, &y = b.dim;
    if (x.isKnown() && y.isKnown()) {
      int64_t p = x.value(), q = y.value(), r = 0;
      switch (op) {
      case BinaryOp::Add:
        if (__builtin_add_overflow(p, q, &r))
          return fail(loc, "integer overflow");
        return Value::integer(r);
      case BinaryOp::Sub:
        if (__builtin_sub_overflow(p, q, &r))
          return fail(loc, "integer overflow");
        return Value::integer(r);
      case BinaryOp::Mul:
        if (__builtin_mul_overflow(p, q, &r))
          return fail(loc, "integer overflow");
        return Value::integer(r);
      case BinaryOp::Div:
        if (q == 0)
          return fail(loc, "division by zero");
        return Value::floating(double(p) / double(q));
      case BinaryOp::FloorDiv:
      case BinaryOp::Mod: {
        if (q == 0)
          return fail(loc, "division by zero");
        if (p == std::numeric_limits<int64_t>::min() && q == -1)
          return fail(loc, "integer overflow");
        int64_t d = p / q, m = p % q;
        if (m != 0 && ((m < 0) != (q < 0))) {
          --d;
          m += q;
        }
        return Value::integer(op == BinaryOp::FloorDiv ? d : m);
      }
      case BinaryOp::Lt: return Value::boolean(p < q);
      case BinaryOp::Le: return Value::boolean(p <= q);
      case BinaryOp::Gt: return Value::boolean(p > q);
      case BinaryOp::Ge: return Value::boolean(p >= q);
      case BinaryOp::Eq: return Value::boolean(p == q);
      case BinaryOp::Ne: return Value::boolean(p != q);
      default: break;
      }
      return fail(loc, std::string("'") + spelling(op) +
                           "' is not defined on integers");
    }
    std::optional<shape::Dim> r;
    std::string why = "; bind the symbols with -D";
    switch (op) {
    case BinaryOp::Add: r = x.add(y); break;
    case BinaryOp::Sub:
      if (auto ny = y.mul(shape::Dim::known(-1)))
        r = x.add(*ny);
      break;
    case BinaryOp::Mul: r = x.mul(y); break;
    case BinaryOp::FloorDiv: r = x.divExact(y); break;
    case BinaryOp::Eq:
    case BinaryOp::Ne:
      if (x == y)
        return Value::boolean(op == BinaryOp::Eq);
      if (x.coefficient() == 0 || y.coefficient() == 0)
        return Value::boolean(op == BinaryOp::Ne);
      break;
    default: break;
    }
    if (r)
      return Value::size(*r);
    return fail(loc, "cannot compute " + x.str() + " " + spelling(op) + " " +
                         y.str() + " at compile time" + why);
  }

  // Numbers.
  if (a.isNumber() && b.isNumber()) {
    double p = a.number(), q = b.number();
    switch (op) {
    case BinaryOp::Add: return Value::floating(p + q);
    case BinaryOp::Sub: return Value::floating(p - q);
    case BinaryOp::Mul: return Value::floating(p * q);
    case BinaryOp::Div:
      if (q == 0)
        return fail(loc, "division by zero");
      return Value::floating(p / q);
    case BinaryOp::FloorDiv:
    case BinaryOp::Mod:
      if (q == 0)
        return fail(loc, "division by zero");
      return Value::floating(op == BinaryOp::Mod ? floorMod(p, q)
                                                 : std::floor(p / q));
    case BinaryOp::Lt: return Value::boolean(p < q);
    case BinaryOp::Le: return Value::boolean(p <= q);
    case BinaryOp::Gt: return Value::boolean(p > q);
    case BinaryOp::Ge: return Value::boolean(p >= q);
    case BinaryOp::Eq: return Value::boolean(p == q);
    case BinaryOp::Ne: return Value::boolean(p != q);
    default:
      return fail(loc, std::string("'") + spelling(op) +
                           "' is not defined on numbers");
    }
  }

  // Strings, bools, dtypes, lists.
  if (a.kind == b.kind && (op == BinaryOp::Eq || op == BinaryOp::Ne)) {
    bool eq;
    switch (a.kind) {
    case K::String: eq = a.s == b.s; break;
    case K::Bool: eq = a.b == b.b; break;
    case K::DType: eq = a.dtype == b.dtype; break;
    case K::None: eq = true; break;
    default:
      return fail(loc, "cannot compare " + a.describe() + " with " +
                           b.describe());
    }
    return Value::boolean(op == BinaryOp::Eq ? eq : !eq);
  }
  if (op == BinaryOp::Add && a.kind == K::String && b.kind == K::String)
    return Value::string(a.s + b.s);
  if (op == BinaryOp::Add && a.kind == K::List && b.kind == K::List) {
    std::vector<Value> items = a.list;
    items.insert(items.end(), b.list.begin(), b.list.end());
    return Value::makeList(std::move(items));
  }
  if (pred && (a.kind == K::None || b.kind == K::None))
    return Value::boolean((op == BinaryOp::Ne));
  return fail(loc, std::string("'") + spelling(op) + "' cannot combine " +
                       a.describe() + " and " + b.describe());
}

Value Elaborator::evalAttribute(const AttributeExpr &expr) {
  Value base = eval(*expr.base);
  if (base.isError())
    return base;
  if (!base.isTensor())
    return fail(expr.loc(), "'." + expr.field + "' needs a tensor, not " +
                                base.describe());
  const TensorType &t = typeOf(base);
  if (expr.field == "shape") {
    std::vector<Value> dims;
    for (const shape::Dim &d : t.shape)
      dims.push_back(Value::size(d));
    return Value::makeList(std::move(dims));
  }
  if (expr.field == "rank")
    return Value::integer(t.shape.size());
  if (expr.field == "dtype")
    return Value::type(t.dtype);
  std::string hint = closestMatch(expr.field, {"shape", "rank", "dtype"});
  return fail(expr.loc(), "a tensor has no '" + expr.field + "'" +
                              (hint.empty() ? "; use shape, rank or dtype"
                                            : "; did you mean '" + hint + "'?"));
}

Value Elaborator::evalIndex(const IndexExpr &expr) {
  Value base = eval(*expr.base);
  if (base.isError())
    return base;
  Value index = eval(*expr.index);
  if (index.isError())
    return index;
  if (base.isTensor())
    return fail(expr.loc(), "tensors cannot be indexed; use slice(x, axis, "
                            "start, end)");
  if (base.kind != Value::Kind::List)
    return fail(expr.loc(), "cannot index " + base.describe());
  std::optional<int64_t> i = intArg(index, expr.index->loc(), "the index");
  if (!i)
    return Value::error();
  std::optional<int64_t> k = shape::normalizeAxis(*i, base.list.size());
  if (!k)
    return fail(expr.index->loc(), "index " + std::to_string(*i) +
                                       " is out of range for a list of " +
                                       std::to_string(base.list.size()));
  return base.list[*k];
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

Value Elaborator::evalCall(const CallExpr &call) {
  std::vector<std::pair<const Arg *, Value>> args;
  for (const Arg &a : call.args) {
    Value v = eval(*a.value);
    if (v.isError())
      return v;
    args.push_back({&a, std::move(v)});
  }
  auto def = defs_.find(call.callee);
  auto builtin = builtinTable().find(call.callee);
  bool hasBuiltin = builtin != builtinTable().end();
  if (def != defs_.end() && (!hasBuiltin || defAccepts(*def->second, args)))
    return callDef(*def->second, call, args);
  if (hasBuiltin)
    return callBuiltin(call.callee, builtin->second, call, args);
  std::vector<std::string> names;
  for (const auto &d : defs_)
    names.push_back(d.first);
  for (const auto &b : builtinTable())
    names.push_back(b.first);
  std::string hint = closestMatch(call.callee, names);
  return fail(call.loc(), "unknown function '" + call.callee + "'" +
                              (hint.empty() ? "" : "; did you mean '" + hint +
                                                       "'?"));
}

static bool kindMatches(const std::string &kind, const Value &v) {
  using K = Value::Kind;
  if (kind == "int")
    return v.kind == K::Int;
  if (kind == "float")
    return v.isNumber();
  if (kind == "bool")
    return v.kind == K::Bool;
  if (kind == "string")
    return v.kind == K::String;
  return true;
}

bool Elaborator::defAccepts(
    const Def &def, const std::vector<std::pair<const Arg *, Value>> &args) {
  size_t positional = 0;
  for (const auto &[arg, value] : args) {
    if (arg->name.empty()) {
      if (positional >= def.params.size() ||
          !kindMatches(def.params[positional].kind, value))
        return false;
      ++positional;
      continue;
    }
    if (arg->name == "name")
      continue;
    bool found = false;
    for (const DefParam &p : def.params)
      if (p.name == arg->name)
        found = kindMatches(p.kind, value);
    if (!found)
      return false;
  }
  return true;
}

Value Elaborator::callDef(const Def &def, const CallExpr &call,
                          std::vector<std::pair<const Arg *, Value>> &args) {
  if (callSites_.size() >= kMaxCallDepth)
    return fail(call.loc(), "calls are nested too deeply (more than " +
                                std::to_string(kMaxCallDepth) +
                                "); is '" + def.name + "' recursive?");
  Frame frame;
  frame.isDef = true;
  std::vector<bool> bound(def.params.size(), false);
  std::optional<std::string> scopeName;
  size_t positional = 0;
  for (auto &[arg, value] : args) {
    size_t index = def.params.size();
    if (arg->name.empty()) {
      if (positional >= def.params.size())
        return fail(arg->loc, "'" + def.name + "' takes " +
                                  std::to_string(def.params.size()) +
                                  " arguments, but more were given");
      index = positional++;
    } else if (arg->name == "name") {
      if (value.kind != Value::Kind::String)
        return fail(arg->loc, "name= must be a string, not " +
                                  value.describe());
      scopeName = value.s;
      continue;
    } else {
      for (size_t i = 0; i < def.params.size(); ++i)
        if (def.params[i].name == arg->name)
          index = i;
      if (index == def.params.size()) {
        std::vector<std::string> names = {"name"};
        for (const DefParam &p : def.params)
          names.push_back(p.name);
        std::string hint = closestMatch(arg->name, names);
        return fail(arg->loc, "'" + def.name + "' has no argument '" +
                                  arg->name + "'" +
                                  (hint.empty() ? ""
                                                : "; did you mean '" + hint +
                                                      "'?"));
      }
      if (bound[index])
        return fail(arg->loc, "argument '" + arg->name + "' is given twice");
    }
    const DefParam &p = def.params[index];
    if (!kindMatches(p.kind, value))
      return fail(arg->loc, "argument '" + p.name + "' of '" + def.name +
                                "' must be " + (p.kind == "int" ? "an " : "a ") +
                                p.kind + ", not " + value.describe());
    if (p.kind == "float" && value.kind == Value::Kind::Int)
      value = Value::floating(value.number());
    bound[index] = true;
    frame.vars[p.name] = value;
  }
  for (size_t i = 0; i < def.params.size(); ++i) {
    if (bound[i])
      continue;
    const DefParam &p = def.params[i];
    if (!p.defaultValue)
      return fail(call.loc(), "missing argument '" + p.name + "' in the call "
                              "of '" + def.name + "'");
    // Defaults see consts only, like the def's body.
    std::vector<Frame> saved;
    std::swap(saved, frames_);
    frames_.emplace_back();
    Value v = eval(*p.defaultValue);
    std::swap(saved, frames_);
    if (v.isError())
      return v;
    if (p.kind == "float" && v.kind == Value::Kind::Int)
      v = Value::floating(v.number());
    frame.vars[p.name] = v;
  }

  // Parameter scope (LANGUAGE.md section 5).
  size_t parentIndex = scopes_.size() - 1;
  std::string child;
  if (scopeName) {
    child = *scopeName;
  } else {
    int n = scopes_[parentIndex].counters[def.name];
    child = n == 0 ? def.name : def.name + "_" + std::to_string(n);
  }
  bool opensScope = !child.empty();
  if (opensScope) {
    const std::string &parent = scopes_[parentIndex].path;
    scopes_.push_back({parent.empty() ? child : parent + "." + child, {}});
  }
  size_t paramsBefore = graph_.params.size();

  frames_.push_back(std::move(frame));
  callSites_.push_back(call.loc());
  bool ok = execBlock(def.body);
  Frame done = std::move(frames_.back());
  frames_.pop_back();
  callSites_.pop_back();
  if (opensScope)
    scopes_.pop_back();
  if (!ok)
    return Value::error();
  if (!scopeName && graph_.params.size() > paramsBefore)
    ++scopes_[parentIndex].counters[def.name];
  if (done.returned.empty())
    return Value::none();
  if (done.returned.size() == 1)
    return done.returned.front();
  return Value::makeList(std::move(done.returned));
}

Value Elaborator::callBuiltin(const std::string &name, const Builtin &builtin,
                              const CallExpr &call,
                              std::vector<std::pair<const Arg *, Value>> &args) {
  BuiltinArgs bound(builtin.params.size());
  std::vector<bool> given(builtin.params.size(), false);
  size_t positional = 0;
  for (auto &[arg, value] : args) {
    size_t index = builtin.params.size();
    if (arg->name.empty()) {
      if (positional >= builtin.params.size())
        return fail(arg->loc, "'" + name + "' takes at most " +
                                  std::to_string(builtin.params.size()) +
                                  (builtin.params.size() == 1 ? " argument"
                                                              : " arguments"));
      index = positional++;
    } else {
      for (size_t i = 0; i < builtin.params.size(); ++i)
        if (arg->name == builtin.params[i].name)
          index = i;
      if (index == builtin.params.size()) {
        std::vector<std::string> names;
        for (const BuiltinParam &p : builtin.params)
          names.push_back(p.name);
        std::string hint = closestMatch(arg->name, names);
        return fail(arg->loc, "'" + name + "' has no argument '" + arg->name +
                                  "'" +
                                  (hint.empty() ? ""
                                                : "; did you mean '" + hint +
                                                      "'?"));
      }
      if (given[index])
        return fail(arg->loc, "argument '" + arg->name + "' is given twice");
    }
    given[index] = true;
    bound[index] = value;
  }
  for (size_t i = 0; i < builtin.params.size(); ++i) {
    if (given[i])
      continue;
    if (!builtin.params[i].defaultValue)
      return fail(call.loc(), "missing argument '" +
                                  std::string(builtin.params[i].name) +
                                  "' in the call of '" + name + "'");
    bound[i] = *builtin.params[i].defaultValue;
  }
  Value result = builtin.fn(*this, call, bound);
  if (diags_.hadError())
    return Value::error();
  return result;
}

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

std::optional<ModelGraph> elaborate(const SourceSet &files,
                                    const std::string &modelName,
                                    bool training, const SemaOptions &options,
                                    DiagnosticEngine &diags) {
  Elaborator elaborator(files, training, options, diags);
  return elaborator.run(modelName);
}

} // namespace sinter
