// The streaming reader of Kineto traces: nlohmann::json::sax_parse over the stream with the SAX
// handler of import_kineto_sax.cpp, and the checks that the document was a Kineto trace.
#include "workloads/import_kineto_trace.h"

#include <fstream>

#include "sim/error.h"
#include "workloads/import_kineto_reader.h"

namespace hybridsim::workloads {

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
  kineto_detail::TraceSax sax(trace, source_name, size);
  const bool ok = nlohmann::json::sax_parse(in, &sax);
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
