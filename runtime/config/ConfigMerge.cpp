//===- ConfigMerge.cpp - A second config laid over the first --------------===//
//
// The overlay behind mergeConfigFile/mergeConfigText (PROGRAM --config over
// the embedded config).
//
//===----------------------------------------------------------------------===//

#include "runtime/config/ConfigInternals.h"

#include <memory>

namespace sinter::config::detail {

static void copyScalar(pb::Message &dst, const pb::Message &src, const FieldDescriptor *f) {
  const pb::Reflection *d = dst.GetReflection(), *s = src.GetReflection();
  switch (f->cpp_type()) {
  case FieldDescriptor::CPPTYPE_INT32:
    return d->SetInt32(&dst, f, s->GetInt32(src, f));
  case FieldDescriptor::CPPTYPE_INT64:
    return d->SetInt64(&dst, f, s->GetInt64(src, f));
  case FieldDescriptor::CPPTYPE_UINT32:
    return d->SetUInt32(&dst, f, s->GetUInt32(src, f));
  case FieldDescriptor::CPPTYPE_UINT64:
    return d->SetUInt64(&dst, f, s->GetUInt64(src, f));
  case FieldDescriptor::CPPTYPE_DOUBLE:
    return d->SetDouble(&dst, f, s->GetDouble(src, f));
  case FieldDescriptor::CPPTYPE_FLOAT:
    return d->SetFloat(&dst, f, s->GetFloat(src, f));
  case FieldDescriptor::CPPTYPE_BOOL:
    return d->SetBool(&dst, f, s->GetBool(src, f));
  case FieldDescriptor::CPPTYPE_ENUM:
    return d->SetEnumValue(&dst, f, s->GetEnumValue(src, f));
  case FieldDescriptor::CPPTYPE_STRING:
    return d->SetString(&dst, f, s->GetString(src, f));
  case FieldDescriptor::CPPTYPE_MESSAGE:
    return;
  }
}

/// Field-by-field overlay; see mergeConfigFile in the header for the rules.
void overlay(pb::Message &dst, const pb::Message &src) {
  const pb::Reflection *d = dst.GetReflection(), *s = src.GetReflection();
  std::vector<const FieldDescriptor *> fields;
  s->ListFields(src, &fields);
  for (const FieldDescriptor *f : fields) {
    if (f->is_map()) {
      // Message::MergeFrom merges maps by key, later values winning; a
      // message holding only this map's entries merges just those.
      std::unique_ptr<pb::Message> entries(dst.New());
      for (int i = 0, e = s->FieldSize(src, f); i < e; ++i)
        entries->GetReflection()->AddMessage(entries.get(), f)->CopyFrom(
            s->GetRepeatedMessage(src, f, i));
      dst.MergeFrom(*entries);
      continue;
    }
    if (f->is_repeated()) {
      // Replaced whole, whatever the element type: swapped in from a copy.
      std::unique_ptr<pb::Message> copy(src.New());
      copy->CopyFrom(src);
      d->ClearField(&dst, f);
      d->SwapFields(&dst, copy.get(), {f});
      continue;
    }
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      copyScalar(dst, src, f);
      continue;
    }
    // A data source is one choice (npy, tokens or synthetic), so it is
    // replaced whole rather than mixed.
    if (f->message_type() == TrainConfig::DataSource::descriptor()) {
      d->MutableMessage(&dst, f)->CopyFrom(s->GetMessage(src, f));
      continue;
    }
    // MutableMessage on a oneof member also clears the other members.
    overlay(*d->MutableMessage(&dst, f), s->GetMessage(src, f));
  }
}

} // namespace sinter::config::detail
