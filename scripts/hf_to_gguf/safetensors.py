"""Safetensors (https://github.com/huggingface/safetensors: u64 header length, JSON header, data),
parsed here strictly so that a malformed file is refused with one line rather than misread."""
import json
import math
import mmap
import os
import struct

import numpy as np

from .errors import fail

ST_DTYPES = {"F32": (np.dtype("<f4"), 4), "F16": (np.dtype("<f2"), 2), "BF16": (np.dtype("<u2"), 2)}
# Dtypes the format has that a model's float weights never need here: named, not "unknown".
ST_OTHER = {"F64", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F6_E2M3", "F6_E3M2", "F4", "I64", "I32", "I16", "I8",
            "U64", "U32", "U16", "U8", "BOOL", "C64"}
MAX_HEADER = 100 << 20


def bf16_to_f32(raw_u16):
    return (raw_u16.astype(np.uint32) << 16).view(np.float32)


class SafetensorsFile:
    def __init__(self, path):
        self.path = path
        self.label = os.path.basename(path)
        try:
            size = os.path.getsize(path)
            with open(path, "rb") as f:
                head = f.read(8)
                if len(head) < 8:
                    fail(f"{self.label}: truncated: {size} bytes, not even the 8-byte header length")
                (n,) = struct.unpack("<Q", head)
                if n > size - 8:
                    fail(f"{self.label}: truncated: the header is said to be {n} bytes but only {size - 8} follow")
                if n > MAX_HEADER:
                    fail(f"{self.label}: header of {n} bytes (more than {MAX_HEADER})")
                text = f.read(n)
        except OSError as e:
            fail(f"{self.label}: {e.strerror}")
        try:
            header = json.loads(text.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            fail(f"{self.label}: the header is not JSON ({str(e).splitlines()[0][:80]})")
        if not isinstance(header, dict):
            fail(f"{self.label}: the header is not a JSON object")
        self.data_start = 8 + n
        data_len = size - self.data_start
        self.tensors = {}
        spans = []
        for name, info in header.items():
            if name == "__metadata__":
                if not isinstance(info, dict):
                    fail(f"{self.label}: __metadata__ is not an object")
                continue
            where = f"{self.label}: tensor '{name}'"
            if not isinstance(info, dict) or set(info) - {"dtype", "shape", "data_offsets"} or len(info) != 3:
                fail(f"{where}: the entry is not {{dtype, shape, data_offsets}}")
            dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
            if not isinstance(dtype, str) or (dtype not in ST_DTYPES and dtype not in ST_OTHER):
                fail(f"{where}: unknown dtype {json.dumps(dtype)[:40]}")
            if dtype not in ST_DTYPES:
                fail(f"{where}: dtype {dtype} is not a float type this converter reads (F32, F16, BF16)")
            if (not isinstance(shape, list) or len(shape) > 8
                    or not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 1 << 40 for d in shape)):
                fail(f"{where}: the shape {json.dumps(shape)[:60]} is not a list of dimensions")
            if (not isinstance(offsets, list) or len(offsets) != 2
                    or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)):
                fail(f"{where}: data_offsets {json.dumps(offsets)[:60]} are not two integers")
            begin, end = offsets
            if not 0 <= begin <= end:
                fail(f"{where}: data_offsets [{begin}, {end}] are not an increasing range")
            if end > data_len:
                fail(f"{where}: data_offsets [{begin}, {end}] run past the end of the data ({data_len} bytes):"
                     f" the file is truncated or its header lies")
            need = math.prod(shape) * ST_DTYPES[dtype][1]
            if end - begin != need:
                fail(f"{where}: data_offsets [{begin}, {end}] hold {end - begin} bytes but {dtype} {shape} needs {need}")
            self.tensors[name] = (dtype, tuple(shape), begin, end)
            if end > begin:
                spans.append((begin, end, name))
        spans.sort()
        pos, last = 0, None
        for begin, end, name in spans:
            if begin < pos:
                fail(f"{self.label}: tensors '{last}' and '{name}' overlap in the data (bytes {begin}..{pos})")
            if begin > pos:
                fail(f"{self.label}: bytes {pos}..{begin} of the data belong to no tensor (before '{name}')")
            pos, last = end, name
        if pos != data_len:
            fail(f"{self.label}: bytes {pos}..{data_len} of the data belong to no tensor")
        self._map = None

    def load(self, name):
        dtype, shape, begin, end = self.tensors[name]
        if end == begin:
            return np.zeros(shape, np.float32)
        if self._map is None:
            with open(self.path, "rb") as f:
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        np_type, width = ST_DTYPES[dtype]
        raw = np.frombuffer(self._map, np_type, (end - begin) // width, self.data_start + begin).reshape(shape)
        return bf16_to_f32(raw) if dtype == "BF16" else raw.astype(np.float32)
