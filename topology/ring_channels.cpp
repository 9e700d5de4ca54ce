#include "topology/ring_channels.h"

#include <string>
#include <unordered_map>

#include "sim/error.h"

namespace hybridsim::topology {

std::vector<sim::RingChannel> to_ring_channels(const RingPlan& plan,
                                               std::span<const DeviceId> communicator) {
  std::unordered_map<DeviceId, std::uint32_t> position;
  for (std::uint32_t i = 0; i < communicator.size(); ++i) position.emplace(communicator[i], i);
  std::vector<sim::RingChannel> channels;
  for (std::size_t c = 0; c < plan.rings.size(); ++c) {
    sim::RingChannel channel;
    for (const DeviceId gpu : plan.rings[c]) {
      const auto it = position.find(gpu);
      if (it == position.end())
        throw InputError("ring channel " + std::to_string(c) + " holds device " +
                         std::to_string(gpu.value) + ", which is not in the communicator");
      channel.order.push_back(it->second);
    }
    for (const sim::Route r : plan.routes[c]) channel.routes.emplace_back(r.begin(), r.end());
    channels.push_back(std::move(channel));
  }
  return channels;
}

}  // namespace hybridsim::topology
