//===- SourceSet.cpp - Loading a file and its imports ---------------------===//

#include "frontend/Parser.h"
#include "frontend/Sema.h"

#include <algorithm>
#include <filesystem>

namespace sinter {

namespace fs = std::filesystem;

static std::string canonicalPath(const std::string &path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::path(path), ec);
  return ec ? path : p.string();
}

bool SourceSet::load(const std::string &path, const std::string &stdlibDir) {
  std::string error;
  uint32_t id = sources_.addFile(path, error);
  if (!id) {
    diags_.error(Loc(), error);
    return false;
  }
  std::vector<std::string> stack = {canonicalPath(path)};
  return parse(id, stdlibDir, stack);
}

bool SourceSet::loadBuffer(const std::string &name, const std::string &text,
                           const std::string &stdlibDir) {
  uint32_t id = sources_.addBuffer(name, text);
  std::vector<std::string> stack = {name};
  return parse(id, stdlibDir, stack);
}

bool SourceSet::parse(uint32_t fileId, const std::string &stdlibDir,
                      std::vector<std::string> &stack) {
  Parser parser(fileId, sources_.text(fileId), diags_);
  std::unique_ptr<ast::File> file = parser.parseFile();
  if (!file)
    return false;
  file->id = fileId;
  const ast::File *parsed = file.get();
  byPath_[stack.back()] = parsed;
  files_.push_back(std::move(file));

  fs::path dir = fs::path(sources_.path(fileId)).parent_path();
  for (const ast::Import &imp : parsed->imports) {
    std::vector<fs::path> candidates = {dir / imp.path};
    if (!stdlibDir.empty()) {
      // `import "std/nn.sn"` names a file of the standard library folder.
      candidates.push_back(fs::path(stdlibDir) / imp.path);
      if (imp.path.rfind("std/", 0) == 0)
        candidates.push_back(fs::path(stdlibDir) / imp.path.substr(4));
    }
    std::string found;
    for (const fs::path &c : candidates) {
      std::error_code ec;
      if (fs::is_regular_file(c, ec)) {
        found = canonicalPath(c.string());
        break;
      }
    }
    if (found.empty()) {
      std::string where = "'" + dir.string() + "'";
      if (!stdlibDir.empty())
        where += " and the standard library '" + stdlibDir + "'";
      diags_.error(imp.loc, "cannot find '" + imp.path + "' (looked in " +
                                where + ")");
      return false;
    }
    if (std::find(stack.begin(), stack.end(), found) != stack.end()) {
      std::string cycle;
      for (const std::string &s : stack)
        cycle += fs::path(s).filename().string() + " -> ";
      diags_.error(imp.loc, "import cycle: " + cycle +
                                fs::path(found).filename().string());
      return false;
    }
    if (byPath_.count(found))
      continue; // Each file is read once, however often it is imported.
    std::string error;
    uint32_t id = sources_.addFile(found, error);
    if (!id) {
      diags_.error(imp.loc, error);
      return false;
    }
    stack.push_back(found);
    bool ok = parse(id, stdlibDir, stack);
    stack.pop_back();
    if (!ok)
      return false;
  }
  return true;
}

} // namespace sinter
