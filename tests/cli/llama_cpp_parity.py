#!/usr/bin/env python3
"""infini against llama.cpp on the files llama.cpp's own quantizer writes: for every scheme, two
random Llama files (16 layers with 4 query heads per KV head and rows of whole 256-value
super-blocks; a tied one with rows of 288 values, which takes the 32-value stand-ins) quantized by
llama.cpp's llama_model_quantize and by `infini quantize` hold the same type and the same bytes
for every tensor; and `infini eval` on each of llama.cpp's files gives the logits llama.cpp's
llama_decode gives on it (CPU backend), within the error of llama.cpp's own arithmetic: it rounds
activations to 8 bits before each product with quantized weights (normalised MSE up to about
2e-4 here; the bound is 1e-3, where a misread block gives about 1). And a random f32 file of each
architecture (llama, qwen2, qwen3, gemma) gives llama.cpp's logits (bound 1e-5).

llama.cpp is the prebuilt library of the npm package @node-llama-cpp/linux-x64-vulkan 3.22.1,
downloaded once (24 MB, checked against its sha512) into the build folder; never committed. Where
the registry cannot be reached the test exits 77, which CTest reports as skipped.

usage: llama_cpp_parity.py INFINI CACHE_DIR   (about 2 minutes)
"""
import ctypes
import hashlib
import os
import struct
import subprocess
import sys
import tarfile
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_checks import check, finish  # noqa: E402

URL = "https://registry.npmjs.org/@node-llama-cpp/linux-x64-vulkan/-/linux-x64-vulkan-3.22.1.tgz"
SHA512 = ("6c1c6a53e24e701bb59dbe508f6cdc31c8be241c93d44f046a31ef62877235f5"
          "483e41215e1fbf1ccc11d7f053ef13f4f182b4864b3e90cf1f825111d0ff0912")
LIBS = "package/bins/linux-x64-vulkan/"
# llama.cpp's llama_ftype for each of infini's schemes.
SCHEMES = {"q8_0": 7, "q4_0": 2, "q4_1": 3, "q5_0": 8, "q5_1": 9, "q6_k": 18, "q5_k_m": 17, "q4_k_m": 15,
           "q3_k_m": 12, "q2_k": 10, "iq4_nl": 25, "iq4_xs": 30}
# Block sizes (values, bytes) by ggml type id, for the tensors' byte ranges.
BLOCKS = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34), 10: (256, 84),
          11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 20: (32, 18), 23: (256, 136), 30: (1, 2)}


def fetch_llama_cpp(cache):
    root = os.path.join(cache, "node-llama-cpp-3.22.1")
    if os.path.isfile(os.path.join(root, LIBS, "libllama.vulkan.v0.5.0.so")):
        return os.path.join(root, LIBS)
    os.makedirs(cache, exist_ok=True)
    try:
        data = urllib.request.urlopen(URL, timeout=60).read()
    except OSError as e:
        print("skipped: the npm registry cannot be reached (%s)" % e)
        sys.exit(77)
    if hashlib.sha512(data).hexdigest() != SHA512:
        sys.exit("the downloaded package is not the pinned one (sha512 differs)")
    archive = os.path.join(cache, "package.tgz")
    with open(archive, "wb") as f:
        f.write(data)
    with tarfile.open(archive) as t:
        t.extractall(root, members=[m for m in t.getmembers() if m.name.startswith(LIBS)])
    os.remove(archive)
    return os.path.join(root, LIBS)


class Params(ctypes.Structure):
    """Room for any of llama.cpp's parameter structs: larger than each, so returned and passed
    through memory, where the callee reads only its own fields (the first ones, set below)."""
    _fields_ = [("raw", ctypes.c_ubyte * 512)]


class Batch(ctypes.Structure):  # llama_batch
    _fields_ = [("n_tokens", ctypes.c_int32), ("token", ctypes.POINTER(ctypes.c_int32)), ("embd", ctypes.c_void_p),
                ("pos", ctypes.c_void_p), ("n_seq_id", ctypes.c_void_p), ("seq_id", ctypes.c_void_p),
                ("logits", ctypes.c_void_p)]


LOG = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)


