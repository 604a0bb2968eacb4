//===- Safetensors.cpp - Read and write .safetensors files ----------------===//

#include "checkpoint/Safetensors.h"

#include "checkpoint/JsonTree.h"
#include "support/AtomicFile.h"
#include "support/Crc32c.h"
#include "support/Format.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

namespace sinter::rt {
namespace {

/// Metadata keys under this prefix hold the tensors' checksums (Safetensors.h).
constexpr std::string_view kChecksumPrefix = "sinter.crc32c.";

const DType kAllTypes[] = {DType::F64, DType::F32, DType::BF16, DType::F16,
                           DType::I64, DType::I32, DType::Bool};

/// The reference writer's order of element types (its Dtype enum, largest
/// alignment first).
int writeRank(DType t) {
  switch (t) {
  case DType::I64: return 0;
  case DType::F64: return 1;
  case DType::F32: return 2;
  case DType::I32: return 3;
  case DType::BF16: return 4;
  case DType::F16: return 5;
  case DType::Bool: return 6;
  }
  return 7;
}

std::string supportedList() {
  std::string s;
  for (DType t : kAllTypes)
    s += (s.empty() ? "" : ", ") + std::string(safetensorsDTypeName(t));
  return s;
}

std::string offsetsText(uint64_t b, uint64_t e) {
  return "[" + std::to_string(b) + ", " + std::to_string(e) + "]";
}

/// Checks one tensor entry's object (offsets against the file come later).
Status readEntry(const std::string &name, const JsonNode &node, SafetensorsEntry &out) {
  std::string where = "tensor " + quoteForMessage(name) + ": ";
  if (node.kind != JsonNode::Kind::Object)
    return Status::error(where + "expected an object with 'dtype', 'shape' and 'data_offsets', found " +
                         node.describe());
  const JsonNode *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
  for (const auto &[key, value] : node.members) {
    if (key == "dtype")
      dtype = &value;
    else if (key == "shape")
      shape = &value;
    else if (key == "data_offsets")
      offsets = &value;
    else
      return Status::error(where + "unexpected key " + quoteForMessage(key) +
                           "; expected exactly 'dtype', 'shape' and 'data_offsets'");
  }
  for (auto [value, key] : {std::pair{dtype, "dtype"}, std::pair{shape, "shape"},
                            std::pair{offsets, "data_offsets"}})
    if (!value)
      return Status::error(where + "the key '" + key +
                           "' is missing; expected 'dtype', 'shape' and 'data_offsets'");

  if (dtype->kind != JsonNode::Kind::String)
    return Status::error(where + "'dtype' must be a string such as \"F32\", found " + dtype->describe());
  std::optional<DType> t = parseSafetensorsDType(dtype->text);
  if (!t)
    return Status::error(where + "dtype " + quoteForMessage(dtype->text, 20) +
                         " is not supported; expected one of " + supportedList());
  out.dtype = *t;

  if (shape->kind != JsonNode::Kind::Array)
    return Status::error(where + "'shape' must be an array of non-negative integers, found " +
                         shape->describe());
  for (const JsonNode &d : shape->items) {
    if (d.kind != JsonNode::Kind::UInt)
      return Status::error(where + "'shape' must be an array of non-negative integers (each below 2^64), found " +
                           d.describe());
    out.shape.push_back(d.unsigned_);
  }

  if (offsets->kind != JsonNode::Kind::Array || offsets->items.size() != 2)
    return Status::error(where + "'data_offsets' must be an array [begin, end] of two integers, found " +
                         (offsets->kind == JsonNode::Kind::Array
                              ? "an array of " + std::to_string(offsets->items.size())
                              : offsets->describe()));
  for (const JsonNode &o : offsets->items)
    if (o.kind != JsonNode::Kind::UInt)
      return Status::error(where + "'data_offsets' must hold non-negative integers, found " +
                           o.describe());
  out.begin = offsets->items[0].unsigned_;
  out.end = offsets->items[1].unsigned_;
  if (out.end < out.begin)
    return Status::error(where + "data_offsets " + offsetsText(out.begin, out.end) +
                         " end before they begin; expected [begin, end] with begin <= end");

  std::optional<uint64_t> bytes = numBytes(out.shape, dtypeSize(out.dtype));
  if (!bytes)
    return Status::error(where + "shape " + formatShape(out.shape) + " of " +
                         safetensorsDTypeName(out.dtype) + " has more bytes than fit in 64 bits");
  if (*bytes != out.end - out.begin)
    return Status::error(where + "shape " + formatShape(out.shape) + " of " +
                         safetensorsDTypeName(out.dtype) + " is " + formatBytes(*bytes) +
                         " but data_offsets " + offsetsText(out.begin, out.end) + " span " +
                         formatCount(out.end - out.begin));
  return Status::success();
}

bool validUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = (unsigned char)s[i];
    size_t n;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      n = 1;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= s.size())
      return false;
    for (size_t k = 1; k <= n; ++k) {
      unsigned char cc = (unsigned char)s[i + k];
      if ((cc & 0xc0) != 0x80)
        return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid.
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
      return false;
    i += n + 1;
  }
  return true;
}

