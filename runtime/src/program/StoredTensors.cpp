//===- StoredTensors.cpp - A saved file's tensors, whole or in pieces ----===//

#include "program/StoredTensors.h"

#include "program/Convert.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <sys/stat.h>

namespace sinter::rt {

static constexpr const char *kPieceFormat = "sinter-piece-1";

static std::string shapeKey(const std::string &name) { return "shape." + name; }

static std::string formatDims(const Shape &shape) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "," : "") + std::to_string(shape[i]);
  return text;
}

static std::optional<Shape> parseDims(const std::string &text) {
  Shape shape;
  const char *p = text.c_str();
  while (*p) {
    char *end = nullptr;
    errno = 0;
    unsigned long long d = std::strtoull(p, &end, 10);
    if (end == p || errno == ERANGE || *p == '-')
      return std::nullopt;
    shape.push_back(uint64_t(d));
    p = end;
    if (*p == ',' && p[1])
      ++p;
    else if (*p)
      return std::nullopt;
  }
  return shape;
}

/// The elements [r * s, +s) of n that exist.
static uint64_t presentIn(uint64_t n, uint64_t shard, uint64_t r) {
  uint64_t first = r * shard;
  return first < n ? std::min(shard, n - first) : 0;
}

static std::string stem(const std::string &path) {
  const std::string ext = ".safetensors";
  if (path.size() > ext.size() &&
      path.compare(path.size() - ext.size(), ext.size(), ext) == 0)
    return path.substr(0, path.size() - ext.size());
  return path;
}

std::string piecePath(const std::string &path, uint64_t rank, uint64_t ranks) {
  return stem(path) + ".piece-" + std::to_string(rank) + "-of-" +
         std::to_string(ranks) + ".safetensors";
}

Status writePiece(const std::string &path, uint64_t rank, uint64_t ranks,
                  const std::vector<TensorShard> &shards) {
  std::vector<SafetensorsTensor> tensors;
  std::map<std::string, std::string> meta = {{"format", kPieceFormat},
                                             {"piece", std::to_string(rank)},
                                             {"pieces", std::to_string(ranks)}};
  for (const TensorShard &t : shards) {
    uint64_t n = numElements(t.shape).value_or(0);
    if (t.shardElements * ranks < n)
      return Status::error("internal error: a shard of '" + t.name +
                           "' too small for " + std::to_string(ranks) + " ranks");
    tensors.push_back({t.name, t.dtype, {presentIn(n, t.shardElements, rank)}, t.data});
    meta[shapeKey(t.name)] = formatDims(t.shape);
  }
  return writeSafetensors(piecePath(path, rank, ranks), tensors, meta);
}

std::vector<OrphanPiece> removeOrphanPieces(const std::string &folder) {
  std::vector<OrphanPiece> removed;
  DIR *d = opendir(folder.c_str());
  if (!d)
    return removed;
  std::vector<std::string> names;
  while (dirent *e = readdir(d))
    names.push_back(e->d_name);
  closedir(d);
  for (const std::string &name : names) {
    size_t at = name.rfind(".piece-");
    const std::string ext = ".safetensors";
    if (at == std::string::npos || name.size() < ext.size() ||
        name.compare(name.size() - ext.size(), ext.size(), ext) != 0)
      continue;
    struct stat main, piece;
    std::string path = folder + "/" + name;
    if (stat((folder + "/" + name.substr(0, at) + ext).c_str(), &main) == 0 ||
        stat(path.c_str(), &piece) != 0)
      continue;
    if (std::remove(path.c_str()) == 0)
      removed.push_back({name, uint64_t(piece.st_size)});
  }
  return removed;
}

void removeWithPieces(const std::string &path) {
  std::remove(path.c_str());
  std::string dir = ".", base = stem(path);
  if (size_t slash = base.rfind('/'); slash != std::string::npos) {
    dir = base.substr(0, slash);
    base = base.substr(slash + 1);
  }
  std::string prefix = base + ".piece-";
  DIR *d = opendir(dir.c_str());
  if (!d)
    return;
  std::vector<std::string> doomed;
  while (dirent *e = readdir(d))
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0)
      doomed.push_back(dir + "/" + e->d_name);
  closedir(d);
  for (const std::string &p : doomed)
    std::remove(p.c_str());
}

static Expected<uint64_t> metaCount(const SafetensorsFile &f, const char *key) {
  auto it = f.metadata().find(key);
  char *end = nullptr;
  if (it == f.metadata().end() || it->second.empty() || it->second[0] == '-')
    return Status::error(f.path() + ": metadata '" + key + "' is missing or negative");
  errno = 0;
  unsigned long long v = std::strtoull(it->second.c_str(), &end, 10);
  if (*end || errno == ERANGE)
    return Status::error(f.path() + ": metadata '" + key + "' is not a number");
  return uint64_t(v);
}

