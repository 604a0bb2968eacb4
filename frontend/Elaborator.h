//===- Elaborator.h - Internal: the interpreter behind Sema ---------------===//
//
// Private to the frontend. The Sema*.cpp files walk declarations
// (SemaDecls.cpp), statements (SemaStmts.cpp), expressions (SemaExprs.cpp)
// and calls (SemaCalls.cpp), building the graph through SemaGraph.cpp;
// Builtins.cpp implements the operations of LANGUAGE.md section 7 and the
// initialisers of section 6 on top of the helpers declared here
// (SemaGraph.cpp, SemaArgs.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_FRONTEND_ELABORATOR_H
#define SINTER_FRONTEND_ELABORATOR_H

#include "frontend/Sema.h"
#include "frontend/Value.h"

#include <functional>
#include <map>
#include <optional>
#include <unordered_map>

namespace sinter {

/// One formal parameter of a builtin: a name and, unless required, a default.
struct BuiltinParam {
  const char *name;
  std::optional<Value> defaultValue;
};

class Elaborator;
/// Arguments bound to a builtin's parameters, in declaration order.
using BuiltinArgs = std::vector<Value>;
using BuiltinFn = std::function<Value(Elaborator &, const ast::CallExpr &,
                                      BuiltinArgs &)>;

struct Builtin {
  std::vector<BuiltinParam> params;
  BuiltinFn fn;
};

/// The table of builtins, by name (operations, losses, initialisers).
const std::map<std::string, Builtin> &builtinTable();

class Elaborator {
public:
  Elaborator(const SourceSet &files, bool training, const SemaOptions &options,
             DiagnosticEngine &diags);
  std::optional<ModelGraph> run(const std::string &modelName);

  //===--- Helpers for builtins ----------------------------------------===//
  bool training() const { return graph_.training; }
  /// A number no other node of this model has: keys a dropout's mask. It
  /// counts every node emitted, including those a repeated block took.
  int64_t nextNodeIndex() const { return emitted_; }
  const TensorType &typeOf(const Value &v) const { return graph_.values[v.tensor]; }
  /// Reports an error at `loc` (with the call chain) and returns poison.
  Value fail(Loc loc, const std::string &message);
  void warn(Loc loc, const std::string &message);
  /// Appends a node; returns a Tensor value for each result.
  std::vector<Value> emit(const std::string &op, Loc loc,
                          const std::vector<Value> &operands,
                          std::vector<std::pair<std::string, AttrValue>> attrs,
                          const std::vector<TensorType> &results);
  Value emit1(const std::string &op, Loc loc, const std::vector<Value> &operands,
              std::vector<std::pair<std::string, AttrValue>> attrs,
              const TensorType &result) {
    return emit(op, loc, operands, std::move(attrs), {result})[0];
  }
  /// A tensor from a tensor or a compile-time number (as a scalar constant of
  /// dtype `like`). `what` names the argument in messages.
  Value toTensor(const Value &v, Loc loc, const char *what,
                 std::optional<shape::DType> like = std::nullopt);
  Value constant(double value, shape::DType dtype, Loc loc);
  /// Elementwise binary operation with broadcasting and dtype checks.
  Value binary(const std::string &op, Loc loc, const Value &a, const Value &b);
  Value checkedShape(const shape::Result &r, Loc loc, const std::string &what);
  /// The known upper bound of an integer tensor's values, if any.
  std::optional<int64_t> valueBound(const Value &v) const;
  void setValueBound(const Value &v, int64_t bound) { bounds_[v.tensor] = bound; }

  // Compile-time argument readers; on failure they report and return nullopt.
  std::optional<int64_t> intArg(const Value &v, Loc loc, const char *what);
  std::optional<double> numberArg(const Value &v, Loc loc, const char *what);
  std::optional<bool> boolArg(const Value &v, Loc loc, const char *what);
  std::optional<std::string> stringArg(const Value &v, Loc loc, const char *what);
  std::optional<std::vector<int64_t>> intListArg(const Value &v, Loc loc,
                                                 const char *what);
  std::optional<shape::Shape> shapeArg(const Value &v, Loc loc, const char *what);
  std::optional<int> tensorArg(const Value &v, Loc loc, const char *what);

private:
  /// Bounds that turn runaway programs into errors instead of hangs.
  static constexpr uint64_t kMaxSteps = 5'000'000;
  static constexpr size_t kMaxNodes = 4'000'000;
  static constexpr size_t kMaxCallDepth = 64;
  static constexpr int64_t kMaxRepeat = 100'000;
  static constexpr int64_t kMaxElements = int64_t(1) << 48;