std::string jsonString(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    unsigned char c = (unsigned char)ch;
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string formatChecksum(uint32_t crc) {
  char buf[9];
  std::snprintf(buf, sizeof(buf), "%08x", crc);
  return buf;
}

/// Exactly what formatChecksum writes: 8 lowercase hex digits.
std::optional<uint32_t> parseChecksum(std::string_view text) {
  if (text.size() != 8)
    return std::nullopt;
  uint32_t value = 0;
  for (char c : text) {
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0)
      return std::nullopt;
    value = value << 4 | uint32_t(digit);
  }
  return value;
}

/// Checks every tensor's bytes (the data section at `data`) against
/// `recorded`, the checksums of "__metadata__" by tensor name, and keeps
/// each in its entry. Nothing is recorded in files from other writers.
Status verifyChecksums(const std::map<std::string, std::string> &recorded,
                       std::vector<SafetensorsEntry> &entries, const uint8_t *data) {
  if (recorded.empty())
    return Status::success();
  // A renamed tensor or a lost key would otherwise skip the check silently.
  const std::string edited =
      "; the header is damaged, or the file was edited without updating its checksums";
  std::set<std::string> names;
  for (const SafetensorsEntry &e : entries)
    names.insert(e.name);
  for (const auto &[name, text] : recorded)
    if (!names.count(name))
      return Status::error("'__metadata__' holds a checksum for tensor " + quoteForMessage(name) +
                           ", which the file does not hold" + edited);
  for (SafetensorsEntry &e : entries) {
    std::string tensor = "tensor " + quoteForMessage(e.name);
    auto it = recorded.find(e.name);
    if (it == recorded.end())
      return Status::error(tensor + " has no checksum (no " +
                           quoteForMessage(std::string(kChecksumPrefix) + e.name) +
                           " in '__metadata__'), but the other tensors have" + edited);
    std::optional<uint32_t> expected = parseChecksum(it->second);
    if (!expected)
      return Status::error(tensor + ": its checksum " + quoteForMessage(it->second, 20) +
                           " is not 8 lowercase hexadecimal digits; the header is damaged");
    uint32_t got = crc32c(data + e.begin, (size_t)e.byteSize());
    if (got != *expected)
      return Status::error(tensor + " is damaged: its checksum does not match (expected crc32c " +
                           formatChecksum(*expected) + ", got " + formatChecksum(got) +
                           "); the file changed after it was written");
    e.crc32c = got;
  }
  return Status::success();
}

struct WritePlan {
  std::vector<uint8_t> header; // length prefix + padded JSON
  std::vector<std::pair<const void *, uint64_t>> pieces;
  uint64_t dataBytes = 0;
};

