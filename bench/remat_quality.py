#!/usr/bin/python3
"""remat_plan's quality table on random layered graphs, Moccasin's protocol.

For each graph and budget: `memsched remat G --budget B --algo auto --order-from graph
--time-limit T --json` with B = P% of the file order's peak (`memsched info G --json`'s
order_peak: Moccasin's protocol; the tool's own "P%" is of checkpoint-all's peak, which may follow
another order), and prints one row: the
overhead, the gap to the proven bound ((cost - bound) / cost, "-" without a bound), the time to
the first plan, to within 1% of the final cost and to the final plan (the incumbents of the
JSON), the overhead of the best plan found within the first tenth of the limit and its ratio to
the final overhead, the run's seconds, and the rule that ended it (the JSON's ended_by: every
stage stalled, the time limit, the plan meets the bound, every stage finished). With --loaded
every row runs a second time beside a busy loop
pinned to CPU 0 (the run itself is not pinned): the loaded overhead and its ratio to the
unloaded one.

Graphs: the bundled Moccasin graphs (tests/data/moccasin/random_layered_n100.json, n250) and
graphs from `memsched generate random-layered --nodes N --seed S` with one of two families:
- `artifact` (the default): the width, edge and skip densities whose graphs match the statistics
  of the Moccasin artifact's graph of that size (its n500 and n1000, not bundled: edges, local
  edges and skip edges per node, depth; docs/generators.md), and sizes skewed like the
  artifact's (--sizes product): 500 vertices --width 0.45 --edge-density 0.16 --skip-density
  0.7, 1,000 vertices --width 0.44 --edge-density 0.14 --skip-density 0.8. Matched on seeds 1-3
  by graph statistics alone, no plan computed.
- `dense`: --width 0.43 --edge-density 0.2 (skip density 0.14), uniform sizes: the artifact's
  mean layer width and edge count, but about a third more edges between neighbouring layers, a
  fifth of the skip edges and twice the mean size: harder for rematerialization (each
  recomputation needs more inputs alive, and fewer large values carry the memory).
Seeds 21-25 (500 vertices, dense) and 21, 22 (1,000, dense) were looked at while developing;
pass others with --seeds.

  bench/remat_quality.py --memsched build/tool/memsched [--sizes 500,1000] [--seeds 26,27,28]
      [--budgets 90,80] [--limit-500 180] [--limit-1000 300] [--limit-bundled 60] [--backend cbc]
      [--loaded] [--ladder-steps N] [--family artifact|dense] [--bundled-only | --no-bundled]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run_json(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not p.stdout.strip():
        raise SystemExit(f"{' '.join(cmd)} printed nothing (exit {p.returncode}): {p.stderr.strip()[:300]}")
    return json.loads(p.stdout)


FAMILIES = {
    # size -> (width, edge density, skip density, sizes); see the module's docstring.
    "artifact": {500: (0.45, 0.16, 0.7, "product"), 1000: (0.44, 0.14, 0.8, "product")},
    "dense": {500: (0.43, 0.2, 0.14, "uniform"), 1000: (0.43, 0.2, 0.14, "uniform")},
}


def generate(memsched, family, nodes, seed, out):
    width, edge, skip, sizes = FAMILIES[family][nodes]
    run_json([memsched, "generate", "random-layered", "--nodes", str(nodes), "--width", str(width),
              "--edge-density", str(edge), "--skip-density", str(skip), "--sizes", sizes, "--seed", str(seed),
              "--out", out, "--json"])


def ended_by(doc):
    """The rule that ended the run (the tool's ended_by, remat_plan's stats.ended_by), as the
    table prints it."""
    return {"stalled": "stalled", "time_limit": "time limit", "bound_met": "bound met",
            "finished": "finished"}.get(doc.get("ended_by"), "-")


def profile(doc, limit):
    """(overhead, gap, first, within 1%, final, run seconds, ended by, overhead at a tenth of the
    limit) of one run; None where there is no plan. The last is None when no plan came by then."""
    inc = doc.get("incumbents") or []
    if not inc or doc.get("status") not in ("optimal", "feasible"):
        return None
    cost = doc["total_cost"]
    bound = doc.get("cost_bound")
    gap = (cost - bound) / cost if bound is not None and cost > 0 else None
    within = next(s for s, c in inc if c <= cost * 1.01)
    work = cost / (1 + doc["overhead"])  # the cost without recomputation
    early = [c for s, c in inc if s <= limit / 10]
    at_tenth = early[-1] / work - 1 if early else None
    return (doc["overhead"], gap, inc[0][0], within, inc[-1][0], doc.get("seconds", float("nan")), ended_by(doc),
            at_tenth)


def busy_loop():
    return subprocess.Popen(["taskset", "-c", "0", "sh", "-c", "while :; do :; done"])


def order_peak(memsched, graph):
    return run_json([memsched, "info", graph, "--json"])["order_peak"]


def remat(memsched, graph, pct, limit, args):
    budget = int(pct / 100.0 * order_peak(memsched, graph))
    cmd = [memsched, "remat", graph, "--budget", str(budget), "--algo", "auto", "--order-from", "graph",
           "--time-limit", str(limit), "--backend", args.backend, "--json"]
    if args.ladder_steps:
        cmd += ["--ladder-steps", str(args.ladder_steps)]
    return run_json(cmd)


def pct_text(x):
    return "-" if x is None else f"{100 * x:.2f}%"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memsched", default=os.path.join(ROOT, "build", "tool", "memsched"))
    ap.add_argument("--sizes", default="500,1000")
    ap.add_argument("--seeds", default="31,32,33")
    ap.add_argument("--family", choices=sorted(FAMILIES), default="artifact")
    ap.add_argument("--budgets", default="90,80")
    ap.add_argument("--limit-500", type=float, default=180)
    ap.add_argument("--limit-1000", type=float, default=300)
    ap.add_argument("--limit-bundled", type=float, default=60)
    ap.add_argument("--backend", default="cbc")
    ap.add_argument("--ladder-steps", type=int, default=0)
    ap.add_argument("--loaded", action="store_true")
    ap.add_argument("--bundled-only", action="store_true")
    ap.add_argument("--no-bundled", action="store_true")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    fitted = sorted(FAMILIES[args.family])
    if any(size not in fitted for size in sizes):
        ap.error(f"--sizes: the {args.family} family's parameters exist for {', '.join(map(str, fitted))} vertices only")

    rows = []  # (name, path, limit)
    if not args.no_bundled:
        for n in ("n100", "n250"):
            rows.append((f"moccasin {n}", os.path.join(ROOT, "tests", "data", "moccasin", f"random_layered_{n}.json"),
                         args.limit_bundled))
    tmp = tempfile.mkdtemp(prefix="remat_quality_")
    if not args.bundled_only:
        for size in sizes:
            for seed in (int(s) for s in args.seeds.split(",") if s):
                path = os.path.join(tmp, f"rl{size}_{seed}.json")
                generate(args.memsched, args.family, size, seed, path)
                limit = args.limit_500 if size <= 500 else args.limit_1000
                rows.append((f"rl{size} {args.family} seed {seed}", path, limit))

    head = ("| graph | budget | limit s | overhead | gap to bound | first plan s | within 1% s | final s"
            " | overhead at 10% of limit | / final | run s | ended by |")
    sep = "|---|---|---|---|---|---|---|---|---|---|---|---|"
    if args.loaded:
        head += " loaded overhead | loaded / alone |"
        sep += "---|---|"
    print(head)
    print(sep)
    for name, path, limit in rows:
        for pct in (int(b) for b in args.budgets.split(",") if b):
            alone = profile(remat(args.memsched, path, pct, limit, args), limit)
            cells = [name, f"{pct}%", f"{limit:g}"]
            if alone is None:
                cells += ["no plan", "-", "-", "-", "-", "-", "-", "-", "-"]
            else:
                ovh, gap, first, within, final, seconds, rule, tenth = alone
                ratio = "-" if tenth is None or ovh == 0 else f"{tenth / ovh:.2f}"
                cells += [pct_text(ovh), pct_text(gap), f"{first:.2f}", f"{within:.2f}", f"{final:.2f}", pct_text(tenth),
                          ratio, f"{seconds:.1f}", rule]
            if args.loaded:
                loop = busy_loop()
                try:
                    loaded = profile(remat(args.memsched, path, pct, limit, args), limit)
                finally:
                    loop.kill()
                    loop.wait()
                if loaded is None:
                    cells += ["no plan", "-"]
                else:
                    ratio = "-" if alone is None or alone[0] == 0 else f"{loaded[0] / alone[0]:.2f}"
                    cells += [pct_text(loaded[0]), ratio]
            print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
