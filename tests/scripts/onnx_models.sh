#!/usr/bin/env bash
# ctest scripts_onnx_models: scripts/onnx_models.py writes small DARTS-V2 and RandWire-WS networks
# at ONNX granularity; the tool reads them, with and without their weights, as the same graph
# (same vertices, bytes and edges), and Serenity proves their order optimal. An unknown model name
# is exit status 2. Skips (exit 77) without a python3 that has PyTorch and ONNX (scripts/setup.sh
# --torch --onnx) or without the tool's ONNX reader.
#   bash tests/scripts/onnx_models.sh MEMSCHED_TOOL SOURCE_DIR
set -uo pipefail
tool=$1 src=$2
py=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import torch, onnx' >/dev/null 2>&1; then py=$p; break; fi
done
if [ -z "$py" ]; then
  echo "skipped: PyTorch and ONNX for Python are not installed (scripts/setup.sh --torch --onnx)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for name in darts randwire; do
  "$py" "$src/scripts/onnx_models.py" "$name" --small --out "$tmp/$name.onnx" 2>"$tmp/err" || { cat "$tmp/err"; fail "$name: export"; }
  "$py" "$src/scripts/onnx_models.py" "$name" --small --no-weights --out "$tmp/${name}_nw.onnx" 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "$name: export without weights"; }
  [ "$(stat -c %s "$tmp/${name}_nw.onnx")" -lt "$(stat -c %s "$tmp/$name.onnx")" ] || fail "$name: --no-weights is not smaller"
  for f in "$name" "${name}_nw"; do
    if ! "$tool" convert "$tmp/$f.onnx" --out "$tmp/$f.json" >"$tmp/err" 2>&1; then
      if grep -q "needs memsched::onnx" "$tmp/err"; then
        echo "skipped: the tool was built without the ONNX reader"; exit 77
      fi
      cat "$tmp/err"; fail "$f: convert"
    fi
    "$tool" order "$tmp/$f.onnx" --algo serenity --json >"$tmp/$f.order.json" || fail "$f: order"
    "$tool" order "$tmp/$f.onnx" --algo kahn --json >"$tmp/$f.kahn.json" || fail "$f: kahn"
  done
  "$py" - "$tmp" "$name" <<'PY' || fail "$name: checks"
import json, sys
tmp, name = sys.argv[1], sys.argv[2]
load = lambda f: json.load(open(f"{tmp}/{f}"))
full, stripped = load(f"{name}.json"), load(f"{name}_nw.json")
key = lambda g: (sorted((n["id"], n["bytes"]) for n in g["nodes"]), sorted(map(tuple, g["edges"])))
assert key(full) == key(stripped), "the graph depends on whether the weights are in the file"
ops = {n.get("op") for n in full["nodes"]}
assert len(full["nodes"]) >= 40, f"only {len(full['nodes'])} vertices: not one per operator"
assert {"Conv", "Relu"} <= ops, f"operators missing: {sorted(o for o in ops if o)}"
for f in (name, name + "_nw"):
    order, kahn = load(f"{f}.order.json"), load(f"{f}.kahn.json")
    assert order["status"] == "optimal", order["status"]
    assert order["lower_bound"] == order["peak_bytes"]
    assert order["peak_bytes"] <= kahn["peak_bytes"]
    assert sorted(order["order"]) == sorted(n["id"] for n in full["nodes"]), "the order is not a permutation"
print(f"{name}: {len(full['nodes'])} vertices, optimal peak {load(name + '.order.json')['peak_bytes']}")
PY
done
"$py" "$src/scripts/onnx_models.py" no_such_model --out "$tmp/x.onnx" >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown model is not exit status 2"
echo "onnx_models.py: passed"
