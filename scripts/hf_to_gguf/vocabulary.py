"""The vocabulary keys (tokenizer.ggml.*): from tokenizer.json (byte-level BPE), tokenizer.model
(SentencePiece, its protobuf read here so that no sentencepiece package is needed) or placeholders."""
import json
import os
import struct

from .errors import fail, say
from .model_config import read_json

TYPE_NORMAL, TYPE_UNKNOWN, TYPE_CONTROL, TYPE_USER, TYPE_UNUSED, TYPE_BYTE = 1, 2, 3, 4, 5, 6


def read_varint(b, i):
    v, shift = 0, 0
    while True:
        if i >= len(b) or shift > 63:
            raise ValueError("truncated varint")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, i
        shift += 7


def protobuf_fields(b):
    """(field number, wire type, value) of one protobuf message; value is an int, or bytes."""
    i = 0
    while i < len(b):
        tag, i = read_varint(b, i)
        field, wire = tag >> 3, tag & 7
        if wire == 0:
            v, i = read_varint(b, i)
        elif wire == 1:
            if i + 8 > len(b):
                raise ValueError("truncated fixed64")
            v, i = b[i:i + 8], i + 8
        elif wire == 2:
            n, i = read_varint(b, i)
            if i + n > len(b):
                raise ValueError("truncated length-delimited field")
            v, i = b[i:i + n], i + n
        elif wire == 5:
            if i + 4 > len(b):
                raise ValueError("truncated fixed32")
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire}")
        yield field, wire, v


def sentencepiece_vocab(path):
    """tokens, scores, types, {unk,bos,eos,pad ids} from a SentencePiece ModelProto: pieces (field 1:
    piece 1, score 2, type 3) and trainer_spec (field 2: unk_id 40, bos_id 41, eos_id 42, pad_id 43)."""
    with open(path, "rb") as f:
        data = f.read()
    tokens, scores, types, ids = [], [], [], {}
    try:
        for field, wire, v in protobuf_fields(data):
            if field == 1 and wire == 2:
                piece, score, kind = None, 0.0, TYPE_NORMAL
                for f2, w2, v2 in protobuf_fields(v):
                    if f2 == 1 and w2 == 2:
                        piece = v2.decode("utf-8")
                    elif f2 == 2 and w2 == 5:
                        (score,) = struct.unpack("<f", v2)
                    elif f2 == 3 and w2 == 0:
                        kind = v2
                if piece is None:
                    raise ValueError(f"piece {len(tokens)} has no text")
                tokens.append(piece)
                scores.append(score)
                types.append(kind if 1 <= kind <= 6 else TYPE_NORMAL)
            elif field == 2 and wire == 2:
                for f2, w2, v2 in protobuf_fields(v):
                    if w2 == 0 and f2 in (40, 41, 42, 43):
                        ids[{40: "unk", 41: "bos", 42: "eos", 43: "pad"}[f2]] = v2 if v2 < 1 << 31 else v2 - (1 << 64)
    except (ValueError, UnicodeDecodeError) as e:
        fail(f"tokenizer.model: not a SentencePiece model ({e})")
    if not tokens:
        fail("tokenizer.model: no pieces")
    return tokens, scores, types, ids


def bpe_pre(tok):
    """tokenizer.ggml.pre for a byte-level BPE tokenizer.json, from its pre-tokenizer's split
    expression (llama.cpp hashes the tokenizer's output instead; infini knows these four)."""
    text = json.dumps(tok.get("pre_tokenizer"))
    if "\\\\p{N}{1,3}" in text:
        return "llama-bpe"
    if "\\\\p{N}|" in text or "\\\\p{N}\"" in text:
        return "qwen2"
    if '"ByteLevel"' in text and '"use_regex": true' in text.replace("True", "true"):
        return "gpt-2"
    return "default"


def bpe_vocab(tj):
    """tokens, types and merges of a byte-level BPE tokenizer.json."""
    vocab = tj["model"].get("vocab")
    added = tj.get("added_tokens") or []
    if not isinstance(vocab, dict) or not isinstance(added, list):
        fail("tokenizer.json: model.vocab is not an object, or added_tokens not a list")
    ids = {}
    for t, i in vocab.items():
        ids.setdefault(i, t)
    special = {}
    for a in added:
        if not isinstance(a, dict) or not isinstance(a.get("content"), str):
            fail("tokenizer.json: an added token is not {id, content, ...}")
        ids[a.get("id")] = a["content"]
        special[a.get("id")] = bool(a.get("special"))
    if not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < 1 << 31 for i in ids):
        fail("tokenizer.json: a token id is not an integer 0 to 2^31 - 1")
    n = max(ids) + 1 if ids else 0
    tokens = [f"[PAD{i}]" for i in range(n)]
    types = [TYPE_UNUSED] * n
    for i, t in ids.items():
        tokens[i] = t
        types[i] = (TYPE_CONTROL if special[i] else TYPE_USER) if i in special else TYPE_NORMAL
    merges = []
    for mg in tj["model"].get("merges") or []:
        if isinstance(mg, list) and len(mg) == 2 and all(isinstance(x, str) for x in mg):
            mg = " ".join(mg)
        if not isinstance(mg, str):
            fail(f"tokenizer.json: merge {len(merges)} is not 'left right' or [left, right]")
        merges.append(mg)
    return tokens, types, merges


