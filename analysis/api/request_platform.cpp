#include "analysis/api/request_platform.h"

#include "analysis/platform/platform.h"

namespace hybridsim::api {

topology::Topology load_request_platform(const std::string& argument, const topology::ClusterSpec& spec,
                                         const analysis::OptionSpelling& spelling, std::string_view option,
                                         const std::function<void(const std::string&)>& on_note,
                                         std::vector<std::string>& notes) {
  const std::size_t first = notes.size();
  topology::Topology t = analysis::load_platform(argument, spec, spelling, option, &notes);
  if (on_note)
    for (std::size_t i = first; i < notes.size(); ++i) on_note(notes[i]);
  return t;
}

}  // namespace hybridsim::api
