//===- ASTDump.cpp - Printing the syntax tree for --emit=ast --------------===//

#include "frontend/AST.h"

#include <ostream>

namespace sinter::ast {

const char *spelling(UnaryOp op) { return op == UnaryOp::Neg ? "-" : "not"; }

const char *spelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add: return "+";
  case BinaryOp::Sub: return "-";
  case BinaryOp::Mul: return "*";
  case BinaryOp::Div: return "/";
  case BinaryOp::FloorDiv: return "//";
  case BinaryOp::Mod: return "%";
  case BinaryOp::MatMul: return "@";
  case BinaryOp::Lt: return "<";
  case BinaryOp::Le: return "<=";
  case BinaryOp::Gt: return ">";
  case BinaryOp::Ge: return ">=";
  case BinaryOp::Eq: return "==";
  case BinaryOp::Ne: return "!=";
  case BinaryOp::And: return "and";
  case BinaryOp::Or: return "or";
  }
  return "?";
}

namespace {
/// Writes one node per line, indented by depth, each with `@line:col`.
class Dumper {
public:
  explicit Dumper(std::ostream &os) : os_(os) {}

  void file(const File &f) {
    for (const Import &i : f.imports)
      line(i.loc) << "Import \"" << i.path << "\"\n";
    for (const Const &c : f.consts) {
      line(c.loc) << "Const " << c.name << "\n";
      nested([&] { expr(*c.value); });
    }
    for (const auto &d : f.defs) {
      line(d->loc) << "Def " << d->name << "\n";
      nested([&] {
        for (const DefParam &p : d->params) {
          line(p.loc) << "Arg " << p.name
                      << (p.kind.empty() ? "" : ": " + p.kind) << "\n";
          if (p.defaultValue)
            nested([&] { expr(*p.defaultValue); });
        }
        block(d->body);
      });
    }
    for (const auto &m : f.models) {
      line(m->loc) << "Model " << m->name << "\n";
      nested([&] { block(m->body); });
    }
  }

private:
  std::ostream &line(Loc loc) {
    for (unsigned i = 0; i < depth_; ++i)
      os_ << "  ";
    os_ << "@" << loc.line << ":" << loc.col << " ";
    return os_;
  }
  template <typename F> void nested(F f) {
    ++depth_;
    f();
    --depth_;
  }

  void type(const TypeExpr &t) {
    line(t.loc) << "Type " << t.dtype << " rank " << t.dims.size() << "\n";
    nested([&] {
      for (const auto &d : t.dims)
        expr(*d);
    });
  }

  void block(const Block &b) {
    for (const auto &s : b)
      stmt(*s);
  }

  void stmt(const Stmt &s) {
    if (auto *in = dyn<InputStmt>(&s)) {
      line(s.loc()) << "Input " << in->name << "\n";
      nested([&] { type(in->type); });
    } else if (auto *p = dyn<ParamStmt>(&s)) {
      line(s.loc()) << (p->isState ? "State " : "Param ") << p->name << "\n";
      nested([&] {
        type(p->type);
        expr(*p->init);
      });
    } else if (auto *u = dyn<StateUpdateStmt>(&s)) {
      line(s.loc()) << "StateUpdate " << u->name << "\n";
      nested([&] { expr(*u->value); });
    } else if (auto *a = dyn<AssignStmt>(&s)) {
      line(s.loc()) << "Assign";
      for (const std::string &t : a->targets)
        os_ << " " << t;
      os_ << "\n";
      nested([&] { expr(*a->value); });
    } else if (auto *l = dyn<LossStmt>(&s)) {
      line(s.loc()) << "Loss\n";
      nested([&] { expr(*l->value); });
    } else if (auto *m = dyn<MetricStmt>(&s)) {
      line(s.loc()) << "Metric " << m->name << "\n";
      nested([&] { expr(*m->value); });
    } else if (auto *o = dyn<OutputStmt>(&s)) {
      line(s.loc()) << "Output " << o->name << "\n";
      nested([&] { expr(*o->value); });
    } else if (auto *r = dyn<RepeatStmt>(&s)) {
      line(s.loc()) << "Repeat scope \"" << r->scope << "\""
                    << (r->var.empty() ? "" : " as " + r->var) << "\n";
      nested([&] {
        expr(*r->count);
        block(r->body);
      });
    } else if (auto *i = dyn<IfStmt>(&s)) {
      line(s.loc()) << "If\n";
      nested([&] {
        expr(*i->cond);
        block(i->thenBody);
        if (!i->elseBody.empty()) {
          line(s.loc()) << "Else\n";
          nested([&] { block(i->elseBody); });
        }
      });
    } else if (auto *ret = dyn<ReturnStmt>(&s)) {
      line(s.loc()) << "Return\n";
      nested([&] {
        for (const auto &v : ret->values)
          expr(*v);
      });
    }
  }

  void expr(const Expr &e) {
    if (auto *i = dyn<IntExpr>(&e)) {
      line(e.loc()) << "Int " << i->value << "\n";
    } else if (auto *f = dyn<FloatExpr>(&e)) {
      line(e.loc()) << "Float " << f->spelling << "\n";
    } else if (auto *s = dyn<StringExpr>(&e)) {
      line(e.loc()) << "String \"" << s->value << "\"\n";
    } else if (auto *b = dyn<BoolExpr>(&e)) {
      line(e.loc()) << "Bool " << (b->value ? "true" : "false") << "\n";
    } else if (dyn<TrainingExpr>(&e)) {
      line(e.loc()) << "Training\n";
    } else if (auto *n = dyn<NameExpr>(&e)) {
      line(e.loc()) << "Name " << n->name << "\n";
    } else if (auto *u = dyn<UnaryExpr>(&e)) {
      line(e.loc()) << "Unary " << spelling(u->op) << "\n";
      nested([&] { expr(*u->operand); });
    } else if (auto *b = dyn<BinaryExpr>(&e)) {
      line(e.loc()) << "Binary " << spelling(b->op) << "\n";
      nested([&] {
        expr(*b->lhs);
        expr(*b->rhs);
      });
    } else if (auto *c = dyn<CallExpr>(&e)) {
      line(e.loc()) << "Call " << c->callee << "\n";
      nested([&] {
        for (const Arg &a : c->args) {
          if (!a.name.empty()) {
            line(a.loc) << "Keyword " << a.name << "\n";
            nested([&] { expr(*a.value); });
          } else {
            expr(*a.value);
          }
        }
      });
    } else if (auto *a = dyn<AttributeExpr>(&e)) {
      line(e.loc()) << "Attribute " << a->field << "\n";
      nested([&] { expr(*a->base); });
    } else if (auto *x = dyn<IndexExpr>(&e)) {
      line(e.loc()) << "Index\n";
      nested([&] {
        expr(*x->base);
        expr(*x->index);
      });
    } else if (auto *l = dyn<ListExpr>(&e)) {
      line(e.loc()) << "List\n";
      nested([&] {
        for (const auto &v : l->elements)
          expr(*v);
      });
    }
  }

  std::ostream &os_;
  unsigned depth_ = 0;
};
} // namespace

void dump(const File &file, const SourceManager &sources, std::ostream &os) {
  os << "File \"" << sources.path(file.id) << "\"\n";
  Dumper(os).file(file);
}

} // namespace sinter::ast
