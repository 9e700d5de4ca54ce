// The raw material of a PyTorch profiler (Kineto) Chrome trace, read in one streaming pass: GPU
// activities (kernels, memcpys, memsets), CPU ops, annotations and runtime launches, fwdbwd flows,
// NCCL collective arguments, device properties and distributed info. Times are picoseconds
// relative to the trace's first timestamp (exact: the JSON's µs decimals are parsed as decimals);
// each kept event remembers where it is in the file, for messages.
//   KinetoTrace t = read_kineto_trace("trace.json");   // sax_parse over an ifstream, never whole
//   t.gpu.size();  t.names[t.gpu[0].name];  t.world_size;  t.describe(t.gpu[0]);
#pragma once
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.h"

namespace hybridsim::workloads {

// Where an event is in the trace file: its index in traceEvents (0-based) and the byte offset of
// its opening brace.
struct KinetoEventPlace {
  std::int64_t index = -1;
  std::int64_t byte = -1;
};

// Arguments PyTorch records for a collective, on the NCCL kernel and/or on its `record_param_comms`
// CPU op: "Collective name", "In msg nelems", "Out msg nelems", "Group size", "dtype",
// "Process Group Name", "Process Group Ranks".
struct KinetoCollective {
  std::string name;                // "allreduce", "broadcast", "allgather", ...
  std::int64_t in_elements = -1;   // -1: not recorded
  std::int64_t out_elements = -1;
  int group_size = 0;              // 0: not recorded
  std::string dtype;               // "Float", "Half", "BFloat16"
  std::string group_name;          // "0"
  std::string group_ranks;         // "[0, 1]"
};

enum class KinetoGpuKind : std::uint8_t { Kernel, Memcpy, Memset };

// A GPU activity (`cat` "kernel", "gpu_memcpy", "gpu_memset").
struct KinetoGpuActivity {
  KinetoGpuKind kind = KinetoGpuKind::Kernel;
  std::uint32_t name = 0;           // index into KinetoTrace::names
  int device = 0;                   // args "device", else pid
  std::int64_t stream = 0;          // args "stream", else tid
  sim::Time start;
  sim::Time duration;
  std::int64_t correlation = -1;    // args "correlation": the launching runtime call's
  std::int64_t external_id = -1;    // args "External id": the launching CPU op's
  int collective = -1;              // index into KinetoTrace::collectives, or -1
  KinetoEventPlace at;
};

enum class KinetoCpuKind : std::uint8_t {
  Op,          // `cat` "cpu_op" (ATen ops, autograd nodes, record_param_comms)
  Annotation,  // `cat` "user_annotation" and ProfilerStep#N / Optimizer.* ranges
  Runtime,     // `cat` "cuda_runtime" / "cuda_driver": launches, linked to GPU work by correlation
};

// An event on a CPU thread.
struct KinetoCpuEvent {
  KinetoCpuKind kind = KinetoCpuKind::Op;
  std::uint32_t name = 0;           // index into KinetoTrace::names
  std::uint32_t thread = 0;         // (pid, tid) interned: index into KinetoTrace::threads
  sim::Time start;
  sim::Time duration;
  std::int64_t correlation = -1;    // runtime calls
  std::int64_t external_id = -1;
  int collective = -1;              // index into KinetoTrace::collectives, or -1
  // "Input Dims" / "Input type" of the first input, kept for torch::autograd::AccumulateGrad only:
  // its element count (-1: not recorded) and the element size in bytes (0: unknown type).
  std::int64_t input_elements = -1;
  int input_element_bytes = 0;
  KinetoEventPlace at;
};

// One end of a `fwdbwd` flow: "s" at the forward op that created an autograd node, "f" at the
// backward op that ran it. Flows bind to the CPU op enclosing (thread, ts).
struct KinetoFlowPoint {
  std::int64_t id = 0;
  std::uint32_t thread = 0;
  sim::Time time;
  bool is_start = true;
};

struct KinetoDevice {
  int id = 0;
  std::string name;                 // "NVIDIA A100-SXM4-80GB"
  std::int64_t total_memory = 0;    // totalGlobalMem, bytes
};

struct KinetoTrace {
  std::string source;               // the path read
  std::vector<std::string> names;   // interned event names
  std::vector<std::string> threads; // "pid/tid" of each interned thread
  std::vector<KinetoGpuActivity> gpu;
  std::vector<KinetoCpuEvent> cpu;
  std::vector<KinetoFlowPoint> fwdbwd;
  std::vector<KinetoCollective> collectives;
  std::vector<KinetoDevice> devices;  // "deviceProperties"
  std::optional<int> rank;            // "distributedInfo"
  std::optional<int> world_size;
  std::string backend;                // "nccl"
  std::int64_t events_read = 0;       // entries of traceEvents
  std::int64_t events_kept = 0;       // of which kept (the rest: python functions, metadata, ...)
  std::int64_t events_malformed = 0;  // complete ("X") events of a kept kind without ts or dur
  std::int64_t flows_without_id = 0;  // fwdbwd flow ends without an "id" (not kept: unpairable)
  std::int64_t bytes_read = 0;
  // The first kept event's ts, which times are relative to: origin_us µs + origin_sub_ps ps.
  std::int64_t origin_us = 0;
  std::int64_t origin_sub_ps = 0;   // 0 .. 999'999

