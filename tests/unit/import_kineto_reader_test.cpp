// The Kineto reader's steps (workloads/import/import_kineto_reader.h, import_kineto_values.h) on
// hand-made values: exact decoding of µs, counts and ids; the event step (TraceBuilder) that keeps,
// converts and checks each finished event; the byte-counting buffer behind the events' offsets.
#include <doctest/doctest.h>

#include <sstream>

#include "sim/error.h"
#include "workloads/import/import_kineto_reader.h"

using namespace hybridsim;
using namespace hybridsim::workloads::kineto_detail;
using sim::Time;
using workloads::KinetoCpuKind;
using workloads::KinetoGpuKind;
using workloads::KinetoTrace;

namespace {

// A complete kernel event at `ts_us` lasting `dur_us`, both as written.
PendingEvent kernel(const std::string& ts, const std::string& dur, const std::string& name = "k") {
  PendingEvent e;
  e.ph = "X";
  e.cat = "kernel";
  e.name = name;
  e.pid = "0";
  e.tid = "7";
  e.ts = micros_to_ps(ts);
  e.ts_text = ts;
  e.dur = micros_to_ps(dur);
  e.dur_text = dur;
  e.at = {3, 120};
  return e;
}

std::string error_of(TraceBuilder& b, const PendingEvent& e) {
  try {
    b.add(e);
  } catch (const InputError& x) {
    return x.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("kineto reader: micros_to_ps is exact, exponents included, and bounded") {
  CHECK(micros_to_ps("12.345") == Wide{12'345'000});
  // Beyond double precision at ps: 1.7e15 µs with ns decimals.
  CHECK(micros_to_ps("1700000000123.456") == Wide{1'700'000'000'123'456'000});
  CHECK(micros_to_ps("-100") == Wide{-100'000'000});
  CHECK(micros_to_ps("10.0000019") == Wide{10'000'001});  // the 7th decimal is cut
  CHECK(micros_to_ps("-0.0000009") == Wide{0});
  // Exponents are decimals too: 9.3e12 µs = 9.3·10^18 ps, more than int64 holds.
  CHECK(micros_to_ps("9.3e12") == Wide{93} * 100'000'000'000'000'000);
  CHECK(micros_to_ps("1.5E-3") == Wide{1'500});  // 0.0015 us
  CHECK(micros_to_ps("2e+2") == Wide{200'000'000});
  // 10^24 µs = 10^30 ps is past the bound; so is 1e999 (infinite as a double).
  CHECK(micros_to_ps("1e23") == Wide{100'000'000'000'000} * 1'000'000'000'000'000);
  CHECK_FALSE(micros_to_ps("1e24"));
  CHECK_FALSE(micros_to_ps("1e999"));
  CHECK_FALSE(micros_to_ps("12a"));
  CHECK_FALSE(micros_to_ps(""));
}

TEST_CASE("kineto reader: whole_number, trailing_integer, format_micros, format_days") {
  CHECK(whole_number("7") == 7);
  CHECK(whole_number("7.000") == 7);
  CHECK(whole_number("1e3") == 1000);
  CHECK(whole_number("-4") == -4);
  CHECK_FALSE(whole_number("2.5"));
  CHECK_FALSE(whole_number("1e19"));  // above INT64_MAX
  CHECK(whole_number("9223372036854775807") == INT64_MAX);
  CHECK(trailing_integer("stream 7") == 7);
  CHECK(trailing_integer("12") == 12);
  CHECK_FALSE(trailing_integer("stream"));
  CHECK_FALSE(trailing_integer("id 99999999999999999999"));  // does not fit: no id rather than a wrong one
  CHECK(format_micros(Wide{1'700'000'000'123'456'000}) == "1700000000123.456");
  CHECK(format_micros(Wide{-100'000'000}) == "-100");
  CHECK(format_micros(Wide{500'000}) == "0.5");
  CHECK(format_micros(Wide{1}) == "0.000001");
  // 9.3·10^18 ps / (86,400 · 10^12 ps a day) = 107.64 days.
  CHECK(format_days(Wide{93} * 100'000'000'000'000'000) == "107.6 days");
}

TEST_CASE("kineto reader: Scalar conversions") {
  const std::string stream = "stream 7", token = "3.0", half = "2.5", big = "1e40";
  CHECK(Scalar{Scalar::Type::String, 0, 0, &stream}.as_integer() == 7);
  CHECK(Scalar{Scalar::Type::Float, 0, 0, &token}.as_integer() == 3);
  CHECK_FALSE(Scalar{Scalar::Type::Float, 0, 0, &half}.as_integer());  // not rounded to 3
  CHECK(Scalar{Scalar::Type::Integer, 5, 0, nullptr}.as_ps() == Wide{5'000'000});
  CHECK_FALSE(Scalar{Scalar::Type::Unsigned, 0, 1ULL << 63, nullptr}.as_integer());
  CHECK(Scalar{Scalar::Type::Unsigned, 0, 1ULL << 63, nullptr}.as_ps() ==
        static_cast<Wide>(1ULL << 63) * 1'000'000);
  CHECK(Scalar{Scalar::Type::Unsigned, 0, 1ULL << 63, nullptr}.as_text() == "9223372036854775808");
  CHECK(Scalar{Scalar::Type::Float, 0, 0, &big}.as_ps() ==
        kMaxDecodedPs);  // saturated, then rejected by range
  CHECK_FALSE(Scalar{Scalar::Type::String, 0, 0, &stream}.as_ps());
  CHECK_FALSE(Scalar{}.as_integer());
}

TEST_CASE("kineto reader: event kinds from cat") {
  CHECK(gpu_kind_of("kernel") == KinetoGpuKind::Kernel);
  CHECK(gpu_kind_of("memcpy") == KinetoGpuKind::Memcpy);
  CHECK(gpu_kind_of("gpu_memset") == KinetoGpuKind::Memset);
  CHECK_FALSE(gpu_kind_of("cpu_op"));
  CHECK(cpu_kind_of("operator") == KinetoCpuKind::Op);
  CHECK(cpu_kind_of("user_annotation") == KinetoCpuKind::Annotation);
  CHECK(cpu_kind_of("cuda_driver") == KinetoCpuKind::Runtime);
  CHECK_FALSE(cpu_kind_of("python_function"));
}

TEST_CASE("kineto reader: TraceBuilder keeps kernels, CPU events and flows, relative to the first") {
  KinetoTrace t;
  TraceBuilder b(t, "t.json");
  b.add(kernel("1000.5", "10"));
  PendingEvent op = kernel("1002", "3", "aten::add");
  op.cat = "cpu_op";
  op.pid = "42";
  op.tid = "42";
  op.external_id = 9;
  b.add(op);
  PendingEvent step = op;
  step.name = "ProfilerStep#1";  // an older trace's record_function range as a cpu_op
  b.add(step);
  PendingEvent runtime = op;
  runtime.cat = "cuda_runtime";  // no correlation: not a launch
  b.add(runtime);
  PendingEvent flow;
  flow.ph = "s";
  flow.cat = "fwdbwd";
  flow.ts = micros_to_ps("1001");
  flow.id = 4;
  b.add(flow);
  PendingEvent no_id = flow;
  no_id.id.reset();
  b.add(no_id);
  PendingEvent no_dur = kernel("1003", "1");
  no_dur.dur.reset();
  b.add(no_dur);
  PendingEvent python = op;
  python.cat = "python_function";
  b.add(python);
  CHECK(t.events_read == 8);
  CHECK(t.events_kept == 4);
  CHECK(t.events_malformed == 1);
  CHECK(t.flows_without_id == 1);
  REQUIRE(t.gpu.size() == 1);
  CHECK(t.gpu[0].start == Time::zero());
  CHECK(t.gpu[0].duration == Time::us(10));
  CHECK(t.gpu[0].stream == 7);  // from tid, no args "stream"
  CHECK(t.gpu[0].at.byte == 120);
  REQUIRE(t.cpu.size() == 2);
  CHECK(t.cpu[0].start == Time::ps(1'500'000));  // 1002 − 1000.5 µs
  CHECK(t.cpu[0].external_id == 9);
  CHECK(t.cpu[1].kind == KinetoCpuKind::Annotation);
  REQUIRE(t.fwdbwd.size() == 1);
  CHECK(t.fwdbwd[0].time == Time::ps(500'000));
  CHECK(t.fwdbwd[0].time < t.cpu[0].start);
  // The origin: 1000.5 µs, and times written back as the trace writes them.
  CHECK(t.origin_us == 1000);
  CHECK(t.origin_sub_ps == 500'000);
  CHECK(t.ts_text(t.cpu[0].start) == "1002");
  CHECK(t.describe(t.gpu[0]) == "traceEvents[3] at byte 120, kernel \"k\" (\"ts\": 1000.5)");
}

TEST_CASE("kineto reader: TraceBuilder rejects numbers that are not measurements, naming the event") {
  KinetoTrace t;
  TraceBuilder b(t, "t.json");
  const std::string at = "t.json: traceEvents[3] at byte 120, kernel \"k\" ";
  CHECK(error_of(b, kernel("100", "-100")) ==
        at + "(\"ts\": 100): \"dur\" is -100 us; expected a duration of 0 us or more");
  // The first kept event sets the origin; its ts must be microseconds that fit 64 bits.
  CHECK(error_of(b, kernel("1e20", "1")) == at + "(\"ts\": 1e20): \"ts\" is 1e20 us; expected microseconds "
                                                 "that fit 64 bits (Kineto writes about 1.7e15, "
                                                 "us since 1970)");
  b.add(kernel("100", "1"));
  // 9.3e12 µs ends 9.3e18 + 10^8 ps after the origin: 107.6 days, past 2^62 ps.
  CHECK(
      error_of(b, kernel("200", "9.3e12")) ==
      at + "(\"ts\": 200): \"dur\" is 9.3e12 us: the event ends 107.6 days after the trace's first timestamp "
           "(\"ts\": 100); expected every event within 2^62 ps (53.4 days) of it");
  // 5e12 µs before the origin: 57.9 days.
  CHECK(error_of(b, kernel("-5e12", "1")) == at + "(\"ts\": -5e12): \"ts\" is 57.9 days before the trace's "
                                                  "first timestamp (\"ts\": 100); expected every "
                                                  "event within 2^62 ps (53.4 days) of it");
  PendingEvent device = kernel("100", "1");
  device.device = -1;
  CHECK(error_of(b, device) ==
        at + "(\"ts\": 100): the device (args \"device\") is -1; expected a GPU's index, 0 or more");
  PendingEvent pid = kernel("100", "1");
  pid.pid = "4294967296";
  CHECK(error_of(b, pid) ==
        at + "(\"ts\": 100): the device (\"pid\") is 4294967296; expected a GPU's index, 0 or more");
  PendingEvent count = kernel("100", "1");
  count.bad_number = "args \"In msg nelems\" is -5";
  count.bad_number_expected = "a count: a whole number of 0 or more";
  CHECK(error_of(b, count) ==
        at + "(\"ts\": 100): args \"In msg nelems\" is -5; expected a count: a whole number of 0 or more");
  // 2^38 floats = 1 TiB is the most; one more element is too many.
  PendingEvent message = kernel("100", "1");
  message.has_collective = true;
  message.collective.dtype = "Float";
  message.collective.in_elements = (std::int64_t{1} << 38) + 1;
  CHECK(error_of(b, message) ==
        at + "(\"ts\": 100): \"In msg nelems\" is 274877906945 Float elements (1.10 TB); "
             "expected a message of at most 1 TiB (no GPU holds more)");
  message.collective.in_elements = std::int64_t{1} << 38;
  CHECK(error_of(b, message) == "(no error)");
}

TEST_CASE("kineto reader: AccumulateGrad shapes are checked") {
  KinetoTrace t;
  TraceBuilder b(t, "t.json");
  PendingEvent e = kernel("100", "1", "torch::autograd::AccumulateGrad");
  e.cat = "cpu_op";
  e.dims.valid = true;
  e.dims.elements = 512 * 1024;
  e.input_type = "float";
  b.add(e);
  REQUIRE(t.cpu.size() == 1);
  CHECK(t.cpu[0].input_elements == 512 * 1024);
  CHECK(t.cpu[0].input_element_bytes == 4);
  const std::string at =
      "t.json: traceEvents[3] at byte 120, cpu_op \"torch::autograd::AccumulateGrad\" (\"ts\": 100): ";
  e.dims.problem = "-1";
  CHECK(error_of(b, e) ==
        at + "\"Input Dims\" holds -1; expected the dims of the parameter: whole numbers of 0 or more");
  e.dims.problem.clear();
  e.dims.elements = (std::int64_t{1} << 38) + 1;  // floats: just over 1 TiB
  CHECK(error_of(b, e) ==
        at +
            "\"Input Dims\" make a parameter of more than 1 TiB; expected at most 1 TiB (no GPU holds more)");
}

TEST_CASE("kineto reader: the SAX handler reads counts and dims, and each event's byte offset") {
  const std::string text =
      R"({"traceEvents": [{"ph": "i", "name": "x", "ts": 1},  {"ph": "X", "cat": "cpu_op", )"
      R"("name": "torch::autograd::AccumulateGrad", "pid": 1, "tid": 1, "ts": 5, "dur": 2, )"
      R"("args": {"Input Dims": [[256, 2.0e0, 2], []], "Input type": ["c10::Half", "float"]}}]})";
  const auto second = text.find(R"({"ph": "X")");  // the second event's '{'
  std::istringstream in(text);
  const KinetoTrace t = workloads::parse_kineto_trace(in, "s.json");
  REQUIRE(t.cpu.size() == 1);
  CHECK(t.cpu[0].at.index == 1);
  CHECK(t.cpu[0].at.byte == static_cast<std::int64_t>(second));
  CHECK(t.cpu[0].input_elements == 1024);  // 256 × 2 × 2
  CHECK(t.cpu[0].input_element_bytes == 2);
  CHECK(t.bytes_read == static_cast<std::int64_t>(text.size()));

  auto error = [](const std::string& doc) {
    std::istringstream s(doc);
    try {
      workloads::parse_kineto_trace(s, "s.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  // {"traceEvents": [{ : the event's '{' is byte 17 (1 + 13 for "traceEvents" + ": [").
  const std::string head =
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "nccl", "ts": 1, "dur": 2, )";
  CHECK(error(head + R"("args": {"In msg nelems": -5}}]})") ==
        "s.json: traceEvents[0] at byte 17, kernel \"nccl\" (\"ts\": 1): args \"In msg nelems\" is -5; "
        "expected a "
        "count: a whole number of 0 or more");
  CHECK(error(head + R"("args": {"Group size": 2.5}}]})") ==
        "s.json: traceEvents[0] at byte 17, kernel \"nccl\" (\"ts\": 1): args \"Group size\" is 2.5; "
        "expected a "
        "count: a whole number of 0 or more");
  CHECK(error(head + R"("args": {"Group size": "two"}}]})").find("args \"Group size\" is \"two\"") !=
        std::string::npos);
  const std::string acc =
      R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "torch::autograd::AccumulateGrad", )"
      R"("ts": 1, "dur": 2, "args": {"Input Dims": [[4, )";
  CHECK(error(acc + R"(-1]]}}]})").find("\"Input Dims\" holds -1;") != std::string::npos);
  CHECK(error(acc + R"("s0"]]}}]})").find("\"Input Dims\" holds \"s0\";") != std::string::npos);
  // The same values on an event the importer does not keep are not looked at.
  CHECK(error(R"({"traceEvents": [{"ph": "X", "cat": "python_function", "name": "f", "ts": 1, "dur": -2, )"
              R"("args": {"In msg nelems": -5}}]})") == "(no error)");
  // The header: a world of 0 ranks, a rank outside the world, a device id that is no index
  // ({"distributedInfo": { : its '{' is byte 20; {"deviceProperties": [{ : byte 22).
  const std::string events =
      R"("traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2}])";
  CHECK(error(R"({"distributedInfo": {"rank": 0, "world_size": 0}, )" + events + "}") ==
        "s.json: distributedInfo at byte 20: \"world_size\" is 0; expected a number of ranks, 1 or more");
  CHECK(error(R"({"distributedInfo": {"rank": 2, "world_size": 2}, )" + events + "}") ==
        "s.json: distributedInfo at byte 20: \"rank\" is 2; expected 0 to 1 (\"world_size\" is 2)");
  CHECK(error(R"({"deviceProperties": [{"id": -1, "name": "A100"}], )" + events + "}") ==
        "s.json: deviceProperties[0] at byte 22: \"id\" is -1; expected a GPU's index, a whole number of 0 "
        "or more");
}

TEST_CASE("kineto reader: CountingBuffer counts what was taken") {
  std::istringstream source(std::string(100'000, 'x'));
  CountingBuffer buffer(source.rdbuf());
  std::istream in(&buffer);
  CHECK(buffer.position() == 0);
  char c = 0;
  in.get(c);
  CHECK(buffer.position() == 1);
  in.ignore(70'000);  // past the first 64 KiB buffer
  CHECK(buffer.position() == 70'001);
  in.ignore(100'000);
  CHECK(buffer.position() == 100'000);
}
