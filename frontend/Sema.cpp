//===- Sema.cpp - Semantic analysis: the model and the entry point --------===//
//
// Elaboration runs one model: the declarations and -D first
// (SemaDecls.cpp), then the model's statements (SemaStmts.cpp), whose
// expressions (SemaExprs.cpp) and calls (SemaCalls.cpp) build the graph
// (SemaGraph.cpp). Also how types and values describe themselves.
//
//===----------------------------------------------------------------------===//

#include "frontend/Elaborator.h"

#include <sstream>

namespace sinter {
using namespace ast;

//===----------------------------------------------------------------------===//
// How types and values describe themselves
//===----------------------------------------------------------------------===//

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
