"""A checkpoint folder's weights, whatever their files (single or sharded safetensors, or
pytorch_model.bin), behind one name -> shape and name -> float32 array view."""
import json
import os

from .errors import fail
from .safetensors import SafetensorsFile


class Checkpoint:
    """name -> tensor shape, and the tensors as float32 arrays, whatever the files."""

    def __init__(self, folder):
        self.shapes, self._where, self.files = {}, {}, []
        st_single = os.path.join(folder, "model.safetensors")
        st_index = os.path.join(folder, "model.safetensors.index.json")
        pt_single = os.path.join(folder, "pytorch_model.bin")
        pt_index = os.path.join(folder, "pytorch_model.bin.index.json")
        if os.path.isfile(st_index):
            self._sharded(folder, st_index, self._safetensors)
        elif os.path.isfile(st_single):
            self._safetensors(st_single)
        elif os.path.isfile(pt_index):
            self._sharded(folder, pt_index, self._torch)
        elif os.path.isfile(pt_single):
            self._torch(pt_single)
        else:
            fail(f"{folder}: no weights (model.safetensors, model.safetensors.index.json or pytorch_model.bin)")

    def _add(self, name, shape, source, label):
        if name in self.shapes:
            fail(f"{label}: tensor '{name}' is also in another weights file")
        self.shapes[name] = tuple(shape)
        self._where[name] = source

    def _safetensors(self, path):
        f = SafetensorsFile(path)
        self.files.append(os.path.basename(path))
        for name, (_, shape, _, _) in f.tensors.items():
            self._add(name, shape, (f, name), f.label)
        return set(f.tensors)

    def _torch(self, path):
        label = os.path.basename(path)
        try:
            import torch
        except ImportError:
            fail(f"{label}: reading pytorch_model.bin needs torch, which is not installed")
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as e:  # pickle errors, truncation, a disallowed global: all one line
            fail(f"{label}: torch.load failed: {str(e).strip().splitlines()[0][:160] if str(e).strip() else type(e).__name__}")
        if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
            state = state["state_dict"]
        if not isinstance(state, dict):
            fail(f"{label}: not a state dict (a mapping of names to tensors)")
        self.files.append(label)
        for name, t in state.items():
            if not isinstance(name, str) or not isinstance(t, torch.Tensor):
                fail(f"{label}: entry {str(name)[:60]!r} is not a named tensor")
            if t.dtype not in (torch.float32, torch.float16, torch.bfloat16):
                fail(f"{label}: tensor '{name}': dtype {str(t.dtype).replace('torch.', '')} is not a float type"
                     " this converter reads (float32, float16, bfloat16)")
            self._add(name, t.shape, t, label)
        return set(state)

    def _sharded(self, folder, index_path, read):
        label = os.path.basename(index_path)
        try:
            with open(index_path, encoding="utf-8") as f:
                index = json.load(f)
        except (OSError, ValueError) as e:
            fail(f"{label}: not readable JSON ({str(e).splitlines()[0][:80]})")
        weight_map = index.get("weight_map") if isinstance(index, dict) else None
        if not isinstance(weight_map, dict) or not weight_map:
            fail(f"{label}: no weight_map")
        shards = []
        for name, shard in weight_map.items():
            if not isinstance(shard, str) or os.path.basename(shard) != shard:
                fail(f"{label}: tensor '{name}' names the file {json.dumps(shard)[:60]}, not a file in the folder")
            if shard not in shards:
                shards.append(shard)
        for shard in shards:
            path = os.path.join(folder, shard)
            if not os.path.isfile(path):
                fail(f"{label}: the shard '{shard}' is missing")
            held = read(path)
            for name, s in weight_map.items():
                if s == shard and name not in held:
                    fail(f"{label}: tensor '{name}' is not in its shard '{shard}'")
            for name in held:
                if weight_map.get(name) != shard:
                    fail(f"{shard}: tensor '{name}' is not listed for this shard in {label}")

    def load(self, name):
        source = self._where[name]
        if isinstance(source, tuple):
            return source[0].load(source[1])
        return source.detach().to(dtype=__import__("torch").float32).contiguous().numpy()
