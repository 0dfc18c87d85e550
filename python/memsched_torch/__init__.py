"""memsched for PyTorch: train a module within a memory budget (docs/pytorch.md).

    m = memsched_torch.budgeted(model, example_inputs, budget=0.5)
    loss = loss_fn(m(x), y)
    loss.backward(); optimizer.step()

budgeted() traces the joint forward + backward graph at ATen level (joint.py), asks the memsched
tool for a rematerialization plan within the budget (plan.py) and runs that plan on real tensors
inside an autograd function (runner.py): parameters stay the model's, gradients land in .grad.
"""

import json
import os
import tempfile

import torch
from torch.utils import _pytree as pytree

from .joint import TraceError, trace
from .plan import PlanError, budget_arg, find_tool, order, remat
from .runner import InferenceRunner, JointRunner, run_training_step

__all__ = ["budgeted", "Budgeted", "export_joint", "TraceError", "PlanError", "trace", "remat",
           "order", "find_tool", "budget_arg", "JointRunner", "InferenceRunner"]


def _as_tuple(inputs):
    return tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)


def export_joint(model, example_inputs, path, name="model", costs="flops", cost_runs=5):
    """Traces model's joint graph and writes it as memsched graph JSON to path; returns the JointGraph.
    costs: "flops" or "timed" (median seconds of cost_runs runs per op, cached: joint.trace)."""
    jg = trace(model, _as_tuple(example_inputs), costs=costs, runs=cost_runs)
    with open(path, "w") as f:
        json.dump(jg.to_json(name), f, separators=(",", ":"))
    return jg


class Budgeted(torch.nn.Module):
    """model's training step run by a memsched plan; under no_grad, the model itself runs."""

    def __init__(self, model, jg, plan, graph_path=None):
        super().__init__()
        self.model = model
        self.joint = jg
        self.plan = plan
        self.graph_path = graph_path
        self.runner = JointRunner(jg, [(s["op"], s["node"]) for s in plan["steps"]])
        self._shapes = None

    @property
    def predicted_peak(self):
        """The plan's peak bytes above parameters, buffers and inputs (memsched's prediction)."""
        return int(self.plan["peak_bytes"])

    def forward(self, *inputs):
        if not torch.is_grad_enabled():
            return self.model(*inputs)
        shapes = [(tuple(t.shape), t.dtype) for t in inputs]
        if self._shapes is not None and shapes != self._shapes:
            raise ValueError(f"memsched_torch: inputs {shapes} differ from the example inputs {self._shapes} "
                             "the plan was made for: call budgeted() again for new shapes")
        params = [p for p, _ in _unique_params(self.model)]
        buffers = [b for _, b in self.model.named_buffers()]
        outs = run_training_step(self.runner, params, buffers, inputs)
        return pytree.tree_unflatten(list(outs), self.joint.out_spec)


def _keep_rng_order(jg, algo, extra):
    """With random ops, auto plans along the module's own order: the runner replays each draw's RNG
    state, which needs the first draws in the module's order (a reordering plan is refused)."""
    if algo == "auto" and any(v.random for v in jg.vertices) and not any(a in ("--order", "--order-from") for a in extra):
        return (*extra, "--order-from", "graph")
    return extra


def _unique_params(model):
    from .joint import parameter_names
    return parameter_names(model)


def budgeted(model, example_inputs, budget=1.0, algo="auto", tool=None, name="model", keep_graph=None, extra=(),
             joint=None, find_least=True, costs="flops", cost_runs=5):
    """A module that runs model's training step within budget (bytes, or a fraction of the
    no-recomputation peak) by memsched's plan (--algo algo; extra: more tool flags).

    Raises TraceError when the module cannot be traced, PlanError when no plan meets the budget
    (naming the budget and the least feasible one). keep_graph: a path to keep the graph JSON at;
    joint: the JointGraph of an earlier trace() of the same model and inputs, to plan again.
    costs: what the plan minimises, "flops" (default, deterministic) or "timed" (the median
    seconds of cost_runs runs of each op on this machine, cached: joint.trace)."""
    inputs = _as_tuple(example_inputs)
    jg = joint if joint is not None else trace(model, inputs, costs=costs, runs=cost_runs)
    graph = jg.to_json(name)
    with tempfile.TemporaryDirectory() as tmp:
        path = keep_graph or os.path.join(tmp, "joint.json")
        with open(path, "w") as f:
            json.dump(graph, f, separators=(",", ":"))
        plan = remat(path, budget, algo=algo, tool=tool, extra=_keep_rng_order(jg, algo, extra), find_least=find_least)
    m = Budgeted(model, jg, plan, keep_graph)
    m._shapes = [(tuple(t.shape), t.dtype) for t in inputs]
    return m
