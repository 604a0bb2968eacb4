//===- ParallelCodegen.cpp - Optimise and emit a module on every core -----===//
//
// A step is hundreds of small functions (one per loop nest), so splitting the
// module by function balances well. Each part crosses to its thread as
// bitcode, because an LLVMContext is not shared between threads.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Host/ParallelCodegen.h"

#include "compiler/Target/Host/ObjectEmitter.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/SplitModule.h"

namespace sinter::host {

namespace {

/// Optimises one part and writes its object file; an error message, or
/// empty.
std::string compilePart(const llvm::SmallVector<char, 0> &bitcode,
                        std::string &objectPath) {
  llvm::LLVMContext context;
  llvm::MemoryBufferRef buffer(llvm::StringRef(bitcode.data(), bitcode.size()),
                               "sinter-step-part");
  llvm::Expected<std::unique_ptr<llvm::Module>> part =
      llvm::parseBitcodeFile(buffer, context);
  if (!part)
    return llvm::toString(part.takeError());
  if (llvm::Error err = optimizeLLVMIR(**part))
    return llvm::toString(std::move(err));
  llvm::SmallString<128> path;
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("sinter-step", "o", fd, path))
    return "cannot create a temporary file: " + ec.message();
  objectPath = std::string(path);
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  if (llvm::Error err = emitObject(**part, os))
    return llvm::toString(std::move(err));
  return "";
}

} // namespace

llvm::Expected<std::vector<std::string>>
compileInParallel(llvm::Module &module, unsigned jobs) {
  jobs = std::max(1u, jobs);
  std::vector<llvm::SmallVector<char, 0>> parts;
  llvm::SplitModule(module, jobs, [&](std::unique_ptr<llvm::Module> part) {
    llvm::raw_svector_ostream os(parts.emplace_back());
    llvm::WriteBitcodeToFile(*part, os);
  });
  std::vector<std::string> objects(parts.size());
  std::vector<std::string> errors(parts.size());
  {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(jobs));
    for (size_t i = 0; i < parts.size(); ++i)
      pool.async([&, i] { errors[i] = compilePart(parts[i], objects[i]); });
    pool.wait();
  }
  for (const std::string &error : errors) {
    if (error.empty())
      continue;
    for (const std::string &object : objects)
      if (!object.empty())
        llvm::sys::fs::remove(object);
    return llvm::createStringError(error);
  }
  return objects;
}

} // namespace sinter::host
