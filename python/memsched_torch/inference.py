"""Inference in a memsched order: the forward graph traced at ATen level (export.py's exporter),
ordered by the tool (Serenity by default), run node by node with each value freed after its last use."""

import json
import operator
import os
import tempfile

import torch

from .export import ExportError, build_graph
from .joint import TraceError
from .plan import order as tool_order
from .runner import InferenceRunner


def trace_inference(model, example_inputs, name="model"):
    """(FX module, graph JSON, FX node of each vertex) of model's forward under no_grad at ATen level."""
    from torch.fx.experimental.proxy_tensor import make_fx
    inputs = tuple(example_inputs) if isinstance(example_inputs, (tuple, list)) else (example_inputs,)
    try:
        with torch.no_grad():
            gm = make_fx(model)(*inputs)
        vertices, edges, outputs, vertex_nodes = build_graph(gm, inputs, "aten")
    except ExportError as exc:
        raise TraceError(str(exc)) from exc
    except Exception as exc:
        raise TraceError(f"cannot trace the forward graph at ATen level: {type(exc).__name__}: "
                         f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}") from exc
    # The caller holds the inputs for the whole run, so the order frees none of them: an input
    # vertex owns no bytes of the order's, and the order's peak is what a run adds to the caller's
    # memory. (Counted as an ordinary vertex, an input would seem freed after its last reader, and a
    # peak after that point would seem smaller by the input's size than the run's.)
    input_bytes = 0
    for v in vertices:
        if v["op"] == "input":
            input_bytes += v["bytes"]
            v["bytes"] = 0
    graph = {"format": "memsched-graph", "version": 1, "name": name, "kind": "inference",
             "source": "memsched_torch forward graph (make_fx)", "tracer": "aten", "cost_unit": "flops",
             "input_bytes": input_bytes,
             "inputs": [v["id"] for v in vertices if v["op"] == "input"], "outputs": outputs,
             "nodes": vertices, "edges": [list(e) for e in edges], "order": [v["id"] for v in vertices]}
    return gm, graph, vertex_nodes


def node_order(gm, vertex_nodes, vertex_order):
    """FX nodes in the vertices' order, each view or alias node placed just before its first use and
    each item read from a vertex's tuple just after the vertex."""
    placed, order = set(), []

    def place(n):
        if n in placed:
            return
        for a in n.all_input_nodes:
            if a not in vertex_set:
                place(a)
        placed.add(n)
        order.append(n)

    vertex_set = set(vertex_nodes)
    nodes = list(gm.graph.nodes)
    for n in nodes:  # placeholders and constants first: they exist before the run
        if n.op in ("placeholder", "get_attr"):
            place(n)
    for v in vertex_order:
        n = vertex_nodes[v]
        for a in n.all_input_nodes:
            place(a)
        place(n)
        for item in n.users:  # unpacked at once, so the tuple and the items nobody reads die with the op
            if item.target is operator.getitem and item.users:
                place(item)
    for n in nodes:  # views of outputs, then the output node
        if not (n.target is operator.getitem and not n.users):  # an unread item would keep its tuple
            place(n)
    return order


def ordered(model, example_inputs, algo="serenity", tool=None, extra=(), name="model"):
    """An InferenceRunner for model in the tool's order (`memsched order --algo algo`), the order
    document ({"order", "peak_bytes", ...}: the bytes a run allocates at its peak, beyond the
    inputs the caller holds) and the graph; the runner's results equal model(*inputs)."""
    gm, graph, vertex_nodes = trace_inference(model, example_inputs, name)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "forward.json")
        with open(path, "w") as f:
            json.dump(graph, f, separators=(",", ":"))
        doc = tool_order(path, algo, tool, extra)
    order = [int(v) for v in doc["order"]]
    return InferenceRunner(gm, node_order(gm, vertex_nodes, order)), doc, graph
