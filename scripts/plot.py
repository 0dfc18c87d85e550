#!/usr/bin/env python3
"""Pictures of memsched results (matplotlib, Agg backend: no display needed).

  plot.py timeline SIM.json|TIMELINE.csv [--graph GRAPH.json] [--budget BYTES] [--title T] --out F.png|F.svg
      Live bytes at each step of an order or a plan: the bytes in use while each step runs and
      after its frees, the peak marked with the values resident there (largest first), the budget
      as a line, recomputations (a node computed again in a plan) marked.
      SIM.json is the output of `memsched simulate GRAPH --order O.json|--plan P.json --json`;
      TIMELINE.csv has the columns step,node,op,live_before,transient,live_after (op compute or
      free; transient = bytes in use while the step runs). --graph names the nodes (JSON graphs).
  plot.py sweep SWEEP.csv [--title T] --out F.png|F.svg
      Budget against compute overhead for every strategy (the picture of Checkmate's Figure 5).
      SWEEP.csv is what `memsched sweep GRAPH --csv SWEEP.csv` writes (budget,algorithm,status,
      peak_bytes,total_cost,overhead,seconds); rows without a plan are left out.
  plot.py peaks PEAKS.csv [--title T] --out F.png|F.svg
      Peak memory of Kahn's order against Serenity's optimal order, per graph.
      PEAKS.csv has the columns graph,kahn,serenity (bytes); `collect-peaks` writes it.
  plot.py collect-peaks --tool MEMSCHED GRAPH... --out PEAKS.csv
      Runs `memsched order GRAPH --algo kahn|serenity --json` for every graph and writes PEAKS.csv.
  plot.py check
      Exits 0 when matplotlib loads, 3 when it does not (what the tests ask before drawing).

Exit codes: 0 done, 1 a bad input file (the message names it), 2 usage, 3 matplotlib missing.
"""

import argparse
import csv
import json
import os
import subprocess
import sys


def fail(message, code=1):
    print("plot.py: " + message, file=sys.stderr)
    sys.exit(code)


def pyplot():
    try:
        import matplotlib
    except ImportError:
        # A python3 first on PATH without Debian's packages (pyenv, a venv): try the system's once.
        system = "/usr/bin/python3"
        if os.path.exists(system) and os.path.realpath(sys.executable) != os.path.realpath(system) \
                and not os.environ.get("MEMSCHED_PLOT_REEXEC"):
            os.environ["MEMSCHED_PLOT_REEXEC"] = "1"
            os.execv(system, [system, os.path.abspath(__file__)] + sys.argv[1:])
        fail("matplotlib is not installed (Debian: python3-matplotlib; scripts/setup.sh --plots)", 3)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def human(n):
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.1f %s" % (n, unit))
        n /= 1024


def save(fig, out):
    ext = os.path.splitext(out)[1].lower()
    if ext not in (".png", ".svg"):
        fail("--out %s: expected a .png or .svg file" % out, 2)
    fig.savefig(out, dpi=120, bbox_inches="tight")


def read_csv(path, required):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail("%s: cannot read the file (%s)" % (path, e.strerror))
    if not rows:
        fail("%s: no rows" % path)
    missing = [c for c in required if c not in rows[0]]
    if missing:
        fail("%s: missing column(s) %s (has %s)" % (path, ", ".join(missing), ", ".join(rows[0].keys())))
    return rows


def number(path, row, column, kind=int):
    try:
        return kind(row[column])
    except (TypeError, ValueError):
        fail("%s: column %s: '%s' is not a number" % (path, column, row[column]))


# ---------------------------------------------------------------------------- timeline

