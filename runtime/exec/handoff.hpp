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
#include "vk/shared_signal.hpp"

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

// Who orders a stage's piece after the stage before it, on a hand-off through shared memory:
//  - Host: the host waits for the producer's device to finish the piece, then submits it to the
//    consumer's (a wait and a wake-up of the host per hand-off);
//  - Timeline, SyncFile: the host submits it to the consumer at once, and the consumer's device
//    waits on the GPU for a signal of the producer's (vk/shared_signal.hpp: a timeline semaphore
//    both hold, between logical devices of one GPU; or a sync file per piece, between any devices
//    whose drivers export and import them).
// Auto takes the first of Timeline, SyncFile and Host the pair allows; INFINI_HANDOFF_WAIT (one of
// the names) forces one where the options leave Auto. A Host hand-off always waits on the host.
enum class HandoffWait { Auto, Host, Timeline, SyncFile };
const char* handoff_wait_name(HandoffWait wait) noexcept;  // "auto", "host", "timeline", "sync-file"
HandoffWait parse_handoff_wait(std::string_view name);     // throws naming `name` and the choices
// For a hand-off of `kind` between the two (never Auto); throws, naming both devices and why, when
// a device wait is forced where it is impossible.
HandoffWait choose_handoff_wait(HandoffWait requested, Handoff kind, const vk::Device& producer,
                                const vk::Device& consumer);
// Whether `requested` (or, for Auto, INFINI_HANDOFF_WAIT) names a wait: then nothing else will do.
bool handoff_wait_forced(HandoffWait requested);
// The signal of a device wait; nullopt for Host.
std::optional<vk::SignalKind> signal_of(HandoffWait wait) noexcept;

}  // namespace infini::model
