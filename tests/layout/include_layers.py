#!/usr/bin/env python3
"""The runtime's folders form layers, and a file includes only its own folder's headers, lower
layers' and the public API's (docs/design.md, "Code layout"): no upward include, so no cycle.
Exits non-zero listing each include that goes upward or names a folder the table lacks.

Usage: include_layers.py REPO_ROOT
"""
import os
import re
import sys

# Lower first; folders on one line are side by side and may not include each other.
LAYERS = [
    ["util", "io", "rope"],
    ["text"],
    ["vk"],
    ["ops"],
    ["formats", "sampling"],
    ["model"],
    ["graph"],
    ["exec"],
    ["api"],
]
RANK = {folder: i for i, row in enumerate(LAYERS) for folder in row}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)


def main():
    runtime = os.path.join(sys.argv[1], "runtime")
    problems = []
    for folder in sorted(os.listdir(runtime)):
        path = os.path.join(runtime, folder)
        if not os.path.isdir(path):
            continue
        if folder not in RANK:
            problems.append("runtime/%s/ is in no layer of the table" % folder)
            continue
        for name in sorted(os.listdir(path)):
            if not name.endswith((".cpp", ".hpp")):
                continue
            text = open(os.path.join(path, name), encoding="utf-8").read()
            for target in INCLUDE.findall(text):
                if target in ("infini", "spirv") or target == folder:
                    continue  # the public API, the generated SPIR-V, the folder itself
                if target not in RANK:
                    problems.append("runtime/%s/%s includes %s/, a folder the table lacks" % (folder, name, target))
                elif RANK[target] >= RANK[folder]:
                    problems.append("runtime/%s/%s includes %s/ (layer %d from layer %d)"
                                    % (folder, name, target, RANK[target], RANK[folder]))
    for p in problems:
        print(p)
    print("include layers:", "FAILED (%d)" % len(problems) if problems else "passed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
