#!/bin/sh
# Sets up a private Mesa lavapipe with VK_KHR_cooperative_matrix (Debian unstable's Mesa 26, with
# its glibc, LLVM, Vulkan loader, validation layer and glslang), so that the matrix-unit kernels can
# be built on KHR and run on a CPU, on Debian 12 or any x86-64 Linux, without touching the system.
# Nothing is installed: the packages are unpacked under DIR (about 500 MB with the downloads) and
# run through their own dynamic loader.
#
#   scripts/lavapipe-khr.sh [DIR]          (default /tmp/lavapipe-khr)
#   cmake -S . -B build -DINFINI_GLSLANG_KHR=DIR/glslangValidator && ninja -C build
#   cd build && LP_NUM_THREADS=2 DIR/run ./infini_tests
#
# Debian unstable moves: what it fetches is whatever it has that day (Mesa 26.2.6 when written).
# Its validation layer (1.4.363) then crashed at process exit after cooperative-matrix pipelines,
# once every test had passed; VK_LOADER_LAYERS_DISABLE='~all~' runs without it.
set -eu
DIR=${1:-/tmp/lavapipe-khr}
MIRROR=http://deb.debian.org/debian
mkdir -p "$DIR/debs" "$DIR/root"
DIR=$(cd "$DIR" && pwd)  # absolute: it is written into the wrappers below
cd "$DIR"
# Into place only when whole, so that an interrupted download is fetched again.
fetch() { curl -fsS -o "$2.part" "$1" && mv "$2.part" "$2"; }
# The index is fetched again after a day: unstable removes superseded packages from its pool.
if [ ! -f Packages.xz ] || [ -n "$(find Packages.xz -mtime +0)" ]; then
  fetch "$MIRROR/dists/sid/main/binary-amd64/Packages.xz" Packages.xz
fi
# The packages and everything they depend on (first alternatives; virtual packages by provider).
xz -dc Packages.xz > Packages
python3 - Packages mesa-vulkan-drivers libvulkan1 vulkan-validationlayers glslang-tools spirv-tools \
    libc6 libstdc++6 libgcc-s1 > files.txt <<'PY'
import re, sys
packages, providers = {}, {}
for block in open(sys.argv[1], encoding="utf-8").read().split("\n\n"):
    fields = dict(re.findall(r"^([A-Za-z-]+): (.*)$", block, re.M))
    if "Package" not in fields: continue
    packages[fields["Package"]] = fields
    for p in fields.get("Provides", "").split(","):
        if p.strip(): providers.setdefault(p.strip().split(" ")[0], fields["Package"])
skip = {"libc-bin", "debconf", "dpkg", "perl-base", "install-info"}
seen, todo = set(), sys.argv[2:]
while todo:
    name = todo.pop()
    name = name if name in packages else providers.get(name, name)
    if name in seen or name not in packages: continue
    seen.add(name)
    for field in ("Depends", "Pre-Depends"):
        for alternative in packages[name].get(field, "").split(","):
            dep = alternative.split("|")[0].strip().split(" ")[0].split(":")[0]
            if dep and dep not in skip: todo.append(dep)
for name in sorted(seen): print(packages[name]["Filename"])
PY
while read -r f; do
  deb="debs/$(basename "$f")"
  [ -f "$deb" ] || fetch "$MIRROR/$f" "$deb"
  dpkg-deb -x "$deb" root
done < files.txt
LIB="$DIR/root/usr/lib/x86_64-linux-gnu"
sed "s#\"library_path\": \"#\"library_path\": \"$LIB/#" root/usr/share/vulkan/icd.d/lvp_icd.json > lvp_icd.json
cat > run <<RUN
#!/bin/sh
# Runs a program on the private lavapipe (and its validation layer) under its own glibc.
export VK_ICD_FILENAMES=$DIR/lvp_icd.json
export VK_LAYER_PATH=$DIR/root/usr/share/vulkan/explicit_layer.d
exec $LIB/ld-linux-x86-64.so.2 --library-path $LIB "\$@"
RUN
for tool in glslangValidator spirv-val; do
  printf '#!/bin/sh\nexec %s/run %s/root/usr/bin/%s "$@"\n' "$DIR" "$DIR" "$tool" > "$tool"
done
chmod +x run glslangValidator spirv-val
./run root/usr/bin/glslangValidator --version | head -1
echo "lavapipe with VK_KHR_cooperative_matrix is ready: $DIR/run <program>"
