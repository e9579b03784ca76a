#!/usr/bin/python3
"""Trains the passkey demo model (a small Llama with Infini-attention) on the CPU and exports GGUF.

The model is infini_llama.py (the PyTorch counterpart of the runtime's layer: same math, same GGUF
tensors), the task is passkey_task.py (the text `infini passkey` builds). Every training example
is one fresh stream: the intro, filler text with a 5-digit key line at a random depth, and the
question. The loss weighs the answer and the key's second copy inside the key line (weight 1 and
0.999); every other next-character prediction counts at weight 0.01. Gradients flow through every
segment of the stream, so the model learns what to write into the compressive memory and when to
read it back.

Reproducing samples/passkey/passkey.gguf: these commands, in this order, make the shipped file.

    /usr/bin/python3 samples/passkey/train_passkey.py --out /tmp/passkey-base.gguf
    /usr/bin/python3 samples/passkey/train_passkey.py --init /tmp/passkey-base.gguf --seed 3 --out /tmp/passkey-2l.gguf
    /usr/bin/python3 samples/passkey/train_passkey.py --init /tmp/passkey-2l.gguf --add-layers 1 --seed 5 \
        --out /tmp/passkey-3l.gguf
    /usr/bin/python3 samples/passkey/train_passkey.py --init /tmp/passkey-3l.gguf --stages split --seed 7 \
        --out /tmp/passkey-split.gguf
    /usr/bin/python3 samples/passkey/train_passkey.py --init /tmp/passkey-split.gguf --segment 256 \
        --stages long-segment --seed 11 --out /tmp/passkey-long.gguf
    /usr/bin/python3 samples/passkey/train_passkey.py --init /tmp/passkey-long.gguf --add-heads 2 \
        --stages wide --seed 21 --out /tmp/passkey-wide.gguf
    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 samples/passkey/train_passkey.py --init /tmp/passkey-wide.gguf \
        --segment 384 --stages segment-384 --seed 33 --out /tmp/passkey-384.gguf
    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 samples/passkey/train_passkey.py --init /tmp/passkey-384.gguf \
        --stages segment-384-local --seed 43 --out samples/passkey/passkey.gguf

A candidate that also answers named keys (`infini passkey --keys K`) and other filler (`--filler
rivers`), fine-tuned from the shipped file with the named-keys recipe (issue 61; not shipped):

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 /usr/bin/python3 samples/passkey/train_passkey.py \
        --init samples/passkey/passkey.gguf --stages named-keys --seed 61 --time-budget 3000 \
        --out /tmp/passkey-named.gguf

They run the recipes base, fine-tune, grow, split, long-segment, wide, segment-384 and
segment-384-local (the second and third pick theirs by default, see --stages). Install
libopenblas0-pthread first: without it Debian's torch uses the reference BLAS, which is about 12x
slower. With --threads 1 (the default) set OPENBLAS_NUM_THREADS=1 as well, or OpenBLAS keeps a
thread of its own busy on another core. Training is seeded: the same --seed and --threads give the
same weights, also when a run is resumed from --checkpoint (outside the copy drill, whose generator
starts afresh). Torch's reductions depend on the thread count and on the torch and BLAS build, so
another setup reproduces the file up to float rounding.

Options
    --out FILE        the GGUF file to write (required)
    --init GGUF       start from this file's weights and shape, with a fresh optimizer
    --add-layers N    with --init: N new layers on top whose output projections (wo, w_down) start
                      at zero, so the grown model computes exactly what the loaded one does
    --add-heads N     with --init: N new heads in every layer, each with a KV head and memory of its
                      own, their columns of wo at zero (needs as many KV heads as heads); n_embd
                      stays, so the exported file carries llama.attention.key_length
    --segment N       segment length (default 64, or the --init file's)
    --stages R        a recipe name (below) or a stage list; default base, fine-tune with --init,
                      grow with --add-layers
    --seed N          seeds the streams, the initialisation and the copy drill (default 1)
    --threads N       torch threads (default 1)
    --lr X            learning rate of stages without lr= (default 3e-3)
    --embd, --layers, --heads, --ffn   shape of a fresh model (128, 2, 4, 256); --init overrides
    --checkpoint FILE model, optimizer and step saved every 100 steps; a run resumes from it
    --export-only     write --out from --checkpoint as it is, without training
    --time-budget S   stop after S seconds of training and write --out: each stage gets a share of S
                      in proportion to its steps and ends at its steps or when its share is spent
                      (whichever first), so the falling learning rates of a recipe all run; the
                      weights then depend on the machine's speed

Every 50 steps the script prints the loss, the share of whole answers right per stream kind
("memory": the key lies in a segment before the answer's; "edge": moreover the answer starts a
segment; "local": the key is in local sight; "copy" for the drill; with named, rivers or mixed
also "single" and "named" (one unnamed key, several named) and "grass", "rivers", "mixed" (the
filler)) and each layer's mean gate sigmoid(beta).

Stage lists: comma-separated items `steps:segments:batch[:flag...]`, where segments is N or LO-HI
(drawn per step) and 0 means the copy drill (random characters with one span repeated; the loss is
on the repeat, which bootstraps content-based copying). Flags:
    nointro       streams without the intro, so the memory holds little besides the key
    lr=X          this stage's learning rate
    clip=X        gradient-norm clipping at X
    dil=X         memory dilution: in the memory write each filler token counts w times, w drawn
                  log-uniformly from [1, X] per stream, so a stream of a few segments fills M and z
                  like one up to X times longer (the key line keeps weight 1)
    fillonly      with dil: only the filler is diluted; the intro, question and answer keep weight
                  1, so the question is as faint in the memory as after a very long input
    anyend        the prompt ends anywhere in its segment (else in its second half)
    boundary[=S]  a share S (0.5 when bare) of the streams end the prompt in the last 6 tokens of a
                  segment or exactly at its end, so the answer starts with little question in sight
    exact=S       of those, a share S end exactly at a segment's end, as every input whose length
                  is a multiple of the segment length does
    split=S       a share S of the streams put the key's first digit in the last `zone` tokens of
                  its segment, so a boundary cuts the key line right after the key
    zone=N        the split zone (default SPLIT_ZONE, 20)
    drop=S        with dil: a share S of the streams write one part of the key line with weight 0
    dropfirst=S   with dil: a share S write nothing of the key line before its second copy
    named=S       a share S of the streams hide 2 to `maxkeys` named keys (passkey_task.KEY_NAMES:
                  "The blue pass key is ...") at different depths (one in each of as many equal
                  slices of the filler, in random order) and ask for one of them, drawn per stream
                  ("What is the blue pass key? The blue pass key is"); the answer is that key. Half
                  of them use the first K names (what `infini passkey --keys K` asks), half K names
                  drawn from all eight. Every key's second copy is weighed like the single key's,
                  every key line keeps write weight 1 under dil, and split places the asked key
    maxkeys=N     most named keys in a stream (default 4, at most 8)
    rivers=S      a share S of the streams cycle passkey_task.RIVERS_BLOCK (`--filler rivers`)
                  instead of the task's filler
    mixed=S       a share S of the streams are filler of sentences drawn at random from both
                  blocks, the key lines at the sentence start nearest their depth

Recipes (RECIPES below), each meant to start from the file the one before it writes:
    base          from scratch with 64-token segments: the copy drill; 2-3 segments without the
                  intro, the key line in the first and the question in the next (where reading the
                  key back through the memory is learned); 4-6, 8-16 and 8-24 segments with the intro,
                  gradient clipping, dilution growing to 4096 with anyend; then boundary streams at
                  alternating learning rates 1e-3 and 3e-4
    fine-tune     80% boundary streams, half of them ending exactly at a segment's end; then the
                  same with fillonly
    grow          with --add-layers 1: 4-8-segment streams, dilution up to 8192, batch 8, falling
                  learning rates
    split         half the streams split (the key line cut by a boundary)
    long-segment  with --segment 256: 2-4 segments a stream, 30% split, so a boundary cuts the key
                  line far more rarely; local attention learns distances up to 255
    wide          with --add-heads 2: long-segment's streams for the wider model
    segment-384   with --segment 384: 2-4 segments, 30% split with zone 32
    segment-384-local  the same streams with boundary=0.5: more prompts end inside a segment,
                  where the key may be in local sight of the question and must be copied from there
    named-keys    (from the shipped file, not part of it) segment-384-local's streams, of which 55%
                  hide 2-4 named keys and ask for one, 45% the single unnamed key; 40% of all on the
                  task's filler, 35% on the rivers filler, 25% on sentences of both shuffled; 15%
                  split; falling learning rates 2e-4, 1e-4, 3e-5

Accuracy depends most on where a segment boundary cuts the key line: a model writes the key into
the memory mostly from ". Remember it. ", whose tokens see the whole first copy, and tokens after
a boundary that cuts the key write only part of it. samples/passkey/accuracy_by_segments.py
measures a model per stream length and key placement in PyTorch; `infini passkey -m FILE` measures
it through the runtime.
"""
import argparse
import copy
import math
import os
import sys
import time
from typing import NamedTuple, Optional

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import passkey_task as task  # noqa: E402
from infini_llama import Config, InfiniLlama  # noqa: E402
import model_gguf  # noqa: E402

