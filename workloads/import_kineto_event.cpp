// The Kineto reader's event step: a finished trace event becomes a GPU activity, a CPU event or a
// fwdbwd flow end of the KinetoTrace (names and threads interned, times relative to the first
// event's), or is counted and dropped.
#include <algorithm>
#include <cmath>

#include "sim/error.h"
#include "sim/text.h"
#include "workloads/import_kineto_reader.h"

namespace hybridsim::workloads::kineto_detail {

void PendingEvent::reset() {
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

std::optional<std::int64_t> Scalar::as_integer() const {
  if (type == Type::Integer) return integer;
  if (type == Type::Float) return static_cast<std::int64_t>(std::llround(real));
  if (type == Type::String) return trailing_integer(*text);  // "stream 7", "7"
  return std::nullopt;
}

std::string Scalar::as_text() const {
  if (type == Type::String || type == Type::Float) return *text;
  if (type == Type::Integer) return std::to_string(integer);
  return "";
}

std::optional<Wide> Scalar::as_ps() const {
  if (type == Type::Integer) return static_cast<Wide>(integer) * kPsPerUs;
  if (type == Type::Float) return micros_to_ps(*text, real);
  return std::nullopt;
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

std::uint32_t TraceBuilder::thread(const PendingEvent& p) {
  return intern(threads_, t_.threads, p.pid + "/" + p.tid);
}

sim::Time TraceBuilder::relative(Wide ps, const std::string& name) {
  if (!base_) base_ = ps;
  const Wide rel = ps - *base_;
  if (rel > INT64_MAX || rel < INT64_MIN)
    throw InputError(source_ + ": timestamp out of range in event \"" + name + "\"");
  return sim::Time::ps(static_cast<std::int64_t>(rel));
}

void TraceBuilder::add(const PendingEvent& p) {
  ++t_.events_read;
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
  const int collective = p.has_collective ? static_cast<int>(t_.collectives.size()) : -1;
  if (p.has_collective) t_.collectives.push_back(p.collective);
  const sim::Time dur = sim::Time::ps(static_cast<std::int64_t>(std::max<Wide>(*p.dur, 0)));
  if (gpu) {
    add_gpu(p, *gpu, collective, dur);
  } else {
    if (*cpu == KinetoCpuKind::Runtime && !p.correlation) return;  // not a launch
    if (*cpu == KinetoCpuKind::Op && (p.name.starts_with("ProfilerStep#") || p.name.starts_with("Optimizer.")))
      cpu = KinetoCpuKind::Annotation;  // older traces file record_function ranges as cpu_op
    add_cpu(p, *cpu, collective, dur);
  }
  ++t_.events_kept;
}

void TraceBuilder::add_flow(const PendingEvent& p) {
  if (!p.ts) return;
  t_.fwdbwd.push_back({p.id, thread(p), relative(*p.ts, p.name), p.ph == "s"});
  ++t_.events_kept;
}

void TraceBuilder::add_gpu(const PendingEvent& p, KinetoGpuKind kind, int collective, sim::Time duration) {
  KinetoGpuActivity a;
  a.kind = kind;
  a.name = intern(names_, t_.names, p.name);
  a.device = static_cast<int>(p.device ? *p.device : trailing_integer(p.pid).value_or(0));
  a.stream = p.stream ? *p.stream : trailing_integer(p.tid).value_or(0);
  a.start = relative(*p.ts, p.name);
  a.duration = duration;
  a.correlation = p.correlation.value_or(-1);
  a.external_id = p.external_id.value_or(-1);
  a.collective = collective;
  t_.gpu.push_back(a);
}

void TraceBuilder::add_cpu(const PendingEvent& p, KinetoCpuKind kind, int collective, sim::Time duration) {
  KinetoCpuEvent e;
  e.kind = kind;
  e.name = intern(names_, t_.names, p.name);
  e.thread = thread(p);
  e.start = relative(*p.ts, p.name);
  e.duration = duration;
  e.correlation = p.correlation.value_or(-1);
  e.external_id = p.external_id.value_or(-1);
  e.collective = collective;
  if (p.name == "torch::autograd::AccumulateGrad" && p.dims.valid) {
    e.input_elements = p.dims.elements;
    e.input_element_bytes = kineto_dtype_bytes(p.input_type).value_or(0);
  }
  t_.cpu.push_back(e);
}

}  // namespace hybridsim::workloads::kineto_detail
