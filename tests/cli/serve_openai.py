#!/usr/bin/env python3
"""`infini serve` as OpenAI clients and a new user meet it (project issue 55, items 1-6), on
lavapipe with a tiny random model, speaking the OpenAI wire format from Python:

- a port another server holds is refused; a server that fails at start creates nothing; the
  default store is the user's data directory;
- fields: stream_options.include_usage, max_completion_tokens, logprobs/top_logprobs (against
  `infini eval`'s logits), echo, frequency/presence penalties (against a greedy loop over
  `infini eval`), n (choice i == one request with seed + i), and refusals that name the field;
- shapes: content parts, the developer role, GET /v1/models/{id}, batched prompts, error
  type/code strings, 405 with Allow, CORS preflights;
- --alias, /health without the model's path under a key, one log line per request,
  GET /v1/sessions, --session-ttl.

Usage: serve_openai.py PATH_TO_INFINI   (about 30 s)
"""
import math
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Replica, check, events, failures, free_port, request  # noqa: E402

INFINI = os.path.abspath(sys.argv[1])
KEY = "k-123"


def infini(*args, **kw):
    return subprocess.run([INFINI, *args], capture_output=True, text=True, **kw)


def read_npy(path):
    """A float32 .npy as (shape, flat list), standard library only."""
    data = open(path, "rb").read()
    header_len = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + header_len].decode()
    shape = tuple(int(x) for x in re.search(r"\(([^)]*)\)", header).group(1).split(",") if x.strip())
    values = struct.unpack("<%df" % (len(data[10 + header_len:]) // 4), data[10 + header_len:])
    return shape, values


def all_logits(model, tokens, tmp):
    """Rows of logits of every position of `tokens`, from `infini eval` (the reference)."""
    out = os.path.join(tmp, "ref.npy")
    r = infini("eval", "-m", model, "--tokens", ",".join(map(str, tokens)), "--logits", out, "--all-logits")
    if r.returncode:
        sys.exit("eval failed: " + r.stderr)
    shape, values = read_npy(out)
    return [values[i * shape[1]:(i + 1) * shape[1]] for i in range(shape[0])]


def greedy_run(model, prompt, count, tmp):
    tokens = list(prompt)
    for _ in range(count):
        row = all_logits(model, tokens, tmp)[-1]
        tokens.append(max(range(len(row)), key=lambda t: (row[t], -t)))
    return tokens[len(prompt):]


def log_softmax(row):
    best = max(row)
    z = best + math.log(sum(math.exp(x - best) for x in row))
    return [x - z for x in row]


def error_is(status, body, want_status, param=None, code=None):
    if status != want_status or not isinstance(body, dict) or "error" not in body:
        return False
    e = body["error"]
    return (isinstance(e.get("code"), str) and isinstance(e.get("type"), str)
            and (param is None or e.get("param") == param) and (code is None or e["code"] == code))


def startup(model, tmp):
    # 1. A port another server holds is refused, and the first goes on serving.
    port = free_port()
    a = Replica(INFINI, model, os.path.join(tmp, "s1"), port=port)
    try:
        r = infini("serve", "-m", model, "--port", str(port), "--store", os.path.join(tmp, "s2"), timeout=60)
        check(r.returncode != 0 and "address already in use" in r.stderr.lower() and len(r.stderr.strip().splitlines()) == 1,
              "a second server on a taken port is refused (%d, %r)" % (r.returncode, r.stderr[-200:]))
        check(not os.path.exists(os.path.join(tmp, "s2")), "... and creates no store")
        check(request(port, "GET", "/health")[0] == 200, "... and the first one still serves")
    finally:
        a.stop()

    # 2. A server that fails at start creates nothing; the default store is the user's data dir.
    scratch = os.path.join(tmp, "scratch")
    os.makedirs(scratch)
    env = dict(os.environ, XDG_DATA_HOME=os.path.join(scratch, "xdg"))
    r = subprocess.run([INFINI, "serve", "-m", tmp, "--port", "0"], capture_output=True, text=True, cwd=scratch,
                       env=env, timeout=60)
    check(r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1 and os.listdir(scratch) == [],
          "serve -m DIR fails with one line and creates nothing (%r, %s)" % (r.stderr, os.listdir(scratch)))
    b = Replica(INFINI, model, None, env={"XDG_DATA_HOME": os.path.join(scratch, "xdg")}, cwd=scratch)
    try:
        s, sess = request(b.port, "POST", "/v1/sessions")
        store = os.path.join(scratch, "xdg", "infini", "sessions")
        check(s == 201 and os.path.exists(os.path.join(store, sess["id"] + ".session"))
              and sorted(os.listdir(scratch)) == ["xdg"], "the default store is $XDG_DATA_HOME/infini/sessions")
        # An Infini model has no sliding context; its state's device size is stated, fixed.
        check(sess.get("context") == 0 and sess.get("sinks") == 0 and sess.get("device_state_bytes", 0) > 0,
              "a session object states context, sinks and device_state_bytes: %r" % sess)
    finally:
        b.stop()


def fields(model, rep, tmp):
    p = rep.port
    prompt_ids = [5, 17, 99, 3, 42, 7]

    # stream_options.include_usage: a last chunk with no choices and the usage.
    s, ev = events(p, "/v1/completions", {"prompt": prompt_ids, "max_tokens": 5, "temperature": 0,
                                           "stream_options": {"include_usage": True}}, key=KEY)
    last = ev[-1] if ev else {}
    check(s == 200 and last.get("choices") == [] and last.get("usage", {}).get("completion_tokens") == 5
          and last["usage"]["prompt_tokens"] == len(prompt_ids) and all(e.get("usage", 0) is None for e in ev[:-1]),
          "stream_options.include_usage: a usage chunk last")
    s, ev = events(p, "/v1/completions", {"prompt": prompt_ids, "max_tokens": 3}, key=KEY)
    check(s == 200 and all("usage" not in e for e in ev), "no usage chunk unless asked")

    # max_completion_tokens.
    msgs = [{"role": "user", "content": "hello"}]
    s, c = request(p, "POST", "/v1/chat/completions", {"messages": msgs, "max_completion_tokens": 5,
                                                       "temperature": 0}, key=KEY)
    check(s == 200 and c["usage"]["completion_tokens"] == 5, "max_completion_tokens bounds the reply")
    s, b = request(p, "POST", "/v1/chat/completions", {"messages": msgs, "max_completion_tokens": 5, "max_tokens": 6},
                   key=KEY)
    check(error_is(s, b, 400, "max_completion_tokens"), "max_tokens and max_completion_tokens disagreeing: 400")

    # logprobs on a session (token ids come back) against `infini eval` of the same tokens.
    sid = request(p, "POST", "/v1/sessions", key=KEY)[1]["id"]
    request(p, "POST", "/v1/sessions/%s/append" % sid, {"tokens": prompt_ids}, key=KEY)
    s, g = request(p, "POST", "/v1/sessions/%s/generate" % sid,
                   {"max_tokens": 4, "temperature": 0, "logprobs": True, "top_logprobs": 3}, key=KEY)
    rows = all_logits(model, prompt_ids + g.get("tokens", []), tmp)
    ok = s == 200 and len(g["logprobs"]["content"]) == 4
    worst = 0.0
    for i, entry in enumerate(g["logprobs"]["content"] if ok else []):
        ref = log_softmax(rows[len(prompt_ids) - 1 + i])
        order = sorted(range(len(ref)), key=lambda t: (-ref[t], t))
        worst = max(worst, abs(entry["logprob"] - ref[g["tokens"][i]]))
        worst = max([worst] + [abs(t["logprob"] - ref[order[j]]) for j, t in enumerate(entry["top_logprobs"])])
        ok = ok and len(entry["top_logprobs"]) == 3 and g["tokens"][i] == order[0]
        ok = ok and bytes(entry["bytes"]).decode("utf-8", "replace") == entry["token"]
    check(ok and worst < 2e-3, "logprobs and top_logprobs == log-softmax of eval's logits (worst %.2g)" % worst)
    s, c = request(p, "POST", "/v1/completions", {"prompt": prompt_ids, "max_tokens": 4, "temperature": 0,
                                                  "logprobs": 2}, key=KEY)
    lp = c["choices"][0]["logprobs"] if s == 200 else None
    check(lp is not None and len(lp["token_logprobs"]) == 4 and len(lp["top_logprobs"][0]) <= 2
          and all(abs(a - e["logprob"]) < 1e-6 for a, e in zip(lp["token_logprobs"], g["logprobs"]["content"]))
          and "".join(lp["tokens"]) == c["choices"][0]["text"] and lp["text_offset"][0] == 0,
          "completions' legacy logprobs agree with the session's")

    # echo.
    s, c = request(p, "POST", "/v1/completions", {"prompt": "Once upon", "max_tokens": 3, "temperature": 0,
                                                  "echo": True}, key=KEY)
    s2, c2 = request(p, "POST", "/v1/completions", {"prompt": "Once upon", "max_tokens": 3, "temperature": 0}, key=KEY)
    check(s == s2 == 200 and c["choices"][0]["text"] == "Once upon" + c2["choices"][0]["text"], "echo puts the prompt first")

    # Penalties: greedy decoding against a loop over eval's logits with OpenAI's formula.
    # Negative values favour repeats, so a random model's short greedy run changes with them.
    changed, plain_run = [], greedy_run(model, prompt_ids, 6, tmp)
    for freq, pres in ((-2.0, 0.0), (0.0, -2.0)):
        sid2 = request(p, "POST", "/v1/sessions", key=KEY)[1]["id"]
        request(p, "POST", "/v1/sessions/%s/append" % sid2, {"tokens": prompt_ids}, key=KEY)
        s, g = request(p, "POST", "/v1/sessions/%s/generate" % sid2,
                       {"max_tokens": 6, "temperature": 0, "frequency_penalty": freq, "presence_penalty": pres}, key=KEY)
        tokens, counts = list(prompt_ids), {}
        for _ in range(6):
            row = list(all_logits(model, tokens, tmp)[-1])
            for t, n in counts.items():
                row[t] -= freq * n + pres
            nxt = max(range(len(row)), key=lambda t: (row[t], -t))
            tokens.append(nxt)
            counts[nxt] = counts.get(nxt, 0) + 1
        changed.append(g.get("tokens") != plain_run)
        check(s == 200 and g["tokens"] == tokens[len(prompt_ids):],
              "frequency %.1f / presence %.1f penalty == the reference loop (%s vs %s)"
              % (freq, pres, g.get("tokens"), tokens[len(prompt_ids):]))

    check(all(changed), "... and the penalties changed the tokens (%s)" % changed)

    # n: choice i is the request with seed + i.
    body = {"prompt": "The stream", "max_tokens": 6, "temperature": 1.0, "seed": 40, "n": 3}
    s, c = request(p, "POST", "/v1/completions", body, key=KEY)
    singles = [request(p, "POST", "/v1/completions", dict(body, n=1, seed=40 + i), key=KEY)[1] for i in range(3)]
    check(s == 200 and [ch["index"] for ch in c["choices"]] == [0, 1, 2]
          and [ch["text"] for ch in c["choices"]] == [x["choices"][0]["text"] for x in singles]
          and c["usage"]["completion_tokens"] == sum(x["usage"]["completion_tokens"] for x in singles),
          "n=3: choice i == the request with seed + i")
    s, ev = events(p, "/v1/completions", body, key=KEY)
    streamed = ["".join(e["choices"][0]["text"] for e in ev if e["choices"][0]["index"] == i) for i in range(3)]
    check(s == 200 and streamed == [ch["text"] for ch in c["choices"]], "n=3 streamed adds up per index")

    # Fields infini cannot honour: 400 naming them, never ignored.
    for path, extra, param in (
            ("/v1/chat/completions", {"tools": [{"type": "function", "function": {"name": "f"}}]}, "tools"),
            ("/v1/chat/completions", {"response_format": {"type": "json_object"}}, "response_format"),
            ("/v1/chat/completions", {"logit_bias": {"5": 10}}, "logit_bias"),
            ("/v1/completions", {"suffix": "end"}, "suffix"),
            ("/v1/completions", {"best_of": 3}, "best_of"),
            ("/v1/completions", {"echo": True, "logprobs": 1}, "echo"),
            ("/v1/chat/completions", {"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, "messages")):
        b = dict({"messages": msgs} if "chat" in path else {"prompt": "x"}, max_tokens=2, **extra)
        s, e = request(p, "POST", path, b, key=KEY)
        check(error_is(s, e, 400, param, None if param == "echo" or param == "messages" else "unsupported_parameter"),
              "%s: %s refused with param %s" % (path, list(extra)[0], param))
    s, c = request(p, "POST", "/v1/chat/completions", {"messages": msgs, "max_tokens": 2, "tools": [],
                                                       "response_format": {"type": "text"}, "user": "u1"}, key=KEY)
    check(s == 200, "fields that ask for nothing (tools [], text format, user) are accepted")


def shapes(model, rep):
    p = rep.port
    base = {"max_tokens": 5, "temperature": 0}
    s, plain = request(p, "POST", "/v1/chat/completions",
                       dict(base, messages=[{"role": "system", "content": "Be brief."},
                                            {"role": "user", "content": "Hello there"}]), key=KEY)
    s2, parts = request(p, "POST", "/v1/chat/completions",
                        dict(base, messages=[{"role": "developer", "content": [{"type": "text", "text": "Be "},
                                                                               {"type": "text", "text": "brief."}]},
                                             {"role": "user", "content": [{"type": "text", "text": "Hello there"}]}]),
                        key=KEY)
    check(s == s2 == 200 and plain["choices"][0]["message"]["content"] == parts["choices"][0]["message"]["content"],
          "content parts and the developer role == string content and system")
    s, m = request(p, "GET", "/v1/models/tiny-alias", key=KEY)
    check(s == 200 and m["id"] == "tiny-alias" and m["object"] == "model", "GET /v1/models/{id}")
    s, e = request(p, "GET", "/v1/models/gpt-4", key=KEY)
    check(error_is(s, e, 404, "model", "model_not_found"), "GET /v1/models/{unknown}: 404 model_not_found")
    s, c = request(p, "POST", "/v1/completions", dict(base, prompt=["One two", "Three"]), key=KEY)
    singles = [request(p, "POST", "/v1/completions", dict(base, prompt=x), key=KEY)[1] for x in ("One two", "Three")]
    check(s == 200 and [ch["text"] for ch in c["choices"]] == [x["choices"][0]["text"] for x in singles]
          and [ch["index"] for ch in c["choices"]] == [0, 1], "a batch of string prompts")
    s, c = request(p, "POST", "/v1/completions", dict(base, prompt=[[5, 6, 7], [8, 9]]), key=KEY)
    check(s == 200 and len(c["choices"]) == 2 and c["usage"]["prompt_tokens"] == 5, "a batch of token-id prompts")
    s, e = request(p, "POST", "/v1/completions", dict(base, prompt=[["x"]]), key=KEY)
    check(error_is(s, e, 400, "prompt", "invalid_request"), "a bad prompt: type and code are strings, param named")
    s, e = request(p, "GET", "/v1/completions", key=KEY)
    check(error_is(s, e, 405, code="method_not_allowed"), "GET on a POST route: 405")
    s, e = request(p, "PUT", "/v1/sessions", body={}, key=KEY)
    check(s == 405, "PUT /v1/sessions: 405")
    conn_status, headers = preflight(p, "/v1/chat/completions", "https://app.example")
    check(conn_status == 204 and headers.get("access-control-allow-origin") == "https://app.example"
          and "POST" in headers.get("access-control-allow-methods", ""), "CORS preflight from an allowed origin")
    conn_status, headers = preflight(p, "/v1/chat/completions", "https://evil.example")
    check(conn_status == 204 and "access-control-allow-origin" not in headers, "... none for another origin")


def preflight(port, path, origin):
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("OPTIONS", path, headers={"Origin": origin, "Access-Control-Request-Method": "POST",
                                           "Access-Control-Request-Headers": "authorization, content-type"})
    resp = conn.getresponse()
    resp.read()
    headers = {k.lower(): v for k, v in resp.getheaders()}
    conn.close()
    return resp.status, headers


def operations(model, rep, tmp):
    p = rep.port
    s, h = request(p, "GET", "/health")
    check(s == 200 and h["model"] == "tiny-alias" and "file" not in h and "store" not in h
          and model not in str(h) and tmp not in str(h), "/health under a key shows no path")
    s, c = request(p, "POST", "/v1/completions", {"prompt": "x", "max_tokens": 2}, key=KEY)
    check(s == 200 and c["model"] == "tiny-alias", "--alias names the model in responses")
    s, lst = request(p, "GET", "/v1/sessions", key=KEY)
    check(s == 200 and lst["object"] == "list" and len(lst["data"]) >= 1
          and all(d["object"] == "session" and "state_bytes" in d for d in lst["data"]), "GET /v1/sessions lists them")
    def logged():
        log = rep.stderr()
        lines = [ln for ln in log.splitlines() if re.match(r"^(GET|POST|PUT|DELETE|OPTIONS) \S+ \d{3} tokens=\d+ ms=[\d.]+$", ln)]
        ok = (any(ln.startswith("POST /v1/completions 200 tokens=%d " % c["usage"]["total_tokens"]) for ln in lines)
              and any(ln.startswith("GET /v1/completions 405 ") for ln in lines))
        return ok, lines

    # The server logs a request once its response is written, so the line may come just after it.
    deadline = time.time() + 10
    ok, lines = logged()
    while not ok and time.time() < deadline:
        time.sleep(0.1)
        ok, lines = logged()
    check(ok,
          "one log line per request with method, path, status, tokens, ms (%d lines)" % len(lines))

    # Seconds of margin on both sides: CI runs this beside other tests on 2 busy cores.
    ttl = Replica(INFINI, model, os.path.join(tmp, "store-ttl"), ["--session-ttl", "6"])
    try:
        old = request(ttl.port, "POST", "/v1/sessions")[1]["id"]
        request(ttl.port, "POST", "/v1/sessions/%s/append" % old, {"tokens": [1, 2, 3]})
        time.sleep(3.5)
        kept = request(ttl.port, "POST", "/v1/sessions")[1]["id"]
        time.sleep(3.5)
        request(ttl.port, "POST", "/v1/sessions/%s/append" % kept, {"tokens": [4]})  # used: stays
        s_old = request(ttl.port, "GET", "/v1/sessions/" + old)[0]
        ids = [d["id"] for d in request(ttl.port, "GET", "/v1/sessions")[1]["data"]]
        check(s_old == 404 and ids == [kept], "--session-ttl: an idle session expires, a used one stays (%s)" % ids)
    finally:
        ttl.stop()


def state_moves(model, tmp):
    """Item 6: a served session continues in `infini run --load-state` (its record as it is, or
    exported to a state file), and a state file `infini run` saved is served as a session."""
    store = os.path.join(tmp, "store-moves")
    rep = Replica(INFINI, model, store)
    try:
        sid = request(rep.port, "POST", "/v1/sessions")[1]["id"]
        request(rep.port, "POST", "/v1/sessions/%s/append" % sid, {"text": "The river runs past the mill"})
        record = os.path.join(store, sid + ".session")
        exported = os.path.join(tmp, "exported.state")
        e = infini("session", "export", "--store", store, sid, exported)
        check(e.returncode == 0 and os.path.exists(exported), "session export writes a state file (%r)" % e.stderr)
        runs = [infini("run", "-m", model, "--load-state", f, "-p", " and on", "-n", "5", "--temp", "0", "--quiet")
                for f in (record, exported)]
        s, _ = request(rep.port, "POST", "/v1/sessions/%s/append" % sid, {"text": " and on"})
        s, g = request(rep.port, "POST", "/v1/sessions/%s/generate" % sid, {"max_tokens": 5, "temperature": 0})
        check(all(r.returncode == 0 and r.stdout == g["text"] + "\n" for r in runs),
              "run --load-state of the record and of the export == the server's continuation (%r, %r)"
              % ([r.stdout for r in runs], g.get("text")))

        saved = os.path.join(tmp, "saved.state")
        r = infini("run", "-m", model, "-p", "A stream read by run", "-n", "0", "--save-state", saved, "--quiet")
        i = infini("session", "import", "-m", model, "--store", store, saved)
        new_id = i.stdout.strip()
        s, info = request(rep.port, "GET", "/v1/sessions/" + new_id)
        cont = infini("run", "-m", model, "--load-state", saved, "-p", " then", "-n", "4", "--temp", "0", "--quiet")
        request(rep.port, "POST", "/v1/sessions/%s/append" % new_id, {"text": " then"})
        s2, g2 = request(rep.port, "POST", "/v1/sessions/%s/generate" % new_id, {"max_tokens": 4, "temperature": 0})
        check(r.returncode == 0 and i.returncode == 0 and s == 200 and info["tokens_seen"] > 0 and s2 == 200
              and cont.stdout == g2["text"] + "\n", "session import: the server continues run's state file (%r)" % i.stderr)
        other = os.path.join(tmp, "other.gguf")
        infini("make-model", "--out", other, "--vocab", "512", "--embd", "64", "--layers", "2", "--heads", "4",
               "--kv-heads", "2", "--ffn", "128", "--segment", "16", "--seed", "8")
        bad = infini("session", "import", "-m", other, "--store", store, saved)
        check(bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1, "import on another model: one line")
    finally:
        rep.stop()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.gguf")
        r = infini("make-model", "--out", model, "--vocab", "512", "--embd", "64", "--layers", "2", "--heads", "4",
                   "--kv-heads", "2", "--ffn", "128", "--segment", "16", "--seed", "7", "--tokenizer", "gpt2",
                   "--pre", "qwen2", "--chat-template",
                   "{% for m in messages %}<|im_start|>{{ m.role }}\\n{{ m.content }}<|im_end|>\\n{% endfor %}")
        if r.returncode:
            sys.exit("make-model failed: " + r.stderr)
        startup(model, tmp)
        rep = Replica(INFINI, model, os.path.join(tmp, "store"),
                      ["--api-key", KEY, "--alias", "tiny-alias", "--cors-origin", "https://app.example"])
        try:
            fields(model, rep, tmp)
            shapes(model, rep)
            operations(model, rep, tmp)
        finally:
            check(rep.stop() == 0, "SIGTERM stops the server")
        state_moves(model, tmp)
    print("serve_openai:", "FAILED (%d)" % len(failures) if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
