#!/usr/bin/env bash
# Sets up, builds and runs the memsched tool on a bundled real graph: the README's main command.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
bash "$root/scripts/build.sh" -DMEMSCHED_BUILD_EXAMPLES=ON
tool="$build/examples/memsched"
graph="$root/tests/data/torch/resnet18.inference.json"
echo "== memsched info $graph"
"$tool" info "$graph"
for algo in kahn dfs greedy; do
  echo "== memsched order --algo $algo"
  "$tool" order "$graph" --algo "$algo" --json | head -c 200
  echo " ..."
done
