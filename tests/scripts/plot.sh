#!/usr/bin/env bash
# ctest scripts_plot: draws every picture of scripts/plot.py (timeline of an order and of a plan,
# sweep, peaks) as PNG and SVG from bundled graphs, with data the built tool writes, and checks each
# file is a PNG (signature) or an SVG (<svg element) of nonzero size, and that bad input fails with a
# message naming the file. Skips (exit 77) with a message when matplotlib is missing.
#   bash tests/scripts/plot.sh MEMSCHED_TOOL SOURCE_DIR
set -uo pipefail
tool=$1
root=$2
plot="$root/scripts/plot.py"
data="$root/tests/data"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 -c 'import sys' 2>/dev/null || { echo "skipped: no python3"; exit 77; }
python3 "$plot" check 2>"$work/probe.err"
if [ $? -ne 0 ]; then
  echo "skipped: matplotlib is not installed (scripts/setup.sh --plots installs python3-matplotlib)"
  exit 77
fi

passed=0
failed=0
check() {  # check NAME COMMAND...: the command succeeds
  if "${@:2}" >"$work/out" 2>"$work/err"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAILED: $1: $(cat "$work/err")"
  fi
}
is_picture() {  # is_picture FILE: nonzero size, PNG signature or an <svg element
  local f=$1
  [ -s "$f" ] || { echo "$f is empty or missing" >&2; return 1; }
  case "$f" in
    *.png) [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || { echo "$f: not a PNG" >&2; return 1; } ;;
    *.svg) grep -q "<svg" "$f" && grep -q "</svg>" "$f" || { echo "$f: not an SVG" >&2; return 1; } ;;
  esac
}
fails_naming() {  # fails_naming TEXT COMMAND...: the command fails and stderr names TEXT
  if "${@:2}" 2>"$work/ferr" >/dev/null; then echo "succeeded" >&2; return 1; fi
  grep -qF -- "$1" "$work/ferr" || { echo "stderr does not name $1: $(cat "$work/ferr")" >&2; return 1; }
}

inference="$data/torch/resnet18.inference.json"
training="$data/torch/resnet18.training.json"
check "order" "$tool" order "$inference" --algo serenity --out "$work/order.json"
check "simulate order" sh -c "\"$tool\" simulate \"$inference\" --order \"$work/order.json\" --json > \"$work/sim_order.json\""
check "remat" sh -c "\"$tool\" remat \"$training\" --budget 70% --algo best-heuristic --out \"$work/plan.json\" > /dev/null"
check "simulate plan" sh -c "\"$tool\" simulate \"$training\" --plan \"$work/plan.json\" --json > \"$work/sim_plan.json\""
check "sweep" sh -c "\"$tool\" sweep \"$training\" --num-budgets 6 --csv \"$work/sweep.csv\" > /dev/null"
check "collect-peaks" python3 "$plot" collect-peaks --tool "$tool" "$data/onnx/resnet18.onnx" "$data/torch/transformer.inference.json" --out "$work/peaks.csv"
budget=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["budget"])' "$work/plan.json")
for ext in png svg; do
  check "timeline order $ext" python3 "$plot" timeline "$work/sim_order.json" --graph "$inference" --out "$work/t_order.$ext"
  check "timeline plan $ext" python3 "$plot" timeline "$work/sim_plan.json" --graph "$training" --budget "$budget" --out "$work/t_plan.$ext"
  check "sweep $ext" python3 "$plot" sweep "$work/sweep.csv" --out "$work/sweep.$ext"
  check "peaks $ext" python3 "$plot" peaks "$work/peaks.csv" --out "$work/peaks.$ext"
  for f in t_order t_plan sweep peaks; do check "$f.$ext is a picture" is_picture "$work/$f.$ext"; done
done
# The peaks table holds what the tool computed: transformer.inference is 983,040 (Kahn) -> 688,128 (Serenity).
check "peaks.csv values" grep -qx "transformer.inference,983040,688128" "$work/peaks.csv"
# The plan's timeline marks its recomputations: the plan recomputes (a node computed twice).
check "plan recomputes" python3 -c 'import json,sys; s=[x["node"] for x in json.load(open(sys.argv[1]))["steps"] if x["op"]=="compute"]; sys.exit(len(s)==len(set(s)))' "$work/plan.json"
# A CSV timeline (the documented columns) draws too.
printf 'step,node,op,live_before,transient,live_after\n0,0,compute,0,100,100\n1,1,compute,100,300,200\n2,0,free,200,200,100\n3,0,compute,100,250,250\n' > "$work/t.csv"
check "timeline csv" python3 "$plot" timeline "$work/t.csv" --budget 280 --out "$work/t_csv.png"
check "timeline csv is a picture" is_picture "$work/t_csv.png"
# Bad input fails, naming the file.
printf 'budget,algo\n1,2\n' > "$work/bad.csv"
check "bad sweep csv" fails_naming "$work/bad.csv: missing column(s)" python3 "$plot" sweep "$work/bad.csv" --out "$work/x.png"
check "missing file" fails_naming "$work/none.json" python3 "$plot" timeline "$work/none.json" --out "$work/x.png"
check "bad extension" fails_naming "expected a .png or .svg" python3 "$plot" peaks "$work/peaks.csv" --out "$work/x.pdf"

echo "plot: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
