//===- SemaDecls.cpp - Declarations, consts and -D ------------------------===//
//
// The defs and consts of every file, the -D overrides of consts and shape
// symbols, and the lazy evaluation of a const.
//
//===----------------------------------------------------------------------===//

#include "frontend/Elaborator.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace sinter {
using namespace ast;

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

} // namespace sinter
