#!/usr/bin/python3
"""HiRemate with and without the H-ILP top level, on the bundled training graphs.

For each graph and budget: `memsched remat G --budget P% --algo hiremate --json --time-limit T`,
once as is (the groups and chain top levels) and once with `--top-solver BACKEND` (the H-ILP as a
third top level, each solve limited to 20 s), and prints one row: the overhead, which top level
gave the hierarchy's plan, the seconds, and for the H-ILP run its expanded plan's cost beside the
other two top levels' (of the partition that gave the plan), its status and its model's size.
The H-ILP is opt-in because it costs tens of times the default's time and rarely changes the
plan (docs/hiremate.md has the figures).

  bench/hiremate_top_levels.py [--memsched build/tool/memsched] [--graphs transformer,resnet18,...]
      [--budgets 50,30] [--backend cbc] [--time-limit 300]
"""

import argparse
import json
import os
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRAPHS = "transformer,darts_v2_normal_cell,resnet18,mobilenet_v2,googlenet,gpt2_small"


def run(memsched, graph, budget, limit, extra):
    start = time.monotonic()
    p = subprocess.run([memsched, "remat", graph, "--budget", f"{budget}%", "--algo", "hiremate", "--json",
                        "--time-limit", str(limit)] + extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seconds = time.monotonic() - start
    if not p.stdout.strip():
        raise SystemExit(f"{graph} at {budget}%: memsched printed nothing (exit {p.returncode}): {p.stderr.strip()[:300]}")
    return json.loads(p.stdout), seconds


def cell(doc, seconds):
    h = doc.get("hiremate", {})
    if doc.get("status") not in ("optimal", "feasible"):
        return f"{doc.get('status')}, {seconds:.0f} s"
    return f"{100 * doc['overhead']:.3f}%, {h.get('top_method', '-')}, {seconds:.0f} s"


def costs(doc):
    h = doc.get("hiremate", {})
    fmt = lambda k: f"{h[k]:.4g}" if k in h else "-"
    return (f"{fmt('hilp_cost')} / {fmt('groups_cost')} / {fmt('chain_cost')}, {h.get('hilp_status', 'not run')}, "
            f"{h.get('hilp_variables', '-')} variables")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memsched", default=os.path.join(ROOT, "build", "tool", "memsched"))
    ap.add_argument("--graphs", default=GRAPHS)
    ap.add_argument("--budgets", default="50,30")
    ap.add_argument("--backend", default="cbc")
    ap.add_argument("--time-limit", type=float, default=300)
    args = ap.parse_args()
    print("| graph | budget | two top levels | with the H-ILP | H-ILP / groups / chain cost, status, model |")
    print("|---|---|---|---|---|")
    for name in args.graphs.split(","):
        graph = os.path.join(ROOT, "tests", "data", "torch", f"{name}.training.json")
        for budget in args.budgets.split(","):
            plain, plain_s = run(args.memsched, graph, budget, args.time_limit, [])
            hilp, hilp_s = run(args.memsched, graph, budget, args.time_limit, ["--top-solver", args.backend])
            print(f"| {name} | {budget}% | {cell(plain, plain_s)} | {cell(hilp, hilp_s)} | {costs(hilp)} |", flush=True)


if __name__ == "__main__":
    main()
