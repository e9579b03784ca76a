#!/usr/bin/python3
"""`infini passkey` resumes each input from a state saved in the prefix it shares with the input
before it (the intro and the filler up to the key line). Checks, on the shipped demo model:

1. every trial's input, answer tokens and answer are identical with --no-reuse-prefix (restoring at
   a segment boundary is exact), and so is every cell's accuracy;
2. each input resumes exactly where it should: at the last segment boundary inside the prefix it
   shares with the input before it, leaving at least one token to stream (0 for the first input,
   and always 0 with --no-reuse-prefix); the JSON's tokens_reused is their sum per cell;
3. another --seed draws other keys (seed 1 once only swapped seed 0's trials in pairs);
4. --filler rivers hides the same keys in other text, of exactly the asked length too;
5. --keys 3 hides three named keys in each input and asks for each in turn: every question's input
   is exactly the asked length, the three share everything up to the question (the second and third
   resume after the last key line), key j of an input of depth cell d lies in cell d + j, and each
   cell counts three questions per input;
6. --svg draws the cells: one rectangle per length and depth, labelled with its keys found of its
   trials as the JSON counts them, green where every key was found, red where none was; a path
   that cannot be written is refused in one line before any trial runs.

usage: passkey_prefix_reuse.py INFINI_BINARY MODEL.gguf WORK_DIR
"""
import json
import os
import sys
import xml.dom.minidom

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


def check_heatmap(path, cells):
    doc = xml.dom.minidom.parse(path)
    rects = [r for r in doc.getElementsByTagName("rect") if r.getElementsByTagName("title")]
    check(len(rects) == len(cells) == 4, f"heatmap: {len(rects)} cells for {len(cells)}")
    texts = [t.firstChild.data for t in doc.getElementsByTagName("text") if t.firstChild]
    check(all(label in texts for label in ("1500", "2080", "start", "end")), f"heatmap labels {texts}")
    # The picture's cells run across the lengths, row by row of depths; the JSON's by length, then depth.
    lengths, depths = sorted({c["length"] for c in cells}), [c["depth"] for c in cells if c["length"] == cells[0]["length"]]
    for rect in rects:
        i = rects.index(rect)
        c = next(c for c in cells if c["length"] == lengths[i % len(lengths)] and c["depth"] == depths[i // len(lengths)])
        found = round(c["accuracy"] * c["trials"])
        title = rect.getElementsByTagName("title")[0].firstChild.data
        check(title == f"{found} of {c['trials']}", f"heatmap cell {title!r} for {c}")
        fill = rect.getAttribute("fill")
        check(fill == "#2ea057" if found == c["trials"] else fill == "#d73027" if found == 0 else fill not in ("#2ea057", "#d73027"),
              f"heatmap colour {fill} for {found} of {c['trials']}")


def check_several_keys(cells, trials):
    K = 3
    check(len(trials) == 2 * 2 * TRIALS * K, f"--keys {K}: {len(trials)} questions")
    check(all(c["keys"] == K and c["trials"] == TRIALS * K for c in cells), f"--keys {K}: cells {cells}")
    cell_range = [(0.0, 1 / 3), (2 / 3, 1.0)]  # --depths start,end
    for g in range(0, len(trials), K):
        group = trials[g:g + K]
        d = (g // K // TRIALS) % 2  # the input's cell: lengths, then depths, then trials
        check([t["name"] for t in group] == ["blue", "gold", "grey"], f"--keys {K}: names {[t['name'] for t in group]}")
        check(all(len(t["tokens"]) == t["length"] for t in group), f"--keys {K}: lengths {[len(t['tokens']) for t in group]}")
        check(len({t["key"] for t in group}) == K and len({t["key_token"] for t in group}) == K,
              f"--keys {K}: keys {[(t['key'], t['key_token']) for t in group]}")
        for j, t in enumerate(group):
            lo, hi = cell_range[(d + j) % 2]
            check(lo <= t["depth"] <= hi, f"--keys {K}: key {j} of a cell-{d} input at depth {t['depth']}")
        last_key = max(t["key_token"] for t in group)
        for t in group[1:]:
            check(t["resumed_at"] >= last_key // cells[0]["segment"] * cells[0]["segment"] and
                  common_prefix(t["tokens"], group[0]["tokens"]) >= t["resumed_at"],
                  f"--keys {K}: a later question resumed at {t['resumed_at']} (last key at token {last_key})")


def main():
    infini, model, work = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    svg = os.path.join(work, "heatmap.svg")
    cells, trials = passkey(infini, model, os.path.join(work, "reuse.jsonl"), "--svg", svg)
    check_heatmap(svg, cells)
    r = run(infini, ["passkey", "-m", model, "--length", "1500", "--svg", os.path.join(work, "missing", "x.svg")])
    check(r.returncode != 0 and r.stderr.count("\n") == 1 and "cannot write" in r.stderr and not r.stdout.strip(),
          f"--svg to a folder that does not exist: {r.stderr!r}")
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
    rivers_cells, rivers = passkey(infini, model, os.path.join(work, "rivers.jsonl"), "--filler", "rivers")
    check(all(c["filler"] == "rivers" for c in rivers_cells) and all(c["filler"] == "grass" for c in cells),
          "the JSON names the filler")
    check([t["key"] for t in rivers] == [t["key"] for t in trials]
          and all(len(r["tokens"]) == len(t["tokens"]) == r["length"] and r["tokens"] != t["tokens"]
                  for r, t in zip(rivers, trials)),
          "--filler rivers: the same keys in other text of the same lengths")
    check_several_keys(*passkey(infini, model, os.path.join(work, "keys.jsonl"), "--keys", "3"))
    _, seeded = passkey(infini, model, os.path.join(work, "seed1.jsonl"), "--seed", "1")
    keys, other_keys = sorted(t["key"] for t in trials), sorted(t["key"] for t in seeded)
    check(len(set(keys) & set(other_keys)) < len(keys) // 2, f"--seed 1 draws the keys of seed 0: {other_keys}")
    print(f"{len(trials)} trials, {sum(t['resumed_at'] for t in trials)} of "
          f"{sum(len(t['tokens']) for t in trials)} tokens resumed, the same answers")
    finish("passkey-prefix-reuse")


if __name__ == "__main__":
    main()
