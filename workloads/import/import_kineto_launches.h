// Launch times by correlation id for a pass over a Kineto trace in file order, in bounded memory (not
// a public API): a launch is held until its GPU work is matched and a little after (a CUDA graph's
// kernels share one launch), a launch that never meets GPU work (a synchronize, an allocation) at
// most kUnmatched launches long, and GPU work met before its launch until the launch comes (at most
// kPending). What the whole import's index would answer (the first launch in trace order with the
// id) is answered exactly, or the table says it is not sure (exact() false) and the caller imports
// the trace whole: work whose id is at most one forgotten, or the launch met after one with its id
// was forgotten. Correlation ids grow with launch order in Kineto traces, so neither happens to
// launches and work as close as a GPU's queue keeps them.
//   LaunchTable table;   table.launch(7, sim::Time::us(12));
//   table.find(7, {...}).status == LaunchTable::Status::Found;   table.finish();   table.exact();
#pragma once
#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

#include "workloads/import/import_kineto_trace.h"

namespace hybridsim::workloads::kineto_detail {

class LaunchTable {
 public:
  static constexpr std::size_t kMatched = 256;         // launches kept after their first match
  static constexpr std::size_t kUnmatched = 1 << 14;   // launches not (yet) matched
  static constexpr std::size_t kPending = 1 << 14;     // GPU work met before its launch

  // A GPU activity met before its launch, as its pass needs it when the launch comes.
  struct Activity {
    sim::Time start;
    KinetoEventPlace at;
    std::int64_t end_byte = -1;
    bool mine = false;  // on the imported device
    bool held = false;  // kept by the pass (its window as it was decided without the launch)
  };
  enum class Status : std::uint8_t {
    Found,    // launched at `launch`
    None,     // no launch (a negative id)
    Pending,  // its launch may come later: launch() or finish() hands it back
    Unknown,  // its launch may have been forgotten: exact() is now false
  };
  struct Lookup {
    Status status = Status::None;
    sim::Time launch;
  };

  // A runtime call; returns the activities that waited for it (launched `at`), until the next call.
  const std::vector<Activity>& launch(std::int64_t correlation, sim::Time at);
  Lookup find(std::int64_t correlation, const Activity& activity);
  // The end of the pass: the activities still waiting, which have no launch.
  std::vector<Activity> finish();
  bool exact() const { return exact_; }
  // The most launches and waiting activities held at once.
  std::int64_t high_water() const { return high_water_; }

 private:
  struct Entry {
    sim::Time at;
    std::list<std::int64_t>::iterator place;  // in matched_ or unmatched_
    bool matched = false;
    bool suspect = false;  // met when one with its id may have been forgotten
  };
  void forget_over(std::list<std::int64_t>& fifo, std::size_t limit);
  void note_size();

  std::unordered_map<std::int64_t, Entry> held_;
  std::list<std::int64_t> matched_, unmatched_;  // oldest first
  std::unordered_multimap<std::int64_t, Activity> pending_;
  std::vector<Activity> resolved_;
  bool forgot_ = false;
  std::int64_t max_forgotten_ = 0;
  bool exact_ = true;
  std::int64_t high_water_ = 0;
};

}  // namespace hybridsim::workloads::kineto_detail