  const std::string& name_of(std::uint32_t index) const { return names.at(index); }
  const KinetoDevice* find_device(int id) const;
  // A time as the trace writes it (µs, absolute): "1700000000123.456".
  std::string ts_text(sim::Time t) const;
  // For messages: "traceEvents[12] at byte 2345, kernel \"gemm\" (\"ts\": 1030)".
  std::string describe(const KinetoGpuActivity& a) const;
  std::string describe(const KinetoCpuEvent& e) const;
};

// "traceEvents[12] at byte 2345".
std::string describe_place(const KinetoEventPlace& at);

// Which events a pass keeps (a streamed import reads the file several times, keeping a part each
// time): every event is read, checked and counted as without one; those refused are not stored.
// The calls see the event as it would be stored (names and threads interned in `trace`).
class KinetoKeep {
 public:
  virtual ~KinetoKeep() = default;
  // Where the event offered is in the file: its place, and the byte just after its closing brace.
  KinetoEventPlace at;
  std::int64_t end_byte = -1;
  virtual bool gpu(const KinetoTrace& trace, const KinetoGpuActivity& a) = 0;
  virtual bool cpu(const KinetoTrace& trace, const KinetoCpuEvent& e) = 0;
  virtual bool flow(const KinetoTrace& trace, const KinetoFlowPoint& f) = 0;
};

// Reads a Kineto trace file in one streaming pass (nlohmann::json::sax_parse over an ifstream),
// keeping only the events above. Throws InputError naming the file when it cannot be opened, is not
// JSON, is not a Kineto trace (no top-level object with a traceEvents array) or is truncated, and
// naming the file and the event (index, byte offset, name and ts) when a kept event's numbers are
// not a measurement: a negative duration, a time beyond 2^62 ps of the first timestamp, a negative
// or fractional count, a tensor of more than 1 TiB, a device id that is not one (import_limits.h).
// With `keep`, only what it accepts is stored (the check for a trace without usable GPU activity
// is then the caller's).
KinetoTrace read_kineto_trace(const std::string& path, KinetoKeep* keep = nullptr);
// The same over any stream; `source_name` prefixes error messages.
KinetoTrace parse_kineto_trace(std::istream& in, const std::string& source_name, KinetoKeep* keep = nullptr);

// Bytes per element of a dtype as Kineto spells it ("Float", "float", "c10::Half", "BFloat16",
// "long int", ...); nullopt when unknown.
std::optional<int> kineto_dtype_bytes(std::string_view dtype);

}  // namespace hybridsim::workloads