Expected<WritePlan> planWrite(const std::string &where,
                              const std::vector<SafetensorsTensor> &tensors,
                              const std::map<std::string, std::string> &metadata) {
  std::vector<const SafetensorsTensor *> order;
  std::set<std::string> seen;
  for (const SafetensorsTensor &t : tensors) {
    if (t.name.empty())
      return Status::error(where + "a tensor has an empty name; every tensor needs a name");
    if (t.name == "__metadata__")
      return Status::error(where + "a tensor cannot be named '__metadata__', which the format reserves");
    if (!validUtf8(t.name))
      return Status::error(where + "tensor name " + quoteForMessage(t.name) + " is not valid UTF-8");
    if (!seen.insert(t.name).second)
      return Status::error(where + "two tensors are named " + quoteForMessage(t.name) +
                           "; names must be unique");
    order.push_back(&t);
  }
  for (const auto &[k, v] : metadata) {
    if (!validUtf8(k) || !validUtf8(v))
      return Status::error(where + "metadata entry " + quoteForMessage(k) + " is not valid UTF-8");
    if (k.rfind(kChecksumPrefix, 0) == 0)
      return Status::error(where + "metadata key " + quoteForMessage(k) +
                           " is reserved: the tensors' checksums are written under " +
                           quoteForMessage(kChecksumPrefix));
  }
  std::sort(order.begin(), order.end(), [](const SafetensorsTensor *a, const SafetensorsTensor *b) {
    int ra = writeRank(a->dtype), rb = writeRank(b->dtype);
    return ra != rb ? ra < rb : a->name < b->name;
  });

  WritePlan plan;
  std::map<std::string, std::string> allMetadata = metadata;
  std::vector<std::string> tensorJson;
  uint64_t offset = 0;
  for (const SafetensorsTensor *t : order) {
    std::optional<uint64_t> bytes = numBytes(t->shape, dtypeSize(t->dtype));
    std::optional<uint64_t> end = bytes ? checkedAdd(offset, *bytes) : std::nullopt;
    if (!end)
      return Status::error(where + "tensor " + quoteForMessage(t->name) + " " +
                           formatShape(t->shape) + " makes the file larger than 2^64 bytes");
    if (*bytes && !t->data)
      return Status::error(where + "tensor " + quoteForMessage(t->name) + " has no data");
    allMetadata[safetensorsChecksumKey(t->name)] = formatChecksum(crc32c(t->data, (size_t)*bytes));
    std::string entry = jsonString(t->name) + ":{\"dtype\":\"" + safetensorsDTypeName(t->dtype) +
                        "\",\"shape\":[";
    for (size_t i = 0; i < t->shape.size(); ++i)
      entry += (i ? "," : "") + std::to_string(t->shape[i]);
    entry += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(*end) + "]}";
    tensorJson.push_back(std::move(entry));
    if (*bytes)
      plan.pieces.emplace_back(t->data, *bytes);
    offset = *end;
  }
  // The checksums are known only now, but "__metadata__" comes first.
  std::string json = "{";
  if (!allMetadata.empty()) {
    json += "\"__metadata__\":{";
    bool first = true;
    for (const auto &[k, v] : allMetadata) {
      json += (first ? "" : ",") + jsonString(k) + ":" + jsonString(v);
      first = false;
    }
    json += "}";
  }
  for (const std::string &entry : tensorJson)
    json += (json.size() > 1 ? "," : "") + entry;
  json += "}";
  json.append((8 - json.size() % 8) % 8, ' ');
  if (json.size() > SafetensorsFile::kMaxHeaderBytes)
    return Status::error(where + "the header would be " + formatBytes(json.size()) +
                         ", over the format's limit of 100,000,000");
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i)
    plan.header.push_back((uint8_t)(n >> (8 * i)));
  plan.header.insert(plan.header.end(), json.begin(), json.end());
  plan.dataBytes = offset;
  return plan;
}

} // namespace

const char *safetensorsDTypeName(DType t) {
  switch (t) {
  case DType::F64: return "F64";
  case DType::F32: return "F32";
  case DType::BF16: return "BF16";
  case DType::F16: return "F16";
  case DType::I64: return "I64";
  case DType::I32: return "I32";
  case DType::Bool: return "BOOL";
  }
  return "?";
}

std::optional<DType> parseSafetensorsDType(std::string_view name) {
  for (DType t : kAllTypes)
    if (name == safetensorsDTypeName(t))
      return t;
  return std::nullopt;
}

std::string safetensorsChecksumKey(const std::string &tensorName) {
  return std::string(kChecksumPrefix) + tensorName;
}

Expected<SafetensorsFile> SafetensorsFile::read(const std::string &path) {
  Expected<std::shared_ptr<const FileBuffer>> file = FileBuffer::open(path);
  if (!file.ok())
    return file.status();
  return parse(file.take());
}

