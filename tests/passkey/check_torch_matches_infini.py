#!/usr/bin/python3
"""The PyTorch model of samples/passkey (the one the demo model was trained as) against infini on
the same GGUF file:

1. `infini passkey --dump-inputs` builds exactly the inputs samples/passkey/passkey_task.py builds
   (same text, same token ids, the key at the same token), so the model is tested on what it was
   trained on;
2. logits of every position of a several-segment input, `infini eval --all-logits` against the
   PyTorch forward pass in float64 on the stored weights: normalised MSE at most 1e-5;
3. the greedy answers infini gave equal those of the PyTorch model.

usage: check_torch_matches_infini.py INFINI_BINARY MODEL.gguf|random WORK_DIR

`random` exports an untrained model with large random weights (so that attention, memory and gate
all move the logits) and checks that one.
"""
import json
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "samples", "passkey"))
import model_gguf  # noqa: E402
import passkey_task as task  # noqa: E402
from infini_llama import Config, InfiniLlama  # noqa: E402
from train_passkey import first_digit  # noqa: E402

NMSE_LIMIT = 1e-5


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def greedy_answer(model, tokens, steps):
    ids = list(tokens)
    out = []
    with torch.no_grad():
        for _ in range(steps):
            nxt = int(model(torch.tensor([ids]))[0, -1].argmax())
            if nxt == task.EOS:
                break
            out.append(nxt)
            ids.append(nxt)
    return out


def main():
    infini, model_path, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    torch.set_num_threads(2)
    if model_path == "random":
        torch.manual_seed(5)
        random_model = InfiniLlama(Config(vocab=len(task.VOCAB), embd=64, layers=2, heads=4, kv_heads=2, ffn=96,
                                          segment=128))
        for p in random_model.parameters():
            torch.nn.init.normal_(p, std=0.3 if p.dim() == 2 else 1.0)
        model_path = os.path.join(work, "random.gguf")
        model_gguf.export(random_model, model_path, "random check model")
    model = model_gguf.load(model_path, torch.float64)
    segment = model.cfg.segment

    # 1. Inputs: C++ and Python build the same tokens.
    # At least 3.5 segments and room for filler around the key (short segments need more of them).
    whole = max(3, (2 + task.fixed_chars() + 64) // segment + 1)
    length = whole * segment + segment // 2 + 17
    dump = os.path.join(work, "inputs.jsonl")
    subprocess.run([infini, "passkey", "-m", model_path, "--length", str(length), "--depths", "start,0.5,end",
                    "--trials", "2", "--json", "--quiet", "--dump-inputs", dump], check=True, stdout=subprocess.DEVNULL)
    trials = [json.loads(line) for line in open(dump)]
    if len(trials) != 6:
        fail(f"expected 6 dumped trials, got {len(trials)}")
    for t in trials:
        expected = task.encode(task.passkey_text(task.filler_for_length(t["length"]), t["depth"], t["key"]))
        if t["tokens"] != expected:
            fail(f"infini's input for key {t['key']} depth {t['depth']} differs from passkey_task.py's")
        if len(expected) != length:
            fail(f"input is {len(expected)} tokens, asked for {length}")
        if t["key_token"] != first_digit(expected):
            fail(f"infini puts key {t['key']} at token {t['key_token']}, passkey_task.py at {first_digit(expected)}")
    print(f"inputs: {len(trials)} trials of {length} tokens identical in C++ and Python")

    # 2. Logits of every position, memory on, several segments.
    tokens = trials[2]["tokens"]
    tokens_file = os.path.join(work, "tokens.txt")
    logits_file = os.path.join(work, "logits.npy")
    open(tokens_file, "w").write(",".join(map(str, tokens)))
    subprocess.run([infini, "eval", "-m", model_path, "--tokens-file", tokens_file, "--all-logits", "--logits",
                    logits_file], check=True)
    ours = np.load(logits_file).astype(np.float64)
    with torch.no_grad():
        ref = model(torch.tensor([tokens]))[0].numpy()
    if ours.shape != ref.shape:
        fail(f"logits shape {ours.shape}, expected {ref.shape}")
    nmse = float(((ours - ref) ** 2).sum() / (ref ** 2).sum())
    print(f"logits: {len(tokens)} positions ({(len(tokens) + segment - 1) // segment} segments), nmse {nmse:.3e}")
    if not nmse <= NMSE_LIMIT:
        fail(f"nmse {nmse:.3e} above {NMSE_LIMIT}")

    # 3. Greedy answers.
    for t in trials:
        ref_answer = greedy_answer(model, t["tokens"], max(1, len(t["answer_tokens"])))
        if ref_answer[:len(t["answer_tokens"])] != t["answer_tokens"]:
            fail(f"key {t['key']}: infini answered tokens {t['answer_tokens']}, PyTorch {ref_answer}")
    print(f"answers: {len(trials)} greedy answers identical")
    print("ok")


if __name__ == "__main__":
    main()