class LlamaCpp:
    def __init__(self, libs):
        ggml = ctypes.CDLL(libs + "libggml.vulkan.v0.5.0.so", mode=ctypes.RTLD_GLOBAL)
        self.lib = lib = ctypes.CDLL(libs + "libllama.vulkan.v0.5.0.so", mode=ctypes.RTLD_GLOBAL)
        self.quiet = LOG(lambda level, text, data: None)
        lib.llama_log_set(self.quiet, None)
        # The baseline x86-64 CPU backend only: the same arithmetic on every machine, no GPU.
        ggml.ggml_backend_load.restype = ctypes.c_void_p
        if not ggml.ggml_backend_load((libs + "libggml-cpu-x64.so").encode()):
            sys.exit("llama.cpp's CPU backend did not load")
        lib.llama_backend_init()
        lib.llama_model_quantize_default_params.restype = Params
        lib.llama_model_quantize.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(Params)]
        lib.llama_model_default_params.restype = Params
        lib.llama_context_default_params.restype = Params
        lib.llama_model_load_from_file.restype = ctypes.c_void_p
        lib.llama_model_load_from_file.argtypes = [ctypes.c_char_p, Params]
        lib.llama_init_from_model.restype = ctypes.c_void_p
        lib.llama_init_from_model.argtypes = [ctypes.c_void_p, Params]
        lib.llama_batch_get_one.restype = Batch
        lib.llama_batch_get_one.argtypes = [ctypes.POINTER(ctypes.c_int32), ctypes.c_int32]
        lib.llama_decode.argtypes = [ctypes.c_void_p, Batch]
        lib.llama_get_logits_ith.restype = ctypes.POINTER(ctypes.c_float)
        lib.llama_get_logits_ith.argtypes = [ctypes.c_void_p, ctypes.c_int32]
        lib.llama_free.argtypes = [ctypes.c_void_p]
        lib.llama_model_free.argtypes = [ctypes.c_void_p]

    def last_logits(self, path, tokens, vocab):
        """The logits of the last of `tokens` fed at once (llama_decode, CPU)."""
        mp = self.lib.llama_model_default_params()
        struct.pack_into("<i", mp.raw, 16, 0)  # n_gpu_layers, after two pointers: all on the CPU
        model = self.lib.llama_model_load_from_file(path.encode(), mp)
        if not model:
            return None
        ctx = self.lib.llama_init_from_model(model, self.lib.llama_context_default_params())
        try:
            ids = (ctypes.c_int32 * len(tokens))(*tokens)
            if not ctx or self.lib.llama_decode(ctx, self.lib.llama_batch_get_one(ids, len(tokens))) != 0:
                return None
            row = self.lib.llama_get_logits_ith(ctx, -1)
            return [row[i] for i in range(vocab)]
        finally:
            if ctx:
                self.lib.llama_free(ctx)
            self.lib.llama_model_free(model)

    def quantize(self, src, dst, ftype):
        p = self.lib.llama_model_quantize_default_params()
        struct.pack_into("<ii", p.raw, 0, 1, ftype)  # nthread, ftype: the struct's first fields
        # Its log of every tensor goes to stderr: silenced for the call.
        sys.stderr.flush()
        saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        try:
            return self.lib.llama_model_quantize(src.encode(), dst.encode(), ctypes.byref(p))
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            os.close(null)


