"""ctest python_memsched_torch: the memsched_torch package on small models (run by memsched_torch.sh
with a python3 that has torch).

For each model: the joint graph is read by `memsched info`, and one (two for the CNN) SGD step(s)
run by memsched's plan at 100%, 70% and 50% of the no-recomputation peak give outputs, losses,
parameter gradients and BatchNorm buffers torch.equal to eager PyTorch's from the same state and
seed; the 50% plans recompute (overhead > 0) and predict a peak within the budget. A budget below
every plan ends in an error naming it, whether it is proven infeasible, and the least feasible
budget (one that plans), or why that is unknown.

  python3 tests/scripts/memsched_torch_test.py MEMSCHED_TOOL SOURCE_DIR
"""

import copy
import json
import os
import re
import subprocess
import sys
import tempfile

tool, root = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(root, "python"))
sys.path.insert(0, os.path.join(root, "tests", "scripts"))

import torch  # noqa: E402

import memsched_torch  # noqa: E402
from memsched_torch_models import InplaceViews, PoolHead, PoolSkip, SinChain, SmallCNN, TinyGPT  # noqa: E402

failures = []
# The MILP stage of --algo auto runs to its time limit; the heuristics, DTR and the lifetime search
# alone are fast and deterministic.
FAST = ("--backend", "none")


