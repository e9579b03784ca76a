#!/usr/bin/python3
"""passkey_task.py builds, token for token, the inputs `infini passkey` streams: one unnamed key and
several named ones (--keys 3 and 8), on both fillers (--filler grass, rivers), at a length off the segment grid and depths from the start to the end (key lines at the same place included).
The inputs come from `infini passkey --dump-inputs` on the given model; each dumped line is one
question, and the K lines of an input with K keys follow each other (key j, asked j-th).

usage: check_passkey_text.py INFINI MODEL.gguf WORKDIR
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "samples", "passkey"))
import passkey_task as task  # noqa: E402


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    if len(sys.argv) != 4:
        fail(__doc__)
    infini, model, work = sys.argv[1:]
    os.makedirs(work, exist_ok=True)
    checked = 0
    for keys in (1, 3, 8):
        for filler in ("grass", "rivers"):
            dump = os.path.join(work, f"inputs-{keys}-{filler}.jsonl")
            subprocess.run([infini, "passkey", "-m", model, "--length", "1537", "--depths", "start,0.5,end,0,1",
                            "--trials", "1", "--keys", str(keys), "--filler", filler, "--answer-tokens", "1",
                            "--json", "--quiet", "--dump-inputs", dump], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            lines = [json.loads(line) for line in open(dump)]
            if len(lines) != 5 * keys:  # depths x keys, one trial each
                fail(f"--keys {keys} --filler {filler}: {len(lines)} dumped questions, expected {5 * keys}")
            for first in range(0, len(lines), keys):
                group = lines[first:first + keys]
                hidden = [(t["depth"], t["key"], t["name"]) for t in group]
                if keys == 1 and hidden[0][2] != "":
                    fail(f"one key is named {hidden[0][2]!r}; expected the task's unnamed key")
                if keys > 1 and [n for _, _, n in hidden] != task.KEY_NAMES[:keys]:
                    fail(f"--keys {keys}: names {[n for _, _, n in hidden]}, expected {task.KEY_NAMES[:keys]}")
                for asked, t in enumerate(group):
                    length = t["length"]
                    text = task.passkey_text_keys(task.filler_for_length(length, hidden, asked), hidden, asked, filler)
                    expected = task.encode(text)
                    if t["tokens"] != expected:
                        at = next((i for i, (a, b) in enumerate(zip(t["tokens"], expected)) if a != b),
                                  min(len(expected), len(t["tokens"])))
                        fail(f"--keys {keys} --filler {filler}, {length} tokens, asking key {asked} of {hidden}: "
                             f"infini's input differs from passkey_task.py's at token {at}")
                    if len(expected) != length:
                        fail(f"--keys {keys} --filler {filler}: input is {len(expected)} tokens, asked for {length}")
                    if keys == 1 and filler == "grass" and text != task.passkey_text(
                            task.filler_for_length(length), hidden[0][0], hidden[0][1]):
                        fail("passkey_text_keys with one unnamed key is not passkey_text")
                    checked += 1
    print(f"ok: {checked} inputs (1, 3 and 8 keys, grass and rivers filler) identical in C++ and Python")


if __name__ == "__main__":
    main()
