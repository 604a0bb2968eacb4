//===- Value.h - Values seen while elaborating a Sinter program -----------===//
//
// A compile-time value (integer, possibly symbolic like B; float; bool;
// string; list; dtype; initialiser) or a reference to a tensor of the graph
// being built. `Error` is the poison value returned after a diagnostic.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_FRONTEND_VALUE_H
#define SINTER_FRONTEND_VALUE_H

#include "dialects/Graph/IR/ShapeRules.h"

#include <string>
#include <vector>

namespace sinter {

struct Value {
  enum class Kind { Error, None, Int, Float, Bool, String, List, DType, Init,
                    Tensor };
  Kind kind = Kind::Error;
  shape::Dim dim;           ///< Int: known or symbolic
  double f = 0;             ///< Float
  bool b = false;           ///< Bool
  std::string s;            ///< String; Init: the initialiser's name
  std::vector<Value> list;  ///< List
  std::vector<double> args; ///< Init: its arguments
  shape::DType dtype = shape::DType::F32; ///< DType
  int tensor = -1;          ///< Tensor: id in ModelGraph::values

  static Value error() { return Value(); }
  static Value none() { return make(Kind::None); }
  static Value integer(int64_t v) {
    Value x = make(Kind::Int);
    x.dim = shape::Dim::known(v);
    return x;
  }
  static Value size(shape::Dim d) {
    Value x = make(Kind::Int);
    x.dim = d;
    return x;
  }
  static Value floating(double v) {
    Value x = make(Kind::Float);
    x.f = v;
    return x;
  }
  static Value boolean(bool v) {
    Value x = make(Kind::Bool);
    x.b = v;
    return x;
  }
  static Value string(std::string v) {
    Value x = make(Kind::String);
    x.s = std::move(v);
    return x;
  }
  static Value makeList(std::vector<Value> v) {
    Value x = make(Kind::List);
    x.list = std::move(v);
    return x;
  }
  static Value type(shape::DType t) {
    Value x = make(Kind::DType);
    x.dtype = t;
    return x;
  }
  static Value initializer(std::string name, std::vector<double> a) {
    Value x = make(Kind::Init);
    x.s = std::move(name);
    x.args = std::move(a);
    return x;
  }
  static Value tensorRef(int id) {
    Value x = make(Kind::Tensor);
    x.tensor = id;
    return x;
  }

  bool isError() const { return kind == Kind::Error; }
  bool isTensor() const { return kind == Kind::Tensor; }
  bool isKnownInt() const { return kind == Kind::Int && dim.isKnown(); }
  bool isNumber() const { return isKnownInt() || kind == Kind::Float; }
  double number() const { return kind == Kind::Float ? f : double(dim.value()); }
  /// A short description for messages: "a tensor", "the integer 3", ...
  std::string describe() const;

private:
  static Value make(Kind k) {
    Value x;
    x.kind = k;
    return x;
  }
};

} // namespace sinter

#endif // SINTER_FRONTEND_VALUE_H