def check(what, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {what}{': ' + detail if detail and not ok else ''}")
    if not ok:
        failures.append(what)


def loss_of(out):
    return out if out.dim() == 0 else (out.float() ** 2).mean()


def train(model, inputs, steps, seed):
    """Eager or budgeted: `steps` SGD steps; returns per step (output, loss, grads), then buffers."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    record = []
    for s in range(steps):
        torch.manual_seed(seed + s)
        opt.zero_grad()
        out = model(*inputs)
        loss = loss_of(out)
        loss.backward()
        record.append((out.detach().clone(), loss.detach().clone(),
                       [None if p.grad is None else p.grad.clone() for p in model.parameters()]))
        opt.step()
    return record, [b.clone() for b in model.buffers()]


def same(a, b):
    (ra, ba), (rb, bb) = a, b
    for (oa, la, ga), (ob, lb, gb) in zip(ra, rb):
        if not (torch.equal(oa, ob) and torch.equal(la, lb)):
            return "outputs or loss differ"
        for i, (x, y) in enumerate(zip(ga, gb)):
            if (x is None) != (y is None) or (x is not None and not torch.equal(x, y)):
                return f"gradient of parameter {i} differs"
    for i, (x, y) in enumerate(zip(ba, bb)):
        if not torch.equal(x, y):
            return f"buffer {i} differs"
    return ""


def run_model(name, make, inputs, steps, work):
    torch.manual_seed(0)
    model = make().train()
    path = os.path.join(work, f"{name}.json")
    jg = memsched_torch.export_joint(copy.deepcopy(model), inputs, path, name)
    graph = json.load(open(path))
    static = sum(t.numel() * t.element_size() for t in {id(t): t for t in list(model.parameters()) + list(model.buffers())}.values())
    check(f"{name}: static_bytes = parameter and buffer bytes ({static})", graph["static_bytes"] == static,
          str(graph["static_bytes"]))
    roles = {v["id"]: v["role"] for v in graph["nodes"]}
    grads = [v for owners in jg.grad_vertices for v in owners]
    tangents = [v.id for v in jg.vertices if v.kind == "tangent"]
    check(f"{name}: one tangent per module output; tangents and parameter gradients are backward in the file",
          len(tangents) == jg.num_outputs and all(roles[v] == "backward" for v in tangents + grads)
          and any(r == "forward" for r in roles.values()))
    check(f"{name}: parameter gradients are graph outputs", all(g is None or g in jg.outputs for g in grads))
    done = subprocess.run([tool, "info", path, "--json"], capture_output=True, text=True)
    info = json.loads(done.stdout) if done.returncode == 0 else {}
    check(f"{name}: memsched info reads the graph", done.returncode == 0 and info.get("nodes", info.get("vertices")) == len(graph["nodes"]),
          done.stderr.strip() or done.stdout[:200])
    eager = train(copy.deepcopy(model), inputs, steps, seed=7)
    for budget in (1.0, 0.7, 0.5):
        m = memsched_torch.budgeted(copy.deepcopy(model), inputs, budget=budget, tool=tool, joint=jg, extra=FAST)
        plan = m.plan
        check(f"{name} @ {budget:.0%}: plan peak {plan['peak_bytes']} <= budget {plan['budget']}",
              plan["peak_bytes"] <= plan["budget"])
        if budget == 0.5:
            recomputed = len([s for s in plan["steps"] if s["op"] == "compute"]) > len(graph["nodes"])
            check(f"{name} @ 50%: the plan recomputes", recomputed and plan["overhead"] > 0, str(plan["overhead"]))
        result = train(m, inputs, steps, seed=7)
        diff = same(eager, result)
        check(f"{name} @ {budget:.0%}: outputs, losses, gradients, buffers equal eager's ({steps} steps)", not diff, diff)
    return jg, path


def check_inference():
    """Serenity's order of a branching forward graph, run node by node: the same output as eager."""
    from memsched_torch.inference import ordered
    torch.manual_seed(0)
    model = SmallCNN(blocks=2).eval()
    x = torch.randn(2, 3, 16, 16)
    runner, doc, graph = ordered(model, (x,), tool=tool)
    with torch.no_grad():
        expected = model(x)
    check("inference: Serenity's order covers every vertex", sorted(doc["order"]) == sorted(v["id"] for v in graph["nodes"]))
    check("inference: the output in Serenity's order equals eager's", torch.equal(runner(x), expected))


def check_inference_memory():
    """The forward graph's bytes are the real tensors': max-pool's indices, which nothing reads, are
    the pool's workspace (not bytes held with its output); the input, which the caller holds, is no
    vertex's bytes. The order's peak is then what a run allocates, measured with mallinfo2."""
    from memsched_torch.inference import ordered
    torch.manual_seed(0)
    model = PoolSkip(channels=8).eval()
    x = torch.randn(1, 8, 64, 64)
    runner, doc, graph = ordered(model, (x,), tool=tool)
    out, indices = torch.ops.aten.max_pool2d_with_indices(x, [2, 2], [2, 2])
    pool = [v for v in graph["nodes"] if v["op"] == "maxpool2d"]
    sizes = [(v["bytes"], v.get("workspace", 0)) for v in pool]
    real = (out.numel() * out.element_size(), indices.numel() * indices.element_size())
    check("inference: max-pool's bytes are its output's, its workspace its indices'", sizes == [real], f"{sizes} != [{real}]")
    inputs = [v["bytes"] for v in graph["nodes"] if v["op"] == "input"]
    check("inference: the input is the caller's (0 bytes; input_bytes)",
          inputs == [0] and graph.get("input_bytes") == x.numel() * x.element_size(), f"{inputs}, {graph.get('input_bytes')}")
    # y (32 KiB), conv1's output and its relu (64 KiB each) are resident together.
    check("inference: the order's peak by hand", doc["peak_bytes"] == 32768 + 2 * 65536, str(doc["peak_bytes"]))
    try:
        from memsched_torch.bench import PeakMeter
    except (AttributeError, OSError):  # no glibc mallinfo2: nothing to measure with
        return
    with torch.no_grad():
        runner(x)
        with PeakMeter() as meter:
            result = runner(x)
        check("inference: PoolSkip's output in Serenity's order equals eager's", torch.equal(result, model(x)))
    measured, predicted = meter.peak(), doc["peak_bytes"]
    check("inference: measured peak within 5% of the order's", abs(measured - predicted) <= 0.05 * predicted,
          f"measured {measured}, predicted {predicted}")
    # 400 nodes, two 1 KiB tensors live at a time: the runner's own bookkeeping (tens of kB over
    # so many nodes) must be made before the run, or it would be most of what a meter sees.
    chain, x = SinChain(400), torch.randn(16, 16)
    runner, doc, _ = ordered(chain, (x,), tool=tool)
    with torch.no_grad():
        runner(x)
        with PeakMeter() as meter:
            runner(x)
    check("inference: a run of 400 nodes allocates its tensors (2 KiB) and under 1 KiB more",
          doc["peak_bytes"] == 2048 and meter.peak() < 2048 + 1024, f"predicted {doc['peak_bytes']}, measured {meter.peak()}")


def check_training_workspace():
    """The training graph follows the forward exporter's rule: an item of a multi-output op that no
    node reads (max-pool's indices when the pool's input takes no gradient) is the op's workspace,
    not bytes held with the op's tuple, and the runner drops it as the op returns. The runner then
    never holds more tensor bytes than the plan has resident, and the plan's peak is the measured one."""
    from memsched_torch.export import flat_tensors
    from memsched_torch.joint import parameter_names, storage_of
    torch.manual_seed(0)
    model = PoolHead(channels=8).train()
    x = torch.randn(1, 8, 64, 64)
    jg = memsched_torch.trace(copy.deepcopy(model), (x,))
    out, indices = torch.ops.aten.max_pool2d_with_indices(x, [2, 2], [2, 2])
    real = (out.numel() * out.element_size(), indices.numel() * indices.element_size())
    pool = [(n["bytes"], n.get("workspace", 0)) for n in jg.to_json("pool_head")["nodes"]
            if n["op"] == "max_pool2d_with_indices" and jg.vertices[n["id"]].kind == "op"]
    check("training: max-pool's bytes are its output's, its workspace its unread indices'", pool == [real], f"{pool} != [{real}]")
    m = memsched_torch.budgeted(copy.deepcopy(model), (x,), budget=1.0, tool=tool, joint=jg, extra=FAST)
    check("training: the plan's peak is the pool's output and indices (by hand)", m.predicted_peak == sum(real),
          f"{m.predicted_peak} != {sum(real)}")
    runner, resident, excess = m.runner, set(), []
    steps = iter(runner.steps)
    state = runner.begin([p for p, _ in parameter_names(model)], list(model.buffers()), (x,))

    def observe():
        op, vid = next(steps)
        (resident.add if op == "compute" else resident.discard)(vid)
        held = {storage_of(t)[0]: storage_of(t)[1] for value in state["env"].values() for t in flat_tensors(value, [])}
        excess.append(sum(held.values()) - sum(jg.vertices[v].bytes for v in resident))
    outs = runner.forward(state, observe)
    runner.backward(state, [torch.ones_like(o) for o in outs], observe)
    check("training: after every step the runner holds no more tensor bytes than the plan has resident",
          max(excess) <= 0, f"{max(excess)} bytes more")
    eager = train(copy.deepcopy(model), (x,), 1, seed=7)
    diff = same(eager, train(m, (x,), 1, seed=7))
    check("training: PoolHead's step equals eager's", not diff, diff)
    try:
        from memsched_torch.bench import PeakMeter
    except (AttributeError, OSError):  # no glibc mallinfo2: nothing to measure with
        return
    m.model.zero_grad(set_to_none=True)
    m(x).sum().backward()  # warm-up: first-call allocations are not the step's
    m.model.zero_grad(set_to_none=True)
    with PeakMeter() as meter:
        m(x).sum().backward()
    check("training: measured peak within 5% of the plan's", abs(meter.peak() - m.predicted_peak) <= 0.05 * m.predicted_peak,
          f"measured {meter.peak()}, predicted {m.predicted_peak}")


def check_timed_costs(work):
    """costs="timed": seconds per op (finite, >= 0, some > 0), the same bytes as FLOPs' graph, read
    back from the cache the second time, and a plan by them that trains as eager does."""
    import math
    torch.manual_seed(0)
    model = SmallCNN().train()
    inputs = (torch.randn(4, 3, 16, 16),)
    cache = os.path.join(work, "cost-cache")
    timed = memsched_torch.trace(copy.deepcopy(model), inputs, costs="timed", runs=3, cache_dir=cache)
    flops = memsched_torch.trace(copy.deepcopy(model), inputs)
    costs = [v.cost for v in timed.vertices]
    doc = timed.to_json("small_cnn")
    check("timed costs: the file says seconds", doc["cost_unit"].startswith("seconds"), doc["cost_unit"])
    check("timed costs: finite, >= 0, some > 0", all(math.isfinite(c) and c >= 0 for c in costs) and any(c > 0 for c in costs))
    check("timed costs: the same vertices and bytes as with FLOPs",
          [(v.op, v.bytes) for v in timed.vertices] == [(v.op, v.bytes) for v in flops.vertices])
    check("timed costs: one cache file written", len(os.listdir(cache)) == 1, str(os.listdir(cache)))
    again = memsched_torch.trace(copy.deepcopy(model), inputs, costs="timed", runs=3, cache_dir=cache)
    check("timed costs: the second trace reads the cache", [v.cost for v in again.vertices] == costs)
    eager = train(copy.deepcopy(model), inputs, 1, seed=7)
    m = memsched_torch.budgeted(copy.deepcopy(model), inputs, budget=0.6, tool=tool, joint=timed, extra=FAST)
    diff = same(eager, train(m, inputs, 1, seed=7))
    check("timed costs: a 60% plan by seconds trains as eager does", not diff, diff)
    try:
        memsched_torch.trace(model, inputs, costs="seconds")
        check("an unknown costs value is rejected", False, "no error")
    except ValueError as exc:
        check("an unknown costs value is rejected", "costs" in str(exc), str(exc))


def no_plan_error(jg, **kwargs):
    try:
        memsched_torch.budgeted(InplaceViews(), (torch.randn(64, 12),), tool=tool, joint=jg, **kwargs)
    except memsched_torch.PlanError as exc:
        return str(exc)
    return None


def check_no_plan_errors(jg):
    """A budget no plan meets: the error names it, says whether it is proven infeasible, and names
    a least feasible budget that does plan, or says why there is none."""
    text = no_plan_error(jg, budget=64, extra=FAST)
    check("an infeasible budget raises PlanError", text is not None, "no error")
    text = text or ""
    found = re.search(r"least feasible budget found is ([\d,]+) bytes \(([\d.]+)% of", text)
    check("an infeasible budget names itself, proven infeasible, and the least feasible budget",
          "budget 64 (64 bytes) is infeasible (proven" in text and found is not None, text)
    if found:
        least = int(found.group(1).replace(",", ""))
        check(f"the least feasible budget named ({least} bytes) plans",
              no_plan_error(jg, budget=least, extra=FAST) is None)
        below = least - max(1, least // 10)
        check(f"10% below the least feasible budget ({below} bytes) has no plan",
              no_plan_error(jg, budget=below, extra=FAST) is not None)
    # chen-sqrtn does not take this graph (its forward is no chain): no budget has a plan.
    text = no_plan_error(jg, budget=0.5, algo="chen-sqrtn") or ""
    check("an algorithm that plans no budget: the error says the least feasible budget is unknown, and why",
          "budget 50% (" in text and "not proven infeasible" in text and "least feasible budget is unknown" in text
          and "plans no budget up to the no-recomputation peak" in text, text)


def main():
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as work:
        run_model("small_cnn", SmallCNN, (torch.randn(4, 3, 16, 16),), 2, work)
        run_model("tiny_gpt", TinyGPT, (torch.randint(0, 32, (4, 16)),), 1, work)
        jg, path = run_model("inplace_views", InplaceViews, (torch.randn(64, 12),), 1, work)
        check_inference()
        check_inference_memory()
        check_training_workspace()
        check_timed_costs(work)
        check_no_plan_errors(jg)
        try:
            memsched_torch.budgeted(InplaceViews(), (torch.randn(64, 12),), budget=1.5, tool=tool, joint=jg, extra=FAST)
            check("a fraction above 1 is rejected", False, "no error")
        except memsched_torch.PlanError as exc:
            check("a fraction above 1 is rejected", "budget 1.5" in str(exc), str(exc))
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
