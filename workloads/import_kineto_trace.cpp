// The streaming reader of Kineto traces: a SAX handler (nlohmann::json) with a small stack of
// contexts that keeps, per trace event, only the fields the importer uses.
#include "workloads/import_kineto_trace.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "sim/error.h"
#include "workloads/import_kineto_values.h"
#include "sim/text.h"

namespace hybridsim::workloads {

namespace {

using Json = nlohmann::json;
using kineto_detail::kPsPerUs;
using kineto_detail::micros_to_ps;
using kineto_detail::trailing_integer;
using kineto_detail::Wide;

// The first top-level input's element count from "Input Dims": [[256, 512], [], ...].
struct DimsState {
  int outer_index = -1;   // which input's dims are being read
  std::int64_t elements = 1;
  bool valid = false;     // the first input is a plain list of integers
};

enum class Ctx : std::uint8_t {
  Root, Events, Event, Args, Dims, DimsInner, Types, Ranks, Devices, Device, Dist, Skip
};

struct PendingEvent {
  std::string ph, cat, name, pid, tid;
  std::optional<Wide> ts, dur;
  std::int64_t id = 0;
  std::optional<std::int64_t> correlation, external_id, device, stream;
  KinetoCollective collective;
  bool has_collective = false;
  DimsState dims;
  std::string input_type;
  int types_index = 0;

  void reset() {
    ph.clear(); cat.clear(); name.clear(); pid.clear(); tid.clear();
    ts.reset(); dur.reset();
    id = 0;
    correlation.reset(); external_id.reset(); device.reset(); stream.reset();
    collective = KinetoCollective{};
    has_collective = false;
    dims = DimsState{};
    input_type.clear();
    types_index = 0;
  }
};

// A scalar value as the SAX interface delivers it.
struct Scalar {
  enum class Type : std::uint8_t { Integer, Float, String, Other } type = Type::Other;
  std::int64_t integer = 0;
  double real = 0;
  const std::string* text = nullptr;  // the string, or the float's token

  std::optional<std::int64_t> as_integer() const {
    if (type == Type::Integer) return integer;
    if (type == Type::Float) return static_cast<std::int64_t>(std::llround(real));
    if (type == Type::String) return trailing_integer(*text);  // "stream 7", "7"
    return std::nullopt;
  }
  std::string as_text() const {
    if (type == Type::String || type == Type::Float) return *text;
    if (type == Type::Integer) return std::to_string(integer);
    return "";
  }
  std::optional<Wide> as_ps() const {
    if (type == Type::Integer) return static_cast<Wide>(integer) * kPsPerUs;
    if (type == Type::Float) return micros_to_ps(*text, real);
    return std::nullopt;
  }
};

class TraceSax {
 public:
  // `input_size`: bytes the stream holds (0 when unknown), to tell a cut-off file from bad syntax.
  TraceSax(KinetoTrace& trace, std::string source, std::int64_t input_size)
      : t_(trace), source_(std::move(source)), input_size_(input_size) {}

  // --- the nlohmann SAX interface ---
  bool null() { return on_scalar(Scalar{}); }
  bool boolean(bool) { return on_scalar(Scalar{}); }
  bool number_integer(Json::number_integer_t v) {
    return on_scalar(Scalar{Scalar::Type::Integer, v, 0, nullptr});
  }
  bool number_unsigned(Json::number_unsigned_t v) {
    const auto clipped = static_cast<std::int64_t>(std::min<Json::number_unsigned_t>(v, INT64_MAX));
    return on_scalar(Scalar{Scalar::Type::Integer, clipped, 0, nullptr});
  }
  bool number_float(Json::number_float_t v, const std::string& token) {
    return on_scalar(Scalar{Scalar::Type::Float, 0, v, &token});
  }
  bool string(std::string& s) { return on_scalar(Scalar{Scalar::Type::String, 0, 0, &s}); }
  bool binary(Json::binary_t&) { return on_scalar(Scalar{}); }
  bool key(std::string& k) {
    key_ = k;
    return true;
  }
  bool start_object(std::size_t) {
    if (stack_.empty()) return push(Ctx::Root);
    switch (stack_.back()) {
      case Ctx::Events: pending_.reset(); return push(Ctx::Event);
      case Ctx::Event: return push(key_ == "args" ? Ctx::Args : Ctx::Skip);
      case Ctx::Devices: device_ = KinetoDevice{}; return push(Ctx::Device);
      case Ctx::Root: return push(key_ == "distributedInfo" ? Ctx::Dist : Ctx::Skip);
      default: return push(Ctx::Skip);
    }
  }
  bool end_object() {
    const Ctx c = pop();
    if (c == Ctx::Event) finish_event();
    if (c == Ctx::Device) t_.devices.push_back(device_);
    return true;
  }
  bool start_array(std::size_t) {
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
  bool end_array() {
    if (pop() == Ctx::Ranks) pending_.collective.group_ranks += "]";
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const Json::exception& e) {
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
      error_ = "truncated: the file ends at byte " + std::to_string(position) + " inside " +
               where() + " (" + what + "); was the trace still being written, or cut short?";
    } else {
      error_ = "malformed JSON inside " + where() + ": " + what;
    }
    return false;
  }

