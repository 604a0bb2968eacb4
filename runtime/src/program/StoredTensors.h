//===- StoredTensors.h - A saved file's tensors, whole or in pieces ------===//
//
// A file Sinter saves (a checkpoint, --save) holds every tensor a rank has
// whole. A tensor sharded over W ranks (a shard of `sinter.global_shape`)
// is stored in W piece files beside it, `BASE.piece-R-of-W.safetensors`,
// each written by its own rank, so no rank ever holds the whole tensor:
// piece r holds elements [r * s, min((r + 1) * s, n)) of the tensor
// flattened (s = ceil(n / W)) under the tensor's name, and records the
// tensor's shape in its metadata ("shape.NAME": "d0,d1"). The main file's
// metadata "pieces" is W. Reading does not depend on W: any slice of any
// tensor can be read, on any number of ranks.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_PROGRAM_STOREDTENSORS_H
#define SINTER_RT_PROGRAM_STOREDTENSORS_H

#include "checkpoint/Safetensors.h"
#include "program/StepPlan.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sinter::rt {

struct StoredTensor {
  DType dtype = DType::F32;
  Shape shape; ///< the whole tensor's
};

class StoredTensors {
public:
  /// Opens `path` and, when its metadata says so, its pieces; checks that
  /// they agree.
  static Expected<StoredTensors> open(const std::string &path);

  const SafetensorsFile &file() const { return *main; }
  const std::string &path() const { return main->path(); }
  std::optional<StoredTensor> find(const std::string &name) const;
  /// Every tensor's name, whole or in pieces.
  std::vector<std::string> names() const;
  /// Elements [first, first + count) of tensor `name` flattened, converted
  /// to `to`, into `out`; elements past its end (a shard's padding) are 0.
  Status read(const std::string &name, uint64_t first, uint64_t count, void *out,
              DType to) const;

private:
  std::optional<SafetensorsFile> main;
  std::vector<SafetensorsFile> pieces;
  std::map<std::string, StoredTensor> inPieces;
};

/// Buffer `spec` of rank `rank` from tensor `name`: the whole tensor, or
/// the rank's shard of it (elements [rank * s, +s), zeros past the end).
Status readBuffer(const StoredTensors &stored, const std::string &name,
                  const BufferSpec &spec, uint64_t rank, void *out);

/// One rank's shard of a tensor: `shardElements` elements, [rank * s, +s)
/// of the tensor of `shape` flattened and padded.
struct TensorShard {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  const void *data = nullptr;
  uint64_t shardElements = 0;
};

/// Piece `rank` of `ranks` of the file `path`.
std::string piecePath(const std::string &path, uint64_t rank, uint64_t ranks);

/// Writes this rank's piece of `path`, atomically: each shard without its
/// padding.
Status writePiece(const std::string &path, uint64_t rank, uint64_t ranks,
                  const std::vector<TensorShard> &shards);

/// Removes `path` and every piece of it.
void removeWithPieces(const std::string &path);

/// A piece file whose main file is not there.
struct OrphanPiece {
  std::string name; ///< within the folder
  uint64_t bytes = 0;
};

/// Removes the pieces in `folder` whose main file does not exist: those of
/// a sharded checkpoint that a killed run began and never finished. Only
/// safe while no rank writes one.
std::vector<OrphanPiece> removeOrphanPieces(const std::string &folder);

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_STOREDTENSORS_H
