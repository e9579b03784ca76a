"""Minimal GGUF v3 writer and reader for the passkey demo: llama architecture keys and tensor names
as llama.cpp writes them, plus the Infini-attention keys of docs/design.md §3.3. f32 and f16
tensors only. Tensors are given in PyTorch's [out, in] order; GGUF stores the dims reversed."""
import struct

import numpy as np

ALIGNMENT = 32
_U32, _I32, _F32, _BOOL, _STRING, _ARRAY = 4, 5, 6, 7, 8, 9
F32, F16 = 0, 1


def _string(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def _value(kind, value):
    if kind == _U32:
        return struct.pack("<I", value)
    if kind == _I32:
        return struct.pack("<i", value)
    if kind == _F32:
        return struct.pack("<f", value)
    if kind == _BOOL:
        return struct.pack("<B", 1 if value else 0)
    if kind == _STRING:
        return _string(value)
    raise ValueError(kind)


def write_gguf(path, kvs, tensors):
    """kvs: list of (key, kind, value) with kind 'u32' 'i32' 'f32' 'bool' 'str' or ('array', elem_kind);
    tensors: list of (name, numpy array in [out, in] order, F32 or F16)."""
    kinds = {"u32": _U32, "i32": _I32, "f32": _F32, "bool": _BOOL, "str": _STRING}
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs))
    for key, kind, value in kvs:
        head += _string(key)
        if isinstance(kind, tuple):
            elem = kinds[kind[1]]
            head += struct.pack("<IIQ", _ARRAY, elem, len(value)) + b"".join(_value(elem, x) for x in value)
        else:
            head += struct.pack("<I", kinds[kind]) + _value(kinds[kind], value)
    blobs, offset = [], 0
    for name, array, dtype in tensors:
        data = np.ascontiguousarray(array, dtype=np.float32 if dtype == F32 else np.float16).tobytes()
        dims = list(reversed(array.shape))
        head += _string(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        head += struct.pack("<IQ", dtype, offset)
        pad = (-len(data)) % ALIGNMENT
        blobs.append(data + b"\0" * pad)
        offset += len(data) + pad
    head += b"\0" * ((-len(head)) % ALIGNMENT)
    with open(path, "wb") as f:
        f.write(head)
        for blob in blobs:
            f.write(blob)


def read_gguf(path):
    """-> (dict of key -> value, dict of name -> float32 numpy array in [out, in] order)."""
    data = open(path, "rb").read()
    pos = 0

    def take(fmt):
        nonlocal pos
        values = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return values if len(values) > 1 else values[0]

    def string():
        nonlocal pos
        n = take("<Q")
        s = data[pos:pos + n].decode("utf-8")
        pos += n
        return s

    scalar = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<B", 10: "<Q", 11: "<q", 12: "<d"}

    def value(kind):
        if kind == _STRING:
            return string()
        if kind == _ARRAY:
            elem, count = take("<I"), take("<Q")
            return [value(elem) for _ in range(count)]
        return take(scalar[kind])

    assert data[:4] == b"GGUF", "not a GGUF file"
    pos = 4
    version, n_tensors, n_kv = take("<IQQ")
    assert version in (2, 3)
    kvs = {}
    for _ in range(n_kv):
        key = string()
        kvs[key] = value(take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = string()
        dims = [take("<Q") for _ in range(take("<I"))]
        infos.append((name, dims, take("<I"), take("<Q")))
    alignment = kvs.get("general.alignment", ALIGNMENT)
    base = pos + (-pos) % alignment
    tensors = {}
    for name, dims, dtype, offset in infos:
        count = int(np.prod(dims))
        np_type = {F32: np.float32, F16: np.float16}[dtype]
        array = np.frombuffer(data, dtype=np_type, count=count, offset=base + offset)
        tensors[name] = array.astype(np.float32).reshape(list(reversed(dims)))
    return kvs, tensors
