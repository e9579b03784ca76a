#!/usr/bin/python3
"""The model tests (the `[model]` cases: the runner against the float64 references, GGUF files,
Q4 weights, sliding contexts, the passkey demo model) under every device profile `infini devices
--profiles` lists, each a separate process with INFINI_DEVICE_PROFILE set. Not `[multi]` (phones and
boards have one GPU), `[breadth]` (formats and kernels the others share) nor `[long]` (streams of
a million tokens); the suite runs those once. On lavapipe the cost is building pipelines: each profile specializes them anew. A profile whose subgroups are 4 wide
or narrower also runs with lavapipe's own subgroup size at 4 (LP_NATIVE_VECTOR_WIDTH=128), so
kernels meet the narrow subgroups they would on the phone. Those runs keep Mesa's shader cache (and
infini's pipeline cache) in a folder of their own: Mesa 22's lavapipe does not key its disk cache by LP_NATIVE_VECTOR_WIDTH, so a
run beside them at 8 lanes would load their 4-lane shaders (sums in another order, and two devices
of one test no longer equal bit for bit).

The runs are dealt round-robin into SHARDS shards and this process does shard SHARD (1-based), so
CTest can spread them over its jobs, each with a timeout of its own (tests/CMakeLists.txt).

usage: profiles_model.py INFINI_BINARY INFINI_TESTS_BINARY [SHARD SHARDS]
"""
import json
import os
import subprocess
import sys
import time

SELECTION = "[model]~[multi]~[breadth]~[long]"


def main():
    infini, tests = sys.argv[1:3]
    shard, shards = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) > 4 else (1, 1)
    listing = subprocess.run([infini, "devices", "--profiles", "--json"], capture_output=True, text=True, check=True)
    profiles = [json.loads(line) for line in listing.stdout.splitlines()]
    if len(profiles) < 2:
        print("FAIL: expected the shipped profiles, got: " + listing.stdout)
        return 1
    runs = [(p, width) for p in profiles for width in ([None, "128"] if p["subgroup_size"] <= 4 else [None])]
    mine = runs[shard - 1::shards]
    failed = []
    for p, width in mine:
        env = dict(os.environ, INFINI_DEVICE_PROFILE=p["profile"])
        if width:
            env["LP_NATIVE_VECTOR_WIDTH"] = width
            for cache in ("MESA_SHADER_CACHE_DIR", "INFINI_CACHE_DIR"):
                if os.environ.get(cache):
                    env[cache] = os.path.join(os.environ[cache], "lanes-" + width)
        start = time.time()
        run = subprocess.run([tests, SELECTION], env=env, capture_output=True, text=True)
        summary = (run.stdout.strip().splitlines() or ["(no output)"])[-1]
        label = p["profile"] + (" (driver subgroups of 4)" if width else "")
        print(f"{label}: {summary} [{time.time() - start:.0f} s]")
        if run.returncode != 0 or "All tests passed" not in run.stdout:
            print(run.stdout[-4000:] + run.stderr[-2000:])
            failed.append(label)
    if failed:
        print("FAIL: " + ", ".join(failed))
        return 1
    print(f"ok: {len(mine)} of the {len(runs)} runs over {len(profiles)} profiles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
