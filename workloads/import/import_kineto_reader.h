// Internals of the streaming Kineto reader (not a public API): the SAX handler (nlohmann::json)
// with its small stack of contexts, which collects each trace event's fields into a PendingEvent,
// and the TraceBuilder that turns a finished PendingEvent into what KinetoTrace keeps.
//   KinetoTrace t;   TraceBuilder b(t, "trace.json");
//   PendingEvent e;  e.ph = "X"; e.cat = "kernel"; e.ts = 0; e.dur = 5'000'000;   b.add(e);
//   t.gpu.size() == 1;   t.gpu[0].duration == sim::Time::us(5)
#pragma once
#include <cstdint>
#include <streambuf>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/import/import_kineto_trace.h"
#include "workloads/import/import_kineto_values.h"

namespace hybridsim::workloads::kineto_detail {

// The first top-level input's element count from "Input Dims": [[256, 512], [], ...], saturated
// above kMaxTensorBytes (which no tensor reaches).
struct DimsState {
  int outer_index = -1;   // which input's dims are being read
  std::int64_t elements = 1;
  bool valid = false;     // the first input is a plain list of integers
  std::string problem;    // the first dim that is not a whole number of 0 or more, as written
};

// The fields of one trace event the importer uses, as read so far.
struct PendingEvent {
  std::string ph, cat, name, pid, tid;
  std::optional<Wide> ts, dur;  // ps
  std::string ts_text, dur_text;  // as written
  std::optional<std::int64_t> id;
  std::optional<std::int64_t> correlation, external_id, device, stream;
  KinetoCollective collective;
  bool has_collective = false;
  DimsState dims;
  std::string input_type;
  int types_index = 0;
  // The first argument that is not a number of its kind: what it is, and what was expected.
  std::string bad_number, bad_number_expected;
  KinetoEventPlace at;
  std::int64_t end_byte = -1;  // just after its closing brace

  void reset();  // as new, keeping the strings' storage
};

// A scalar value as the SAX interface delivers it.
struct Scalar {
  enum class Type : std::uint8_t { Integer, Unsigned, Float, String, Other } type = Type::Other;
  std::int64_t integer = 0;
  std::uint64_t unsigned_value = 0;   // above INT64_MAX
  const std::string* text = nullptr;  // the string, or the float's token

  // Integers; floats that are whole numbers; "stream 7" → 7. nullopt for the rest.
  std::optional<std::int64_t> as_integer() const;
  std::string as_text() const;
  // µs → ps, exactly; numbers beyond ±kMaxDecodedPs saturate there. nullopt for non-numbers.
  std::optional<Wide> as_ps() const;
  bool is_number() const { return type == Type::Integer || type == Type::Unsigned || type == Type::Float; }
};

// Builds the KinetoTrace from finished events: interns names and threads, checks each kept event's
// numbers (throwing InputError that names the file and the event), makes times relative to the
// first kept event's ts, and keeps the kinds the importer uses (counting the rest).
class TraceBuilder {
 public:
  TraceBuilder(KinetoTrace& trace, std::string source, KinetoKeep* keep = nullptr)
      : t_(trace), source_(std::move(source)), keep_(keep) {}
  // One finished entry of traceEvents.
  void add(const PendingEvent& event);
  // Times relative to this ts (ps) instead of the first kept event's: a pass over part of a file.
  void set_origin(Wide ts) { base_ = ts; }

 private:
  void add_flow(const PendingEvent& p);
  // Whether the event was stored (keep_ may refuse it).
  bool add_gpu(const PendingEvent& p, KinetoGpuKind kind, int collective, sim::Time duration);
  bool add_cpu(const PendingEvent& p, KinetoCpuKind kind, int collective, sim::Time duration);
  void check_collective(const PendingEvent& p) const;
  void check_dims(const PendingEvent& p) const;
  // The event's start relative to the first kept event's, checked with its end (start + `dur`).
  sim::Time relative(const PendingEvent& p, Wide dur);
  [[noreturn]] void fail(const PendingEvent& p, const std::string& what, const std::string& expected) const;
  std::uint32_t intern(std::unordered_map<std::string, std::uint32_t>& map, std::vector<std::string>& table,
                       const std::string& s);
  std::uint32_t thread(const PendingEvent& p);
  // Names and threads interned for an event the pass did not keep, forgotten (a pass over a large
  // file keeps the names of what it keeps, not one per ProfilerStep#N).
  void forget_since(std::size_t names, std::size_t threads);