# steps:segments:batch[:flags] (see parse_stages); segments 0 is the copy drill (copy_batch).
STAGES = ",".join([
    "300:0:32", "3000:2:16:nointro", "700:2-3:16:nointro", "700:4-6:8",
    "800:4-6:8:clip=1", "1200:8-16:4:clip=1", "600:8-16:4:clip=1:dil=16",
    "800:8-16:4:clip=1:dil=256:anyend", "1400:8-24:2:clip=1:dil=4096:anyend",
    "1500:8-24:4:clip=1:dil=4096:anyend:lr=1e-3",
    "1500:8-24:4:clip=1:dil=4096:anyend:boundary:lr=1e-3", "1000:8-24:4:clip=1:dil=4096:anyend:boundary:lr=3e-4",
    "2500:8-24:4:clip=1:dil=4096:anyend:boundary:lr=1e-3", "1500:8-24:4:clip=1:dil=4096:anyend:boundary:lr=3e-4",
])

# The fine-tune recipe (--init the file STAGES makes, --seed 3): prompts that end exactly at a
# segment's end (exact), then memory dilution of the filler only (fillonly), so the question is as
# faint in the memory as after a long input.
_EDGE = "8-24:4:clip=1:dil=4096:anyend:boundary=0.8:exact=0.5"
FINE_TUNE_STAGES = ",".join([
    f"2500:{_EDGE}:lr=5e-4", f"2000:{_EDGE}:lr=2e-4", f"3000:{_EDGE}:lr=1e-4",
    f"2000:{_EDGE}:fillonly:lr=3e-4", f"1500:{_EDGE}:fillonly:lr=1e-4",
])