def vocabulary(folder, m, cfg, w):
    tok_cfg = read_json(os.path.join(folder, "tokenizer_config.json"), False) or {}
    tj = os.path.join(folder, "tokenizer.json")
    sp = os.path.join(folder, "tokenizer.model")
    bos = cfg.get("bos_token_id")
    eos = cfg.get("eos_token_id")
    if isinstance(eos, list):
        eos = eos[0] if eos else None
    unk = pad = None
    merges = None
    tj_data = read_json(tj, False) if os.path.isfile(tj) else None
    bpe = tj_data is not None and isinstance(tj_data.get("model"), dict) and tj_data["model"].get("type") == "BPE"
    byte_level = bpe and '"ByteLevel"' in json.dumps([tj_data.get("pre_tokenizer"), tj_data.get("decoder")])
    if os.path.isfile(sp) and not byte_level:
        tokens, scores, types, ids = sentencepiece_vocab(sp)
        model, source = "llama", "tokenizer.model (SentencePiece)"
        unk = ids.get("unk")
        bos = bos if bos is not None else ids.get("bos")
        eos = eos if eos is not None else ids.get("eos")
        pad = ids.get("pad")
    elif bpe and byte_level:
        tokens, types, merges = bpe_vocab(tj_data)
        scores = None
        model, source = "gpt2", "tokenizer.json (byte-level BPE)"
        w.string("tokenizer.ggml.pre", bpe_pre(tj_data))
        say(f"tokenizer.ggml.pre: {bpe_pre(tj_data)} (from tokenizer.json's pre-tokenizer)")
        for key in ("bos_token", "eos_token"):
            v = tok_cfg.get(key)
            v = v.get("content") if isinstance(v, dict) else v
            if isinstance(v, str) and v in tokens and (bos if key == "bos_token" else eos) is None:
                if key == "bos_token":
                    bos = tokens.index(v)
                else:
                    eos = tokens.index(v)
    else:
        if bpe:
            fail("tokenizer.json: a BPE model that is not byte-level (and no tokenizer.model): not converted")
        tokens = [f"<tok_{i}>" for i in range(m.vocab)]
        scores = [0.0] * m.vocab
        types = [TYPE_NORMAL] * m.vocab
        model, source = "llama", None
        why = ("no tokenizer.json or tokenizer.model" if tj_data is None else
               f"tokenizer.json's model is {json.dumps((tj_data.get('model') or {}).get('type'))[:30]}, not BPE,"
               " and there is no tokenizer.model")
        say(f"{why}: {m.vocab} placeholder tokens <tok_0>..<tok_{m.vocab - 1}>;"
            " the file runs on token ids only (infini eval --tokens)")
    if len(tokens) > m.vocab:
        fail(f"the tokenizer has {len(tokens)} tokens but the embedding has {m.vocab} rows")
    if len(tokens) < m.vocab:  # as llama.cpp: the extra embedding rows get unused placeholder tokens
        extra = m.vocab - len(tokens)
        tokens = tokens + [f"[PAD{i}]" for i in range(len(tokens), m.vocab)]
        types = types + [TYPE_UNUSED] * extra
        if scores is not None:
            scores = scores + [-1000.0] * extra
    if source:
        say(f"vocabulary: {source}, {len(tokens)} tokens")
    w.string("tokenizer.ggml.model", model)
    w.strings("tokenizer.ggml.tokens", tokens)
    if scores is not None:
        w.f32s("tokenizer.ggml.scores", scores)
    w.i32s("tokenizer.ggml.token_type", types)
    if merges is not None:
        w.strings("tokenizer.ggml.merges", merges)
    for key, v in (("bos", bos), ("eos", eos), ("unknown", unk), ("padding", pad)):
        if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < len(tokens):
            w.u32(f"tokenizer.ggml.{key}_token_id", v)
    for key in ("add_bos_token", "add_eos_token"):
        if isinstance(tok_cfg.get(key), bool):
            w.boolean(f"tokenizer.ggml.{key}", tok_cfg[key])
    if isinstance(tok_cfg.get("chat_template"), str):
        w.string("tokenizer.chat_template", tok_cfg["chat_template"])
