// The streaming reader of Kineto traces: nlohmann::json::sax_parse over the stream (through a
// buffer that counts bytes, for the events' offsets) with the SAX handler of import_kineto_sax.cpp,
// and the checks that the document was a Kineto trace.
#include "workloads/import/import_kineto_trace.h"

#include <fstream>

#include "sim/error.h"
#include "sim/yaml/encoding.h"
#include "sim/yaml/input_file.h"
#include "workloads/import/import_kineto_reader.h"

namespace hybridsim::workloads {

const KinetoDevice* KinetoTrace::find_device(int id) const {
  for (const auto& d : devices)
    if (d.id == id) return &d;
  return nullptr;
}

std::string KinetoTrace::ts_text(sim::Time t) const {
  using kineto_detail::Wide;
  return kineto_detail::format_micros(static_cast<Wide>(origin_us) * kineto_detail::kPsPerUs + origin_sub_ps +
                                      t.ps());
}

std::string describe_place(const KinetoEventPlace& at) {
  return "traceEvents[" + std::to_string(at.index) + "] at byte " + std::to_string(at.byte);
}

std::string KinetoTrace::describe(const KinetoGpuActivity& a) const {
  static constexpr const char* kKinds[] = {"kernel", "gpu_memcpy", "gpu_memset"};
  return describe_place(a.at) + ", " + kKinds[static_cast<int>(a.kind)] + " \"" + name_of(a.name) +
         "\" (\"ts\": " + ts_text(a.start) + ")";
}

std::string KinetoTrace::describe(const KinetoCpuEvent& e) const {
  static constexpr const char* kKinds[] = {"cpu_op", "user_annotation", "cuda_runtime"};
  return describe_place(e.at) + ", " + kKinds[static_cast<int>(e.kind)] + " \"" + name_of(e.name) +
         "\" (\"ts\": " + ts_text(e.start) + ")";
}

namespace {

// A trace saved in UTF-16 or UTF-32 (an editor's "Unicode"), or compressed with gzip (what
// tensorboard_trace_handler(use_gzip=True) writes), is refused as such, not as a JSON syntax error
// about its first byte; the stream goes back to `begin` (where it can seek).
void check_encoding(std::istream& in, std::streampos begin, const std::string& source_name) {
  if (begin < 0) return;
  char first[4] = {};
  in.read(first, sizeof first);
  const std::string_view head(first, static_cast<std::size_t>(in.gcount()));
  const std::string_view encoding = yaml::wide_encoding(head);
  in.clear();
  in.seekg(begin);
  if (head.starts_with("\x1f\x8b"))
    throw InputError(source_name + ": a gzip-compressed file (as tensorboard_trace_handler(use_gzip=True) " +
                     "writes); expected the JSON trace itself: decompress it first (gunzip -k FILE)");
  if (!encoding.empty())
    throw InputError(source_name + ": " + std::string(encoding) +
                     " is not supported; save the file as UTF-8");
}

}  // namespace

KinetoTrace parse_kineto_trace(std::istream& in, const std::string& source_name, KinetoKeep* keep) {
  KinetoTrace trace;
  trace.source = source_name;
  const auto begin = in.tellg();
  std::int64_t size = 0;
  if (begin >= 0 && in.seekg(0, std::ios::end)) {
    size = static_cast<std::int64_t>(in.tellg() - begin);
    in.seekg(begin);
  }
  in.clear();
  check_encoding(in, begin, source_name);
  kineto_detail::CountingBuffer buffer(in.rdbuf());
  std::istream counted(&buffer);
  kineto_detail::TraceSax sax(trace, source_name, size, buffer, keep);
  const bool ok = nlohmann::json::sax_parse(counted, &sax);
  trace.bytes_read = buffer.position();
  if (!ok) throw InputError(source_name + ": " + (sax.error().empty() ? "unreadable" : sax.error()));
  if (!sax.saw_root() || !sax.saw_events())
    throw InputError(source_name + ": not a Kineto trace: no top-level \"traceEvents\" array");
  sax.finish_header();
  if (!keep && trace.events_malformed > 0 && trace.gpu.empty())
    throw InputError(source_name + ": " + std::to_string(trace.events_malformed) +
                     " complete events lack \"ts\" or \"dur\" and no GPU activity is usable");
  return trace;
}

KinetoTrace read_kineto_trace(const std::string& path, KinetoKeep* keep) {
  yaml::check_streamed_input_file(path, "Kineto trace");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the trace file");
  return parse_kineto_trace(in, path, keep);
}

}  // namespace hybridsim::workloads
