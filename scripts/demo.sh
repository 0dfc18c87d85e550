#!/usr/bin/env bash
# Sets up, builds and runs the memsched tool on bundled real graphs: the README's main command.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
# Only the tool: the tests and examples are test.sh's business, the benchmarks build.sh's.
bash "$root/scripts/build.sh" -DMEMSCHED_BUILD_TOOL=ON memsched_tool
tool="$build/tool/memsched"
graph="$root/tests/data/torch/randwire_ws_stage.inference.json"
training="$root/tests/data/torch/resnet18.training.json"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { grep -o "\"$1\":[^,}]*" | head -1; }

echo "== memsched info $graph"
"$tool" info "$graph"
for algo in kahn dfs greedy serenity; do
  echo "== memsched order --algo $algo: $("$tool" order "$graph" --algo "$algo" --json | tee "$tmp/order.json" | field peak_bytes), $(field status < "$tmp/order.json")"
done
echo "== memsched simulate (serenity's order, first-fit arena): $("$tool" simulate "$graph" --order "$tmp/order.json" --arena first-fit --json | field arena_bytes)"
echo "== memsched remat $training --budget 80% (cheapest heuristic plan)"
"$tool" remat "$training" --budget 80% --algo best-heuristic --json > "$tmp/plan.json" || true
for key in status peak_bytes overhead; do field "$key" < "$tmp/plan.json"; done
