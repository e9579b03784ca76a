#include "exec/handoff.hpp"

#include <cstdlib>
#include <string>

#include "infini/error.hpp"
#include "vk/device.hpp"
#include "util/environment.hpp"

namespace infini::model {

const char* handoff_name(Handoff kind) noexcept {
  switch (kind) {
    case Handoff::Auto: return "auto";
    case Handoff::Host: return "host";
    case Handoff::HostMemory: return "host-memory";
    case Handoff::DeviceMemory: return "device-memory";
  }
  return "?";
}

Handoff parse_handoff(std::string_view name) {
  for (Handoff k : {Handoff::Auto, Handoff::Host, Handoff::HostMemory, Handoff::DeviceMemory})
    if (name == handoff_name(k)) return k;
  throw Error("unknown hand-off kind '" + std::string(name) + "' (auto, host, host-memory or device-memory)");
}

std::optional<vk::SharingKind> sharing_of(Handoff kind) noexcept {
  if (kind == Handoff::HostMemory) return vk::SharingKind::HostMemory;
  if (kind == Handoff::DeviceMemory) return vk::SharingKind::DeviceMemory;
  return std::nullopt;
}

namespace {

// `requested`, or where it is Auto, what the environment variable `variable` names (by `parse`).
template <typename Kind, typename Parse>
Kind or_from_environment(Kind requested, env::Variable variable, Parse parse) {
  const std::optional<std::string> text = env::value(variable);
  if (requested != Kind::Auto || !text) return requested;
  try {
    return parse(*text);
  } catch (const Error& e) {
    throw Error(std::string(env::name(variable)) + ": " + e.what());
  }
}

}  // namespace

std::vector<Handoff> handoff_candidates(Handoff requested, const vk::Device& producer, const vk::Device& consumer) {
  requested = or_from_environment(requested, env::Variable::Handoff, parse_handoff);
  if (requested == Handoff::Auto) {
    std::vector<Handoff> out;
    for (Handoff k : {Handoff::DeviceMemory, Handoff::HostMemory})
      if (vk::can_share(*sharing_of(k), producer, consumer)) out.push_back(k);
    out.push_back(Handoff::Host);
    return out;
  }
  if (const auto sharing = sharing_of(requested)) {
    std::string why;
    if (!vk::can_share(*sharing, producer, consumer, &why))
      throw Error(std::string("hand-off '") + handoff_name(requested) + "' between '" + producer.caps().name +
                  "' and '" + consumer.caps().name + "' is not possible: " + why);
  }
  return {requested};
}

Handoff choose_handoff(Handoff requested, const vk::Device& producer, const vk::Device& consumer) {
  return handoff_candidates(requested, producer, consumer).front();
}

const char* handoff_wait_name(HandoffWait wait) noexcept {
  switch (wait) {
    case HandoffWait::Auto: return "auto";
    case HandoffWait::Host: return "host";
    case HandoffWait::Timeline: return "timeline";
    case HandoffWait::SyncFile: return "sync-file";
  }
  return "?";
}

HandoffWait parse_handoff_wait(std::string_view name) {
  for (HandoffWait w : {HandoffWait::Auto, HandoffWait::Host, HandoffWait::Timeline, HandoffWait::SyncFile})
    if (name == handoff_wait_name(w)) return w;
  throw Error("unknown hand-off wait '" + std::string(name) + "' (auto, host, timeline or sync-file)");
}

bool handoff_wait_forced(HandoffWait requested) {
  return or_from_environment(requested, env::Variable::HandoffWait, parse_handoff_wait) != HandoffWait::Auto;
}

std::optional<vk::SignalKind> signal_of(HandoffWait wait) noexcept {
  if (wait == HandoffWait::Timeline) return vk::SignalKind::Timeline;
  if (wait == HandoffWait::SyncFile) return vk::SignalKind::SyncFile;
  return std::nullopt;
}

HandoffWait choose_handoff_wait(HandoffWait requested, Handoff kind, const vk::Device& producer,
                                const vk::Device& consumer) {
  requested = or_from_environment(requested, env::Variable::HandoffWait, parse_handoff_wait);
  if (requested == HandoffWait::Host) return HandoffWait::Host;
  const bool shared = sharing_of(kind).has_value();
  if (requested == HandoffWait::Auto) {
    if (!shared) return HandoffWait::Host;
    for (HandoffWait w : {HandoffWait::Timeline, HandoffWait::SyncFile})
      if (vk::can_share_signal(*signal_of(w), producer, consumer)) return w;
    return HandoffWait::Host;
  }
  std::string why = "the hand-off goes through the host ('host')";
  if (!shared || !vk::can_share_signal(*signal_of(requested), producer, consumer, &why))
    throw Error(std::string("hand-off wait '") + handoff_wait_name(requested) + "' between '" + producer.caps().name +
                "' and '" + consumer.caps().name + "' is not possible: " + why);
  return requested;
}

}  // namespace infini::model