  struct Frame {
    std::unordered_map<std::string, Value> vars;
    /// Local name of each `state` declared in this frame -> its full name.
    std::unordered_map<std::string, std::string> states;
    bool isDef = false;
    std::vector<Value> returned;
    bool hasReturned = false;
  };
  struct Scope {
    std::string path;
    std::unordered_map<std::string, int> counters;
  };

  bool collectDeclarations();
  bool applyDefines();
  Value constValue(const std::string &name, Loc useLoc);

  bool execBlock(const ast::Block &block);
  bool execStmt(const ast::Stmt &stmt);
  bool execParam(const ast::ParamStmt &stmt);
  bool execInput(const ast::InputStmt &stmt);
  bool execAssign(const ast::AssignStmt &stmt);
  bool execStateUpdate(const ast::StateUpdateStmt &stmt);
  bool execRepeat(const ast::RepeatStmt &stmt);
  bool execIf(const ast::IfStmt &stmt);
  bool execReturn(const ast::ReturnStmt &stmt);
  bool execLoss(const ast::LossStmt &stmt);
  bool execOutput(const ast::OutputStmt &stmt);
  bool execMetric(const ast::MetricStmt &stmt);
  /// Replaces the nodes one iteration of `stmt` added (from `firstNode`,
  /// values from `firstValue`) by a call of the block they form, shared
  /// with every equal iteration; leaves them unrolled when they cannot form
  /// one (RepeatBlocks.cpp).
  void outlineIteration(const ast::RepeatStmt &stmt, size_t firstNode,
                        int firstValue, int64_t firstIndex);
  std::optional<TensorType> evalType(const ast::TypeExpr &type, bool isStatic);

  Value eval(const ast::Expr &expr);
  Value evalName(const ast::NameExpr &expr);
  Value evalUnary(const ast::UnaryExpr &expr);
  Value evalBinary(const ast::BinaryExpr &expr);
  Value evalCompileTime(const ast::BinaryExpr &expr, const Value &a,
                        const Value &b);
  Value evalAttribute(const ast::AttributeExpr &expr);
  Value evalIndex(const ast::IndexExpr &expr);
  Value evalCall(const ast::CallExpr &expr);
  Value callDef(const ast::Def &def, const ast::CallExpr &call,
                std::vector<std::pair<const ast::Arg *, Value>> &args);
  Value callBuiltin(const std::string &name, const Builtin &builtin,
                    const ast::CallExpr &call,
                    std::vector<std::pair<const ast::Arg *, Value>> &args);
  bool defAccepts(const ast::Def &def,
                  const std::vector<std::pair<const ast::Arg *, Value>> &args);
  std::vector<std::string> visibleNames() const;
  SourceStack stackAt(Loc loc) const;
  bool step(Loc loc);
  /// Records an input, metric or output name; false (reported) when taken.
  bool claimName(const std::string &kind, const std::string &name, Loc loc);

  const SourceSet &files_;
  const SemaOptions &options_;
  DiagnosticEngine &diags_;
  ModelGraph graph_;

  std::map<std::string, const ast::Const *> consts_;
  std::map<std::string, Value> constValues_;
  std::vector<std::string> constsInProgress_;
  std::map<std::string, Value> overrides_; ///< -D values by name
  std::map<std::string, const ast::Def *> defs_;
  std::vector<Frame> frames_;
  std::vector<Scope> scopes_;
  std::vector<Loc> callSites_; ///< outermost first
  std::map<std::string, size_t> paramIndex_;
  std::unordered_map<int, int64_t> bounds_;
  std::map<std::string, Loc> stateUpdated_;
  std::map<std::string, std::map<std::string, Loc>> claimed_;
  bool sawLoss_ = false;
  uint64_t steps_ = 0;
  int64_t emitted_ = 0; ///< nodes emitted so far (nextNodeIndex)
  /// Iterations being elaborated for a block: a repeat inside one unrolls.
  int outlining_ = 0;
  /// Each block's structure (RepeatBlocks.cpp) -> its index in graph_.blocks.
  std::map<std::string, size_t> blockKeys_;
};

} // namespace sinter

#endif // SINTER_FRONTEND_ELABORATOR_H
