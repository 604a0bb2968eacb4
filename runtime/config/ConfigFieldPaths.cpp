//===- ConfigFieldPaths.cpp - Field paths and their positions in the file -===//
//
// A field is named by its path from the top of the config; positions come
// from a TextFormat::ParseInfoTree recorded during the parse.
//
//===----------------------------------------------------------------------===//

#include "runtime/config/ConfigInternals.h"

namespace sinter::config::detail {

const pb::Descriptor *typeAt(const FieldPath &path) {
  return path.empty() ? TrainConfig::descriptor() : path.back().field->message_type();
}

/// `path` extended by the field `name` of the message it ends at.
FieldPath sub(FieldPath path, const char *name, int index) {
  const FieldDescriptor *f = typeAt(path)->FindFieldByName(name);
  path.push_back({f, index, ""});
  return path;
}

std::string displayName(const FieldPath &path) {
  std::string out;
  for (const PathStep &step : path) {
    if (step.hidden)
      continue;
    out += (out.empty() ? "" : ".") + step.field->name();
    if (!step.key.empty())
      out += "." + step.key;
    else if (step.index >= 0 && !step.field->is_map())
      out += "[" + std::to_string(step.index) + "]";
  }
  return out;
}

std::pair<int, int> Locator::find(const FieldPath &path) const {
  std::pair<int, int> best{-1, -1};
  const ParseInfoTree *tree = root;
  for (const PathStep &step : path) {
    if (!tree)
      break;
    pb::TextFormat::ParseLocation loc = tree->GetLocation(step.field, step.index);
    if (loc.line < 0)
      break;
    best = {loc.line, loc.column};
    if (step.field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE)
      break;
    tree = tree->GetTreeForNested(step.field, step.index);
  }
  return best;
}

/// The messages still open when the parser stopped: the parser creates a
/// nested tree when a message starts and records its location only when it
/// ends, so the open ones are the nested trees without a location.
FieldPath openPath(const ParseInfoTree *tree) {
  FieldPath path;
  const pb::Descriptor *d = TrainConfig::descriptor();
  while (tree) {
    const ParseInfoTree *next = nullptr;
    for (int i = 0; i < d->field_count() && !next; ++i) {
      const FieldDescriptor *f = d->field(i);
      if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE)
        continue;
      if (!f->is_repeated()) {
        const ParseInfoTree *nested = tree->GetTreeForNested(f, -1);
        if (nested && tree->GetLocation(f, -1).line < 0) {
          next = nested;
          path.push_back({f, -1, ""});
        }
        continue;
      }
      // Only the last element of a repeated field can still be open.
      int last = -1;
      while (tree->GetTreeForNested(f, last + 1))
        ++last;
      if (last >= 0 && tree->GetLocation(f, last).line < 0) {
        next = tree->GetTreeForNested(f, last);
        path.push_back({f, last, ""});
      }
    }
    if (!next)
      break;
    tree = next;
    d = path.back().field->message_type();
  }
  return path;
}

} // namespace sinter::config::detail
