#pragma once
// How a layer pipeline hands a piece's hidden states from one stage's device to the next:
//  - Host: the producer's work copies them into staging memory, the host copies them out and into
//    the consumer's staging memory (works between any two devices);
//  - HostMemory / DeviceMemory: through memory both devices bind (vk/shared_buffer.hpp); the host
//    copies nothing, it only waits for the producer and then submits the consumer.
// Auto takes, per pair of neighbouring devices, DeviceMemory where they are one physical device,
// else HostMemory where both can import host memory, else Host. INFINI_HANDOFF (one of the names)
// forces a kind where the options leave Auto.
#include <optional>
#include <string_view>
#include <vector>

#include "vk/shared_buffer.hpp"

namespace infini::vk {
class Device;
}

namespace infini::model {

enum class Handoff { Auto, Host, HostMemory, DeviceMemory };

const char* handoff_name(Handoff kind) noexcept;  // "auto", "host", "host-memory", "device-memory"
// Throws infini::Error naming `name` and the kinds that exist.
Handoff parse_handoff(std::string_view name);

// The kinds to try between `producer` and `consumer`, best first (never Auto): `requested`
// alone, or for Auto, INFINI_HANDOFF alone or every kind the pair allows, ending with Host (a
// driver may still fail to share memory it says it can: the caller then tries the next). Throws,
// naming both devices and why, when a forced kind is impossible between them.
std::vector<Handoff> handoff_candidates(Handoff requested, const vk::Device& producer, const vk::Device& consumer);
// The first of them.
Handoff choose_handoff(Handoff requested, const vk::Device& producer, const vk::Device& consumer);

// The shared memory of a kind; nullopt for Host.
std::optional<vk::SharingKind> sharing_of(Handoff kind) noexcept;

}  // namespace infini::model
