// The Kineto reader's SAX handler: a small stack of contexts (the top-level object, traceEvents and
// each event, its args, "Input Dims", deviceProperties, distributedInfo) that collects, per trace
// event, only the fields the importer uses, and hands each finished event to the TraceBuilder.
#include <algorithm>
#include <climits>

#include "sim/error.h"
#include "workloads/import/import_kineto_reader.h"
#include "workloads/import/import_limits.h"

namespace hybridsim::workloads::kineto_detail {

CountingBuffer::int_type CountingBuffer::underflow() {
  before_ += egptr() - eback();
  const std::streamsize n = source_->sgetn(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  setg(buffer_.data(), buffer_.data(), buffer_.data() + std::max<std::streamsize>(n, 0));
  return n > 0 ? traits_type::to_int_type(buffer_[0]) : traits_type::eof();
}

bool TraceSax::number_unsigned(Json::number_unsigned_t v) {
  if (v <= static_cast<Json::number_unsigned_t>(INT64_MAX))
    return on_scalar(Scalar{Scalar::Type::Integer, static_cast<std::int64_t>(v), 0, nullptr});
  return on_scalar(Scalar{Scalar::Type::Unsigned, 0, v, nullptr});
}

bool TraceSax::start_object(std::size_t) {
  if (stack_.empty()) return push(Ctx::Root);
  switch (stack_.back()) {
    case Ctx::Events:
      pending_.reset();
      pending_.at = {t_.events_read, input_.position() - 1};  // the '{' just read
      return push(Ctx::Event);
    case Ctx::Event: return push(key_ == "args" ? Ctx::Args : Ctx::Skip);
    case Ctx::Devices:
      device_ = KinetoDevice{};
      device_bytes_.push_back(input_.position() - 1);
      device_ids_.emplace_back();
      return push(Ctx::Device);
    case Ctx::Root:
      if (key_ != "distributedInfo") return push(Ctx::Skip);
      dist_byte_ = input_.position() - 1;
      return push(Ctx::Dist);
    default: return push(Ctx::Skip);
  }
}

bool TraceSax::end_object() {
  const Ctx c = pop();
  if (c == Ctx::Event) {
    pending_.end_byte = input_.position();
    builder_.add(pending_);
  }
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
  const bool at_end = what.find("unexpected end of input") != what.npos ||
                      what.find("empty input") != what.npos ||
                      (input_size_ > 0 && static_cast<std::int64_t>(position) + 1 >= input_size_);
  if (!saw_any_) {
    error_ = "not a JSON document (" + what + "); a Kineto trace is the JSON file that "
             "torch.profiler's export_chrome_trace or tensorboard_trace_handler writes";
  } else if (at_end) {
    // The parser counts the end of input as one more byte: the file's own size where it is known.
    const auto end = input_size_ > 0
                         ? std::min<std::int64_t>(static_cast<std::int64_t>(position), input_size_)
                         : static_cast<std::int64_t>(position);
    error_ = "truncated: the file ends at byte " + std::to_string(end) + " inside " + where() + " (" +
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
      if (key_ == "id") {
        const auto id = v.as_integer();
        device_.id = id && *id >= 0 && *id <= INT_MAX ? static_cast<int>(*id) : -1;
        device_ids_.back() = v.as_text();
      } else if (key_ == "name") {
        device_.name = v.as_text();
      } else if (key_ == "totalGlobalMem") {
        device_.total_memory = v.as_integer().value_or(0);
      }
      break;
    case Ctx::Dist:
      if (key_ == "rank") rank_ = v.as_text();
      else if (key_ == "world_size") world_size_ = v.as_text();
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
  else if (key_ == "ts") p.ts = v.as_ps(), p.ts_text = v.as_text();
  else if (key_ == "dur") p.dur = v.as_ps(), p.dur_text = v.as_text();
  else if (key_ == "id") p.id = v.as_integer();
}

std::optional<std::int64_t> TraceSax::count_arg(const Scalar& v) {
  if (v.type == Scalar::Type::Other) return std::nullopt;  // null: not recorded
  const auto n = v.as_integer();
  if (n && *n >= 0) return n;
  if (pending_.bad_number.empty()) {
    pending_.bad_number = "args \"" + key_ + "\" is " +
                          (v.type == Scalar::Type::String ? "\"" + v.as_text() + "\"" : v.as_text());
    pending_.bad_number_expected = "a count: a whole number of 0 or more";
  }
  return std::nullopt;
}

void TraceSax::on_arg(const Scalar& v) {
  PendingEvent& p = pending_;
  KinetoCollective& c = p.collective;
  if (key_ == "correlation") p.correlation = v.as_integer();
  else if (key_ == "External id") p.external_id = v.as_integer();
  else if (key_ == "device") p.device = v.as_integer();
  else if (key_ == "stream") p.stream = v.as_integer();
  else if (key_ == "Collective name") c.name = v.as_text(), p.has_collective = true;
  else if (key_ == "In msg nelems") c.in_elements = count_arg(v).value_or(-1), p.has_collective = true;
  else if (key_ == "Out msg nelems") c.out_elements = count_arg(v).value_or(-1), p.has_collective = true;
  else if (key_ == "Group size")
    c.group_size = static_cast<int>(std::min<std::int64_t>(count_arg(v).value_or(0), INT_MAX));
  else if (key_ == "dtype") c.dtype = v.as_text();
  else if (key_ == "Process Group Name") c.group_name = v.as_text();
  else if (key_ == "Process Group Ranks") c.group_ranks = v.as_text();
}

void TraceSax::on_dims_value(const Scalar& v) {
  DimsState& d = pending_.dims;
  if (d.outer_index != 0) return;
  const auto n = v.type == Scalar::Type::String ? std::nullopt : v.as_integer();
  if (!n || *n < 0) {
    if (d.problem.empty())
      d.problem = v.type == Scalar::Type::String ? "\"" + v.as_text() + "\""
                  : v.as_text().empty()          ? "null"
                                                 : v.as_text();
    return;
  }
  // Saturated just above the limit: no tensor reaches it, and a later 0 still makes an empty one.
  d.elements =
      static_cast<std::int64_t>(std::min<Wide>(static_cast<Wide>(d.elements) * *n, kMaxTensorBytes + 1));
}

void TraceSax::fail_header(const std::string& where, const std::string& what,
                           const std::string& expected) const {
  throw InputError(source_ + ": " + where + ": " + what + "; expected " + expected);
}

void TraceSax::finish_header() {
  for (std::size_t i = 0; i < t_.devices.size(); ++i) {
    if (t_.devices[i].id < 0 && !device_ids_[i].empty())
      fail_header("deviceProperties[" + std::to_string(i) + "] at byte " + std::to_string(device_bytes_[i]),
                  "\"id\" is " + device_ids_[i], "a GPU's index, a whole number of 0 or more");
  }
  const std::string dist = "distributedInfo at byte " + std::to_string(dist_byte_);
  if (!world_size_.empty()) {
    const auto w = whole_number(world_size_);
    if (!w || *w < 1 || *w > INT_MAX)
      fail_header(dist, "\"world_size\" is " + world_size_, "a number of ranks, 1 or more");
    t_.world_size = static_cast<int>(*w);
  }
  if (!rank_.empty()) {
    const auto r = whole_number(rank_);
    const std::int64_t last = t_.world_size ? *t_.world_size - 1 : INT_MAX;
    if (!r || *r < 0 || *r > last)
      fail_header(dist, "\"rank\" is " + rank_,
                  t_.world_size ? "0 to " + std::to_string(last) + " (\"world_size\" is " + world_size_ + ")"
                                : std::string("a rank, a whole number of 0 or more"));
    t_.rank = static_cast<int>(*r);
  }
}

}  // namespace hybridsim::workloads::kineto_detail
