#!/usr/bin/env python3
"""The model-file commands end to end: `infini make-model --tokenizer gpt2` for every
pre-tokenizer and `infini tokenize` on it (ids that decode back into the text, BOS as the
file asks, special tokens only with --special), a K-quant scheme made directly and by `infini
quantize`, `infini run --chat` with the template recognised from the file, and bad input to each
as a one-line error. A few seconds.

Usage: model_files_cli.py PATH_TO_INFINI
"""
import json
import os
import subprocess
import sys
import tempfile

from cli_checks import check, finish, is_one_line_error, run as run_infini

INFINI = sys.argv[1]


def run(args):
    return run_infini(INFINI, args)


TEXT = "Hello world! Don't stop: 12345 tokens,\n\tCafé 日本語 🙂 <|im_end|>"

with tempfile.TemporaryDirectory() as tmp:
    text_file = os.path.join(tmp, "text.txt")
    with open(text_file, "w", encoding="utf-8") as f:
        f.write(TEXT)
    shape = ["--vocab", "600", "--embd", "64", "--layers", "1", "--heads", "2", "--kv-heads", "1", "--ffn", "64"]
    for pre in ["llama-bpe", "qwen2", "gpt-2", "default"]:
        model = os.path.join(tmp, f"{pre}.gguf")
        r = run(["make-model", "--out", model, "--tokenizer", "gpt2", "--pre", pre] + shape)
        if not check(r.returncode == 0, f"make-model gpt2 {pre}: {r.stderr.strip()}"):
            continue
        r = run(["tokenize", "-m", model, "-f", text_file, "--json"])
        if not check(r.returncode == 0, f"tokenize {pre}: {r.stderr.strip()}"):
            continue
        out = json.loads(r.stdout)
        check(out["tokenizer"] == "gpt2" and out["count"] == len(out["ids"]), f"{pre}: json fields {out}")
        # The ids decode to the text (llama-bpe's BOS, a control token, decodes to nothing).
        check(out["text"] == TEXT, f"{pre}: decodes to {out['text']!r}")
        check(len(out["pieces"]) == len(out["ids"]), f"{pre}: a piece per id")
        plain = run(["tokenize", "-m", model, "--text", TEXT]).stdout.split()
        check(plain == [str(i) for i in out["ids"]], f"{pre}: plain ids {plain} differ from json {out['ids']}")
        special = json.loads(run(["tokenize", "-m", model, "-f", text_file, "--json", "--special", "--no-bos"]).stdout)
        check(len(special["ids"]) < len(out["ids"]) - (1 if pre == "llama-bpe" else 0),
              f"{pre}: --special should read <|im_end|> as one token")
        check(special["text"] == TEXT.replace("<|im_end|>", ""), f"{pre}: control tokens decode to nothing")
        check(len(json.loads(run(["tokenize", "-m", model, "--text", "x", "--json"]).stdout)["ids"]) ==
              (2 if pre == "llama-bpe" else 1), f"{pre}: BOS only where the pre-tokenizer asks for it")

    # K-quant schemes: made directly and quantized from f32, the same file; rows of 256 values.
    k_shape = ["--vocab", "300", "--embd", "256", "--layers", "2", "--heads", "4", "--kv-heads", "2", "--ffn", "512"]
    direct, f32, quantized = (os.path.join(tmp, n) for n in ("direct.gguf", "f32.gguf", "quantized.gguf"))
    r = run(["make-model", "--out", direct, "--dtype", "q4_k_m"] + k_shape)
    check(r.returncode == 0 and "q4_k_m" in r.stdout, f"make-model q4_k_m: {r.stdout} {r.stderr}")
    run(["make-model", "--out", f32] + k_shape)
    r = run(["quantize", f32, quantized, "--type", "q4_k_m"])
    check(r.returncode == 0 and "quantized as q4_k_m" in r.stdout, f"quantize q4_k_m: {r.stdout} {r.stderr}")
    with open(direct, "rb") as a, open(quantized, "rb") as b:
        check(a.read() == b.read(), "make-model --dtype q4_k_m and quantize --type q4_k_m differ")

    # Chat: the template recognised from the file's tokenizer.chat_template gives the same replies as
    # naming it; one reply line per message.
    chat_model = os.path.join(tmp, "chat.gguf")
    template = "{% for m in messages %}<|im_start|>{{ m.role }}\\n{{ m.content }}<|im_end|>\\n{% endfor %}"
    r = run(["make-model", "--out", chat_model, "--tokenizer", "gpt2", "--pre", "qwen2", "--chat-template", template]
            + shape)
    check(r.returncode == 0, f"make-model --chat-template: {r.stderr.strip()}")
    dialogue = b"Hello there\nAnd now?\n"

    def chat_run(args):  # a random model's replies are any bytes, not UTF-8 text
        r = subprocess.run([INFINI] + args, input=dialogue, capture_output=True)
        return r.returncode, r.stdout, r.stderr.decode(errors="replace")

    chat = ["run", "-m", chat_model, "--chat", "--system", "Be terse.", "-n", "6", "--temp", "0"]
    code, detected, err = chat_run(chat)
    check(code == 0 and "chat template chatml" in err, f"chat: {err.strip()}")
    named = chat_run(chat + ["--chat-template", "chatml"])[1]
    check(detected == named and detected.count(b"\n") == 2, f"chat replies: {detected!r} vs {named!r}")
    for args, phrase in ((["run", "-m", direct, "--chat"], "no tokenizer.chat_template"),
                         (chat + ["--chat-template", "vicuna"], "is not one of chatml")):
        code, _, err = chat_run(args)
        check(code != 0 and len(err.strip().splitlines()) == 1 and phrase in err, f"chat error: {code} {err!r}")

    # Greedy generation decoding chains of tokens on the device prints what token by token does
    # (the same bytes, whatever they are for a random model).
    greedy = [INFINI, "run", "-m", direct, "-p", "Once upon a time", "-n", "20", "--temp", "0", "--quiet"]
    by_token = subprocess.run(greedy + ["--greedy-chain", "1"], capture_output=True)
    chained = subprocess.run(greedy + ["--decode-chain", "8"], capture_output=True)
    check(by_token.returncode == 0 and chained.returncode == 0 and by_token.stdout == chained.stdout
          and len(by_token.stdout) > 0, f"run --greedy-chain: {by_token.stdout!r} vs {chained.stdout!r} {chained.stderr!r}")

    # Sampled generation too: the device draws what the host draws (and --greedy-chain is the
    # option's old name).
    sampled = [INFINI, "run", "-m", direct, "-p", "Once upon a time", "-n", "24", "--temp", "1.2", "--top-k", "20",
               "--seed", "7", "--quiet"]
    by_token = subprocess.run(sampled + ["--decode-chain", "1"], capture_output=True)
    chained = subprocess.run(sampled + ["--greedy-chain", "8"], capture_output=True)
    check(by_token.returncode == 0 and chained.returncode == 0 and by_token.stdout == chained.stdout
          and len(by_token.stdout) > 0, f"run sampled --decode-chain: {by_token.stdout!r} vs {chained.stdout!r} {chained.stderr!r}")
    # With top-k off and top-p 1 the device draws from whole rows.
    whole = [INFINI, "run", "-m", direct, "-p", "Once upon a time", "-n", "24", "--temp", "1", "--top-k", "0",
             "--top-p", "1", "--seed", "7", "--quiet"]
    by_token = subprocess.run(whole + ["--decode-chain", "1"], capture_output=True)
    chained = subprocess.run(whole + ["--decode-chain", "8"], capture_output=True)
    check(by_token.returncode == 0 and chained.returncode == 0 and by_token.stdout == chained.stdout
          and len(by_token.stdout) > 0, f"run whole rows --decode-chain: {by_token.stdout!r} vs {chained.stdout!r} {chained.stderr!r}")

    # Bad input: one line on stderr and a non-zero exit.
    missing = os.path.join(tmp, "missing.gguf")
    for args in (["tokenize", "-m", missing, "--text", "x"],
                 ["tokenize", "-m", direct, "--text", "x", "-f", text_file],
                 ["tokenize", "-m", direct, "-f", missing],
                 ["quantize", missing, quantized, "--type", "q4_k_m"],
                 ["quantize", f32, quantized, "--type", "q3_k"],
                 ["make-model", "--out", quantized, "--tokenizer", "gpt2", "--vocab", "100"],
                 ["make-model", "--out", quantized, "--tokenizer", "wordpiece"],
                 ["run", "-m", direct, "-p", "x", "--decode-chain", "17"]):
        r = run(args)
        check(is_one_line_error(r), f"{' '.join(args[:3])}: expected a one-line error, got {r.returncode} {r.stderr!r}")

finish("model files cli")
