#!/usr/bin/env python3
"""Markdown tables from `infini bench` JSON lines (files or stdin; other lines are skipped).

    scripts/gpu-figures.sh quick 2>&1 | tee figures.log
    scripts/figures-table.py figures.log

One table per kind of record, in the order the records came, each row one record with its
spread (median, min-max), so a run's figures can go into a note without hand copying.
"""
import json
import os
import sys


def chain_label(r):
    """Decode tokens per submission, and the temperature and top-k where decode drew its tokens."""
    label = num(r.get("decode_chain", r.get("greedy_chain")))  # greedy_chain: records before 2026-12-03
    return label + f" (T {r['temperature']:g}, top-k {r.get('top_k')})" if r.get("temperature") else label


def num(x, digits=3):
    """A figure to `digits` significant digits, thousands grouped."""
    if x is None:
        return ""
    if isinstance(x, bool):
        return "on" if x else "off"
    if isinstance(x, int):
        return f"{x:,}"
    if x == 0:
        return "0"
    magnitude = abs(x)
    if magnitude >= 10 ** digits:
        return f"{x:,.0f}"
    if magnitude < 1e-3:
        return f"{x:.{digits - 1}e}"
    decimals = max(0, digits - 1 - int(f"{magnitude:e}".split("e")[1]))
    return f"{x:,.{decimals}f}"


def spread(r, key):
    """median (min-max) of a figure that has _min and _max companions (the median as `key` or `key`_median)."""
    median, lo, hi = r.get(key, r.get(key + "_median")), r.get(key + "_min"), r.get(key + "_max")
    if median is None:
        return ""
    if lo is None or hi is None or lo == hi:
        return num(median)
    return f"{num(median)} ({num(lo)}-{num(hi)})"


def shape_name(s):
    return f"{s['embd']}/{s['layers']}L/{s['heads']}H/{s['heads_kv']}KV/{s['ffn']}" if s else ""


def matmul_row(r):
    tiles = r.get("matrix_tiles", r.get("vector_tiles", ""))
    if r.get("matrix_tiles_ran") and r["matrix_tiles_ran"] != tiles:
        tiles = f"{tiles} -> {r['matrix_tiles_ran']}"
    ran = r.get("ran", "")
    kernel = r.get("kernel", "")
    return [f"{r['m']}x{r['n']}x{r['k']}", r.get("dtype", ""), kernel if ran == kernel else f"{kernel} -> {ran}", tiles,
            spread(r, "ms"), num(r.get("gflops", 0) / 1000), num(r.get("gbytes_per_s")),
            num(r.get("fraction_of_peak")), num(r.get("fraction_of_bandwidth"))]


def model_row(r):
    return [os.path.basename(r.get("model", "")), shape_name(r.get("shape")), r.get("matmul_kernel", ""),
            num(r.get("fused_steps")), r.get("attention_kernel", ""), r.get("vector_tiles", ""),
            r.get("matrix_tiles", ""), num(r.get("wait_spin_us")), chain_label(r), num(r.get("prefill_tokens")),
            spread(r, "prefill_tokens_per_s"), spread(r, "decode_tokens_per_s"),
            f"{num(r.get('decode_dispatches_per_token'))} / {num(r.get('decode_barriers_per_token'))}"
            if "decode_dispatches_per_token" in r else "",
            num(r.get("decode_fraction_of_bandwidth")), num(r.get("logit_nmse_vs_reference"))]


def stream_row(r):
    return [os.path.basename(r.get("model", "")), num(r.get("tokens")), num(r.get("tokens_per_s")),
            f"{num(r.get('first_window_tokens_per_s'))} / {num(r.get('last_window_tokens_per_s'))}",
            num(r.get("stream_peak_device_bytes")), num(r.get("recorded_pieces"))]


def handoff_label(r):
    """The hand-off kind and how it waits, as asked for (auto: what the run chose, where the record says)."""
    if "," not in r.get("devices", ","):
        return ""  # one device hands nothing off
    kind, wait = r.get("handoff", ""), r.get("handoff_wait", "")
    chosen = r.get("handoff_waits")
    if wait == "auto" and chosen:
        wait = "/".join(chosen)
    return f"{kind}, waits {wait}" if wait else kind


def pipeline_row(r):
    return [r.get("devices", ""), handoff_label(r), chain_label(r), spread(r, "prefill_tokens_per_s"),
            num(r.get("prefill_ratio_to_first")), num(r.get("decode_tokens_per_s")), num(r.get("decode_ratio_to_first"))]


def handoff_rows(r):
    rows = []
    for phase in ("prefill_stages", "decode_stages"):
        for st in r.get(phase, []):
            rows.append([r.get("devices", ""), handoff_label(r), phase.split("_")[0], str(st.get("stage")),
                         num(st.get("wall_us")), num(st.get("device_us")), num(st.get("submit_and_wake_us")),
                         num(st.get("queued_us")), num(st.get("thread_wake_us")), num(st.get("submitted_ahead")),
                         num(st.get("device_waits"))])
    return rows


