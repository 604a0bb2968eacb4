//===- Fatbinary.cpp - One fatbinary for every chip the program runs on ---===//
//
// gpu-module-to-binary leaves one PTX object per `#nvvm.target`. Each is
// assembled by the toolkit's ptxas for its chip, and `fatbinary` puts the
// cubins and the newest chip's PTX into one image: the driver loads the
// cubin of the GPU's architecture, and JIT-compiles the PTX on a newer one.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

using namespace mlir;

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDAFATBINARY
#include "compiler/Target/CUDA/Passes.h.inc"

namespace {

/// A temporary file, removed with this object.
struct TempFile {
  llvm::SmallString<128> path;

  TempFile() = default;
  TempFile(TempFile &&other) : path(std::move(other.path)) { other.path.clear(); }
  TempFile &operator=(TempFile &&other) {
    remove();
    path = std::move(other.path);
    other.path.clear();
    return *this;
  }
  ~TempFile() { remove(); }

  LogicalResult create(StringRef stem, StringRef suffix) {
    remove();
    return failure(bool(llvm::sys::fs::createTemporaryFile(stem, suffix, path)));
  }

private:
  void remove() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
    path.clear();
  }
};

class FatbinaryBuilder {
public:
  FatbinaryBuilder(gpu::BinaryOp binary, StringRef toolkit)
      : binary(binary), toolkit(toolkit) {}

  /// The binary's PTX objects as one fatbinary object.
  LogicalResult run() {
    SmallVector<std::string> images;
    TempFile newestPtx;
    int newest = -1;
    for (Attribute a : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(a);
      auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
      if (!target || object.getFormat() != gpu::CompilationTarget::Assembly)
        return binary.emitError("internal error: sinter-cuda-fatbinary takes "
                                "PTX objects of NVVM targets");
      StringRef chip = target.getChip();
      int sm = 0;
      if (!chip.starts_with("sm_") || chip.drop_front(3).getAsInteger(10, sm))
        return binary.emitError("internal error: NVVM target chip ") << chip;
      TempFile ptx, cubin;
      if (failed(write(object.getObject().getValue(), ptx)) ||
          failed(cubin.create("sinter-kernels", "cubin")) ||
          failed(assemble(ptx, chip, target.getO(), cubin)))
        return failure();
      std::string image = "--image3=kind=elf,sm=" + std::to_string(sm) +
                          ",file=" + cubin.path.str().str();
      cubins.push_back(std::move(cubin));
      images.push_back(image);
      if (sm > newest) {
        newest = sm;
        newestPtx = std::move(ptx);
        newestTarget = target;
      }
    }
    if (newest < 0)
      return binary.emitError("internal error: a gpu.binary without objects");
    images.push_back("--image3=kind=ptx,sm=" + std::to_string(newest) +
                     ",file=" + newestPtx.path.str().str());
    FailureOr<std::string> fatbin = combine(images);
    if (failed(fatbin))
      return failure();
    auto object = gpu::ObjectAttr::get(
        binary.getContext(), newestTarget, gpu::CompilationTarget::Fatbin,
        StringAttr::get(binary.getContext(), *fatbin), DictionaryAttr(),
        /*kernels=*/nullptr);
    binary.setObjectsAttr(ArrayAttr::get(binary.getContext(), {object}));
    return success();
  }

private:
  /// The toolkit's `tool`, or the one on PATH without a toolkit.
  FailureOr<std::string> find(StringRef tool) {
    llvm::ErrorOr<std::string> path =
        toolkit.empty()
            ? llvm::sys::findProgramByName(tool)
            : llvm::sys::findProgramByName(tool, {(toolkit + "/bin").str()});
    if (!path)
      return binary.emitError("cannot find `")
             << tool << "` " << (toolkit.empty() ? "on PATH" : "in " + toolkit + "/bin")
             << ", which builds the CUDA kernels";
    return *path;
  }

  LogicalResult write(StringRef text, TempFile &file) {
    std::error_code error;
    if (failed(file.create("sinter-kernels", "ptx")))
      return binary.emitError("cannot create a temporary file for the PTX");
    llvm::raw_fd_ostream os(file.path, error);
    if (error)
      return binary.emitError("cannot write ") << file.path << ": " << error.message();
    os << text;
    return success();
  }

  /// Runs `tool` with `args`; its output is the error when it fails.
  LogicalResult execute(StringRef tool, ArrayRef<std::string> args, StringRef what) {
    FailureOr<std::string> path = find(tool);
    if (failed(path))
      return failure();
    TempFile log;
    if (failed(log.create("sinter-kernels", "log")))
      return binary.emitError("cannot create a temporary file for ") << tool << "'s log";
    SmallVector<StringRef> argv = {tool};
    argv.append(args.begin(), args.end());
    std::optional<StringRef> redirects[] = {std::nullopt, log.path.str(), log.path.str()};
    std::string message;
    if (llvm::sys::ExecuteAndWait(*path, argv, std::nullopt, redirects, 0, 0,
                                  &message) == 0)
      return success();
    auto output = llvm::MemoryBuffer::getFile(log.path);
    return binary.emitError("`")
           << tool << "` failed " << what << ": "
           << (output ? (*output)->getBuffer().trim() : StringRef(message));
  }

  LogicalResult assemble(const TempFile &ptx, StringRef chip, int opt, const TempFile &cubin) {
    return execute("ptxas",
                   {"-arch", chip.str(), "--opt-level", std::to_string(opt),
                    ptx.path.str().str(), "-o", cubin.path.str().str()},
                   ("on the kernels for " + chip).str());
  }

  FailureOr<std::string> combine(ArrayRef<std::string> images) {
    TempFile out;
    if (failed(out.create("sinter-kernels", "fatbin")))
      return binary.emitError("cannot create a temporary file for the fatbinary");
    SmallVector<std::string> args = {"-64", "--create=" + out.path.str().str()};
    args.append(images.begin(), images.end());
    if (failed(execute("fatbinary", args, "combining the kernels' cubins")))
      return failure();
    auto bytes = llvm::MemoryBuffer::getFile(out.path, /*IsText=*/false,
                                             /*RequiresNullTerminator=*/false);
    if (!bytes)
      return binary.emitError("cannot read the fatbinary ") << out.path;
    return (*bytes)->getBuffer().str();
  }

  gpu::BinaryOp binary;
  StringRef toolkit;
  NVVM::NVVMTargetAttr newestTarget;
  SmallVector<TempFile> cubins;
};

struct CUDAFatbinary : public impl::CUDAFatbinaryBase<CUDAFatbinary> {
  using Base::Base;
  void runOnOperation() override {
    for (auto binary : llvm::to_vector(getOperation().getOps<gpu::BinaryOp>()))
      if (failed(FatbinaryBuilder(binary, toolkitPath).run()))
        return signalPassFailure();
  }
};

} // namespace
} // namespace sinter::cuda
