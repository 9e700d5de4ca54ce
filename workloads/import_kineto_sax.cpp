// The Kineto reader's SAX handler: a small stack of contexts (the top-level object, traceEvents and
// each event, its args, "Input Dims", deviceProperties, distributedInfo) that collects, per trace
// event, only the fields the importer uses, and hands each finished event to the TraceBuilder.
#include <algorithm>

#include "workloads/import_kineto_reader.h"

namespace hybridsim::workloads::kineto_detail {

bool TraceSax::number_unsigned(Json::number_unsigned_t v) {
  const auto clipped = static_cast<std::int64_t>(std::min<Json::number_unsigned_t>(v, INT64_MAX));
  return on_scalar(Scalar{Scalar::Type::Integer, clipped, 0, nullptr});
}

bool TraceSax::start_object(std::size_t) {
  if (stack_.empty()) return push(Ctx::Root);
  switch (stack_.back()) {
    case Ctx::Events: pending_.reset(); return push(Ctx::Event);
    case Ctx::Event: return push(key_ == "args" ? Ctx::Args : Ctx::Skip);
    case Ctx::Devices: device_ = KinetoDevice{}; return push(Ctx::Device);
    case Ctx::Root: return push(key_ == "distributedInfo" ? Ctx::Dist : Ctx::Skip);
    default: return push(Ctx::Skip);
  }
}

bool TraceSax::end_object() {
  const Ctx c = pop();
  if (c == Ctx::Event) builder_.add(pending_);
  if (c == Ctx::Device) t_.devices.push_back(device_);
  return true;
}

bool TraceSax::start_array(std::size_t) {
  if (stack_.empty()) {
    error_ = "not a Kineto trace: the top level is a JSON array (a plain Chrome trace?); Kineto "
             "writes an object with a traceEvents array";
    return false;
  }
  switch (stack_.back()) {
    case Ctx::Root:
      if (key_ == "traceEvents") {
        saw_events_ = true;
        return push(Ctx::Events);
      }
      return push(key_ == "deviceProperties" ? Ctx::Devices : Ctx::Skip);
    case Ctx::Args:
      if (key_ == "Input Dims") return push(Ctx::Dims);
      if (key_ == "Input type") return push(Ctx::Types);
      if (key_ == "Process Group Ranks") {
        pending_.collective.group_ranks = "[";
        pending_.has_collective = true;
        return push(Ctx::Ranks);
      }
      return push(Ctx::Skip);
    case Ctx::Dims:
      if (++pending_.dims.outer_index == 0) pending_.dims.valid = true;
      return push(Ctx::DimsInner);
    case Ctx::DimsInner:
      if (pending_.dims.outer_index == 0) pending_.dims.valid = false;  // a list of tensors
      return push(Ctx::Skip);
    default: return push(Ctx::Skip);
  }
}

bool TraceSax::end_array() {
  if (pop() == Ctx::Ranks) pending_.collective.group_ranks += "]";
  return true;
}

bool TraceSax::parse_error(std::size_t position, const std::string&, const Json::exception& e) {
  std::string what = e.what();
  if (const auto close = what.find("] "); what.starts_with("[json.exception") && close != what.npos)
    what = what.substr(close + 2);
  if (const auto last = what.find("; last read:"); last != what.npos) what.resize(last);
  const bool at_end = what.find("unexpected end of input") != what.npos || what.find("empty input") != what.npos ||
                      (input_size_ > 0 && static_cast<std::int64_t>(position) + 1 >= input_size_);
  if (!saw_any_) {
    error_ = "not a JSON document (" + what + "); a Kineto trace is the JSON file that "
             "torch.profiler's export_chrome_trace or tensorboard_trace_handler writes";
  } else if (at_end) {
    error_ = "truncated: the file ends at byte " + std::to_string(position) + " inside " + where() + " (" +
             what + "); was the trace still being written, or cut short?";
  } else {
    error_ = "malformed JSON inside " + where() + ": " + what;
  }
  return false;
}

bool TraceSax::push(Ctx c) {
  saw_any_ = true;
  if (c == Ctx::Root) saw_root_ = true;
  stack_.push_back(c);
  return true;
}

TraceSax::Ctx TraceSax::pop() {
  const Ctx c = stack_.back();
  stack_.pop_back();
  return c;
}

std::string TraceSax::where() const {
  if (std::find(stack_.begin(), stack_.end(), Ctx::Events) != stack_.end())
    return "traceEvents, after " + std::to_string(t_.events_read) + " complete events";
  return stack_.empty() ? "the top level" : "the top-level object";
}

bool TraceSax::on_scalar(const Scalar& v) {
  saw_any_ = true;
  if (stack_.empty()) {
    error_ = "not a Kineto trace: the document is a single JSON value, not an object with a "
             "traceEvents array";
    return false;
  }
  PendingEvent& p = pending_;
  switch (stack_.back()) {
    case Ctx::Event: on_event_field(v); break;
    case Ctx::Args: on_arg(v); break;
    case Ctx::DimsInner: on_dims_value(v); break;
    case Ctx::Types:
      if (p.types_index++ == 0) p.input_type = v.as_text();
      break;
    case Ctx::Ranks: {
      auto& r = p.collective.group_ranks;
      r += (r.size() > 1 ? ", " : "") + v.as_text();
      break;
    }
    case Ctx::Device:
      if (key_ == "id") device_.id = static_cast<int>(v.as_integer().value_or(0));
      else if (key_ == "name") device_.name = v.as_text();
      else if (key_ == "totalGlobalMem") device_.total_memory = v.as_integer().value_or(0);
      break;
    case Ctx::Dist:
      if (key_ == "rank") t_.rank = static_cast<int>(v.as_integer().value_or(0));
      else if (key_ == "world_size") t_.world_size = static_cast<int>(v.as_integer().value_or(0));
      else if (key_ == "backend") t_.backend = v.as_text();
      break;
    default: break;
  }
  return true;
}

void TraceSax::on_event_field(const Scalar& v) {
  PendingEvent& p = pending_;
  if (key_ == "ph") p.ph = v.as_text();
  else if (key_ == "cat") p.cat = v.as_text();
  else if (key_ == "name") p.name = v.as_text();
  else if (key_ == "pid") p.pid = v.as_text();
  else if (key_ == "tid") p.tid = v.as_text();
  else if (key_ == "ts") p.ts = v.as_ps();
  else if (key_ == "dur") p.dur = v.as_ps();
  else if (key_ == "id") p.id = v.as_integer().value_or(0);
}

void TraceSax::on_arg(const Scalar& v) {
  PendingEvent& p = pending_;
  KinetoCollective& c = p.collective;
  if (key_ == "correlation") p.correlation = v.as_integer();
  else if (key_ == "External id") p.external_id = v.as_integer();
  else if (key_ == "device") p.device = v.as_integer();
  else if (key_ == "stream") p.stream = v.as_integer();
  else if (key_ == "Collective name") c.name = v.as_text(), p.has_collective = true;
  else if (key_ == "In msg nelems") c.in_elements = v.as_integer().value_or(-1), p.has_collective = true;
  else if (key_ == "Out msg nelems") c.out_elements = v.as_integer().value_or(-1), p.has_collective = true;
  else if (key_ == "Group size") c.group_size = static_cast<int>(v.as_integer().value_or(0));
  else if (key_ == "dtype") c.dtype = v.as_text();
  else if (key_ == "Process Group Name") c.group_name = v.as_text();
  else if (key_ == "Process Group Ranks") c.group_ranks = v.as_text();
}

void TraceSax::on_dims_value(const Scalar& v) {
  DimsState& d = pending_.dims;
  if (d.outer_index != 0) return;
  const auto n = v.as_integer();
  if (n && *n >= 0 && d.elements <= INT64_MAX / std::max<std::int64_t>(*n, 1)) d.elements *= *n;
  else d.valid = false;
}

}  // namespace hybridsim::workloads::kineto_detail
