#include "exec/layer_split.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "infini/error.hpp"
#include "vk/device.hpp"

namespace infini::model {

std::vector<int64_t> split_layers(int64_t layers, std::span<const double> shares) {
  if (shares.empty()) throw Error("model: no devices to split the layers over");
  double total = 0;
  for (double w : shares) {
    if (!(w > 0) || !std::isfinite(w)) throw Error("model: device shares must be positive numbers");
    total += w;
  }
  std::vector<int64_t> count(shares.size());
  std::vector<std::pair<double, size_t>> remainder;
  int64_t given = 0;
  for (size_t i = 0; i < shares.size(); ++i) {
    const double exact = double(layers) * shares[i] / total;
    count[i] = int64_t(std::floor(exact));
    given += count[i];
    remainder.push_back({exact - double(count[i]), i});
  }
  // Largest remainders first; ties to the earlier device.
  std::stable_sort(remainder.begin(), remainder.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; given < layers; ++i, ++given) ++count[remainder[i % remainder.size()].second];
  return count;
}

std::vector<int64_t> layers_for_devices(std::span<vk::Device* const> devices, int64_t layers,
                                        std::span<const double> shares) {
  if (shares.empty()) {
    std::vector<double> free;
    for (const vk::Device* d : devices) free.push_back(double(std::max<uint64_t>(d->free_device_local_bytes(), 1)));
    return split_layers(layers, free);
  }
  if (shares.size() != devices.size())
    throw Error("model: the split has " + std::to_string(shares.size()) + " shares for " +
                std::to_string(devices.size()) + " devices");
  return split_layers(layers, shares);
}

}  // namespace infini::model
