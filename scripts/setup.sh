#!/usr/bin/env bash
# Installs the Debian packages memsched needs to build, test and benchmark. Idempotent: when
# everything is present it only checks (well under a second). Run as root (or with sudo available).
#   bash scripts/setup.sh [--glpk] [--clang] [--fuzz] [--onnx] [--plots] [--torch]
# --glpk also installs libglpk-dev, for the opt-in GLPK backend (-DMEMSCHED_WITH_GLPK=ON). GLPK is
# GPL-3+: it is installed, and linked, only when asked for. --clang installs Clang 19 with its
# sanitizer runtimes and libFuzzer (CI's sanitizer phase and fuzz/run.sh use it); --fuzz is the same.
# --onnx installs ONNX 1.12 with its protobuf headers, for the ONNX reader (memsched::onnx, found at
# configure time), and python3-onnx (to inspect models); --plots installs python3-matplotlib for
# scripts/plot.py. --torch installs python3-torch, python3-torchvision and python3-networkx (functorch's
# min-cut partitioner, a baseline of the PyTorch bench) for python/memsched_torch
# (about 200 MB of packages, 740 MB installed, 2-3 min). Without them the ONNX, picture and torch
# tests are skipped (ctest says so).
set -euo pipefail

# zlib1g-dev: CBC's link interface (pkg-config cbc) names -lz, and no package CBC depends on
# brings its development files; a minimal Debian root lacks them (scripts/fresh-machine.sh proves
# the list on such a root).
packages=(
  g++ cmake ninja-build pkg-config
  libboost-graph-dev doctest-dev libbenchmark-dev nlohmann-json3-dev
  coinor-libcbc-dev libgecode-dev zlib1g-dev
)
for arg in "$@"; do
  case "$arg" in
    --glpk) packages+=(libglpk-dev) ;;
    --clang | --fuzz) packages+=(clang-19 libclang-rt-19-dev) ;;
    --onnx) packages+=(libonnx-dev libprotobuf-dev python3-onnx) ;;
    --plots) packages+=(python3-matplotlib) ;;
    --torch) packages+=(python3-torch python3-torchvision python3-networkx) ;;
    *) echo "setup: unknown argument '$arg' (usage: setup.sh [--glpk] [--clang] [--fuzz] [--onnx] [--plots] [--torch])" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
