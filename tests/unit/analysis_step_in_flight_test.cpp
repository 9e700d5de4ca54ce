// The messages a step can hold in flight at once (analysis/step/step_in_flight.h): each lane (the
// collectives on one stream of the same GPUs) adds its two largest, the transfers from one stream of
// one GPU their largest; lanes of other streams or other GPUs add theirs beside.
#include <doctest/doctest.h>

#include <vector>

#include "analysis/step/step_in_flight.h"
#include "workloads/program/step_program_types.h"

using namespace hybridsim;
using sim::Task;

namespace {

workloads::CollectiveSpec spec(sim::CollectiveOp op, std::vector<int> members) {
  workloads::CollectiveSpec c;
  c.op = op;
  c.members = std::move(members);
  return c;
}

}  // namespace

TEST_CASE("in flight: lanes of one stream and one group add their two largest, broadcasts per member") {
  // Four GPUs, each with a compute stream (0), a communication stream (1), a gather stream (2) and
  // GPUs 0 and 1 a transfer stream (3).
  workloads::StepProgram program;
  program.gpus.resize(4);
  for (auto& gpu : program.gpus) gpu.streams.resize(3);
  program.gpus[0].streams.resize(4);
  program.gpus[1].streams.resize(4);
  using Op = sim::CollectiveOp;
  program.collectives = {
      spec(Op::AllReduce, {0, 1, 2, 3}),  // 0..2: one lane on the communication stream
      spec(Op::AllReduce, {0, 1, 2, 3}),
      spec(Op::AllReduce, {0, 1, 2, 3}),
      spec(Op::AllGather, {0, 1, 2, 3}),  // 3: the same GPUs on the gather stream: a lane beside
      spec(Op::Broadcast, {0, 1}),        // 4..6: GPU 0's transfers to GPU 1, then 6 back
      spec(Op::Broadcast, {0, 1}),
      spec(Op::Broadcast, {1, 0}),
      spec(Op::AllReduce, {0, 1}),        // 7: GPU 0's communication stream, GPU 1's gather stream
      spec(Op::AllReduce, {2, 3}),        // 8: no stream runs it
  };
  for (std::uint32_t g = 0; g < 4; ++g) {
    for (std::uint32_t c = 0; c < 3; ++c) program.gpus[g].streams[1].tasks.push_back(Task::collective(c, g));
    program.gpus[g].streams[2].tasks.push_back(Task::collective(3, g));
  }
  for (std::uint32_t c = 4; c < 7; ++c) {  // each GPU's transfer stream sends and receives
    program.gpus[0].streams[3].tasks.push_back(Task::collective(c, c < 6 ? 0 : 1));
    program.gpus[1].streams[3].tasks.push_back(Task::collective(c, c < 6 ? 1 : 0));
  }
  program.gpus[0].streams[1].tasks.push_back(Task::collective(7, 0));
  program.gpus[1].streams[2].tasks.push_back(Task::collective(7, 1));
  program.gpus[0].streams[0].tasks.push_back(Task::kernel(sim::Time::us(1), 0));

  const analysis::InFlightLanes lanes(program);
  CHECK(lanes.lanes() == 6);  // {0, 1, 2}, {3}, {4, 5} from GPU 0, {6} from GPU 1, {7}, {8}
  // The lanes' largest: 30 + 20 of the all-reduces, 7, the larger of GPU 0's transfers 9, GPU 1's
  // 4, 11, 13.
  CHECK(lanes.most({10, 30, 20, 7, 5, 9, 4, 11, 13}) == 30 + 20 + 7 + 9 + 4 + 11 + 13);
  // Only some counted (the others 0), and an index past the program's collectives a lane of its own.
  CHECK(lanes.most({10, 0, 0, 0, 0, 0, 0, 0, 0, 6}) == 16);
  CHECK(lanes.most({}) == 0);
}