def read_timeline(path):
    """Steps as dicts (step, node, op, live_before, transient, live_after) and the resident ids at the peak (or None)."""
    if path.endswith(".json"):
        try:
            with open(path) as f:
                doc = json.load(f)
        except OSError as e:
            fail("%s: cannot read the file (%s)" % (path, e.strerror))
        except ValueError as e:
            fail("%s: not JSON (%s)" % (path, e))
        if not isinstance(doc, dict) or "timeline" not in doc:
            fail("%s: no \"timeline\": expected the output of `memsched simulate --json`" % path)
        if not doc.get("valid", True):
            fail("%s: the simulation is not valid: %s" % (path, doc.get("error", "")))
        steps = []
        for s in doc["timeline"]:
            op = s.get("op", "compute")
            before = s["live_before"]
            steps.append({"step": s["step"], "node": s["node"], "op": op, "live_before": before,
                          "transient": s.get("transient", before), "live_after": s["live_after"]})
        return steps, doc.get("resident_at_peak")
    rows = read_csv(path, ["step", "node", "live_before", "transient", "live_after"])
    steps = []
    for r in rows:
        steps.append({"step": number(path, r, "step"), "node": number(path, r, "node"), "op": r.get("op") or "compute",
                      "live_before": number(path, r, "live_before"), "transient": number(path, r, "transient"),
                      "live_after": number(path, r, "live_after")})
    return steps, None


