//===- Sema.h - Semantic analysis: from source files to a model graph -----===//
//
// Loads a file and its imports, then elaborates one model: consts and `-D`
// overrides are evaluated, defs are inlined with their parameter scopes,
// each `repeat` iteration becomes a call of a block shared by the equal
// iterations (RepeatBlocks.cpp), compile-time `if` is decided, and every
// operation's shape and dtype is checked. Errors are reported with the user's location
// and the chain of calls that led there.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_FRONTEND_SEMA_H
#define SINTER_FRONTEND_SEMA_H

#include "frontend/AST.h"
#include "frontend/Program.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sinter {

struct SemaOptions {
  /// `-D NAME=VALUE` (and config `set`/`shapes`/batch.micro), in order.
  std::vector<std::pair<std::string, std::string>> defines;
  /// Where `import "std/nn.sn"` is looked up after the importing file's folder.
  std::string stdlibDir;
};

/// All the files of one compilation, parsed.
class SourceSet {
public:
  SourceSet(SourceManager &sources, DiagnosticEngine &diags)
      : sources_(sources), diags_(diags) {}
  /// Parses `path` and, transitively, its imports. False after an error.
  bool load(const std::string &path, const std::string &stdlibDir);
  /// Parses an in-memory buffer as the main file (used by the fuzzer).
  bool loadBuffer(const std::string &name, const std::string &text,
                  const std::string &stdlibDir);
  const std::vector<std::unique_ptr<ast::File>> &files() const { return files_; }
  const ast::File *mainFile() const {
    return files_.empty() ? nullptr : files_.front().get();
  }

private:
  bool parse(uint32_t fileId, const std::string &stdlibDir,
             std::vector<std::string> &stack);

  SourceManager &sources_;
  DiagnosticEngine &diags_;
  std::vector<std::unique_ptr<ast::File>> files_;
  std::map<std::string, const ast::File *> byPath_;
};

/// Elaborates `modelName` (or the only model) in the given phase.
/// Returns nullopt after reporting an error.
std::optional<ModelGraph> elaborate(const SourceSet &files,
                                    const std::string &modelName,
                                    bool training, const SemaOptions &options,
                                    DiagnosticEngine &diags);

} // namespace sinter

#endif // SINTER_FRONTEND_SEMA_H