  KinetoTrace& t_;
  std::string source_;
  KinetoKeep* keep_ = nullptr;
  std::unordered_map<std::string, std::uint32_t> names_, threads_;
  std::optional<Wide> base_;
};

// The kind of GPU activity a `cat` names ("kernel", "gpu_memcpy", ...); nullopt for others.
std::optional<KinetoGpuKind> gpu_kind_of(const std::string& lowercase_cat);
// The kind of CPU event a `cat` names ("cpu_op", "user_annotation", "cuda_runtime", ...).
std::optional<KinetoCpuKind> cpu_kind_of(const std::string& lowercase_cat);

// A read buffer over another stream buffer that counts the bytes taken from it, so that the SAX
// handler knows each event's byte offset (nlohmann's parser reads one character at a time).
class CountingBuffer : public std::streambuf {
 public:
  // `start`: the byte offset of the source's first byte (a part of a file read alone).
  explicit CountingBuffer(std::streambuf* source, std::int64_t start = 0)
      : source_(source), buffer_(std::size_t{1} << 16), before_(start) {}
  // Bytes taken so far.
  std::int64_t position() const { return before_ + (gptr() - eback()); }

 protected:
  int_type underflow() override;

 private:
  std::streambuf* source_;
  std::vector<char> buffer_;
  std::int64_t before_ = 0;  // bytes of the buffers already used up
};

// The nlohmann SAX handler over a whole trace.
class TraceSax {
 public:
  using Json = nlohmann::json;
  // `input_size`: bytes the stream holds (0 when unknown), to tell a cut-off file from bad syntax;
  // `input`: what the parser reads, for the events' byte offsets.
  TraceSax(KinetoTrace& trace, std::string source, std::int64_t input_size, const CountingBuffer& input,
           KinetoKeep* keep = nullptr)
      : t_(trace),
        source_(source),
        builder_(trace, std::move(source), keep),
        input_(input),
        input_size_(input_size) {}

  bool null() { return on_scalar(Scalar{}); }
  bool boolean(bool) { return on_scalar(Scalar{}); }
  bool number_integer(Json::number_integer_t v) {
    return on_scalar(Scalar{Scalar::Type::Integer, v, 0, nullptr});
  }
  bool number_unsigned(Json::number_unsigned_t v);
  bool number_float(Json::number_float_t, const std::string& token) {
    return on_scalar(Scalar{Scalar::Type::Float, 0, 0, &token});
  }
  bool string(std::string& s) { return on_scalar(Scalar{Scalar::Type::String, 0, 0, &s}); }
  bool binary(Json::binary_t&) { return on_scalar(Scalar{}); }
  bool key(std::string& k) {
    key_ = k;
    return true;
  }
  bool start_object(std::size_t);
  bool end_object();
  bool start_array(std::size_t);
  bool end_array();
  bool parse_error(std::size_t position, const std::string&, const Json::exception& e);

  const std::string& error() const { return error_; }
  bool saw_events() const { return saw_events_; }
  bool saw_root() const { return saw_root_; }
  TraceBuilder& builder() { return builder_; }
  // distributedInfo's rank and world size and deviceProperties' ids checked and kept, once the
  // whole document is read (they may come after traceEvents).
  void finish_header();

 private:
  enum class Ctx : std::uint8_t {
    Root, Events, Event, Args, Dims, DimsInner, Types, Ranks, Devices, Device, Dist, Skip
  };
  bool push(Ctx c);
  Ctx pop();
  std::string where() const;
  bool on_scalar(const Scalar& v);
  void on_event_field(const Scalar& v);
  void on_arg(const Scalar& v);
  void on_dims_value(const Scalar& v);
  // A count argument (elements, group size): a whole number of 0 or more, else pending_.bad_number.
  std::optional<std::int64_t> count_arg(const Scalar& v);
  [[noreturn]] void fail_header(const std::string& where, const std::string& what,
                                const std::string& expected) const;

  KinetoTrace& t_;
  std::string source_;
  TraceBuilder builder_;
  const CountingBuffer& input_;
  std::vector<Ctx> stack_;
  std::string key_;
  PendingEvent pending_;
  KinetoDevice device_;
  std::string error_;
  std::int64_t input_size_ = 0;
  bool saw_any_ = false, saw_root_ = false, saw_events_ = false;
  std::int64_t dist_byte_ = -1;                    // where distributedInfo starts
  std::string rank_, world_size_;                  // as written ("" when not)
  std::vector<std::int64_t> device_bytes_;         // where each deviceProperties entry starts
  std::vector<std::string> device_ids_;            // their ids as written
};

}  // namespace hybridsim::workloads::kineto_detail
