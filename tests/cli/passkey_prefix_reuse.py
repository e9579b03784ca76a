#!/usr/bin/python3
"""`infini passkey` resumes each input from a state saved in the prefix it shares with the input
before it (the intro and the filler up to the key line). Checks, on the shipped demo model:

1. every trial's input, answer tokens and answer are identical with --no-reuse-prefix (restoring at
   a segment boundary is exact), and so is every cell's accuracy;
2. each input resumes exactly where it should: at the last segment boundary inside the prefix it
   shares with the input before it, leaving at least one token to stream (0 for the first input,
   and always 0 with --no-reuse-prefix); the JSON's tokens_reused is their sum per cell;
3. another --seed draws other keys (seed 1 once only swapped seed 0's trials in pairs).

usage: passkey_prefix_reuse.py INFINI_BINARY MODEL.gguf WORK_DIR
"""
import json
import os
import sys

from cli_checks import check, finish, run

LENGTHS = "1500,2080"  # two lengths of the same segment spacing: the second resumes in the first's prefix
TRIALS = 3


def passkey(infini, model, dump, *extra):
    r = run(infini, ["passkey", "-m", model, "--length", LENGTHS, "--depths", "start,end", "--trials", str(TRIALS),
                     "--json", "--quiet", "--dump-inputs", dump, *extra])
    if not check(r.returncode == 0, f"passkey {' '.join(extra)} exit {r.returncode}: {r.stderr.strip()}"):
        finish("passkey-prefix-reuse")
    cells = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    with open(dump) as f:
        trials = [json.loads(line) for line in f if line.strip()]
    return cells, trials


def common_prefix(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def main():
    infini, model, work = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    cells, trials = passkey(infini, model, os.path.join(work, "reuse.jsonl"))
    plain_cells, plain_trials = passkey(infini, model, os.path.join(work, "plain.jsonl"), "--no-reuse-prefix")

    check(len(trials) == len(plain_trials) == 2 * 2 * TRIALS, f"{len(trials)} and {len(plain_trials)} trials")
    for t, p in zip(trials, plain_trials):
        for key in ("length", "depth", "key", "tokens", "answer_tokens", "answer"):
            check(t[key] == p[key], f"{key} differs with --no-reuse-prefix: {t[key]!r:.80} vs {p[key]!r:.80}")
        check(p["resumed_at"] == 0, f"--no-reuse-prefix resumed at token {p['resumed_at']}")
    for c, p in zip(cells, plain_cells):
        check(c["accuracy"] == p["accuracy"], f"accuracy {c['accuracy']} vs {p['accuracy']} at {c['length']} {c['depth']}")
        check(p["tokens_reused"] == 0, f"--no-reuse-prefix reused {p['tokens_reused']} tokens")

    segment = cells[0]["segment"]
    previous = []
    for t in trials:
        segments = len(t["tokens"]) // segment
        check(segments <= 32, "the expected spacing below assumes a state at every boundary (32 states at most)")
        shared = min(common_prefix(previous, t["tokens"]), len(t["tokens"]) - 1)
        check(t["resumed_at"] == shared // segment * segment,
              f"trial at {t['length']} tokens resumed at {t['resumed_at']}, expected {shared // segment * segment} "
              f"(shares {shared} tokens with the one before)")
        previous = t["tokens"]
    check(sum(t["resumed_at"] for t in trials) > 0, "no input resumed (nothing shared, or reuse off)")
    for i, c in enumerate(cells):
        mine = trials[i * TRIALS:(i + 1) * TRIALS]
        check(c["tokens_reused"] == sum(t["resumed_at"] for t in mine),
              f"tokens_reused {c['tokens_reused']} at {c['length']} {c['depth']}, the trials say "
              f"{sum(t['resumed_at'] for t in mine)}")
    _, seeded = passkey(infini, model, os.path.join(work, "seed1.jsonl"), "--seed", "1")
    keys, other_keys = sorted(t["key"] for t in trials), sorted(t["key"] for t in seeded)
    check(len(set(keys) & set(other_keys)) < len(keys) // 2, f"--seed 1 draws the keys of seed 0: {other_keys}")
    print(f"{len(trials)} trials, {sum(t['resumed_at'] for t in trials)} of "
          f"{sum(len(t['tokens']) for t in trials)} tokens resumed, the same answers")
    finish("passkey-prefix-reuse")


if __name__ == "__main__":
    main()
