#pragma once
// Where a stage's time went: the profile LayerStage keeps of the pieces it runs, and when its
// device was busy (for a pipeline's timeline).
#include <cstdint>

namespace infini::model {

// When a stage's device was busy with a piece, in seconds of the host's steady clock: the device
// time between timestamp queries at the start and the end of the piece's commands, ending when the
// host saw the work complete (host clocks alone where the device has no timestamps).
struct BusyInterval {
  double begin_s = 0, end_s = 0;
};

// Where a stage's time went, summed over the pieces it ran (a caller takes differences between
// two reads to profile a window of a stream). wall_s is the host's time in submit() and finish()
// (the whole of run()); of it, record_s went
// to recording new piece shapes, host_in_s and host_out_s to the host's copies of the piece's
// inputs (tokens or hidden states) into staging memory and of its outputs (hidden states or
// logits) out of it, and submit_wait_s to submitting and waiting, of which device_s was the
// device's own time between the piece's first and last timestamps (the host's count where there
// are no timestamps); device_upload_s and device_download_s are the parts of device_s spent
// copying the inputs in and the outputs out (0 without timestamps). What is left of wall_s is
// bookkeeping; submit_wait_s - device_s is the cost of a submission and of waking the waiting host
// (negative where pieces were submitted ahead: the device then ran while the host did other work).
struct StageProfile {
  int64_t pieces = 0;
  double wall_s = 0, record_s = 0, submit_wait_s = 0, device_s = 0;
  double host_in_s = 0, host_out_s = 0, device_upload_s = 0, device_download_s = 0;
  // Dispatches and dependency barriers in the recordings the pieces ran: the serial steps a GPU
  // pays a launch for, whatever the kernels cost.
  int64_t dispatches = 0, barriers = 0;

  StageProfile& operator+=(const StageProfile& o) noexcept {
    pieces += o.pieces;
    wall_s += o.wall_s;
    record_s += o.record_s;
    submit_wait_s += o.submit_wait_s;
    device_s += o.device_s;
    host_in_s += o.host_in_s;
    host_out_s += o.host_out_s;
    device_upload_s += o.device_upload_s;
    device_download_s += o.device_download_s;
    dispatches += o.dispatches;
    barriers += o.barriers;
    return *this;
  }
  // The pieces run between two reads of a running total.
  StageProfile operator-(const StageProfile& earlier) const noexcept {
    return {pieces - earlier.pieces,
            wall_s - earlier.wall_s,
            record_s - earlier.record_s,
            submit_wait_s - earlier.submit_wait_s,
            device_s - earlier.device_s,
            host_in_s - earlier.host_in_s,
            host_out_s - earlier.host_out_s,
            device_upload_s - earlier.device_upload_s,
            device_download_s - earlier.device_download_s,
            dispatches - earlier.dispatches,
            barriers - earlier.barriers};
  }
};

}  // namespace infini::model
