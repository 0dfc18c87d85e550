#!/usr/bin/python3
"""Exact arena layouts of training graphs' plans: one table row per graph and plan.

For every training graph of ../shared/graphs (checkmate/*_training.json, torch/*.training.json)
and two plans of it, checkpoint-all (no recomputation, the file's order) and the lifetime
search's plan at --budget (with recomputation):

  memsched remat G --budget B --algo ALGO --out P.json
  memsched simulate G --plan P.json --arena exact --time-limit T --json    (timed, median of --runs)
  memsched simulate G --plan P.json --arena greedy-by-size --json

and prints: tensors placed (computations), the plan's peak, greedy by size's arena, the exact
solver's arena, its proven lower bound and status, and the median wall time of the exact run
(process start and JSON reading included).

  bench/layout_training.py --memsched build/tool/memsched [--graphs DIR] [--budget 80%]
      [--time-limit 10] [--runs 3] [--only NAME,...]
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run_json(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode not in (0, 2):
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}): {out.stderr.strip()}")
    return json.loads(out.stdout) if out.stdout.strip() else None


def timed_json(cmd, runs):
    times, doc = [], None
    for _ in range(runs):
        start = time.monotonic()
        doc = run_json(cmd)
        times.append(time.monotonic() - start)
    return doc, statistics.median(times)


def training_graphs(root):
    files = sorted(glob.glob(os.path.join(root, "checkmate", "*_training.json")))
    return files + sorted(glob.glob(os.path.join(root, "torch", "*.training.json")))


def row(tool, graph, algo, budget, args, work):
    plan = os.path.join(work, "plan.json")
    made = run_json([tool, "remat", graph, "--budget", budget, "--algo", algo, "--out", plan, "--json"])
    if made is None or made.get("status") not in ("feasible", "optimal"):
        return None
    exact, seconds = timed_json([tool, "simulate", graph, "--plan", plan, "--arena", "exact",
                                 "--time-limit", str(args.time_limit), "--json"], args.runs)
    greedy = run_json([tool, "simulate", graph, "--plan", plan, "--arena", "greedy-by-size", "--json"])
    if not exact.get("valid") or not greedy.get("valid"):
        sys.exit(f"{graph}: the simulator rejects the {algo} plan")
    return (exact["computes"], exact["peak_bytes"], greedy["arena_bytes"], exact["arena_bytes"],
            exact["arena_lower_bound"], exact["arena_status"], seconds)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memsched", required=True, help="the memsched tool")
    parser.add_argument("--graphs", default=os.path.join(here, "..", "..", "shared", "graphs"))
    parser.add_argument("--budget", default="80%", help="budget of the plan with recomputation (default 80%%)")
    parser.add_argument("--time-limit", type=float, default=10.0, help="--time-limit of the exact layout (default 10)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per row; the median is printed (default 3)")
    parser.add_argument("--only", default="", help="comma-separated graph names (file names without .json)")
    args = parser.parse_args()
    graphs = training_graphs(args.graphs)
    if args.only:
        wanted = set(args.only.split(","))
        graphs = [g for g in graphs if os.path.basename(g)[:-5] in wanted]
    if not graphs:
        sys.exit(f"no training graphs under {args.graphs}")
    print("| graph | plan | computes | peak | greedy by size | exact | bound | status | seconds |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for graph in graphs:
            name = os.path.basename(graph)[:-5]
            for algo, budget in (("checkpoint-all", "100%"), ("lifetime-search", args.budget)):
                r = row(args.memsched, graph, algo, budget, args, work)
                label = "checkpoint-all" if algo == "checkpoint-all" else f"lifetime-search {budget}"
                if r is None:
                    print(f"| {name} | {label} | no plan | | | | | | |")
                    continue
                computes, peak, greedy, exact, bound, status, seconds = r
                print(f"| {name} | {label} | {computes:,} | {peak:,} | {greedy:,} | {exact:,} | {bound:,} | "
                      f"{status} | {seconds:.2f} |", flush=True)


if __name__ == "__main__":
    main()