def read_graph_names(path):
    """id -> (label, bytes) from a memsched JSON graph."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: cannot read the graph (%s)" % (path, e))
    names = {}
    for n in doc.get("nodes", []):
        label = n.get("name") or n.get("op") or str(n["id"])
        names[n["id"]] = (label, n.get("bytes"))
    return names


def cmd_timeline(args):
    steps, resident = read_timeline(args.input)
    if not steps:
        fail("%s: the timeline is empty" % args.input)
    names = read_graph_names(args.graph) if args.graph else {}
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(10, 4.5))
    xs = list(range(len(steps)))
    during = [s["transient"] for s in steps]
    after = [s["live_after"] for s in steps]
    mib = 1024.0 * 1024.0
    ax.fill_between(xs, [d / mib for d in during], step="mid", alpha=0.35, color="tab:blue", label="in use while the step runs")
    ax.step(xs, [a / mib for a in after], where="mid", color="tab:blue", linewidth=1.2, label="resident after the step")

    # Recomputations: a compute of a node computed before.
    seen, recompute = set(), []
    for k, s in enumerate(steps):
        if s["op"] != "compute":
            continue
        if s["node"] in seen:
            recompute.append(k)
        seen.add(s["node"])
    if recompute:
        ax.scatter(recompute, [during[k] / mib for k in recompute], marker="v", color="tab:red", s=28, zorder=3,
                   label="recomputation (%d)" % len(recompute))

    peak_step = max(range(len(steps)), key=lambda k: during[k])
    peak = during[peak_step]
    if resident is None:  # replay a plan: computed and not yet freed, the running node last
        live = []
        for s in steps[:peak_step + 1]:
            if s["op"] == "compute":
                if s["node"] in live:
                    live.remove(s["node"])
                live.append(s["node"])
            elif s["node"] in live:
                live.remove(s["node"])
        resident = live
    def label(i):
        name, size = names.get(i, (str(i), None))
        return "%s (%s)" % (name, human(size)) if size is not None else name
    listed = resident
    if names:
        listed = sorted(resident, key=lambda i: -(names.get(i, ("", 0))[1] or 0))
    shown = [label(i) for i in listed[:8]]
    if len(listed) > 8:
        shown.append("... %d more" % (len(listed) - 8))
    ax.scatter([peak_step], [peak / mib], marker="o", color="black", zorder=4)
    ax.annotate("peak %s at step %d\nresident there:%s" % (human(peak), peak_step, "\n  ".join([""] + shown) if shown else " -"),
                xy=(peak_step, peak / mib), xytext=(1.02, 1.0), textcoords="axes fraction", ha="left", va="top",
                fontsize=7, arrowprops=dict(arrowstyle="->", color="black", lw=0.6),
                bbox=dict(boxstyle="round", fc="white", ec="0.7"))
    if args.budget is not None:
        ax.axhline(args.budget / mib, color="tab:orange", linestyle="--", linewidth=1.2, label="budget %s" % human(args.budget))
    ax.set_xlabel("step")
    ax.set_ylabel("memory (MiB)")
    ax.set_xlim(-0.5, len(steps) - 0.5)
    ax.set_ylim(bottom=0)
    ax.set_title(args.title or os.path.basename(args.input))
    ax.legend(loc="upper left", fontsize=7)
    save(fig, args.out)


# ---------------------------------------------------------------------------- sweep

def cmd_sweep(args):
    rows = read_csv(args.input, ["budget", "algorithm", "status", "overhead"])
    by_algo = {}
    for r in rows:
        if r["status"] not in ("optimal", "feasible"):
            continue
        by_algo.setdefault(r["algorithm"], []).append((number(args.input, r, "budget"), number(args.input, r, "overhead", float)))
    if not by_algo:
        fail("%s: no row has a plan (status optimal or feasible)" % args.input)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    markers = "os^Dv<>ph*"
    mib = 1024.0 * 1024.0
    for i, (algo, points) in enumerate(sorted(by_algo.items())):
        points.sort()
        ax.plot([b / mib for b, _ in points], [o for _, o in points], marker=markers[i % len(markers)], markersize=4,
                linewidth=1.2, label=algo)
    ax.set_xlabel("memory budget (MiB)")
    ax.set_ylabel("compute overhead (x the cost without recomputation)")
    ax.set_title(args.title or os.path.basename(args.input))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    save(fig, args.out)


# ---------------------------------------------------------------------------- peaks

def cmd_peaks(args):
    rows = read_csv(args.input, ["graph", "kahn", "serenity"])
    graphs = [r["graph"] for r in rows]
    kahn = [number(args.input, r, "kahn") for r in rows]
    best = [number(args.input, r, "serenity") for r in rows]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(rows) + 2), 4.5))
    mib = 1024.0 * 1024.0
    width = 0.4
    xs = list(range(len(rows)))
    ax.bar([x - width / 2 for x in xs], [k / mib for k in kahn], width, label="Kahn (framework default)", color="tab:gray")
    ax.bar([x + width / 2 for x in xs], [s / mib for s in best], width, label="Serenity (optimal)", color="tab:green")
    for x, k, s in zip(xs, kahn, best):
        if k > 0:
            text = "same" if k == s else "-%.0f%%" % (100.0 * (k - s) / k)
            ax.text(x + width / 2, s / mib, text, ha="center", va="bottom", fontsize=7)
    ax.set_xticks(xs)
    ax.set_xticklabels(graphs, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("peak memory (MiB)")
    ax.set_title(args.title or "peak memory: Kahn vs Serenity")
    ax.legend(fontsize=8)
    save(fig, args.out)


def cmd_collect_peaks(args):
    rows = []
    for g in args.graphs:
        peaks = {}
        for algo in ("kahn", "serenity"):
            p = subprocess.run([args.tool, "order", g, "--algo", algo, "--json"], capture_output=True, text=True)
            if p.returncode != 0:
                fail("%s: memsched order --algo %s failed: %s" % (g, algo, p.stderr.strip()))
            peaks[algo] = json.loads(p.stdout)["peak_bytes"]
        name = os.path.basename(g)
        for ext in (".json", ".graphml", ".dot", ".onnx"):
            if name.endswith(ext):
                name = name[: -len(ext)]
        rows.append((name, peaks["kahn"], peaks["serenity"]))
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["graph", "kahn", "serenity"])
        w.writerows(rows)


def main():
    p = argparse.ArgumentParser(prog="plot.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("timeline")
    t.add_argument("input")
    t.add_argument("--graph")
    t.add_argument("--budget", type=int)
    t.add_argument("--title")
    t.add_argument("--out", required=True)
    for name in ("sweep", "peaks"):
        s = sub.add_parser(name)
        s.add_argument("input")
        s.add_argument("--title")
        s.add_argument("--out", required=True)
    sub.add_parser("check")
    c = sub.add_parser("collect-peaks")
    c.add_argument("graphs", nargs="+")
    c.add_argument("--tool", required=True)
    c.add_argument("--out", required=True)
    args = p.parse_args()
    {"check": lambda _: pyplot(), "timeline": cmd_timeline, "sweep": cmd_sweep, "peaks": cmd_peaks, "collect-peaks": cmd_collect_peaks}[args.command](args)


if __name__ == "__main__":
    main()
