// The Kineto reader's event step: a finished trace event becomes a GPU activity, a CPU event or a
// fwdbwd flow end of the KinetoTrace (names and threads interned, times relative to the first
// event's), or is counted and dropped. A kept event whose numbers are not a measurement is an
// error naming the file and the event.
#include <algorithm>
#include <climits>

#include "sim/error.h"
#include "sim/text.h"
#include "sim/units.h"
#include "workloads/import/import_kineto_reader.h"
#include "workloads/import/import_limits.h"

namespace hybridsim::workloads::kineto_detail {

void PendingEvent::reset() {
  ph.clear(); cat.clear(); name.clear(); pid.clear(); tid.clear();
  ts.reset(); dur.reset();
  ts_text.clear(); dur_text.clear();
  id.reset();
  correlation.reset(); external_id.reset(); device.reset(); stream.reset();
  collective = KinetoCollective{};
  has_collective = false;
  dims = DimsState{};
  input_type.clear();
  types_index = 0;
  bad_number.clear();
  bad_number_expected.clear();
  at = KinetoEventPlace{};
  end_byte = -1;
}

std::optional<std::int64_t> Scalar::as_integer() const {
  if (type == Type::Integer) return integer;
  if (type == Type::Float) return whole_number(*text);
  if (type == Type::String) return trailing_integer(*text);  // "stream 7", "7"
  return std::nullopt;
}

std::string Scalar::as_text() const {
  if (type == Type::String || type == Type::Float) return *text;
  if (type == Type::Integer) return std::to_string(integer);
  if (type == Type::Unsigned) return std::to_string(unsigned_value);
  return "";
}

std::optional<Wide> Scalar::as_ps() const {
  if (type == Type::Integer) return static_cast<Wide>(integer) * kPsPerUs;
  if (type == Type::Unsigned) return static_cast<Wide>(unsigned_value) * kPsPerUs;
  if (type != Type::Float) return std::nullopt;
  if (const auto ps = micros_to_ps(*text)) return ps;
  return text->starts_with('-') ? -kMaxDecodedPs : kMaxDecodedPs;  // beyond every limit: saturated
}

std::optional<KinetoGpuKind> gpu_kind_of(const std::string& cat) {
  if (cat == "kernel") return KinetoGpuKind::Kernel;
  if (cat == "gpu_memcpy" || cat == "memcpy") return KinetoGpuKind::Memcpy;
  if (cat == "gpu_memset" || cat == "memset") return KinetoGpuKind::Memset;
  return std::nullopt;
}

std::optional<KinetoCpuKind> cpu_kind_of(const std::string& cat) {
  if (cat == "cpu_op" || cat == "operator") return KinetoCpuKind::Op;
  if (cat == "user_annotation") return KinetoCpuKind::Annotation;
  if (cat == "cuda_runtime" || cat == "runtime" || cat == "cuda_driver") return KinetoCpuKind::Runtime;
  return std::nullopt;
}

std::uint32_t TraceBuilder::intern(std::unordered_map<std::string, std::uint32_t>& map,
                                   std::vector<std::string>& table, const std::string& s) {
  const auto [it, inserted] = map.try_emplace(s, static_cast<std::uint32_t>(table.size()));
  if (inserted) table.push_back(s);
  return it->second;
}

void TraceBuilder::forget_since(std::size_t names, std::size_t threads) {
  for (; t_.names.size() > names; t_.names.pop_back()) names_.erase(t_.names.back());
  for (; t_.threads.size() > threads; t_.threads.pop_back()) threads_.erase(t_.threads.back());
}

std::uint32_t TraceBuilder::thread(const PendingEvent& p) {
  return intern(threads_, t_.threads, p.pid + "/" + p.tid);
}

void TraceBuilder::fail(const PendingEvent& p, const std::string& what, const std::string& expected) const {
  std::string ts = p.ts_text.empty() ? "" : " (\"ts\": " + p.ts_text + ")";
  throw InputError(source_ + ": " + describe_place(p.at) + ", " + (p.cat.empty() ? "event" : p.cat) + " \"" +
                   p.name + "\"" + ts + ": " + what + "; expected " + expected);
}

sim::Time TraceBuilder::relative(const PendingEvent& p, Wide dur) {
  const Wide limit = kMaxImportedTime.ps();
  if (!base_) {
    if (*p.ts <= -static_cast<Wide>(INT64_MAX) * kPsPerUs || *p.ts >= static_cast<Wide>(INT64_MAX) * kPsPerUs)
      fail(p, "\"ts\" is " + p.ts_text + " us",
           "microseconds that fit 64 bits (Kineto writes about 1.7e15, us since 1970)");
    base_ = *p.ts;
    Wide us = *p.ts / kPsPerUs, sub = *p.ts % kPsPerUs;
    if (sub < 0) sub += kPsPerUs, us -= 1;  // floor
    t_.origin_us = static_cast<std::int64_t>(us);
    t_.origin_sub_ps = static_cast<std::int64_t>(sub);
  }
  const std::string origin = "the trace's first timestamp (\"ts\": " + format_micros(*base_) + ")";
  const Wide start = *p.ts - *base_;
  if (start > limit || start < -limit)
    fail(p,
         "\"ts\" is " + format_days(start < 0 ? -start : start) + (start < 0 ? " before " : " after ") +
             origin,
         "every event within " + std::string(kMaxImportedTimeText) + " of it");
  if (start + dur > limit)
    fail(p,
         "\"dur\" is " + p.dur_text + " us: the event ends " + format_days(start + dur) + " after " + origin,
         "every event within " + std::string(kMaxImportedTimeText) + " of it");
  return sim::Time::ps(static_cast<std::int64_t>(start));
}

void TraceBuilder::check_collective(const PendingEvent& p) const {
  const KinetoCollective& c = p.collective;
  const auto element = kineto_dtype_bytes(c.dtype);
  for (const auto& [key, n] :
       {std::pair{"In msg nelems", c.in_elements}, std::pair{"Out msg nelems", c.out_elements}}) {
    const Wide bytes = static_cast<Wide>(n) * element.value_or(1);
    if (bytes > kMaxTensorBytes)
      fail(p,
           std::string("\"") + key + "\" is " + std::to_string(n) + (element ? " " + c.dtype : "") +
               " elements (" +
               sim::human_bytes(sim::Bytes::of(static_cast<std::int64_t>(std::min<Wide>(bytes, INT64_MAX)))) +
               ")",
           std::string("a message of at most ") + kMaxTensorBytesText + " (no GPU holds more)");
  }
}

void TraceBuilder::check_dims(const PendingEvent& p) const {
  const DimsState& d = p.dims;
  if (!d.problem.empty())
    fail(p, "\"Input Dims\" holds " + d.problem, "the dims of the parameter: whole numbers of 0 or more");
  const int element = kineto_dtype_bytes(p.input_type).value_or(1);
  if (static_cast<Wide>(d.elements) * element > kMaxTensorBytes)
    fail(p, "\"Input Dims\" make a parameter of more than " + std::string(kMaxTensorBytesText),
         std::string("at most ") + kMaxTensorBytesText + " (no GPU holds more)");
}

void TraceBuilder::add(const PendingEvent& p) {
  ++t_.events_read;
  if (keep_) keep_->at = p.at, keep_->end_byte = p.end_byte;
  const std::string cat = sim::lowercase(p.cat);
  if ((p.ph == "s" || p.ph == "f") && cat == "fwdbwd") return add_flow(p);
  if (p.ph != "X") return;
  const std::optional<KinetoGpuKind> gpu = gpu_kind_of(cat);
  std::optional<KinetoCpuKind> cpu = cpu_kind_of(cat);
  if (!gpu && !cpu) return;
  if (!p.ts || !p.dur) {
    ++t_.events_malformed;
    return;
  }
  if (cpu == KinetoCpuKind::Runtime && !p.correlation) return;  // not a launch
  if (*p.dur < 0) fail(p, "\"dur\" is " + p.dur_text + " us", "a duration of 0 us or more");
  if (!p.bad_number.empty()) fail(p, p.bad_number, p.bad_number_expected);
  if (p.has_collective) check_collective(p);
  const bool shapes = p.name == "torch::autograd::AccumulateGrad" && p.dims.valid;
  if (shapes) check_dims(p);
  const int collective = p.has_collective ? static_cast<int>(t_.collectives.size()) : -1;
  if (p.has_collective) t_.collectives.push_back(p.collective);
  const sim::Time dur = sim::Time::ps(static_cast<std::int64_t>(*p.dur));  // within kMaxImportedTime: checked
  if (cpu == KinetoCpuKind::Op && (p.name.starts_with("ProfilerStep#") || p.name.starts_with("Optimizer.")))
    cpu = KinetoCpuKind::Annotation;  // older traces file record_function ranges as cpu_op
  const bool stored = gpu ? add_gpu(p, *gpu, collective, dur) : add_cpu(p, *cpu, collective, dur);
  if (!stored && p.has_collective) t_.collectives.pop_back();
  ++t_.events_kept;
}

void TraceBuilder::add_flow(const PendingEvent& p) {
  if (!p.ts) return;
  if (!p.id) {
    ++t_.flows_without_id;
    return;
  }
  const std::size_t threads = t_.threads.size();
  const KinetoFlowPoint f{*p.id, thread(p), relative(p, 0), p.ph == "s"};
  if (!keep_ || keep_->flow(t_, f)) t_.fwdbwd.push_back(f);
  else forget_since(t_.names.size(), threads);
  ++t_.events_kept;
}

bool TraceBuilder::add_gpu(const PendingEvent& p, KinetoGpuKind kind, int collective, sim::Time duration) {
  KinetoGpuActivity a;
  a.kind = kind;
  const std::size_t names = t_.names.size();
  a.name = intern(names_, t_.names, p.name);
  const std::optional<std::int64_t> device = p.device ? p.device : trailing_integer(p.pid);
  if (device && (*device < 0 || *device > INT_MAX))
    fail(p,
         "the device (" + std::string(p.device ? "args \"device\"" : "\"pid\"") + ") is " +
             std::to_string(*device),
         "a GPU's index, 0 or more");
  a.device = static_cast<int>(device.value_or(0));
  a.stream = p.stream ? *p.stream : trailing_integer(p.tid).value_or(0);
  a.start = relative(p, *p.dur);
  a.duration = duration;
  a.correlation = p.correlation.value_or(-1);
  a.external_id = p.external_id.value_or(-1);
  a.collective = collective;
  a.at = p.at;
  if (keep_ && !keep_->gpu(t_, a)) {
    forget_since(names, t_.threads.size());
    return false;
  }
  t_.gpu.push_back(a);
  return true;
}

bool TraceBuilder::add_cpu(const PendingEvent& p, KinetoCpuKind kind, int collective, sim::Time duration) {
  KinetoCpuEvent e;
  e.kind = kind;
  const std::size_t names = t_.names.size(), threads = t_.threads.size();
  e.name = intern(names_, t_.names, p.name);
  e.thread = thread(p);
  e.start = relative(p, *p.dur);
  e.duration = duration;
  e.correlation = p.correlation.value_or(-1);
  e.external_id = p.external_id.value_or(-1);
  e.collective = collective;
  if (p.name == "torch::autograd::AccumulateGrad" && p.dims.valid) {
    e.input_elements = p.dims.elements;
    e.input_element_bytes = kineto_dtype_bytes(p.input_type).value_or(0);
  }
  e.at = p.at;
  if (keep_ && !keep_->cpu(t_, e)) {
    forget_since(names, threads);
    return false;
  }
  t_.cpu.push_back(e);
  return true;
}

}  // namespace hybridsim::workloads::kineto_detail
