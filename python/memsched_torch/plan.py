"""Plans from the memsched tool: remat plans for joint graphs, orders for inference graphs.

The tool is called as a subprocess on a graph JSON file (no binding: the tool is what CI builds
and tests, and a plan is one JSON document). It is found as $MEMSCHED, then `memsched` on PATH,
then this repository's build/tool/memsched.
"""

import json
import os
import shutil
import subprocess


class PlanError(Exception):
    """No plan (an infeasible budget, a missing tool, a tool error) or a plan the runner cannot
    execute; the message says which. least_bytes: the least feasible budget found (bytes) when
    remat searched for one and found it, and peak_bytes the no-recomputation peak it is a share of."""
    least_bytes = None
    peak_bytes = None


def find_tool(explicit=None):
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [explicit, os.environ.get("MEMSCHED"), shutil.which("memsched"),
                  os.path.join(here, os.pardir, os.pardir, "build", "tool", "memsched")]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    if explicit:
        raise PlanError(f"memsched tool '{explicit}' is not an executable file")
    raise PlanError("no memsched tool: set MEMSCHED=PATH, put memsched on PATH or build target memsched_tool")


def budget_arg(budget):
    """Bytes (int) or a fraction of the no-recomputation peak (float in (0, 1]) -> the tool's --budget."""
    if isinstance(budget, bool):
        raise PlanError(f"budget {budget!r}: expected bytes (int) or a fraction in (0, 1] (float)")
    if isinstance(budget, int):
        if budget < 0:
            raise PlanError(f"budget {budget}: bytes must be >= 0")
        return str(budget)
    if isinstance(budget, float):
        if not 0 < budget <= 1:
            raise PlanError(f"budget {budget}: a fraction of the no-recomputation peak must be in (0, 1]")
        return f"{budget * 100:.10g}%"
    if isinstance(budget, str) and budget.endswith("%"):
        return budget
    raise PlanError(f"budget {budget!r}: expected bytes (int), a fraction in (0, 1] (float) or 'P%'")


def run_tool(tool, args):
    done = subprocess.run([tool, *args], capture_output=True, text=True)
    doc = None
    if done.stdout.strip():
        try:
            doc = json.loads(done.stdout)
        except json.JSONDecodeError:
            doc = None
    return done.returncode, doc, done.stderr.strip()


def remat(graph_path, budget, algo="auto", tool=None, extra=(), find_least=True):
    """The tool's remat document ({"steps", "peak_bytes", "total_cost", ...}) within budget.

    Raises PlanError naming the budget, whether the tool proved it infeasible or only found no
    plan (a time limit), and (find_least: by bisection, a few more tool runs with the same
    algorithm and flags) the least budget the algorithm plans when none fits."""
    tool = find_tool(tool)
    arg = budget_arg(budget)
    rc, doc, err = run_tool(tool, ["remat", graph_path, "--budget", arg, "--algo", algo, "--json", *extra])
    if rc == 0 and doc is not None:
        return doc
    if rc != 2 or doc is None:
        raise PlanError(f"memsched remat {graph_path} --budget {arg} --algo {algo} failed: {err or rc}")
    head = no_plan_text(arg, algo, doc)
    if not find_least:
        raise PlanError(head)
    peak = no_remat_peak(graph_path, tool)
    least = least_feasible(graph_path, algo, tool, doc.get("budget", 0), peak, extra)
    if least is None:
        raise PlanError(f"{head}; the least feasible budget is unknown: --algo {algo} plans no budget "
                        f"up to the no-recomputation peak {peak:,} bytes")
    error = PlanError(f"{head}; the least feasible budget found is {least:,} bytes "
                      f"({100.0 * least / peak:.1f}% of the no-recomputation peak {peak:,} bytes; "
                      f"the least budget --algo {algo} planned, by bisection to 0.5% of the peak)")
    error.least_bytes, error.peak_bytes = least, peak
    raise error


def no_plan_text(arg, algo, doc):
    """The budget, and whether the tool proved it infeasible or only found no plan."""
    status, message = doc.get("status", "?"), doc.get("message", "")
    budget = f"budget {arg} ({doc.get('budget', 0):,} bytes)"
    why = f": {message}" if message else ""
    if status == "infeasible":
        return f"{budget} is infeasible (proven by --algo {algo}{why})"
    return f"no plan within {budget}: --algo {algo} found none (status {status}, not proven infeasible{why})"


def no_remat_peak(graph_path, tool):
    rc, doc, err = run_tool(tool, ["remat", graph_path, "--budget", "100%", "--algo", "checkpoint-all", "--json"])
    if rc != 0 or doc is None:
        raise PlanError(f"memsched remat {graph_path} --algo checkpoint-all failed: {err or rc}")
    return int(doc["peak_bytes"])


def least_feasible(graph_path, algo, tool, infeasible, peak, extra=(), tolerance=0.005):
    """The least budget in bytes that algo plans, by bisection between an infeasible budget and
    the no-recomputation peak, to within tolerance of the peak; None when algo plans not even
    the peak."""
    def plan_peak(budget):
        rc, doc, _ = run_tool(tool, ["remat", graph_path, "--budget", str(budget), "--algo", algo, "--json", *extra])
        return int(doc.get("peak_bytes", budget)) if rc == 0 and doc is not None else None

    hi = plan_peak(peak)
    if hi is None:
        return None
    lo = int(infeasible)
    while hi - lo > max(1, int(tolerance * peak)):
        mid = (lo + hi) // 2
        planned = plan_peak(mid)
        if planned is not None:
            hi = min(mid, planned)
        else:
            lo = mid
    return hi


def order(graph_path, algo="serenity", tool=None, extra=()):
    """The tool's order document ({"order", "peak_bytes", ...}) of an inference graph."""
    tool = find_tool(tool)
    rc, doc, err = run_tool(tool, ["order", graph_path, "--algo", algo, "--json", *extra])
    if rc != 0 or doc is None:
        raise PlanError(f"memsched order {graph_path} --algo {algo} failed: {err or rc}")
    return doc
