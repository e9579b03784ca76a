#!/usr/bin/env python3
"""Crash safety of `infini run` (project issue 8): a prefill that checkpoints every K segments is
killed with SIGKILL at random moments; rerunning the same command from the last state file
(`--load-state STATE --resume`, or from scratch when no checkpoint was written yet) must give
last-position logits bit-identical to an uninterrupted run. Truncated or altered state files
must be refused with a one-line error and exit status 1.

Usage: kill_resume.py PATH_TO_INFINI [TRIALS]   (TRIALS defaults to 20; seed with KILL_SEED)
"""
import os
import random
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

INFINI = sys.argv[1]
TRIALS = int(sys.argv[2]) if len(sys.argv) > 2 else 20
SEGMENT = 16
EVERY = 2  # checkpoint every EVERY segments

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED:", what, flush=True)


def run(args, **kw):
    return subprocess.run([INFINI] + args, capture_output=True, text=True, **kw)


def tokens_in(state):
    """The token count a state file records (layout: runtime/formats/session_state.cpp)."""
    with open(state, "rb") as f:
        f.seek(8)
        version = struct.unpack("<I", f.read(4))[0]
        # magic, version, the fingerprint's 8 int64 and 5 uint32, its int64 sinks (v3), the model digest (v2)
        f.seek(8 + 4 + 8 * 8 + 5 * 4 + (8 if version >= 3 else 0) + (8 if version >= 2 else 0))
        return struct.unpack("<q", f.read(8))[0]


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def main():
    rng = random.Random(int(os.environ.get("KILL_SEED", "0")) or None)
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.gguf")
        r = run(["make-model", "--out", model, "--vocab", "259", "--embd", "64", "--layers", "2", "--heads", "4",
                 "--kv-heads", "2", "--ffn", "128", "--segment", str(SEGMENT), "--seed", "7"])
        if r.returncode != 0:
            sys.exit("make-model failed: " + r.stderr)
        text = os.path.join(tmp, "input.txt")
        words = ["stream", "memory", "segment", "vulkan", "kernel", "token", "state", "resume", "crash"]
        with open(text, "w") as f:
            f.write(" ".join(rng.choice(words) for _ in range(700)))
        base = ["run", "-m", model, "-f", text, "-n", "0", "--quiet"]

        ref = os.path.join(tmp, "ref.npy")
        t0 = time.monotonic()
        r = run(base + ["--logits-out", ref])
        t_ref = time.monotonic() - t0
        if r.returncode != 0:
            sys.exit("reference run failed: " + r.stderr)
        reference = np.load(ref)
        print(f"reference: {reference.shape[0]} logits in {t_ref:.2f} s", flush=True)

        outcomes = {"finished before the kill": 0, "resumed from a checkpoint": 0, "started over": 0}
        resumed_at = []
        last_state = None
        for trial in range(TRIALS):
            d = os.path.join(tmp, f"trial{trial}")
            os.mkdir(d)
            state, out = os.path.join(d, "run.state"), os.path.join(d, "out.npy")
            cmd = [INFINI] + base + ["--checkpoint-every", str(EVERY), "--save-state", state, "--logits-out", out]
            p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            try:
                p.wait(timeout=rng.uniform(0.0, 1.1 * t_ref))
            except subprocess.TimeoutExpired:
                p.kill()
            _, err = p.communicate()
            if p.returncode == 0 or os.path.exists(out):
                # Done (logits are written atomically before the final state), killed or not.
                check(p.returncode in (0, -9), f"trial {trial}: exit {p.returncode}: {err.strip()}")
                how = "finished before the kill"
            elif os.path.exists(state):
                check(p.returncode == -9, f"trial {trial}: exit {p.returncode}: {err.strip()}")
                held = tokens_in(state)
                resumed_at.append(held)
                check(held > 0 and held % (SEGMENT * EVERY) == 0, f"trial {trial}: checkpoint at {held} tokens")
                r = subprocess.run(cmd + ["--load-state", state, "--resume"], capture_output=True, text=True)
                check(r.returncode == 0, f"trial {trial}: resume failed: {r.stderr.strip()}")
                how = "resumed from a checkpoint"
                last_state = state
            else:
                check(p.returncode == -9, f"trial {trial}: exit {p.returncode}: {err.strip()}")
                r = subprocess.run(cmd, capture_output=True, text=True)
                check(r.returncode == 0, f"trial {trial}: rerun failed: {r.stderr.strip()}")
                how = "started over"
            outcomes[how] += 1
            ok = os.path.exists(out) and same_bits(np.load(out), reference)
            check(ok, f"trial {trial} ({how}): logits differ from the uninterrupted run")
            print(f"trial {trial}: {how}" + (f" at token {resumed_at[-1]}" if how.startswith("resumed") else "")
                  + (", bit-identical" if ok else ", DIFFERENT"), flush=True)
        print("outcomes:", outcomes, flush=True)

        # Damaged state files: one-line refusal, exit 1, no logits.
        good = last_state
        if good is None:  # no trial left a checkpoint: make one
            good = os.path.join(tmp, "good.state")
            check(run(base + ["--checkpoint-every", str(EVERY), "--save-state", good]).returncode == 0, "checkpointing")
        data = open(good, "rb").read()
        flipped = bytearray(data)
        flipped[len(data) // 2] ^= 0x10
        other_model = os.path.join(tmp, "other.gguf")
        check(run(["make-model", "--out", other_model, "--vocab", "259", "--embd", "64", "--layers", "2",
                   "--heads", "4", "--kv-heads", "2", "--ffn", "128", "--segment", "8"]).returncode == 0, "make-model")
        damaged = {"truncated to half": data[: len(data) // 2], "truncated by one byte": data[:-1],
                   "empty": b"", "one bit flipped": bytes(flipped), "a byte appended": data + b"\0"}
        for what, content in damaged.items():
            bad = os.path.join(tmp, "bad.state")
            with open(bad, "wb") as f:
                f.write(content)
            out = os.path.join(tmp, "bad.npy")
            r = run(base + ["--load-state", bad, "--resume", "--logits-out", out])
            one_line = r.stderr.count("\n") == 1 and "error" in r.stderr
            check(r.returncode == 1 and one_line and not os.path.exists(out),
                  f"state file {what}: exit {r.returncode}, stderr {r.stderr!r}")
            print(f"state file {what}: refused ({r.stderr.strip()})", flush=True)
        r = run(["run", "-m", other_model, "-f", text, "-n", "0", "--quiet", "--load-state", good, "--resume"])
        check(r.returncode == 1 and r.stderr.count("\n") == 1, f"foreign state: exit {r.returncode}, {r.stderr!r}")
        print(f"state file of another model: refused ({r.stderr.strip()})", flush=True)

    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    print("all checks passed")


if __name__ == "__main__":
    main()
