// The pieces of the step trace: option parsers, the busy-fraction bins of the link counters, and the
// ring hook (sim::RingObserver) that the ring-step slices are made from.
#include <doctest/doctest.h>

#include <map>

#include "analysis/trace/busy_fraction_bins.h"
#include "analysis/trace/step_trace_options.h"
#include "sim/error.h"
#include "sim/ring_collective.h"

using namespace hybridsim;
using analysis::BusyFractionBins;
using sim::Time;

TEST_CASE("trace detail names parse both ways") {
  using analysis::TraceDetail;
  for (const TraceDetail d : {TraceDetail::Kernels, TraceDetail::Steps, TraceDetail::Messages})
    CHECK(scenarios::parse_trace_detail(analysis::trace_detail_name(d)) == d);
  CHECK(scenarios::parse_trace_detail(" Steps ") == TraceDetail::Steps);
  CHECK_THROWS_WITH_AS(scenarios::parse_trace_detail("all"),
                       "trace detail \"all\": expected kernels, steps or messages", InputError);
}

TEST_CASE("busy fraction bins: one sample per bin, written only when it changes") {
  using S = BusyFractionBins::Sample;
  std::vector<S> out;
  SUBCASE("the header's example") {
    BusyFractionBins b(Time::us(100));
    b.add(Time::us(50), Time::us(250), out);
    // Bin 0 is busy from 50 to 100 µs (0.5), bin 1 entirely (1), bin 2 from 200 to 250 (0.5).
    CHECK(out == std::vector<S>{{Time::zero(), 0.5}, {Time::us(100), 1.0}});
    b.finish(out);
    CHECK(out == std::vector<S>{{Time::zero(), 0.5}, {Time::us(100), 1.0}, {Time::us(200), 0.5},
                                {Time::us(300), 0.0}});
  }
  SUBCASE("idle bins before, between and after, equal values merge") {
    BusyFractionBins b(Time::us(10));
    b.add(Time::us(32), Time::us(34), out);  // bin 3: 0.2 (the track starts at 0 first)
    b.add(Time::us(36), Time::us(38), out);  // bin 3 again: 0.4 in all
    b.add(Time::us(70), Time::us(74), out);  // bin 7: 0.4, after idle bins 4-6
    b.add(Time::us(80), Time::us(84), out);  // bin 8: 0.4 again: no new sample
    b.finish(out);
    CHECK(out == std::vector<S>{{Time::zero(), 0.0}, {Time::us(30), 0.4}, {Time::us(40), 0.0},
                                {Time::us(70), 0.4}, {Time::us(90), 0.0}});
  }
  SUBCASE("an interval ending on a bin boundary does not touch the next bin, overlap counts once") {
    BusyFractionBins b(Time::us(10));
    b.add(Time::zero(), Time::us(10), out);
    b.add(Time::us(5), Time::us(15), out);  // [5, 10) already counted: only [10, 15) is new
    b.finish(out);
    CHECK(out == std::vector<S>{{Time::zero(), 1.0}, {Time::us(10), 0.5}, {Time::us(20), 0.0}});
  }
  SUBCASE("unused: no samples at all") {
    BusyFractionBins b(Time::us(10));
    b.finish(out);
    CHECK(out.empty());
    CHECK_FALSE(b.is_used());
  }
  CHECK_THROWS_AS(BusyFractionBins{Time::zero()}, InternalError);
}

namespace {
struct Recorder final : sim::RingObserver {
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> per_rank_step;  // (rank, step) → messages
  std::vector<Time> last_time = std::vector<Time>(3);
  bool ordered = true;
  void on_ring_arrival(const sim::RingArrival& a) override {
    ++per_rank_step[{a.rank, a.step}];
    if (a.time < last_time[a.rank]) ordered = false;
    last_time[a.rank] = a.time;
  }
};
}  // namespace

TEST_CASE("ring hook: each rank reports every message of every step it takes in") {
  // Three ranks on a one-way ring of links 0→1→2→0; 6 KiB in 1 KiB messages: each rank's chunk is
  // 2 KiB, so 2 messages a step, and all-reduce takes 2(3 − 1) = 4 steps.
  sim::LinkTable links;
  for (int i = 0; i < 3; ++i)
    links.add(
        {sim::LinkKind::Generic, sim::Bandwidth::gb_per_second(10), Time::us(1), "l" + std::to_string(i)});
  sim::EventQueue queue;
  sim::Network net(queue, links);
  Recorder rec;
  sim::CollectiveConfig config{.message_size = sim::Bytes::kib(1), .observer = &rec};
  sim::RingChannel ch{.order = {0, 1, 2}, .routes = {{0}, {1}, {2}}};
  sim::RingCollective ar(net, sim::CollectiveOp::AllReduce, 3, {ch}, sim::Bytes::kib(6), config);
  CHECK(ar.steps() == 4);
  CHECK(ar.channel_count() == 1);
  CHECK(ar.messages_per_step() == 2);
  CHECK(ar.route_from(1).size() == 1);
  CHECK(ar.route_from(1)[0] == 1);
  ar.start(0);
  ar.start(1);
  queue.run_until(Time::us(5));  // rank 2 joins late: its early arrivals are reported when it starts
  ar.start(2);
  queue.run();
  CHECK(ar.is_done());
  CHECK(rec.per_rank_step.size() == 3 * 4);
  for (const auto& [key, n] : rec.per_rank_step) CHECK(n == 2);
  CHECK(rec.ordered);
  CHECK(rec.last_time[2] <= ar.rank_finish_time(2));
}
