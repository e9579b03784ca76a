"""GGUF v3 (runtime/formats/gguf_format.hpp), written whole or not at all: the keys and the tensors
are collected first and each tensor's bytes made only when the file is written."""
import math
import os
import struct

import numpy as np

GGUF_U8, GGUF_I8, GGUF_U16, GGUF_I16, GGUF_U32, GGUF_I32, GGUF_F32, GGUF_BOOL, GGUF_STRING, GGUF_ARRAY, \
    GGUF_U64, GGUF_I64, GGUF_F64 = range(13)
GGML_F32, GGML_F16 = 0, 1
ALIGNMENT = 32


def gguf_string(s):
    b = s.encode("utf-8") if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


class GgufWriter:
    def __init__(self):
        self.keys = {}
        self.tensors = []  # (name, ggml dims, ggml type, byte size, make() -> bytes)

    def scalar(self, key, vtype, fmt, value):
        self.keys[key] = struct.pack("<I", vtype) + struct.pack(fmt, value)

    def u32(self, key, v):
        self.scalar(key, GGUF_U32, "<I", int(v))

    def f32(self, key, v):
        self.scalar(key, GGUF_F32, "<f", float(v))

    def boolean(self, key, v):
        self.scalar(key, GGUF_BOOL, "<B", 1 if v else 0)

    def string(self, key, v):
        self.keys[key] = struct.pack("<I", GGUF_STRING) + gguf_string(v)

    def strings(self, key, values):
        self.keys[key] = (struct.pack("<IIQ", GGUF_ARRAY, GGUF_STRING, len(values))
                          + b"".join(gguf_string(v) for v in values))

    def f32s(self, key, values):
        a = np.asarray(values, "<f4")
        self.keys[key] = struct.pack("<IIQ", GGUF_ARRAY, GGUF_F32, len(a)) + a.tobytes()

    def i32s(self, key, values):
        a = np.asarray(values, "<i4")
        self.keys[key] = struct.pack("<IIQ", GGUF_ARRAY, GGUF_I32, len(a)) + a.tobytes()

    def tensor(self, name, np_shape, ggml_type, make):
        dims = list(reversed(np_shape))  # ggml order: the contiguous dimension first
        size = math.prod(np_shape) * (4 if ggml_type == GGML_F32 else 2)
        self.tensors.append((name, dims, ggml_type, size, make))

    def write(self, path):
        out = [b"GGUF", struct.pack("<IQQ", 3, len(self.tensors), len(self.keys))]
        for k, v in self.keys.items():
            out += [gguf_string(k), v]
        offset = 0
        for name, dims, ggml_type, size, _ in self.tensors:
            out += [gguf_string(name), struct.pack("<I", len(dims)), struct.pack(f"<{len(dims)}Q", *dims),
                    struct.pack("<IQ", ggml_type, offset)]
            offset += -(-size // ALIGNMENT) * ALIGNMENT
        header = b"".join(out)
        header += b"\0" * (-len(header) % ALIGNMENT)
        tmp = path + ".part"
        try:
            with open(tmp, "wb") as f:
                f.write(header)
                for name, _, ggml_type, size, make in self.tensors:
                    data = make()
                    assert len(data) == size, name
                    f.write(data)
                    f.write(b"\0" * (-size % ALIGNMENT))
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise
        return len(header) + offset