# The grow recipe (--init the fine-tuned 2-layer file --add-layers 1 --seed 5): a third layer on
# top, started at zero output, trained with the rest on shorter streams (4-8 segments; dilution up
# to 8192 so they still fill the memory like a million tokens) and twice the batch, at falling
# learning rates.
_GROW = "4-8:8:clip=1:dil=8192:anyend:boundary=0.8:exact=0.5:fillonly"
GROW_STAGES = ",".join([f"3000:{_GROW}:lr=3e-4", f"3000:{_GROW}:lr=1e-4", f"3000:{_GROW}:lr=3e-5"])

# Then, from the grown file (--init it, --seed 7, --stages split): half the streams place the key
# where a segment boundary cuts its line right after the key (split), the placements models miss most.
_SPLIT = "6-10:8:clip=1:dil=8192:anyend:boundary=0.8:exact=0.5:fillonly:split=0.5"
SPLIT_STAGES = ",".join([f"1500:{_SPLIT}:lr=2e-4", f"1500:{_SPLIT}:lr=1e-4", f"1000:{_SPLIT}:lr=3e-5"])

# Then (--init the split file --segment 256 --seed 11 --stages long-segment): the same model with
# 256-token segments, so a boundary cuts the key line's first copy in 6% of inputs instead of 25%.
# Local attention must learn distances up to 255 (it saw at most 63); 30% split streams (split: 50%),
# 2-4 segments a stream (512-1024 tokens, about as many as split's 6-10 of 64).
_LONG = "2-4:8:clip=1:dil=8192:anyend:boundary=0.8:exact=0.5:fillonly:split=0.3"
LONG_SEGMENT_STAGES = ",".join([f"3000:{_LONG}:lr=3e-4", f"1500:{_LONG}:lr=1e-4", f"1000:{_LONG}:lr=3e-5"])

# Then (--init the long-segment file --add-heads 2 --seed 21 --stages wide): more heads in every
# layer, each with a memory of its own, trained on long-segment's streams at falling learning rates.
WIDE_STAGES = ",".join([f"1500:{_LONG}:lr=3e-4", f"1200:{_LONG}:lr=1e-4", f"800:{_LONG}:lr=3e-5"])

# Then (--init the wide file --segment 384 --seed 33 --stages segment-384): 384-token segments, so a
# boundary cuts a key line in fewer inputs still; the key's first digit in the last 32 tokens of its
# segment in the split streams.
_SEG384 = "2-4:8:clip=1:dil=8192:anyend:boundary=0.8:exact=0.5:fillonly:split=0.3:zone=32"
SEGMENT_384_STAGES = ",".join([f"900:{_SEG384}:lr=3e-4", f"500:{_SEG384}:lr=1e-4", f"300:{_SEG384}:lr=3e-5"])

# Last (--init that file --seed 43 --stages segment-384-local): more prompts that end inside a segment
# (boundary 0.5, not 0.8), where the key may be in local sight of the question and must be copied.
_SEG384_LOCAL = _SEG384.replace("boundary=0.8", "boundary=0.5")
SEGMENT_384_LOCAL_STAGES = ",".join([f"400:{_SEG384_LOCAL}:lr=2e-4", f"500:{_SEG384_LOCAL}:lr=1e-4",
                                     f"400:{_SEG384_LOCAL}:lr=3e-5"])