def tensors(path):
    """name -> (ggml type, the tensor's bytes) of a GGUF file."""
    b = open(path, "rb").read()
    o = 8
    count, keys = struct.unpack_from("<QQ", b, o)
    o += 16
    alignment = 32

    def string(o):
        n, = struct.unpack_from("<Q", b, o)
        return b[o + 8:o + 8 + n], o + 8 + n

    scalar = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}

    def value(t, o):
        if t == 8:
            return string(o)
        if t == 9:
            inner, n = struct.unpack_from("<IQ", b, o)
            o += 12
            for _ in range(n):
                _, o = value(inner, o)
            return None, o
        return struct.unpack_from(scalar[t], b, o)[0], o + struct.calcsize(scalar[t])

    for _ in range(keys):
        key, o = string(o)
        t, = struct.unpack_from("<I", b, o)
        v, o = value(t, o + 4)
        if key == b"general.alignment":
            alignment = v
    infos = []
    for _ in range(count):
        name, o = string(o)
        dims, = struct.unpack_from("<I", b, o)
        shape = struct.unpack_from("<%dQ" % dims, b, o + 4)
        o += 4 + 8 * dims
        t, offset = struct.unpack_from("<IQ", b, o)
        o += 12
        infos.append((name.decode(), t, shape, offset))
    start = (o + alignment - 1) // alignment * alignment
    out = {}
    for name, t, shape, offset in infos:
        values = 1
        for d in shape:
            values *= d
        per, size = BLOCKS[t]
        out[name] = (t, b[start + offset:start + offset + values // per * size])
    return out


def logits_nmse(infini, llama, path, tmp):
    """infini eval's logits of the last of 24 tokens against llama_decode's on the same file (None
    when either fails)."""
    tokens = [(i * 37 + 11) % 512 for i in range(24)]
    out = os.path.join(tmp, "logits.npy")
    r = subprocess.run([infini, "eval", "-m", path, "--tokens", ",".join(map(str, tokens)), "--logits", out],
                       capture_output=True, text=True)
    want = llama.last_logits(path, tokens, 512)
    if r.returncode or want is None:
        print("eval failed: %s" % r.stderr.strip(), flush=True)
        return None
    got = struct.unpack("<512f", open(out, "rb").read()[-4 * 512:])  # .npy: the row ends the file
    return sum((a - b) ** 2 for a, b in zip(got, want)) / sum(b * b for b in want)


def main():
    infini, cache = sys.argv[1], sys.argv[2]
    llama = LlamaCpp(fetch_llama_cpp(cache))
    worst, worst_family = 0.0, 0.0
    with tempfile.TemporaryDirectory() as tmp:
        files = {
            "wide": ["--embd", "256", "--layers", "16", "--heads", "8", "--kv-heads", "2", "--ffn", "512"],
            "tied288": ["--embd", "288", "--layers", "4", "--heads", "4", "--kv-heads", "4", "--ffn", "288", "--tied"],
        }
        for label, shape in files.items():
            src = os.path.join(tmp, label + ".gguf")
            subprocess.run([infini, "make-model", "--out", src, "--vocab", "512", "--no-infini"] + shape,
                           check=True, capture_output=True)
            for scheme, ftype in SCHEMES.items():
                theirs, ours = os.path.join(tmp, "llama.gguf"), os.path.join(tmp, "infini.gguf")
                if llama.quantize(src, theirs, ftype) != 0:
                    check(False, "%s %s: llama.cpp's quantizer failed" % (label, scheme))
                    continue
                subprocess.run([infini, "quantize", src, ours, "--type", scheme], check=True, capture_output=True)
                a, b = tensors(theirs), tensors(ours)
                types = [n for n in a if n not in b or a[n][0] != b[n][0]]
                data = [n for n in a if n in b and a[n][1] != b[n][1]]
                check(a.keys() == b.keys() and not types and not data,
                      "%s %s: %d tensors, the same types and bytes%s" % (
                          label, scheme, len(a), (" (types differ: %s; bytes differ: %s)" % (types[:4], data[:4]))
                          if types or data else ""))
                # infini on llama.cpp's file against llama.cpp on it.
                nmse = logits_nmse(infini, llama, theirs, tmp)
                if nmse is None:
                    check(False, "%s %s: both evaluate the file" % (label, scheme))
                    continue
                worst = max(worst, nmse)
                check(nmse < 1e-3, "%s %s: infini's logits on llama.cpp's file are llama.cpp's (nmse %.2g)"
                      % (label, scheme, nmse))
        # Every architecture infini runs, f32 weights: its logits on the file are llama.cpp's.
        # gemma: MQA, a head dim that is not embd / heads, scaled embeddings, GeGLU, tied output.
        families = {
            "llama": ["--kv-heads", "2"],
            "qwen2": ["--kv-heads", "2"],
            "qwen3": ["--kv-heads", "2", "--head-dim", "48"],
            "gemma": ["--kv-heads", "1", "--head-dim", "64"],
        }
        for arch, shape in families.items():
            src = os.path.join(tmp, arch + ".gguf")
            subprocess.run([infini, "make-model", "--out", src, "--arch", arch, "--vocab", "512", "--embd", "128",
                            "--layers", "3", "--heads", "4", "--ffn", "256", "--no-infini"] + shape,
                           check=True, capture_output=True)
            nmse = logits_nmse(infini, llama, src, tmp)
            worst_family = nmse if nmse is None or worst_family is None else max(worst_family, nmse)
            check(nmse is not None and nmse < 1e-5,
                  "%s: infini's logits are llama.cpp's (nmse %s)" % (arch, "%.2g" % nmse if nmse is not None else "-"))
    print("largest normalised MSE against llama.cpp's logits: %.3g (quantized), %s (f32 architectures)"
          % (worst, "%.3g" % worst_family if worst_family is not None else "-"))
    finish("llama-cpp-parity")


if __name__ == "__main__":
    main()
