// `hybridsim run [SCENARIO]`: simulate a scenario and print its summary. Without a scenario it runs
// the built-in demo: eight GPUs on an idealized 25 GB/s ring each stream 64 MiB to their neighbour
// in 512 KiB messages, and a second flow shares one link, so the summary shows contention.
#include <boost/program_options.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "analysis/cli/commands.h"
#include "sim/error.h"
#include "sim/network.h"

namespace po = boost::program_options;

namespace hybridsim::cli {
namespace {

struct Counter final : sim::EventHandler {
  sim::EventQueue* queue = nullptr;
  std::int64_t delivered = 0;
  sim::Time last;
  void on_event(std::uint64_t) override {
    ++delivered;
    last = queue->now();
  }
};

int run_demo() {
  constexpr int kGpus = 8;
  const sim::Bytes message = sim::Bytes::kib(512);
  const sim::Bytes total = sim::Bytes::mib(64);
  sim::LinkTable links;
  for (int g = 0; g < kGpus; ++g)
    links.add({sim::LinkKind::Generic, sim::parse_bandwidth("25 GB/s"), sim::parse_time("1 us"),
               "GPU" + std::to_string(g) + "→GPU" + std::to_string((g + 1) % kGpus)});
  sim::EventQueue queue;
  sim::Network network(queue, links);
  Counter done;
  done.queue = &queue;
  std::vector<std::vector<sim::LinkId>> routes;
  for (int g = 0; g < kGpus; ++g) routes.push_back({static_cast<sim::LinkId>(g)});
  routes.push_back({0, 1});  // GPU0 → GPU2 through GPU1 shares link 0→1 and 1→2
  for (auto& route : routes)
    for (std::int64_t sent = 0; sent < total.count(); sent += message.count())
      network.send(route, message, done, 0);
  queue.run();
  std::cout << "demo: " << kGpus << " GPUs on a 25 GB/s ring, 64 MiB to each neighbour in 512 KiB "
            << "messages, plus GPU0→GPU2 sharing two links\n"
            << "  messages delivered   " << done.delivered << "\n"
            << "  finished at          " << sim::human_time(done.last) << "\n"
            << "  events processed     " << queue.events_processed() << "\n";
  for (sim::LinkId l = 0; l < 3; ++l) {
    const auto& c = network.counters(l);
    std::cout << "  link " << links[l].name << ": " << sim::human_bytes(c.bytes) << " in "
              << sim::human_time(c.busy) << " busy, max queue " << c.max_queue_depth << "\n";
  }
  return 0;
}

}  // namespace

int run_command(int argc, const char* const* argv) {
  po::options_description options("hybridsim run [SCENARIO] [options]");
  options.add_options()("help,h", "show this help")(
      "scenario", po::value<std::string>(), "scenario file (YAML); none runs the built-in demo");
  po::positional_options_description positional;
  positional.add("scenario", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(options).positional(positional).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << options << "\n";
    return 0;
  }
  if (vm.count("scenario"))
    throw InputError("scenario files are not supported yet: run without a file for the demo");
  return run_demo();
}

}  // namespace hybridsim::cli