# A candidate beyond the shipped file (--init samples/passkey/passkey.gguf --seed 61 --stages named-keys):
# segment-384-local's streams, 55% of them with 2-4 named keys (one asked for), on three fillers.
_NAMED = _SEG384_LOCAL.replace("split=0.3", "split=0.15") + ":named=0.55:maxkeys=4:rivers=0.35:mixed=0.25"
NAMED_KEYS_STAGES = ",".join([f"1000:{_NAMED}:lr=2e-4", f"600:{_NAMED}:lr=1e-4", f"400:{_NAMED}:lr=3e-5"])

RECIPES = {"base": STAGES, "fine-tune": FINE_TUNE_STAGES, "grow": GROW_STAGES, "split": SPLIT_STAGES,
           "long-segment": LONG_SEGMENT_STAGES, "wide": WIDE_STAGES, "segment-384": SEGMENT_384_STAGES,
           "segment-384-local": SEGMENT_384_LOCAL_STAGES, "named-keys": NAMED_KEYS_STAGES}


SPLIT_ZONE = 20
DIGIT_IDS = frozenset(task.PIECE_ID[str(d)] for d in range(10))


def first_digit(ids):
    """Position of the key's first digit (the task's text has no other digits)."""
    return next(i for i, t in enumerate(ids) if t in DIGIT_IDS)


KEY_LINE_PARTS = ("prefix", "key1", "middle", "key2", "tail")


def key_line_parts(digits=5):
    """{name: [start, end)} of each part of the key line from its start, in KEY_LINE_PARTS order:
    "The pass key is ", the key, ". Remember it. ", the key, " is the pass key. "."""
    texts = task.KEY_LINE.split("{key}")
    assert len(texts) == 3, "KEY_LINE_PARTS names a line with two copies of the key"
    lengths = [len(texts[0]), digits, len(texts[1]), digits, len(texts[2])]
    starts = np.cumsum([0] + lengths[:-1])
    return {name: (int(a), int(a) + n) for name, a, n in zip(KEY_LINE_PARTS, starts, lengths)}


def copy_batch(gen, batch=32, T=96):
    """Random characters with one random span (8-32 tokens) repeated at once: the loss is on the
    repeat only. This bootstraps content-based copying (an induction head), which finding the key
    needs and which the passkey task alone teaches slowly."""
    alphabet = torch.tensor([task.PIECE_ID[c] for c in "abcdefghijklmnopqrstuvwxyz0123456789" + task.SPACE])
    x = alphabet[torch.randint(0, len(alphabet), (batch, T), generator=gen)]
    w = torch.zeros(batch, T)
    for b in range(batch):
        n = int(torch.randint(8, 33, (1,), generator=gen))
        s = int(torch.randint(0, T - 2 * n, (1,), generator=gen))
        x[b, s + n:s + 2 * n] = x[b, s:s + n]
        w[b, s + n:s + 2 * n - 1] = 0.999  # w[t] weighs predicting x[t + 1]
    return x, w


def filler_sentences():
    """The sentences (each with its trailing space) of both filler blocks."""
    out = []
    for block in task.FILLERS.values():
        starts = task.sentence_starts(block) + [len(block)]
        out += [block[a:b] for a, b in zip(starts, starts[1:])]
    return out


FILLER_SENTENCES = filler_sentences()


def mixed_filler_with_keys(rng, filler_chars, keys):
    """F characters of sentences drawn at random from both filler blocks (cut at F), with each key's
    line ((depth, key, name) tuples) at the sentence start nearest depth * F."""
    text, starts = "", [0]
    while len(text) < filler_chars:
        text += FILLER_SENTENCES[int(rng.integers(0, len(FILLER_SENTENCES)))]
        starts.append(len(text))
    text = text[:filler_chars]
    starts = [a for a in starts if a <= filler_chars]
    places = [min(starts, key=lambda a: abs(a - d * filler_chars)) for d, _, _ in keys]
    return task.insert_key_lines(text, places, keys)