Expected<SafetensorsFile> SafetensorsFile::parse(std::shared_ptr<const FileBuffer> file) {
  const std::string &name = file->name();
  const uint8_t *p = file->data();
  uint64_t size = file->size();
  auto error = [&](const std::string &what) { return Status::error(name + ": " + what); };

  if (size < 8)
    return error("the file holds " + formatBytes(size) +
                 "; a safetensors file starts with an 8-byte header length");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= (uint64_t)p[i] << (8 * i);
  if (n > kMaxHeaderBytes)
    return error("the header length is " + formatCount(n) +
                 " bytes, over the format's limit of 100,000,000; this is not a safetensors file or it is corrupt");
  if (n > size - 8)
    return error("truncated: the header length is " + formatBytes(n) + " but only " +
                 formatCount(size - 8) + " follow it");
  if (n < 2 || p[8] != '{')
    return error("the header does not start with '{'; a safetensors header is a JSON object");
  std::string_view text((const char *)p + 8, (size_t)n);

  Expected<JsonNode> root = parseJsonStrict(text, 8);
  if (!root.ok())
    return error("malformed header JSON: " + root.message());
  if (root->kind != JsonNode::Kind::Object)
    return error("the header must be a JSON object, found " + root->describe());

  SafetensorsFile f;
  f.dataStart = 8 + n;
  uint64_t dataSize = size - f.dataStart;
  std::map<std::string, std::string> checksums; // by tensor name
  for (auto &[key, value] : root->members) {
    if (key == "__metadata__") {
      if (value.kind != JsonNode::Kind::Object)
        return error("'__metadata__' must be an object of strings, found " + value.describe());
      for (const auto &[mk, mv] : value.members) {
        if (mv.kind != JsonNode::Kind::String)
          return error("'__metadata__' entry " + quoteForMessage(mk) +
                       " must be a string, found " + mv.describe());
        if (mk.rfind(kChecksumPrefix, 0) == 0)
          checksums[mk.substr(kChecksumPrefix.size())] = mv.text;
        else
          f.meta[mk] = mv.text;
      }
      continue;
    }
    if (key.empty())
      return error("a tensor has an empty name (\"\" in the header); every tensor needs a name");
    SafetensorsEntry e;
    e.name = key;
    Status s = readEntry(key, value, e);
    if (!s.ok())
      return error(s.message());
    if (e.end > dataSize)
      return error("tensor " + quoteForMessage(key) + ": data_offsets " + offsetsText(e.begin, e.end) +
                   " end past the data section, which holds " + formatBytes(dataSize));
    f.entries.push_back(std::move(e));
  }

  // Sorted by offsets, the tensors must tile the data section exactly.
  std::sort(f.entries.begin(), f.entries.end(),
            [](const SafetensorsEntry &a, const SafetensorsEntry &b) {
              return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
            });
  uint64_t covered = 0;
  const SafetensorsEntry *prev = nullptr;
  for (const SafetensorsEntry &e : f.entries) {
    if (e.begin < covered)
      return error("tensor " + quoteForMessage(e.name) + ": data_offsets " +
                   offsetsText(e.begin, e.end) + " overlap tensor " + quoteForMessage(prev->name) +
                   " at " + offsetsText(prev->begin, prev->end));
    if (e.begin > covered)
      return error("bytes [" + std::to_string(covered) + ", " + std::to_string(e.begin) +
                   ") of the data section belong to no tensor (" +
                   (prev ? "between " + quoteForMessage(prev->name) + " and "
                         : std::string("before ")) +
                   quoteForMessage(e.name) + "); the tensors must cover the data without gaps");
    covered = e.end;
    prev = &e;
  }
  if (covered != dataSize)
    return error("the data section holds " + formatBytes(dataSize) + " but the tensors cover " +
                 formatCount(covered) + "; the last " + formatBytes(dataSize - covered) +
                 " belong to no tensor");
  Status verified = verifyChecksums(checksums, f.entries, p + f.dataStart);
  if (!verified.ok())
    return error(verified.message());
  for (size_t i = 0; i < f.entries.size(); ++i)
    f.byName[f.entries[i].name] = i;
  f.file = std::move(file);
  return f;
}

const SafetensorsEntry *SafetensorsFile::find(const std::string &name) const {
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : &entries[it->second];
}

Expected<std::vector<uint8_t>>
encodeSafetensors(const std::vector<SafetensorsTensor> &tensors,
                  const std::map<std::string, std::string> &metadata) {
  Expected<WritePlan> plan = planWrite("", tensors, metadata);
  if (!plan.ok())
    return plan.status();
  if (plan->dataBytes > (uint64_t)SIZE_MAX / 2)
    return Status::error("the tensors hold " + formatBytes(plan->dataBytes) +
                         ", too many to encode in memory");
  std::vector<uint8_t> out = std::move(plan->header);
  out.reserve(out.size() + (size_t)plan->dataBytes);
  for (const auto &[ptr, bytes] : plan->pieces) {
    const uint8_t *b = static_cast<const uint8_t *>(ptr);
    out.insert(out.end(), b, b + bytes);
  }
  return out;
}

Status writeSafetensors(const std::string &path,
                        const std::vector<SafetensorsTensor> &tensors,
                        const std::map<std::string, std::string> &metadata) {
  Expected<WritePlan> plan = planWrite(path + ": ", tensors, metadata);
  if (!plan.ok())
    return plan.status();
  Expected<AtomicFileWriter> w = AtomicFileWriter::create(path);
  if (!w.ok())
    return w.status();
  SINTER_RT_RETURN_IF_ERROR(w->write(plan->header.data(), plan->header.size()));
  for (const auto &[ptr, bytes] : plan->pieces)
    SINTER_RT_RETURN_IF_ERROR(w->write(ptr, (size_t)bytes));
  return w->commit();
}

} // namespace sinter::rt
