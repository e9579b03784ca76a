#!/usr/bin/env python3
"""`infini bench` output and options: one JSON object per measurement with the documented keys,
the kernels asked for timed in the same run (and named as the runtime resolved them), and bad
options as one-line errors.

Usage: bench_cli.py PATH_TO_INFINI
"""
import json
import os
import sys
import tempfile

from cli_checks import check, finish, is_one_line_error, run as run_infini

INFINI = sys.argv[1]


OUTPUTS = []  # every run's stdout, for scripts/figures-table.py at the end


def run(args):
    r = run_infini(INFINI, ["bench"] + args)
    OUTPUTS.append(r.stdout)
    return r


r = run(["--workload", "peak_fma,matmul", "--m", "24", "--n", "40", "--k", "64", "--dtype", "f32-f16,f16",
         "--matmul-kernel", "tiled,registers", "--repeat", "2"])
check(r.returncode == 0, "bench: " + r.stderr)
records = [json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else []
matmuls = [x for x in records if x.get("workload") == "matmul"]
check([(x["dtype"], x["kernel"]) for x in matmuls] ==
      [("f32-f16", "tiled"), ("f32-f16", "registers"), ("f16", "tiled"), ("f16", "registers")],
      f"matmul records {[(x.get('dtype'), x.get('kernel')) for x in matmuls]}")
for x in matmuls:
    check(x["repeats"] == 2 and x["gflops_min"] <= x["gflops"] <= x["gflops_max"] and x["gflops"] > 0,
          f"matmul figures {x}")
    check(0 < x["fraction_of_peak"], f"fraction of peak {x}")

# The bandwidth probe runs before the matmuls (whatever the order asked), which then report their
# bytes moved per second as a fraction of it; a one-row call picks the matrix-vector kernel.
r = run(["--workload", "matmul,bandwidth", "--m", "1", "--n", "40", "--k", "64", "--dtype", "f32-f16",
         "--matmul-kernel", "registers,vector", "--repeat", "3"])
check(r.returncode == 0, "bench bandwidth: " + r.stderr)
records = [json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else []
check([x.get("workload") for x in records] == ["bandwidth", "matmul", "matmul"], f"order {records}")
if len(records) == 3:
    bw = records[0]
    check(bw["gbytes_per_s_min"] <= bw["gbytes_per_s"] <= bw["gbytes_per_s_max"] and bw["gbytes_per_s"] > 0
          and bw["bytes"] > 0 and bw["pattern"] in ("contiguous", "interleaved"), f"bandwidth figures {bw}")
    check([x["kernel"] for x in records[1:]] == ["registers", "vector"], f"kernels {records[1:]}")
    check([x["ran"] for x in records[1:]] == ["registers", "vector"], f"kernels that ran {records[1:]}")
    for x in records[1:]:
        # A 1x40x64 f32-f16 call moves 64*4 + 40*64*2 + 40*4 bytes (odd repeats: the median rate is
        # the median time's).
        check(abs(x["gbytes_per_s"] * x["ms_median"] * 1e6 - (64 * 4 + 40 * 64 * 2 + 40 * 4)) < 1e-3 * 5536
              and x["fraction_of_bandwidth"] > 0, f"matmul bytes {x}")

# The pipeline workload on one and two logical devices: throughput per set, and where each stage's
# time goes per piece (hand-off costs), consistent with itself.
with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "m.gguf")
    check(run_infini(INFINI, ["make-model", "--out", model, "--vocab", "300", "--embd", "64", "--layers", "2",
                              "--segment", "16"]).returncode == 0, "make-model for the pipeline bench")
    # Batched decode: a record per number of streams, on one device and over two.
    for devices in ("0", "0,0"):
        r = run(["--workload", "batch", "--model", model, "--streams", "1,3", "--prefill", "8", "--decode", "3",
                 "--repeat", "1", "--devices", devices])
        check(r.returncode == 0, f"bench batch --devices {devices}: " + r.stderr)
        records = [json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else []
        check([x.get("streams") for x in records] == [1, 3]
              and all(x["devices"] == len(devices.split(",")) and x["aggregate_tokens_per_s"] > 0
                      and x["alone_tokens_per_s"] > 0 and x["step_ms"] > 0 and x["device_bytes_per_stream"] > 0
                      and abs(x["per_stream_tokens_per_s"] * x["streams"] / x["aggregate_tokens_per_s"] - 1) < 1e-9
                      for x in records), f"bench batch records {records}")
    r = run(["--workload", "batch", "--model", model, "--streams", "0"])
    check(is_one_line_error(r), f"bench batch --streams 0: {r.stderr!r}")
    r = run(["--workload", "batch", "--model", model, "--decode", "0"])
    check(is_one_line_error(r) and "--decode 1 or more" in r.stderr, f"bench batch --decode 0: {r.stderr!r}")
    # Decode's launches per token: every dispatch of a token's recordings, and the barriers that
    # make them wait on each other (fewer: independent projections share one).
    r = run(["--workload", "model", "--model", model, "--prefill", "8", "--decode", "3", "--repeat", "1"])
    check(r.returncode == 0, "bench model: " + r.stderr)
    records = [json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else []
    check(len(records) == 1 and 0 < records[0].get("decode_barriers_per_token", 0)
          < records[0].get("decode_dispatches_per_token", 0), f"model record {records}")
    # Greedy decode in chains of up to 4 tokens per submission: a token's dispatches as token by
    # token does (a chain replays a token's commands) and at most one more, the pick of the next
    # step's token, and the chain as resolved in the record (auto: 1 on this CPU driver).
    r = run(["--workload", "model", "--model", model, "--prefill", "8", "--decode", "6", "--repeat", "1",
             "--decode-chain", "auto,4"])
    check(r.returncode == 0, "bench model --decode-chain: " + r.stderr)
    records = [json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else []
    check([x.get("decode_chain") for x in records] == [1, 4]
          and records[0]["decode_dispatches_per_token"] < records[1]["decode_dispatches_per_token"]
          <= records[0]["decode_dispatches_per_token"] + 1,
          f"decode-chain records {records}")
    # Sampled decode (--temperature) in chains too: recorded, with the pick per chained token.
    r = run(["--workload", "model", "--model", model, "--prefill", "8", "--decode", "6", "--repeat", "1",
             "--decode-chain", "1,4", "--temperature", "0.9"])
    check(r.returncode == 0, "bench model --temperature: " + r.stderr)
    records = [json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else []
    check([(x.get("decode_chain"), x.get("temperature"), x.get("top_k")) for x in records] == [(1, 0.9, 40), (4, 0.9, 40)]
          and records[0]["decode_dispatches_per_token"] < records[1]["decode_dispatches_per_token"]
          <= records[0]["decode_dispatches_per_token"] + 1, f"temperature records {records}")
    # And with an OpenAI-style request's defaults (top-k off, top-p 1): chains draw from whole rows.
    r = run(["--workload", "model", "--model", model, "--prefill", "8", "--decode", "6", "--repeat", "1",
             "--decode-chain", "4", "--temperature", "1", "--top-k", "0", "--top-p", "1"])
    check(r.returncode == 0, "bench model --top-k 0: " + r.stderr)
    records = [json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else []
    check([(x.get("decode_chain"), x.get("top_k"), x.get("top_p")) for x in records] == [(4, 0, 1.0)],
          f"whole-row records {records}")
    # On the vector kernel the norms and the SwiGLU run inside the projections: per layer and
    # token 4 dispatches (2 norms, up, SwiGLU) and 3 barriers fewer than with them apart, and one
    # each for the final norm.
    r = run(["--workload", "model", "--model", model, "--prefill", "8", "--decode", "3", "--repeat", "1",
             "--matmul-kernel", "vector", "--fused-steps", "on,off"])
    check(r.returncode == 0, "bench model --fused-steps: " + r.stderr)
    records = [json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else []
    by = {x.get("fused_steps"): x for x in records
          if x.get("matmul_kernel") == "vector" and x.get("attention_kernel") == "auto"}
    check(sorted(by) == [False, True], f"fused-steps records {records}")
    if sorted(by) == [False, True]:
        check(by[False]["decode_dispatches_per_token"] - by[True]["decode_dispatches_per_token"] == 4 * 2 + 1
              and by[False]["decode_barriers_per_token"] - by[True]["decode_barriers_per_token"] == 3 * 2 + 1,
              f"fused steps save 4 dispatches and 3 barriers per layer: {by}")
    # Every kernel timed: one record per kernel and grid of each part, most time first, whose
    # dispatches are the model record's (decode: per token) and whose shares add up to 1.
    r = run(["--workload", "model", "--model", model, "--prefill", "8", "--decode", "3", "--repeat", "1",
             "--kernel-times"])
    check(r.returncode == 0, "bench model --kernel-times: " + r.stderr)
    records = [json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else []
    main = [x for x in records if x.get("phase") == "prefill_decode"]
    check(len(main) == 1 and main[0].get("kernel_times") is True, f"kernel-times model record {main}")
    for part in ("prefill", "decode"):
        kernels = [x for x in records if x.get("phase") == "kernel_times" and x.get("part") == part]
        check(len(kernels) > 3 and all(x["us_per_token"] >= 0 and x["kernel"] and "x" in x["groups"] for x in kernels),
              f"{part} kernel records {kernels}")
        check(abs(sum(x["share"] for x in kernels) - 1) < 1e-6, f"{part} shares add up to 1")
        check([x["us_per_token"] for x in kernels] == sorted((x["us_per_token"] for x in kernels), reverse=True),
              f"{part} kernels most time first")
        if part == "decode" and main:
            check(abs(sum(x["dispatches_per_token"] for x in kernels) - main[0]["decode_dispatches_per_token"]) < 1e-9,
                  f"decode kernels' dispatches are the record's: {kernels}")
    r = run(["--workload", "pipeline", "--model", model, "--device-sets", "0/0,0", "--prefill", "40", "--decode", "3",
             "--repeat", "1"])
    check(r.returncode == 0, "bench pipeline: " + r.stderr)
    records = [json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else []
    handoffs = {x["devices"]: x for x in records if x.get("phase") == "handoffs"}
    check(sorted(handoffs) == ["0", "0,0"], f"handoff records {sorted(handoffs)}")
    for devices, x in handoffs.items():
        for phase, pieces in (("prefill_stages", 3), ("decode_stages", 3)):  # 40 tokens: 16 + 16 + 8
            stages = x.get(phase, [])
            check(len(stages) == len(devices.split(",")), f"{devices} {phase}: one entry per stage")
            # Where a stage's device waits for the one before on the GPU, the host submits to both
            # before waiting for either: the first's device time then overlaps the second's submission.
            device_waits = any(st["device_waits"] > 0 for st in stages)
            for st in stages:
                parts = st["record_us"] + st["host_in_us"] + st["host_out_us"] + st["submit_wait_us"]
                # A piece submitted while the one before still ran has device time the host did
                # not wait for: only then may the device time exceed the wait.
                ahead = st["submitted_ahead"] > 0 or device_waits
                check(st["pieces"] == pieces and all(v >= 0 for k, v in st.items() if k != "submit_and_wake_us")
                      and parts <= st["wall_us"] * 1.001 + 1
                      and (ahead or st["device_us"] <= st["submit_wait_us"] * 1.001 + 1)
                      and st["device_upload_us"] + st["device_download_us"] <= st["device_us"] + 1,
                      f"{devices} {phase} stage {st['stage']}: {st}")
                check(phase == "prefill_stages" or st["submitted_ahead"] == 0,
                      f"{devices} decode token by token: a single piece is never submitted ahead")
            if devices == "0":
                check(all(st["queued_us"] == 0 and st["thread_wake_us"] == 0 for st in stages),
                      "one device hands nothing over")

    # Greedy chains of 2: one device chains; several chain where their devices wait for each
    # other on the GPU (then the token goes back round a ring), else they decode token by token.
    r = run(["--workload", "pipeline", "--model", model, "--device-sets", "0/0,0", "--prefill", "8", "--decode", "4",
             "--repeat", "1", "--decode-chain", "2"])
    check(r.returncode == 0, "bench pipeline --greedy-chain: " + r.stderr)
    records = [json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else []
    sets = {x["devices"]: x for x in records if "phase" not in x}
    check(sorted(sets) == ["0", "0,0"] and sets["0"]["decode_chain"] == 2
          and sets["0,0"]["decode_chain"] == (1 if sets["0,0"]["handoff_waits"] == ["host"] else 2),
          f"pipeline greedy chains {sets}")

# K not a multiple of 8: the matrix kernel (emulated here) hands the call to the tiled one.
r = run(["--workload", "matmul", "--m", "24", "--n", "40", "--k", "60", "--dtype", "f32-f16",
         "--matmul-kernel", "coopmat-emulated", "--repeat", "1"])
check(r.returncode == 0, "bench coopmat-emulated: " + r.stderr)
records = [json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else []
check([(x.get("kernel"), x.get("ran")) for x in records] == [("coopmat-emulated", "tiled")], f"fallback {records}")

# Several tilings of the matrix kernel in one run: a record each where the call ran it, one record
# for a kernel that does not use them.
r = run(["--workload", "matmul", "--m", "24", "--n", "40", "--k", "64", "--dtype", "f32-f16",
         "--matmul-kernel", "tiled,coopmat-emulated", "--matrix-tiles", "2x2x4x4x32,1x2x2x3x16", "--repeat", "1"])
check(r.returncode == 0, "bench --matrix-tiles: " + r.stderr)
records = [json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else []
check([(x.get("ran"), x.get("matrix_tiles")) for x in records] ==
      [("tiled", None), ("coopmat-emulated", "2x2x4x4x32"), ("coopmat-emulated", "1x2x2x3x16")], f"tilings {records}")

# Shapes of the matrix-vector kernel: a record each where the call ran it (one row), one record for
# a kernel that does not use them (the register kernel).
r = run(["--workload", "matmul", "--m", "1", "--n", "40", "--k", "64", "--dtype", "f32-f16",
         "--matmul-kernel", "registers,vector", "--vector-tiles", "auto,64x1,16x4", "--repeat", "1"])
check(r.returncode == 0, "bench --vector-tiles: " + r.stderr)
records = [json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else []
check([(x.get("ran"), x.get("vector_tiles")) for x in records] ==
      [("registers", None), ("vector", "128x2"), ("vector", "64x1"), ("vector", "16x4")], f"vector tilings {records}")

# The attention layer on the matrix kernels' tiling; its memory kernels follow the attention's.
r = run(["--workload", "attention", "--attention-kernel", "tiled,coopmat-emulated", "--dtype", "f16", "--tokens", "80",
         "--segment", "64", "--heads", "2", "--kv-heads", "1", "--head-dim", "32", "--repeat", "1"])
check(r.returncode == 0, "bench attention: " + r.stderr)
records = [json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else []
check([(x.get("kernel"), x.get("memory_kernel"), x.get("segments")) for x in records] ==
      [("tiled", "tiled", 2), ("coopmat-emulated", "coopmat-emulated", 2)], f"attention records {records}")

# The host's cost of a draw from a whole row: a record per vocabulary and setting (top-k off with
# and without a nucleus, top-k 40), each a positive time.
r = run(["--workload", "sampler", "--vocab", "1000,5000", "--repeat", "2"])
check(r.returncode == 0, "bench sampler: " + r.stderr)
records = [json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else []
check([(x.get("vocab"), x.get("top_k"), x.get("top_p")) for x in records] ==
      [(v, k, p) for v in (1000, 5000) for k, p in ((0, 1.0), (0, 0.95), (40, 0.95))]
      and all(0 < x["us_per_token_min"] <= x["us_per_token"] <= x["us_per_token_max"] for x in records),
      f"sampler records {records}")

for bad in (["--dtype", "bf16"], ["--matmul-kernel", "magic"], ["--attention-kernel", "flash"], ["--workload", "nothing"],
            ["--repeat", "0"], ["--matrix-tiles", "2x2x4x4"], ["--matrix-tiles", ""], ["--matmul-kernel", ""], ["--dtype", ""], ["--workload", ""],
            ["--matmul-kernel", "coopmat-emulated", "--matrix-tiles", "2x2x4x4x24"], ["--fused-steps", "maybe"],
            ["--fused-steps", ""], ["--vector-tiles", "96x2"], ["--vector-tiles", ""], ["--handoff-waits", "pigeon"],
            ["--handoffs", "pcie"], ["--decode-chain", "17"], ["--decode-chain", "0"], ["--temperature", "-1"],
            ["--workload", "sampler", "--vocab", "0"], ["--top-p", "0"], ["--top-k", "-1"]):
    r = run(["--workload", "matmul", "--m", "8", "--n", "8", "--k", "8"] + bad if "--workload" not in bad else bad)
    check(is_one_line_error(r) and not r.stdout, f"{bad}: exit {r.returncode}, stderr {r.stderr!r}")

# scripts/figures-table.py turns the records of all the runs above into tables: a row per record
# of each kind, the model rows carrying the decode rate the record has.
import subprocess  # noqa: E402

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "figures-table.py")
text = "".join(OUTPUTS)
all_records = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
t = subprocess.run([sys.executable, TABLE], input="== a step line\n" + text, capture_output=True, text=True)
check(t.returncode == 0 and not t.stderr, f"figures-table: exit {t.returncode}, {t.stderr!r}")


def table_rows(title):
    lines = t.stdout.split(f"**{title}**\n\n", 1)[1].split("\n\n", 1)[0].splitlines() if f"**{title}**" in t.stdout else []
    return lines[2:]


models = [x for x in all_records if x["workload"] == "model" and x.get("phase") == "prefill_decode"]
rows = table_rows("Model: prefill and decode")
check(len(rows) == len(models) > 0, f"model rows {len(rows)} for {len(models)} records")
for row, x in zip(rows, models):
    cells = [c.strip() for c in row.strip("|").split("|")]
    check(cells[2] == x["matmul_kernel"] and cells[3] == ("on" if x["fused_steps"] else "off")
          and cells[5] == x["vector_tiles"] and cells[6] == x["matrix_tiles"] and cells[8] == str(x["decode_chain"]) + (f" (T {x['temperature']:g}, top-k {x['top_k']})" if x.get("temperature") else "")
          and abs(float(cells[11].split(" ")[0].replace(",", "")) / x["decode_tokens_per_s"] - 1) < 5e-3,
          f"model row {cells} for {x}")
check(len(table_rows("Matmul")) == len([x for x in all_records if x["workload"] == "matmul"]), "matmul rows")
check(len(table_rows("Batched decode")) == len([x for x in all_records if x["workload"] == "batch"]) > 0,
      "batched decode rows")
check(len(table_rows("Sampler (host, per token)")) == len([x for x in all_records if x["workload"] == "sampler"]),
      "sampler rows")
check(len(table_rows("Pipeline")) == len([x for x in all_records if x["workload"] == "pipeline" and "phase" not in x]),
      "pipeline rows")
t = subprocess.run([sys.executable, TABLE], input="no records here\n", capture_output=True, text=True)
check(t.returncode == 1 and t.stderr.count("\n") == 1 and not t.stdout, f"figures-table on no records: {t.stderr!r}")

finish("bench CLI")
