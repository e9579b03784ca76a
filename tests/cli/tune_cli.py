#!/usr/bin/python3
"""The autotuner from the command line (docs/design.md §6.2.2), on a small random q4_0 model in a
cache directory of its own:

1. `infini tune -m M` measures each weight shape's candidates, prints a line per shape with its
   choice, and keeps them in the device's tuning file; `infini devices` (and --json) shows them;
2. a model run under INFINI_TUNE=auto takes the kept choices without measuring again, and its
   logits are those of the rules' kernels (INFINI_TUNE=off) up to summation order;
3. a damaged file is ignored with one line on stderr and measured again (then whole); devices
   says why it was ignored; an unknown INFINI_TUNE value is one warning line and the rules;
4. `infini bench --workload tune` writes a record per shape (every candidate, the choice, the
   choice against the best of a second pass) and the tuning's total time.

usage: tune_cli.py INFINI_BINARY
"""
import json
import os
import subprocess
import sys
import tempfile

from cli_checks import check, finish

INFINI = sys.argv[1]


def run(args, tune=None, cache=None):
    env = dict(os.environ, INFINI_CACHE_DIR=cache)
    if tune is None:
        env.pop("INFINI_TUNE", None)
    else:
        env["INFINI_TUNE"] = tune
    return subprocess.run([INFINI] + args, capture_output=True, text=True, env=env)


def logits(model, out, tune, cache):
    tokens = ",".join(str((i * 7 + 3) % 300) for i in range(150))
    r = run(["eval", "-m", model, "--tokens", tokens, "--logits", out], tune, cache)
    check(r.returncode == 0, f"eval under INFINI_TUNE={tune}: exit {r.returncode}: {r.stderr.strip()}")
    with open(out, "rb") as f:
        data = f.read()
    import struct
    return r, struct.unpack("<300f", data[-1200:])


with tempfile.TemporaryDirectory() as tmp:
    cache = os.path.join(tmp, "cache")
    model = os.path.join(tmp, "m.gguf")
    r = run(["make-model", "--out", model, "--vocab", "300", "--embd", "128", "--layers", "2", "--heads", "4",
             "--kv-heads", "2", "--ffn", "256", "--dtype", "q4_0"], cache=cache)
    check(r.returncode == 0, f"make-model: {r.stderr.strip()}")

    # 1. infini tune, then devices.
    r = run(["tune", "-m", model], cache=cache)
    check(r.returncode == 0, f"tune: exit {r.returncode}: {r.stderr.strip()}")
    shapes = [line for line in r.stdout.splitlines() if "->" in line]
    check(len(shapes) >= 4, f"tune prints a line per weight shape: {r.stdout!r}")
    files = [f for f in os.listdir(cache) if f.startswith("tuning-")] if os.path.isdir(cache) else []
    check(len(files) == 1 and os.path.join(cache, files[0]) in r.stdout, f"tune keeps its file: {files} / {r.stdout!r}")
    chosen = {line.split("->")[0].strip(): line.split("->")[1].split()[0] for line in shapes}
    d = run(["devices", "--json"], cache=cache)
    device = next(json.loads(l) for l in d.stdout.splitlines() if json.loads(l).get("selected"))
    kept = dict(t.split(": ") for t in device.get("tuned_kernels", []))
    check(kept == chosen, f"devices --json shows the kept choices: {kept} vs {chosen}")
    check("tuned kernels" in run(["devices"], cache=cache).stdout, "devices prints the kept choices")

    # 2. auto takes them (nothing measured: the file is unchanged), and computes what the rules do.
    path = os.path.join(cache, files[0]) if files else ""
    before = open(path).read() if path else ""
    r_auto, tuned = logits(model, os.path.join(tmp, "a.npy"), "auto", cache)
    _, rules = logits(model, os.path.join(tmp, "b.npy"), "off", cache)
    check("infini: warning" not in r_auto.stderr, f"auto with a whole cache warns of nothing: {r_auto.stderr!r}")
    check(open(path).read() == before if path else False, "auto with a whole cache measures nothing")
    err = sum((a - b) ** 2 for a, b in zip(tuned, rules)) / sum(b * b for b in rules)
    print(f"tuned vs rules: nmse {err:.2e}")
    check(err < 1e-9, f"tuned logits are the rules' up to summation order (nmse {err:.2e})")

    # 3. A damaged file, an unknown mode.
    if path:
        with open(path, "r+") as f:
            f.seek(len(before) // 2)
            f.write("#")
        check("tuning cache ignored: its checksum" in run(["devices"], cache=cache).stdout, "devices says why")
        r_damaged, _ = logits(model, os.path.join(tmp, "c.npy"), "auto", cache)
        lines = [l for l in r_damaged.stderr.splitlines() if l.startswith("infini: warning")]
        check(len(lines) == 1 and "ignored" in lines[0], f"a damaged cache: one warning line: {r_damaged.stderr!r}")
        check(run(["devices", "--json"], cache=cache).stdout.count("tuning_cache_problem") == 0,
              "measured again: the file is whole")
    r_bad, _ = logits(model, os.path.join(tmp, "d.npy"), "sometimes", cache)
    check(r_bad.stderr.count("INFINI_TUNE") == 1, f"an unknown INFINI_TUNE: one warning: {r_bad.stderr!r}")

    # 4. The bench workload.
    r = run(["bench", "--workload", "tune", "-m", model], cache=cache)
    check(r.returncode == 0, f"bench tune: exit {r.returncode}: {r.stderr.strip()}")
    records = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    per_shape = [x for x in records if "chosen" in x and "n" in x]
    attention = [x for x in records if "chosen" in x and "attention" in x]
    check(len(per_shape) + len(attention) == len(shapes) and len(attention) == 1
          and all(x["chosen_vs_best"] >= 1.0 for x in per_shape)
          and all(all(c["correct"] for c in x["candidates"] if c["ms"] >= 0) for x in per_shape),
          f"bench tune: a record per weight shape and one for the attention, every candidate correct: {records}")
    check(all(c["correct"] and c["piece_ms"] > 0 and c["decode_ms"] > 0 for c in attention[0]["candidates"])
          if attention else False, f"bench tune: every attention family correct and timed: {attention}")
    check(any("tune_seconds" in x for x in records), "bench tune: the tuning's time")
    for x in per_shape:
        print(f"{x['type']} {x['n']}x{x['k']}: {x['chosen']}, {x['chosen_vs_best']:.2f}x the best of a second pass, "
              f"the rule {x['rule_vs_chosen']:.2f}x its time")

finish("tune-cli")