  const std::string& error() const { return error_; }
  bool saw_events() const { return saw_events_; }
  bool saw_root() const { return saw_root_; }

 private:
  bool push(Ctx c) {
    saw_any_ = true;
    if (c == Ctx::Root) saw_root_ = true;
    stack_.push_back(c);
    return true;
  }
  Ctx pop() {
    const Ctx c = stack_.back();
    stack_.pop_back();
    return c;
  }
  std::string where() const {
    if (std::find(stack_.begin(), stack_.end(), Ctx::Events) != stack_.end())
      return "traceEvents, after " + std::to_string(t_.events_read) + " complete events";
    return stack_.empty() ? "the top level" : "the top-level object";
  }

  bool on_scalar(const Scalar& v) {
    saw_any_ = true;
    if (stack_.empty()) {
      error_ = "not a Kineto trace: the document is a single JSON value, not an object with a "
               "traceEvents array";
      return false;
    }
    PendingEvent& p = pending_;
    switch (stack_.back()) {
      case Ctx::Event:
        if (key_ == "ph") p.ph = v.as_text();
        else if (key_ == "cat") p.cat = v.as_text();
        else if (key_ == "name") p.name = v.as_text();
        else if (key_ == "pid") p.pid = v.as_text();
        else if (key_ == "tid") p.tid = v.as_text();
        else if (key_ == "ts") p.ts = v.as_ps();
        else if (key_ == "dur") p.dur = v.as_ps();
        else if (key_ == "id") p.id = v.as_integer().value_or(0);
        break;
      case Ctx::Args: on_arg(v); break;
      case Ctx::DimsInner:
        if (p.dims.outer_index == 0) {
          const auto n = v.as_integer();
          if (n && *n >= 0 && p.dims.elements <= INT64_MAX / std::max<std::int64_t>(*n, 1))
            p.dims.elements *= *n;
          else p.dims.valid = false;
        }
        break;
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

  void on_arg(const Scalar& v) {
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

  std::uint32_t intern(std::unordered_map<std::string, std::uint32_t>& map,
                       std::vector<std::string>& table, const std::string& s) {
    const auto [it, inserted] = map.try_emplace(s, static_cast<std::uint32_t>(table.size()));
    if (inserted) table.push_back(s);
    return it->second;
  }

  sim::Time relative(Wide ps) {
    if (!base_) base_ = ps;
    const Wide rel = ps - *base_;
    if (rel > INT64_MAX || rel < INT64_MIN)
      throw InputError(source_ + ": timestamp out of range in event \"" + pending_.name + "\"");
    return sim::Time::ps(static_cast<std::int64_t>(rel));
  }

  void finish_event() {
    ++t_.events_read;
    PendingEvent& p = pending_;
    const std::string cat = sim::lowercase(p.cat);
    const bool complete = p.ph == "X";
    if ((p.ph == "s" || p.ph == "f") && cat == "fwdbwd") {
      if (!p.ts) return;
      t_.fwdbwd.push_back({p.id, thread(), relative(*p.ts), p.ph == "s"});
      ++t_.events_kept;
      return;
    }
    if (!complete) return;
    std::optional<KinetoGpuKind> gpu;
    if (cat == "kernel") gpu = KinetoGpuKind::Kernel;
    else if (cat == "gpu_memcpy" || cat == "memcpy") gpu = KinetoGpuKind::Memcpy;
    else if (cat == "gpu_memset" || cat == "memset") gpu = KinetoGpuKind::Memset;
    std::optional<KinetoCpuKind> cpu;
    if (cat == "cpu_op" || cat == "operator") cpu = KinetoCpuKind::Op;
    else if (cat == "user_annotation") cpu = KinetoCpuKind::Annotation;
    else if (cat == "cuda_runtime" || cat == "runtime" || cat == "cuda_driver") cpu = KinetoCpuKind::Runtime;
    if (!gpu && !cpu) return;
    if (!p.ts || !p.dur) {
      ++t_.events_malformed;
      return;
    }
    const int collective = p.has_collective ? static_cast<int>(t_.collectives.size()) : -1;
    if (p.has_collective) t_.collectives.push_back(p.collective);
    const sim::Time dur = sim::Time::ps(static_cast<std::int64_t>(std::max<Wide>(*p.dur, 0)));
    if (gpu) {
      KinetoGpuActivity a;
      a.kind = *gpu;
      a.name = intern(names_, t_.names, p.name);
      a.device = static_cast<int>(p.device ? *p.device : trailing_integer(p.pid).value_or(0));
      a.stream = p.stream ? *p.stream : trailing_integer(p.tid).value_or(0);
      a.start = relative(*p.ts);
      a.duration = dur;
      a.correlation = p.correlation.value_or(-1);
      a.external_id = p.external_id.value_or(-1);
      a.collective = collective;
      t_.gpu.push_back(a);
    } else {
      if (*cpu == KinetoCpuKind::Runtime && !p.correlation) return;  // not a launch
      if (*cpu == KinetoCpuKind::Op &&
          (p.name.starts_with("ProfilerStep#") || p.name.starts_with("Optimizer.")))
        cpu = KinetoCpuKind::Annotation;  // older traces file record_function ranges as cpu_op
      KinetoCpuEvent e;
      e.kind = *cpu;
      e.name = intern(names_, t_.names, p.name);
      e.thread = thread();
      e.start = relative(*p.ts);
      e.duration = dur;
      e.correlation = p.correlation.value_or(-1);
      e.external_id = p.external_id.value_or(-1);
      e.collective = collective;
      if (p.name == "torch::autograd::AccumulateGrad" && p.dims.valid) {
        e.input_elements = p.dims.elements;
        e.input_element_bytes = kineto_dtype_bytes(p.input_type).value_or(0);
      }
      t_.cpu.push_back(e);
    }
    ++t_.events_kept;
  }

  std::uint32_t thread() { return intern(threads_, t_.threads, pending_.pid + "/" + pending_.tid); }

  KinetoTrace& t_;
  std::string source_;
  std::vector<Ctx> stack_;
  std::string key_;
  PendingEvent pending_;
  KinetoDevice device_;
  std::unordered_map<std::string, std::uint32_t> names_, threads_;
  std::optional<Wide> base_;
  std::string error_;
  std::int64_t input_size_ = 0;
  bool saw_any_ = false, saw_root_ = false, saw_events_ = false;
};

}  // namespace

const KinetoDevice* KinetoTrace::find_device(int id) const {
  for (const auto& d : devices)
    if (d.id == id) return &d;
  return nullptr;
}

KinetoTrace parse_kineto_trace(std::istream& in, const std::string& source_name) {
  KinetoTrace trace;
  trace.source = source_name;
  const auto begin = in.tellg();
  std::int64_t size = 0;
  if (begin >= 0 && in.seekg(0, std::ios::end)) {
    size = static_cast<std::int64_t>(in.tellg() - begin);
    in.seekg(begin);
  }
  in.clear();
  TraceSax sax(trace, source_name, size);
  const bool ok = Json::sax_parse(in, &sax);
  in.clear();
  const auto end = in.tellg();
  trace.bytes_read = begin >= 0 && end >= begin ? static_cast<std::int64_t>(end - begin) : 0;
  if (!ok) throw InputError(source_name + ": " + (sax.error().empty() ? "unreadable" : sax.error()));
  if (!sax.saw_root() || !sax.saw_events())
    throw InputError(source_name + ": not a Kineto trace: no top-level \"traceEvents\" array");
  if (trace.events_malformed > 0 && trace.gpu.empty())
    throw InputError(source_name + ": " + std::to_string(trace.events_malformed) +
                     " complete events lack \"ts\" or \"dur\" and no GPU activity is usable");
  return trace;
}

KinetoTrace read_kineto_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the trace file");
  return parse_kineto_trace(in, path);
}

}  // namespace hybridsim::workloads
