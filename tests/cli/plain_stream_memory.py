#!/usr/bin/env python3
"""A plain file streamed 2^20 tokens through its sliding context by the program (no validation
layer, which keeps records of every submission): the host's memory stays flat over the stream and
the device's peak is the same at 64K tokens as at 1M (`infini bench --workload model --stream`'s
records; the 64K stream runs first, so the one-time growth of recording the slide's piece shapes
is behind the 1M one). About 30 s on lavapipe.

Usage: plain_stream_memory.py PATH_TO_INFINI
"""
import json
import os
import subprocess
import sys
import tempfile

from cli_checks import check, finish

INFINI = sys.argv[1]

with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "plain.gguf")
    subprocess.run([INFINI, "make-model", "--out", model, "--vocab", "64", "--embd", "32", "--layers", "1",
                    "--heads", "4", "--kv-heads", "2", "--ffn", "64", "--no-infini", "--context", "256"],
                   check=True, capture_output=True)
    r = subprocess.run([INFINI, "bench", "--workload", "model", "--model", model, "--prefill", "16", "--decode", "4",
                        "--repeat", "1", "--stream", "65536,1048576"], capture_output=True, text=True)
    check(r.returncode == 0, f"bench --stream: {r.stderr.strip()}")
    streams = {x["tokens"]: x for x in map(json.loads, filter(None, r.stdout.splitlines()))
               if x.get("phase") == "stream"}
    check(sorted(streams) == [65536, 1048576], f"stream records for {sorted(streams)}")
    if len(streams) == 2:
        short, long = streams[65536], streams[1048576]
        check(long["segment"] == 256, f"the sliding context is {long['segment']} tokens, not the file's 256")
        grown = long["host_rss_end_bytes"] - long["host_rss_start_bytes"]
        check(grown < 4 << 20, f"host memory grew {grown} bytes over 1M tokens")
        check(long["stream_peak_device_bytes"] == short["stream_peak_device_bytes"],
              f"device peak {long['stream_peak_device_bytes']} at 1M tokens, {short['stream_peak_device_bytes']} at 64K")
finish("plain stream memory")