def make_keyed_stream(rng, T, segment, anyend, boundary, exact, fill_only, split, zone, dilution, named, max_keys,
                      rivers, mixed):
    """One stream of make_batch's with named keys or another filler (see make_batch): ids, loss
    weights, kind and memory write weights (None at dilution 1)."""
    u = rng.random()
    filler = "rivers" if u < rivers else "mixed" if u < rivers + mixed else "grass"
    names = [""]
    if named and rng.random() < named:
        k = int(rng.integers(2, max_keys + 1))
        names = list(task.KEY_NAMES[:k]) if rng.random() < 0.5 else \
            [task.KEY_NAMES[i] for i in rng.permutation(len(task.KEY_NAMES))[:k]]
    keys = []
    while len(keys) < len(names):
        key = f"{rng.integers(0, 100000):05d}"
        if key not in keys:
            keys.append(key)
    asked = int(rng.integers(0, len(names)))
    slices = rng.permutation(len(names))
    depths = [(float(slices[j]) + float(rng.random())) / len(names) for j in range(len(names))]
    answer = task.encode_continuation(task.ANSWER.format(key=keys[asked]))
    hidden = [(d, k, n) for d, k, n in zip(depths, keys, names)]
    f_max = T - (2 + task.fixed_chars(keys=hidden, asked=asked)) - len(answer)
    f = int(rng.integers(max(0, f_max - (segment - 1 if anyend else segment // 2)), f_max + 1))
    if boundary and rng.random() < boundary:
        room = T - len(answer)
        o = segment if exact and rng.random() < exact else int(rng.integers(segment - 6, segment + 1))
        f = max(0, f_max - (room - ((room - o) // segment * segment + o)))
    mixed_seed = int(rng.integers(0, 2**31))

    def stream(depths):
        hidden = [(d, k, n) for d, k, n in zip(depths, keys, names)]
        body = (mixed_filler_with_keys(np.random.default_rng(mixed_seed), f, hidden) if filler == "mixed" else
                task.filler_with_keys(f, hidden, task.FILLERS[filler]))
        return task.encode(task.INTRO + " " + body + task.question(names[asked]))

    digits = [task.encode_continuation(k) for k in keys]

    def key_at(prompt, j):
        return [i for i in range(len(prompt) - 5) if prompt[i:i + 5] == digits[j]]

    prompt = stream(depths)
    if split and rng.random() < split:
        for _ in range(100):  # the asked key's first digit in the last `zone` tokens of its segment
            if key_at(prompt, asked)[0] % segment >= segment - zone:
                break
            depths[asked] = float(rng.random())
            prompt = stream(depths)
    ids = prompt + answer
    w = np.full(T, 0.01, dtype=np.float32)
    w[len(prompt) - 1:len(ids) - 1] = 1.0
    ww = None
    if dilution > 1:
        ww = np.full(T, math.exp(rng.uniform(0.0, math.log(dilution))), dtype=np.float32)
    for j in range(len(keys)):
        at = key_at(prompt, j)
        assert len(at) == 2, (keys, j, at)
        w[at[1] - 1:at[1] + 4] = 0.999
        if ww is not None:
            line_text = task.key_line(keys[j], names[j])
            line = at[0] - line_text.index(keys[j])
            ww[line:line + len(line_text)] = 1.0
    w[len(ids) - 1:] = 0.0
    if ww is not None and fill_only:
        ww[:2 + len(task.INTRO) + 1] = 1.0
        ww[len(prompt) - len(task.question(names[asked])):] = 1.0
    at = key_at(prompt, asked)
    if max(at) + 5 > (len(prompt) - 1) // segment * segment:
        kind = "local"
    else:
        kind = "edge" if len(prompt) % segment == 0 else "memory"
    return ids, w, f"{kind}|{'named' if len(keys) > 1 else 'single'}|{filler}", ww


def make_batch(rng, segments, batch, segment, intro=True, dilution=1.0, anyend=False, boundary=0.0, exact=0.0,
               fill_only=False, split=0.0, drop=0.0, drop_first=0.0, zone=SPLIT_ZONE, named=0.0, max_keys=4,
               rivers=0.0, mixed=0.0):
    """Passkey streams of exactly segments * segment tokens.

    Returns token ids [batch, T], loss weights [batch, T] (weight of predicting token t+1 at t) and
    a kind per stream: "memory" when every digit of the key lies in a segment before the one where
    the answer starts, so the key can only come back through the compressive memory, "edge" when
    moreover the answer starts a segment (the question is out of local sight too), else "local".
    Then the
    memory write weights [batch, T] (None at dilution 1): 1 on the key line, elsewhere a factor
    drawn log-uniformly from [1, dilution] per stream, so that the memory sees as much filler as a
    stream that many times longer (what a million-token input writes) at the cost of a short one.

    named, max_keys, rivers, mixed (with the intro; drop and drop_first do not apply): see the
    stage flags in the docstring; then a kind is "KIND|single" or "KIND|named" and "|grass",
    "|rivers" or "|mixed" (the filler)."""
    T = segments * segment
    rows, weights, kinds, write = [], [], [], []
    for _ in range(batch):
        if named or rivers or mixed:
            assert intro and not drop and not drop_first, "named, rivers and mixed streams have the intro, no drop"
            ids, w, kind, ww = make_keyed_stream(rng, T, segment, anyend, boundary, exact, fill_only, split, zone,
                                                 dilution, named, max_keys, rivers, mixed)
            kinds.append(kind)
            if ww is not None:
                write.append(ww)
            rows.append(ids + [task.EOS] * (T - len(ids)))
            weights.append(w)
            continue
        key = f"{rng.integers(0, 100000):05d}"
        answer = task.encode_continuation(task.ANSWER.format(key=key))
        f_max = T - (2 + task.fixed_chars()) - len(answer)
        if not intro:  # drills without the intro: fewer tokens in the memory besides the key
            f_max += len(task.INTRO) + 1
        # The question ends anywhere in its segment with anyend (also just before or at a boundary,
        # where the answer starts with no question in sight); else in the second half.
        f = int(rng.integers(max(0, f_max - (segment - 1 if anyend else segment // 2)), f_max + 1))
        if boundary and rng.random() < boundary:
            # This share of the streams: the answer crosses a segment boundary (the prompt ends in
            # the last 6 tokens of a segment or exactly at its end), so its later tokens see little
            # of the question locally.
            room = T - len(answer)
            # exact: this share of them ends the prompt right at the segment's end (what every
            # input length that is a multiple of the segment length does).
            o = segment if exact and rng.random() < exact else int(rng.integers(segment - 6, segment + 1))
            f = max(0, f_max - (room - ((room - o) // segment * segment + o)))
        def stream(depth):
            return task.encode(task.passkey_text(f, depth, key) if intro else
                               task.filler_with_key(f, depth, key) + task.QUESTION)
        prompt = stream(float(rng.random()))
        if split and rng.random() < split:
            # This share of the streams: the key's first digit lies in the last `zone` tokens
            # of its segment, so the key line is cut by a segment boundary right after the key.
            # With 64-token segments about a quarter of real inputs are placed so, and these are
            # the placements a model answers worst.
            for _ in range(100):
                if first_digit(prompt) % segment >= segment - zone:
                    break
                prompt = stream(float(rng.random()))
        ids = prompt + answer
        w = np.full(T, 0.01, dtype=np.float32)
        w[len(prompt) - 1:len(ids) - 1] = 1.0
        digits = task.encode_continuation(key)
        at = [i for i in range(len(prompt) - 5) if prompt[i:i + 5] == digits]
        # The key's second copy in the key line is predictable from the first: a dense signal
        # for the copying that answering needs.
        if len(at) >= 2:
            w[at[1] - 1:at[1] + 4] = 0.999
        w[len(ids) - 1:] = 0.0
        if max(at) + 5 > (len(prompt) - 1) // segment * segment:
            kinds.append("local")
        else:  # "edge": the answer starts a segment, with no question in local sight
            kinds.append("edge" if len(prompt) % segment == 0 else "memory")
        if dilution > 1:  # (no draw otherwise: this draw never shifts the streams of stages without it)
            line = at[0] - task.KEY_LINE.index("{key}")
            ww = np.full(T, math.exp(rng.uniform(0.0, math.log(dilution))), dtype=np.float32)
            ww[line:line + len(task.KEY_LINE.format(key=key))] = 1.0
            if fill_only:
                # Only the filler repeats in a long input: the intro, the question and the
                # answer keep weight 1, so the question is as faint in the memory as it is after
                # a million tokens (the cue that an answer is due when it starts a new segment).
                ww[:2 + len(task.INTRO) + 1 if intro else 2] = 1.0
                ww[len(prompt) - len(task.QUESTION):] = 1.0
            if drop and rng.random() < drop:
                # Write dropout: this share of the streams writes one part of the key line (drawn
                # from key_line_parts) with weight 0. A model tends to write the key mostly from
                # ". Remember it. ", whose tokens see the whole first copy; where a boundary cuts
                # that part, nothing else writes it. Dropping a part asks for redundant writes.
                parts = list(key_line_parts(len(key)).values())
                a, e = parts[int(rng.integers(0, len(parts)))]
                ww[line + a:line + e] = 0.0
            if drop_first and rng.random() < drop_first:
                # This share writes nothing of the key line before its second copy: the key must
                # then come from the second copy and the text after it, the only tokens that see a
                # whole key when a boundary cuts the first copy's digits.
                ww[line:line + key_line_parts(len(key))["key2"][0]] = 0.0
            write.append(ww)
        rows.append(ids + [task.EOS] * (T - len(ids)))
        weights.append(w)
    return (torch.tensor(rows), torch.from_numpy(np.stack(weights)), kinds,
            torch.from_numpy(np.stack(write)) if write else None)


def answer_scores(logits, tokens, weights):
    """Per stream: whole answer right (greedy), and the share of answer tokens right."""
    pred = logits[:, :-1].argmax(-1)
    target = tokens[:, 1:]
    answer = weights[:, :-1] >= 1.0  # the answer; the key line's copy has 0.999
    right = (pred == target) & answer
    whole = (right.sum(1) == answer.sum(1)).float()
    share = right.sum(1).float() / answer.sum(1).clamp(min=1)
    return whole, share


def initial_model(cfg, base=None, add_layers=0, segment=None, add_heads=0):
    """A fresh model of shape cfg (matrices drawn from N(0, 0.02)), or base's weights and shape with
    add_layers new layers on top and add_heads new heads in every layer, whose output projections
    (a new layer's wo and w_down, a new head's columns of wo) are zero: the grown model computes what
    base does until trained, and the new weights get gradients as soon as those projections move off
    zero. A new head has its own memory (a KV head of its own) and the base's head dim. segment
    (with base): a new segment length."""
    if base is not None:
        cfg = copy.copy(base.cfg)
        assert not add_heads or cfg.kv_heads == cfg.heads, "--add-heads needs as many KV heads as heads"
        cfg.layers += add_layers
        cfg.heads += add_heads
        cfg.kv_heads += add_heads
        cfg.segment = segment or cfg.segment
    model = InfiniLlama(cfg)
    for p in model.parameters():
        if p.dim() == 2:
            torch.nn.init.normal_(p, std=0.02)
    if base is not None:
        grown = dict(model.named_parameters())
        with torch.no_grad():
            for name, p in base.named_parameters():
                # The base's heads are the first rows of wq, wk, wv (columns of wo, entries of beta).
                grown[name][tuple(slice(0, n) for n in p.shape)] = p
        old = base.cfg.heads * cfg.head_dim
        for i, block in enumerate(model.blocks):
            torch.nn.init.zeros_(block.wo.weight[:, old:] if i < base.cfg.layers else block.wo.weight)
            if i >= base.cfg.layers:
                torch.nn.init.zeros_(block.w_down.weight)
    return model


class Stage(NamedTuple):
    steps: int
    lo: int  # segments per stream, drawn from lo..hi each step; 0: the copy drill
    hi: int
    batch: int
    intro: bool
    lr: Optional[float]  # None: --lr
    clip: float          # 0: no gradient clipping
    dilution: float
    anyend: bool
    boundary: float  # share of streams whose answer crosses a segment boundary
    exact: float     # share of those whose prompt ends exactly at a segment's end
    fill_only: bool  # dilute only the filler (not the intro, question and answer)
    split: float     # share of streams whose key line a segment boundary cuts right after the key
    drop: float      # share of streams that write one part of the key line with weight 0
    drop_first: float  # share of streams that write nothing of the key line before its second copy
    zone: int  # split streams: the key's first digit lies in the last `zone` tokens of its segment
    named: float = 0.0   # share of streams with 2..max_keys named keys, one asked for
    max_keys: int = 4
    rivers: float = 0.0  # share of streams on the rivers filler
    mixed: float = 0.0   # share of streams on sentences of both fillers shuffled


def parse_stages(text):
    """'steps:segments:batch[:nointro][:lr=X][:clip=X][:dil=X][:anyend][:boundary[=SHARE]][:exact=X][:fillonly][:split=X][:zone=N][:drop=X][:dropfirst=X],...'
    where segments is N or LO-HI; dil, anyend, boundary (a share, 0.5 when bare), exact, fillonly
    split, zone (default SPLIT_ZONE), drop and dropfirst (drop_first) are make_batch's arguments
    (drop and dropfirst need dil)."""
    stages = []
    for item in text.split(","):
        steps, segs, batch, *flags = item.split(":")
        opts = dict(f.split("=") for f in flags if "=" in f)
        lo, _, hi = segs.partition("-")
        stages.append(Stage(int(steps), int(lo), int(hi or lo), int(batch), "nointro" not in flags,
                            float(opts["lr"]) if "lr" in opts else None, float(opts.get("clip", 0)),
                            float(opts.get("dil", 1)), "anyend" in flags,
                            0.5 if "boundary" in flags else float(opts.get("boundary", 0)),
                            float(opts.get("exact", 0)), "fillonly" in flags, float(opts.get("split", 0)),
                            float(opts.get("drop", 0)), float(opts.get("dropfirst", 0)),
                            int(opts.get("zone", SPLIT_ZONE)), float(opts.get("named", 0)),
                            int(opts.get("maxkeys", 4)), float(opts.get("rivers", 0)), float(opts.get("mixed", 0))))
    return stages


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--embd", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=256)
    ap.add_argument("--segment", type=int, default=None, help="segment length (default 64, or the --init model's)")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--checkpoint", default="", help="save/resume training state here")
    ap.add_argument("--export-only", action="store_true", help="write --out from --checkpoint as it is")
    ap.add_argument("--time-budget", type=float, default=0,
                    help="seconds of training: each stage ends at its steps or its share of this, then --out is written")
    ap.add_argument("--init", default="", help="start from this GGUF's weights (fine-tuning; fresh optimizer)")
    ap.add_argument("--add-layers", type=int, default=0,
                    help="with --init: new layers on top whose output projections start at zero, so the "
                         "grown model starts out computing exactly what the loaded one does")
    ap.add_argument("--add-heads", type=int, default=0,
                    help="with --init: new heads in every layer (each with its own memory) whose columns of "
                         "the output projection start at zero")
    ap.add_argument("--stages", default=None,
                    help="steps:segments:batch,... (segments 0: copy drill) or a recipe's name (" + ", ".join(RECIPES) +
                         "); default base, fine-tune with --init, grow with --add-layers")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    cfg = Config(vocab=len(task.VOCAB), embd=args.embd, layers=args.layers, heads=args.heads,
                 kv_heads=args.heads, ffn=args.ffn, segment=args.segment or 64)
    model = initial_model(cfg, model_gguf.load(args.init, torch.float32) if args.init else None, args.add_layers,
                          args.segment, args.add_heads)
    cfg = model.cfg  # the loaded model's shape with --init
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    recipe = args.stages or ("grow" if args.add_layers else "fine-tune" if args.init else "base")
    stages = parse_stages(RECIPES.get(recipe, recipe))
    total = sum(s.steps for s in stages)
    step = 0
    if args.checkpoint and os.path.exists(args.checkpoint):
        state = torch.load(args.checkpoint)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step = state["step"]
        print(f"resumed at step {step}", flush=True)
    if args.export_only:
        model_gguf.export(model, args.out, "infini passkey demo")
        print(f"wrote {args.out} from step {step}", flush=True)
        return

    started = time.time()
    stats = {"memory": [], "edge": [], "local": [], "copy": []}
    stage_start = 0
    copy_gen = torch.Generator().manual_seed(args.seed)
    steps_so_far = 0
    for st in stages:
        steps_so_far += st.steps
        # --time-budget: this stage ends when the run has spent its share of the budget.
        stage_deadline = args.time_budget * steps_so_far / total if args.time_budget else math.inf
        for i in range(st.steps):
            if stage_start + i < step:
                continue
            if time.time() - started >= stage_deadline:
                print(f"stage ends at step {step} (time budget), {time.time() - started:.0f}s", flush=True)
                break
            for group in opt.param_groups:
                group["lr"] = st.lr or args.lr
            rng = np.random.default_rng([args.seed, step])
            if st.lo == 0:
                tokens, weights = copy_batch(copy_gen, st.batch)
                kinds, write = None, None
            else:
                tokens, weights, kinds, write = make_batch(
                    rng, int(rng.integers(st.lo, st.hi + 1)), st.batch, cfg.segment, st.intro, st.dilution,
                    st.anyend, st.boundary, st.exact, st.fill_only, st.split, st.drop, st.drop_first, st.zone,
                    st.named, st.max_keys, st.rivers, st.mixed)
            logits = model(tokens, write)
            ce = F.cross_entropy(logits[:, :-1].reshape(-1, cfg.vocab), tokens[:, 1:].reshape(-1), reduction="none")
            w = weights[:, :-1].reshape(-1)
            loss = (ce * w).sum() / w.sum()
            opt.zero_grad()
            loss.backward()
            if st.clip:
                torch.nn.utils.clip_grad_norm_(model.parameters(), st.clip)
            opt.step()
            step += 1
            with torch.no_grad():
                if kinds is None:
                    copy = weights[:, :-1] > 0.99
                    hit = (logits[:, :-1].argmax(-1) == tokens[:, 1:]) & copy
                    stats["copy"].append((hit.sum().item() / max(1, copy.sum().item()), 0.0))
                else:
                    whole, share = answer_scores(logits, tokens, weights)
                    for b in range(len(whole)):
                        for kind in kinds[b].split("|"):  # "edge", or "edge|named|rivers"
                            stats.setdefault(kind, []).append((whole[b].item(), share[b].item()))
            if step % 50 == 0:
                parts = [f"{k} {np.mean([a for a, _ in v]):.2f}/{np.mean([b for _, b in v]):.2f} (n={len(v)})"
                         for k, v in stats.items() if v]
                gates = " ".join(f"{torch.sigmoid(b.beta).mean().item():.2f}" for b in model.blocks)
                print(f"step {step}/{total} loss {loss.item():.4f} | {' | '.join(parts)} | gates {gates} | "
                      f"{time.time() - started:.0f}s", flush=True)
                stats = {k: [] for k in stats}
            if args.checkpoint and step % 100 == 0:
                torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, args.checkpoint)
        stage_start += st.steps
    model_gguf.export(model, args.out, "infini passkey demo")
    print(f"wrote {args.out} after {step} steps, {time.time() - started:.0f}s", flush=True)


if __name__ == "__main__":
    main()
