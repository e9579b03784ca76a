"""A small client for `infini serve` shared by its test and its load generator: JSON requests,
server-sent events, and starting replicas and a private redis-server (standard library only)."""
import http.client
import json
import os
import re
import socket
import subprocess
import tempfile
import time


failures = []  # what check() found wrong, for the test's exit status


def check(cond, what):
    """Prints one ok/FAILED line for a test's check and remembers a failure."""
    print(("ok:     " if cond else "FAILED: ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, method, path, body=None, key=None, raw=None, timeout=600):
    """(status, parsed JSON or text). `raw` sends bytes as they are."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = "Bearer " + key
    data = raw if raw is not None else (json.dumps(body) if body is not None else b"" if method == "POST" else None)
    conn.request(method, path, body=data, headers=headers)
    resp = conn.getresponse()
    text = resp.read().decode("utf-8", "replace")
    conn.close()
    try:
        return resp.status, json.loads(text)
    except ValueError:
        return resp.status, text


def events(port, path, body, key=None, on_event=None, timeout=600):
    """POSTs with "stream": true; returns (status, [events]) up to [DONE]. on_event(e) sees each."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = "Bearer " + key
    conn.request("POST", path, body=json.dumps(dict(body, stream=True)), headers=headers)
    resp = conn.getresponse()
    if resp.status != 200 or "text/event-stream" not in resp.getheader("Content-Type", ""):
        text = resp.read().decode("utf-8", "replace")
        conn.close()
        return resp.status, [json.loads(text)]
    out = []
    for line in resp:
        line = line.decode("utf-8").rstrip("\r\n")
        if not line.startswith("data: "):
            continue
        if line == "data: [DONE]":
            break
        e = json.loads(line[len("data: "):])
        out.append(e)
        if on_event:
            on_event(e)
    conn.close()
    return resp.status, out


class Replica:
    """`infini serve` on a free port; stop() ends it (kill() with SIGKILL)."""

    def __init__(self, infini, model, store, extra=(), env=None, port=0, cwd=None):
        """store None: the server's default store; port 0: any free port."""
        store_args = ["--store", store] if store is not None else []
        # stderr (one log line per request) goes to a file, so a long run never fills a pipe.
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([infini, "serve", "-m", model, "--port", str(port), *store_args, *extra],
                                     stdout=subprocess.PIPE, stderr=self.log, text=True,
                                     env=dict(os.environ, **(env or {})), cwd=cwd)
        line = self.proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        if not m:
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError("infini serve did not start: " + line + self.stderr())
        self.port = int(m.group(1))

    def stderr(self):
        """What the server wrote to stderr so far."""
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def kill(self):
        self.proc.kill()
        self.proc.wait()


class Redis:
    """A private redis-server on 127.0.0.1 and a free port, persisting nothing."""

    def __init__(self):
        self.port = free_port()
        self.proc = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        self.proc.kill()
        raise RuntimeError("redis-server did not start")

    def url(self):
        return "redis://127.0.0.1:%d/0" % self.port

    def get_state(self, session):
        """The state bytes stored for a session (RESP by hand: HGET's bulk reply)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as s:
            key = ("infini:session:" + session).encode()
            args = [b"HGET", key, b"state"]
            s.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args))
            buf = b""
            while b"\r\n" not in buf:
                buf += s.recv(65536)
            head, rest = buf.split(b"\r\n", 1)
            n = int(head[1:])
            while len(rest) < n + 2:
                rest += s.recv(1 << 20)
            return rest[:n]

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