Expected<StoredTensors> StoredTensors::open(const std::string &path) {
  Expected<SafetensorsFile> file = SafetensorsFile::read(path);
  if (!file.ok())
    return file.status();
  StoredTensors stored;
  stored.main.emplace(file.take());
  if (!stored.main->metadata().count("pieces"))
    return stored;
  Expected<uint64_t> ranks = metaCount(*stored.main, "pieces");
  if (!ranks.ok())
    return ranks.status();
  if (*ranks == 0 || *ranks > 65536)
    return Status::error(path + ": metadata 'pieces' is " + std::to_string(*ranks));
  std::map<std::string, uint64_t> seen; // name -> pieces that hold it
  for (uint64_t r = 0; r < *ranks; ++r) {
    std::string piece = piecePath(path, r, *ranks);
    Expected<SafetensorsFile> f = SafetensorsFile::read(piece);
    if (!f.ok())
      return f.status().withPrefix(path + ": piece " + std::to_string(r) + " of " +
                                   std::to_string(*ranks) + ": ");
    auto format = f->metadata().find("format");
    Expected<uint64_t> index = metaCount(*f, "piece");
    Expected<uint64_t> of = metaCount(*f, "pieces");
    if (format == f->metadata().end() || format->second != kPieceFormat ||
        !index.ok() || !of.ok() || *index != r || *of != *ranks)
      return Status::error(piece + ": not piece " + std::to_string(r) + " of " +
                           std::to_string(*ranks) + " of " + path);
    for (const SafetensorsEntry &e : f->tensors()) {
      auto key = f->metadata().find(shapeKey(e.name));
      std::optional<Shape> shape =
          key == f->metadata().end() ? std::nullopt : parseDims(key->second);
      if (!shape)
        return Status::error(piece + ": tensor '" + e.name + "' has no shape '" +
                             shapeKey(e.name) + "' in the metadata");
      uint64_t n = numElements(*shape).value_or(0);
      uint64_t shard = (n + *ranks - 1) / *ranks;
      if (e.shape != Shape{presentIn(n, shard, r)} ||
          stored.main->find(e.name))
        return Status::error(piece + ": tensor '" + e.name + "' is not piece " +
                             std::to_string(r) + " of " + std::to_string(*ranks) +
                             " of a tensor of shape " + formatShape(*shape));
      auto [it, fresh] = stored.inPieces.try_emplace(e.name, StoredTensor{e.dtype, *shape});
      if (!fresh && (it->second.dtype != e.dtype || it->second.shape != *shape))
        return Status::error(piece + ": tensor '" + e.name +
                             "' differs in dtype or shape from the other pieces");
      ++seen[e.name];
    }
    stored.pieces.push_back(f.take());
  }
  for (const auto &[name, count] : seen)
    if (count != *ranks)
      return Status::error(path + ": tensor '" + name + "' is in " +
                           std::to_string(count) + " of its " +
                           std::to_string(*ranks) + " pieces");
  return stored;
}

std::optional<StoredTensor> StoredTensors::find(const std::string &name) const {
  if (const SafetensorsEntry *e = main->find(name))
    return StoredTensor{e->dtype, e->shape};
  auto it = inPieces.find(name);
  if (it == inPieces.end())
    return std::nullopt;
  return it->second;
}

std::vector<std::string> StoredTensors::names() const {
  std::vector<std::string> all;
  for (const SafetensorsEntry &e : main->tensors())
    all.push_back(e.name);
  for (const auto &[name, t] : inPieces)
    all.push_back(name);
  return all;
}

Status StoredTensors::read(const std::string &name, uint64_t first, uint64_t count,
                           void *out, DType to) const {
  std::optional<StoredTensor> t = find(name);
  if (!t)
    return Status::error(path() + ": has no tensor '" + name + "'");
  uint64_t n = numElements(t->shape).value_or(0);
  uint8_t *dst = static_cast<uint8_t *>(out);
  uint64_t size = dtypeSize(t->dtype);
  std::memset(dst, 0, count * dtypeSize(to));
  uint64_t end = std::min(first + count, n);
  if (const SafetensorsEntry *e = main->find(name))
    return first < end ? convertElements(main->data(*e) + first * size, t->dtype,
                                         dst, to, end - first)
                       : Status::success();
  uint64_t ranks = pieces.size(), shard = (n + ranks - 1) / ranks;
  for (uint64_t i = first; i < end;) {
    uint64_t r = i / shard, at = i - r * shard;
    uint64_t take = std::min(end, (r + 1) * shard) - i;
    const SafetensorsFile &piece = pieces[r];
    SINTER_RT_RETURN_IF_ERROR(convertElements(
        piece.data(*piece.find(name)) + at * size, t->dtype,
        dst + (i - first) * dtypeSize(to), to, take));
    i += take;
  }
  return Status::success();
}

Status readBuffer(const StoredTensors &stored, const std::string &name,
                  const BufferSpec &spec, uint64_t rank, void *out) {
  uint64_t count = spec.byteSize / dtypeSize(spec.dtype);
  uint64_t first = spec.globalShape.empty() ? 0 : rank * count;
  return stored.read(name, first, count, out, spec.dtype);
}

} // namespace sinter::rt
