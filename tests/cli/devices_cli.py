#!/usr/bin/env python3
"""`--devices` end to end (project issue 10): the same model file evaluated on one logical device,
on the same device named twice (with the hand-off the devices allow, and forced through the host),
and on three logical devices with an uneven --split gives the same logits (normalised MSE at most
1e-7) with memory on over several segments; `infini devices` shows the split and the hand-offs;
bad device lists and hand-off kinds are one-line errors.

Usage: devices_cli.py PATH_TO_INFINI
"""
import json
import os
import sys
import tempfile

import numpy as np

from cli_checks import check, finish, is_one_line_error, run as run_infini

INFINI = sys.argv[1]


def run(args):
    return run_infini(INFINI, args)


with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "m.gguf")
    r = run(["make-model", "--out", model, "--vocab", "300", "--embd", "64", "--layers", "4", "--segment", "16"])
    check(r.returncode == 0, "make-model: " + r.stderr)
    tokens = ",".join(str((i * 37 + 11) % 300) for i in range(70))  # four full segments and an open one
    logits = {}
    host = dict(os.environ, INFINI_HANDOFF="host")
    for name, extra, env in [("one", ["--devices", "0"], None), ("twice", ["--devices", "0,0"], None),
                             ("twice through the host", ["--devices", "0,0"], host),
                             ("three", ["--devices", "0,0,0", "--split", "1,2,1"], None)]:
        out = os.path.join(tmp, name.replace(" ", "_") + ".npy")
        r = run_infini(INFINI, ["eval", "-m", model, "--tokens", tokens, "--all-logits", "--logits", out] + extra, env=env)
        check(r.returncode == 0, f"eval {name}: {r.stderr.strip()}")
        if r.returncode == 0:
            logits[name] = np.load(out).astype(np.float64)
    if "one" in logits:
        ref = logits["one"]
        for name, got in logits.items():
            nmse = float(((got - ref) ** 2).sum() / (ref ** 2).sum())
            print(f"{name}: nmse {nmse:.2e} against one device")
            check(nmse <= 1e-7, f"{name}: nmse {nmse:.2e}")

    r = run(["devices", "--devices", "0,0,0", "--split", "1,2,1", "-m", model, "--json"])
    check(r.returncode == 0, "devices --json: " + r.stderr)
    if r.returncode == 0:
        stages = [json.loads(line) for line in r.stdout.splitlines()]
        check([s["layers"] for s in stages] == [1, 2, 1], f"devices split {stages}")
        kinds = [s["handoff_to_next"] for s in stages]
        check(kinds[-1] == "" and all(k in ("host", "host-memory", "device-memory") for k in kinds[:-1]),
              f"hand-offs {kinds}")
        waits = [s["handoff_wait"] for s in stages]
        check(waits[-1] == "" and all(w in ("host", "timeline", "sync-file") for w in waits[:-1]), f"waits {waits}")
    r = run_infini(INFINI, ["devices", "--devices", "0,0"], env=host)
    check(r.returncode == 0 and "hands off to the next through host, the host waiting in between" in r.stdout,
          "devices, hand-off forced: " + r.stdout)
    r = run_infini(INFINI, ["devices", "--devices", "0,0"], env=dict(os.environ, INFINI_HANDOFF_WAIT="carrier-pigeon"))
    check(is_one_line_error(r) and "carrier-pigeon" in r.stderr and "sync-file" in r.stderr,
          f"INFINI_HANDOFF_WAIT=carrier-pigeon: exit {r.returncode}, stderr {r.stderr!r}")
    r = run_infini(INFINI, ["eval", "-m", model, "--tokens", "1,2", "--devices", "0,0", "--logits", os.path.join(tmp, "p.npy")],
                   env=dict(os.environ, INFINI_HANDOFF="pcie"))
    check(is_one_line_error(r) and "pcie" in r.stderr, f"INFINI_HANDOFF=pcie: exit {r.returncode}, stderr {r.stderr!r}")

    for bad in (["--devices", "0,99"], ["--devices", "no-such-gpu"], ["--devices", "0,0", "--split", "1"]):
        r = run(["eval", "-m", model, "--tokens", "1,2,3", "--logits", os.path.join(tmp, "x.npy")] + bad)
        check(is_one_line_error(r), f"{bad}: exit {r.returncode}, stderr {r.stderr!r}")

# Device profiles: listed, and applied to what `infini devices` shows; unknown profile and quirk
# names are one-line errors.
r = run(["devices", "--profiles", "--json"])
profiles = [json.loads(line)["profile"] for line in r.stdout.splitlines()] if r.returncode == 0 else []
check("vulkan-1.1-minimum" in profiles and "adreno-650" in profiles, f"profiles listed: {profiles}")
r = run_infini(INFINI, ["devices", "--json"], env=dict(os.environ, INFINI_DEVICE_PROFILE="v3d-pi4"))
check(r.returncode == 0, "devices under a profile: " + r.stderr)
if r.returncode == 0:
    chosen = [json.loads(line) for line in r.stdout.splitlines() if json.loads(line)["selected"]]
    check(len(chosen) == 1 and chosen[0]["api_version"].startswith("1.1.") and "[profile v3d-pi4]" in chosen[0]["name"]
          and "shared 16 KiB" in chosen[0]["capabilities"], f"profiled device: {chosen}")
for var, value in (("INFINI_DEVICE_PROFILE", "no-such-gpu"), ("INFINI_QUIRKS", "no-such-quirk")):
    r = run_infini(INFINI, ["devices"], env=dict(os.environ, **{var: value}))
    check(is_one_line_error(r) and value in r.stderr, f"{var}={value}: exit {r.returncode}, stderr {r.stderr!r}")

finish("devices CLI")