# (title, header, the records it takes, row or rows of a record)
TABLES = [
    ("Peak FMA", ["GFLOP/s"], lambda r: r["workload"] == "peak_fma", lambda r: [[spread(r, "gflops")]]),
    ("Read bandwidth", ["GB/s"], lambda r: r["workload"] == "bandwidth", lambda r: [[spread(r, "gbytes_per_s")]]),
    ("Matmul", ["m x n x k", "dtype", "kernel", "tiles", "ms", "TFLOP/s", "GB/s", "of peak", "of bandwidth"],
     lambda r: r["workload"] == "matmul", lambda r: [matmul_row(r)]),
    ("Compiled kernels (INFINI_PIPELINE_STATISTICS=1: the driver's statistics of the code it made)",
     ["m x n x k", "dtype", "kernel", "tiles", "executable", "statistics"],
     lambda r: r["workload"] == "matmul" and "pipeline_statistics" in r,
     lambda r: [matmul_row(r)[:4] + [exe, "; ".join(f"{k} {num(v)}" for k, v in stats.items())]
                for exe, stats in r["pipeline_statistics"].items()]),
    ("Attention layer", ["kernel", "memory kernel", "dtype", "Hq/Hkv/D", "N", "tokens", "tokens/s", "GFLOP/s"],
     lambda r: r["workload"] == "attention",
     lambda r: [[r.get("kernel", ""), r.get("memory_kernel", ""), r.get("dtype", ""),
                 f"{r.get('heads_q')}/{r.get('heads_kv')}/{r.get('head_dim')}", num(r.get("segment")),
                 num(r.get("tokens")), num(r.get("tokens_per_s")), num(r.get("gflops"))]]),
    ("Model: prefill and decode",
     ["file", "shape", "matmul", "fused", "attention", "vector tiles", "matrix tiles", "wait spin us", "decode chain",
      "prefill tokens", "prefill tokens/s",
      "decode tokens/s", "dispatches / barriers per token", "decode of bandwidth", "logit NMSE vs reference"],
     lambda r: r["workload"] == "model" and r.get("phase") == "prefill_decode", lambda r: [model_row(r)]),
    ("Model: device time per kernel (--kernel-times; the kernels one at a time)",
     ["file", "part", "kernel", "workgroups", "dispatches per token", "us per token", "us per dispatch", "share"],
     lambda r: r["workload"] == "model" and r.get("phase") == "kernel_times",
     lambda r: [[os.path.basename(r.get("model", "")), r.get("part", ""), r.get("kernel", ""), r.get("groups", ""),
                 num(r.get("dispatches_per_token")), num(r.get("us_per_token")), num(r.get("us_per_dispatch")),
                 num(r.get("share"))]]),
    ("Model: streams", ["file", "tokens", "tokens/s", "first / last window tokens/s", "peak device bytes",
                        "recordings"],
     lambda r: r["workload"] == "model" and r.get("phase") == "stream", lambda r: [stream_row(r)]),
    ("Model: late stream against fresh (interleaved)", ["file", "position", "late / early"],
     lambda r: r["workload"] == "model" and r.get("phase") == "stream_interleaved",
     lambda r: [[os.path.basename(r.get("model", "")), num(r.get("late_position")), num(r.get("late_over_early"))]]),
    ("Pipeline", ["devices", "hand-off", "decode chain", "prefill tokens/s", "ratio", "decode tokens/s", "ratio"],
     lambda r: r["workload"] == "pipeline" and "phase" not in r, lambda r: [pipeline_row(r)]),
    ("Pipeline: per stage and piece (us)",
     ["devices", "hand-off", "phase", "stage", "wall", "device", "submit and wake", "queued", "thread wake",
      "submitted ahead", "device waits"],
     lambda r: r["workload"] == "pipeline" and r.get("phase") == "handoffs", handoff_rows),
    ("Batched decode", ["streams", "devices", "step ms", "aggregate tokens/s", "alone tokens/s", "aggregate / alone",
                        "device bytes per stream"],
     lambda r: r["workload"] == "batch",
     lambda r: [[str(r["streams"]), str(r["devices"]), spread(r, "step_ms"), spread(r, "aggregate_tokens_per_s"),
                 spread(r, "alone_tokens_per_s"), num(r["aggregate_vs_alone"]), f"{r['device_bytes_per_stream']:,}"]]),
    ("Sampler (host, per token)", ["vocab", "T", "top-k", "top-p", "us per token"],
     lambda r: r["workload"] == "sampler",
     lambda r: [[num(r.get("vocab")), num(r.get("temperature")), num(r.get("top_k")), num(r.get("top_p")),
                 spread(r, "us_per_token")]]),
    ("Pipeline: stages busy at once", ["devices", "hand-off", "overlap"],
     lambda r: r["workload"] == "pipeline" and r.get("phase") == "timeline",
     lambda r: [[r.get("devices", ""), handoff_label(r), num(r.get("overlap_fraction"))]]),
]


def records(lines):
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(r, dict) and "workload" in r:
            yield r


def render(all_records):
    out = []
    devices = sorted({f"{r.get('device')} ({r.get('driver')})" for r in all_records if r.get("device")})
    for d in devices:
        out.append(f"Device: {d}")
    for title, header, takes, rows_of in TABLES:
        rows = [row for r in all_records if takes(r) for row in rows_of(r)]
        if not rows:
            continue
        out += ["", f"**{title}**", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def main(paths):
    lines = []
    if not paths:
        lines = sys.stdin.readlines()
    for p in paths:
        try:
            with open(p, encoding="utf-8", errors="replace") as f:
                lines += f.readlines()
        except OSError as e:
            print(f"figures-table: cannot read {p}: {e.strerror}", file=sys.stderr)
            return 1
    found = list(records(lines))
    if not found:
        print("figures-table: no infini bench records in the input", file=sys.stderr)
        return 1
    sys.stdout.write(render(found))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
