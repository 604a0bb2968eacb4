//===- SemaCalls.cpp - Calls of defs and builtins -------------------------===//
//
// Binds a call's arguments to the parameters of a def (inlined in its own
// frame and parameter scope) or of a builtin.
//
//===----------------------------------------------------------------------===//

#include "frontend/Elaborator.h"

namespace sinter {
using namespace ast;

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

} // namespace sinter
