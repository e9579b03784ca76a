#!/usr/bin/env python3
"""Load for `infini serve`: C clients for S seconds, each with its own session, alternating an
append of a short text and a generation of a few tokens. Checks that no request fails and that
no session is lost or forked (each session's version equals the requests committed to it), and
prints one JSON object: requests/s, p50/p99 latency, tokens/s, state bytes per session.

Usage: serve_load.py PORT[,PORT...] [--clients 32] [--seconds 20] [--generate 4] [--key KEY]
Ports of several replicas are used round-robin, per request (any replica serves any session).
"""
import argparse
import json
import sys
import threading
import time

from serve_client import request

WORDS = "the stream reads on and the memory keeps what the segments saw before".split()


def run_load(ports, clients, seconds, generate=4, key=None):
    latencies, errors, lock = [], [], threading.Lock()
    tokens = [0]
    sessions = {}
    stop_at = time.monotonic() + seconds

    def client(c):
        n = 0
        port = lambda: ports[(c + n) % len(ports)]
        status, s = request(port(), "POST", "/v1/sessions", {}, key)
        if status != 201:
            with lock:
                errors.append("create: %s %s" % (status, s))
            return
        sid, committed, seen = s["id"], 0, 0
        while time.monotonic() < stop_at:
            text = " ".join(WORDS[(c + n + i) % len(WORDS)] for i in range(12))
            if n % 2 == 0:
                path, body = "/v1/sessions/%s/append" % sid, {"text": text, "version": committed}
            else:
                path, body = "/v1/sessions/%s/generate" % sid, {"max_tokens": generate, "seed": n, "version": committed}
            t0 = time.monotonic()
            status, r = request(port(), "POST", path, body, key)
            dt = time.monotonic() - t0
            n += 1
            with lock:
                if status != 200 or r.get("version") != committed + 1:
                    errors.append("%s: %s %s" % (path, status, r))
                    return
                latencies.append(dt)
                tokens[0] += r["tokens_seen"] - seen
                sessions[sid] = (r["version"], r["state_bytes"], r["tokens_seen"])
            committed, seen = r["version"], r["tokens_seen"]

    t0 = time.monotonic()
    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t0
    # No session lost or forked: the store holds exactly the version each client last committed.
    for sid, (version, _, seen) in sessions.items():
        status, s = request(ports[0], "GET", "/v1/sessions/" + sid, key=key)
        if status != 200 or s["version"] != version or s["tokens_seen"] != seen:
            errors.append("session %s: stored %s %s, client committed version %d" % (sid, status, s, version))
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] if latencies else 0.0
    states = [b for _, b, _ in sessions.values()]
    return {
        "clients": clients, "seconds": round(elapsed, 2), "replicas": len(ports), "requests": len(latencies),
        "errors": len(errors), "first_errors": errors[:3],
        "requests_per_second": round(len(latencies) / elapsed, 2),
        "latency_p50_ms": round(pick(0.50) * 1000, 1), "latency_p99_ms": round(pick(0.99) * 1000, 1),
        "tokens_per_second": round(tokens[0] / elapsed, 1),
        "state_bytes_per_session": round(sum(states) / len(states)) if states else 0,
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("ports")
    p.add_argument("--clients", type=int, default=32)
    p.add_argument("--seconds", type=float, default=20)
    p.add_argument("--generate", type=int, default=4)
    p.add_argument("--key")
    a = p.parse_args()
    result = run_load([int(x) for x in a.ports.split(",")], a.clients, a.seconds, a.generate, a.key)
    print(json.dumps(result))
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
