"""The joint forward + backward graph of a module at ATen level, as memsched graph JSON.

AOT autograd (functorch.compile.aot_function) traces the module's forward and autograd's backward
into one functionalized FX graph; a partition function captures that joint graph before any
partitioner decides what the forward saves, so memsched makes that decision instead. Its inputs
are the parameters, buffers and module inputs (primals) and one incoming gradient per module
output (tangents); its outputs are the module outputs and the parameter gradients.

Vertices are the values that own storage: an op whose result has a new storage, one vertex per
new tensor of a multi-output op that a node reads (an item), and each tangent. A new tensor of a
multi-output op that no node reads is the op's workspace (export.unread_storages, the forward
exporter's rule). Views, aliases and `getitem`s of views are no vertices: they are evaluated
again from their base when a consumer needs them.
An in-place op on a storage that a vertex created just before (dropout's `bernoulli_` on an
`empty_like`) joins that vertex: recomputing the vertex runs both.

Costs are FLOPs (deterministic: what the tests use) or, with costs="timed", the median seconds of
`runs` timed runs of each vertex's op on this machine, cached on disk by a fingerprint of the
graph, the shapes, the torch version and the machine.
"""

import hashlib
import json
import operator
import os
import platform
import statistics
import time
from dataclasses import dataclass, field

import torch
import torch.fx
from torch.utils import _pytree as pytree

from .export import flat_tensors, unread_items, unread_storages


class TraceError(Exception):
    """The module cannot be traced into a joint graph memsched can plan (names the op)."""


@dataclass
class Vertex:
    id: int
    name: str
    op: str
    kind: str              # "op", "item" (one new tensor of a multi-output op) or "tangent"
    node: torch.fx.Node
    bytes: int = 0
    cost: float = 0.0
    role: str = "forward"
    item: int = 0           # kind "item": the index into the op's result
    workspace: int = 0      # kind "op": bytes of the result's items no node reads (dropped as the op returns)
    unread: list = field(default_factory=list)  # kind "op": the indices of those items
    group: list = field(default_factory=list)  # kind "op": in-place ops run after node, in order
    random: bool = False    # draws random numbers: recomputation replays the RNG state
    writes_static: list = field(default_factory=list)  # arg positions of buffers it updates
    preds: list = field(default_factory=list)


def storage_of(t):
    storage = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    nbytes = storage.nbytes() if hasattr(storage, "nbytes") else storage.size() * t.element_size()
    return storage.data_ptr(), int(nbytes)


RANDOM_OPS = {"bernoulli", "bernoulli_", "native_dropout", "rand", "rand_like", "randn", "randn_like",
              "randint", "randint_like", "normal", "normal_", "uniform_", "multinomial", "randperm",
              "exponential_", "geometric_", "cauchy_", "log_normal_", "random_", "rrelu_with_noise"}


def op_name(node):
    if node.target is operator.getitem:
        return "getitem"
    packet = getattr(node.target, "_overloadpacket", None)
    return packet.__name__ if packet is not None else getattr(node.target, "__name__", str(node.target))


def written_args(node):
    """Positions of the arguments node's ATen schema says it writes (in-place ops, BatchNorm's stats)."""
    schema = getattr(node.target, "_schema", None)
    if schema is None:
        return []
    return [i for i, a in enumerate(schema.arguments)
            if a.alias_info is not None and a.alias_info.is_write and i < len(node.args)]


def flops(name, args, outs):
    """FLOPs of convolutions and matrix products (a multiply-add counts 2); else output elements."""
    out_elements = sum(int(t.numel()) for t in outs)
    try:
        if name == "convolution":
            w = args[1]
            return 2 * out_elements * int(w[0].numel())  # w[0]: in/groups x kernel
        if name == "convolution_backward":  # grad input and grad weight: two convolutions' work
            grad_out, w = args[0], args[2]
            return 4 * int(grad_out.numel()) * int(w[0].numel())
        if name in ("mm", "bmm"):
            return 2 * out_elements * int(args[0].shape[-1])
        if name in ("addmm", "baddbmm"):
            return 2 * out_elements * int(args[1].shape[-1])
    except (AttributeError, IndexError, TypeError):
        pass
    return max(out_elements, 1)


class JointGraph:
    """A module's joint graph: the FX graph, its vertices and the parts of the module it binds."""

    def __init__(self, gm, param_names, buffer_names, num_inputs, num_outputs, out_spec):
        self.gm = gm
        self.param_names = param_names      # per primal parameter: every name it has (tied weights)
        self.buffer_names = buffer_names
        self.num_inputs = num_inputs
        self.num_outputs = num_outputs      # module outputs (flattened) = tangents
        self.out_spec = out_spec
        self.vertices = []
        self.node_vertex = {}               # fx node -> vertex id (ops, tangents, items)
        self.alias = {}                     # in-place fx node -> the node whose value it returns
        self.static = {}                    # placeholder node -> ("param"|"buffer"|"input", index)
        self.outputs = []                   # vertex ids resident to the end
        self.forward_out_nodes = []
        self.grad_out_nodes = []            # per parameter: the node of its gradient (or None)
        self.grad_vertices = []             # per parameter: the vertices its gradient's storage is
        self.static_bytes = 0
        self.counters = []                  # buffers (num_batches_tracked) a step adds 1 to
        self.cost_unit = "flops"

    def to_json(self, name):
        nodes = []
        for v in self.vertices:
            node = {"id": v.id, "name": v.name, "op": v.op, "bytes": v.bytes, "cost": v.cost, "role": v.role}
            if v.workspace:
                node["workspace"] = v.workspace
            if v.random:
                node["random"] = True
            nodes.append(node)
        edges = sorted({(p, v.id) for v in self.vertices for p in v.preds})
        return {"format": "memsched-graph", "version": 1, "name": name, "kind": "training",
                "source": "memsched_torch joint graph (functorch aot_function)", "tracer": "aot-autograd-joint",
                "cost_unit": self.cost_unit, "static_bytes": self.static_bytes,
                "nodes": nodes, "edges": [list(e) for e in edges], "outputs": self.outputs,
                "order": [v.id for v in self.vertices]}


class _Captured(Exception):
    pass


def parameter_names(model):
    """Unique parameters in named_parameters() order, each with every name it has (tied weights)."""
    names = {}
    for prefix, module in model.named_modules(remove_duplicate=False):
        for local, p in module._parameters.items():
            if p is not None:
                names.setdefault(p, []).append(f"{prefix}.{local}" if prefix else local)
    return [(p, names[p]) for _, p in model.named_parameters()]


def drop_tracer_slots(t):
    """make_fx (torch 1.13) leaves its proxies in the traced tensors' __dict__ under object keys;
    they keep the tracer alive and make copy.deepcopy of the model fail (and BatchNorm's
    num_batches_tracked gets a "proxy" attribute)."""
    if isinstance(t, torch.Tensor):
        for key in [k for k in t.__dict__ if not isinstance(k, str) or k == "proxy"]:
            del t.__dict__[key]


def capture_joint(model, inputs):
    """AOT autograd's functionalized joint graph of model(*inputs), the module's state restored."""
    from functorch.compile import aot_function
    try:
        from torch.func import functional_call
    except ImportError:
        from torch.nn.utils.stateless import functional_call

    params = parameter_names(model)
    buffers = list(model.named_buffers())
    out_spec = []

    def fn(*flat):
        state = {}
        for (p, names), t in zip(params, flat):
            for n in names:
                state[n] = t
        for (n, _), t in zip(buffers, flat[len(params):]):
            state[n] = t
        out = functional_call(model, state, tuple(flat[len(params) + len(buffers):]))
        leaves, spec = pytree.tree_flatten(out)
        out_spec[:] = [spec]
        return tuple(leaves)

    captured = {}

    def partition(joint, joint_inputs):
        captured["gm"], captured["inputs"] = joint, joint_inputs
        raise _Captured()

    saved_buffers = [b.detach().clone() for _, b in buffers]
    rng = torch.get_rng_state()
    try:
        aot_function(fn, fw_compiler=lambda g, _: g, partition_fn=partition)(
            *[p for p, _ in params], *[b for _, b in buffers], *inputs)
    except _Captured:
        pass
    except Exception as exc:
        raise TraceError(f"cannot trace the joint forward+backward graph: {type(exc).__name__}: "
                         f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}") from exc
    finally:
        with torch.no_grad():
            for (_, b), s in zip(buffers, saved_buffers):
                b.copy_(s)
        torch.set_rng_state(rng)
        for t in [p for p, _ in params] + [b for _, b in buffers] + list(inputs):
            drop_tracer_slots(t)
    if "gm" not in captured:
        raise TraceError("cannot trace the joint forward+backward graph: AOT autograd gave no joint graph")
    tangents = captured["inputs"][1]
    jg = JointGraph(captured["gm"], [names for _, names in params], [n for n, _ in buffers], len(inputs),
                    len(tangents), out_spec[0] if out_spec else None)
    # Functionalization drops BatchNorm's `num_batches_tracked += 1` (a mutation of an input with
    # no output); the runner does it once per step, as eager does.
    jg.counters = [i for i, (n, _) in enumerate(buffers) if n.endswith("num_batches_tracked")
                   and _batchnorm_counts(model, n)]
    return jg, [p for p, _ in params], [b for _, b in buffers], tangents


def _batchnorm_counts(model, buffer_name):
    module = model.get_submodule(buffer_name.rpartition(".")[0]) if "." in buffer_name else model
    return isinstance(module, torch.nn.modules.batchnorm._BatchNorm) and module.training \
        and module.track_running_stats


def trace(model, example_inputs, costs="flops", runs=5, cache_dir=None):
    """The joint graph of model on example_inputs with each vertex's bytes, cost, role and preds.

    costs: "flops" (deterministic) or "timed" (median seconds of `runs` runs of each op, cached in
    cache_dir, default $XDG_CACHE_HOME/memsched_torch or ~/.cache/memsched_torch)."""
    if costs not in ("flops", "timed"):
        raise ValueError(f"costs must be 'flops' or 'timed', got {costs!r}")
    if costs == "timed" and (not isinstance(runs, int) or runs < 1):
        raise ValueError(f"runs must be an integer >= 1, got {runs!r}")
    inputs = tuple(example_inputs) if isinstance(example_inputs, (tuple, list)) else (example_inputs,)
    jg, params, buffers, tangents = capture_joint(model, inputs)
    placeholders = [n for n in jg.gm.graph.nodes if n.op == "placeholder"]
    primals, tangent_nodes = placeholders[:-jg.num_outputs or None], placeholders[len(placeholders) - jg.num_outputs:]
    if jg.num_outputs == 0:
        primals, tangent_nodes = placeholders, []
    kinds = [("param", i) for i in range(len(params))] + [("buffer", i) for i in range(len(buffers))] + \
            [("input", i) for i in range(len(inputs))]
    if len(primals) != len(kinds):
        raise TraceError(f"the joint graph has {len(primals)} primal inputs, expected {len(kinds)} "
                         "(parameters + buffers + inputs): an input or parameter is repeated")
    values = list(params) + [b.detach().clone() for b in buffers] + [t.detach() for t in inputs]
    for node, kind in zip(primals, kinds):
        jg.static[node] = kind
    seen = set()
    for t in list(params) + list(buffers):
        ptr, nbytes = storage_of(t)
        if ptr not in seen:
            seen.add(ptr)
            jg.static_bytes += nbytes
    timer = _OpTimer(runs, _cache_path(cache_dir, jg, values)) if costs == "timed" else None
    _Classifier(jg, values, [torch.ones_like(t) for t in tangents], tangent_nodes, timer).run()
    if timer is not None:
        timer.save()
        jg.cost_unit = f"seconds (median of {runs} runs)"
    return jg


def _cache_path(cache_dir, jg, values):
    """The cache file of this graph on these shapes, this torch and this machine."""
    key = hashlib.sha256()
    for part in (jg.gm.code, repr([(tuple(v.shape), str(v.dtype)) for v in values]), torch.__version__,
                 platform.machine(), platform.processor(), str(torch.get_num_threads())):
        key.update(part.encode())
    base = cache_dir or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "memsched_torch")
    return os.path.join(base, f"costs-{key.hexdigest()[:24]}.json")


class _OpTimer:
    """Median seconds of each op over `runs` runs (the classifying run is the first), by node name,
    read from and written to a cache file."""

    def __init__(self, runs, path):
        self.runs, self.path = runs, path
        self.seconds, self.loaded = {}, False
        try:
            with open(path) as f:
                self.seconds, self.loaded = json.load(f), True
        except (OSError, ValueError):
            pass

    def run(self, node, args, kwargs, again):
        """node's result; its median time is kept when `again` (the op may run more than once)."""
        start = time.perf_counter()
        result = node.target(*args, **kwargs)
        first = time.perf_counter() - start
        if again and node.name not in self.seconds:
            samples = [first]
            for _ in range(self.runs - 1):
                start = time.perf_counter()
                node.target(*args, **kwargs)
                samples.append(time.perf_counter() - start)
            self.seconds[node.name] = statistics.median(samples)
        elif not again:
            self.seconds.setdefault(node.name, first)
        return result

    def cost(self, node):
        return float(self.seconds.get(node.name, 0.0))

    def save(self):
        if self.loaded:
            return
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            tmp = self.path + f".{os.getpid()}.tmp"
            with open(tmp, "w") as f:
                json.dump(self.seconds, f)
            os.replace(tmp, self.path)
        except OSError:
            pass  # a cache that cannot be written only costs the next trace its timing runs


class _Classifier:
    """Runs the joint graph once on real values and turns its nodes into vertices."""

    def __init__(self, jg, primal_values, tangent_values, tangent_nodes, timer=None):
        self.jg = jg
        self.timer = timer
        self.env = {}
        self.owner = {}        # storage ptr -> vertex id (None: static)
        self.readers = {}      # storage ptr -> nodes that read it
        self.keep = []         # every value stays referenced: no storage address is reused
        primals = [n for n in jg.gm.graph.nodes if n.op == "placeholder" and n in jg.static]
        for node, value in zip(primals, primal_values):
            self.env[node] = value
            ptr, _ = storage_of(value)
            self.owner[ptr] = None
        for i, (node, value) in enumerate(zip(tangent_nodes, tangent_values)):
            self.env[node] = value
            v = self.add_vertex(node, "tangent", "tangent", storage_of(value)[1], 0.0)
            v.role, v.item = "backward", i
            self.owner[storage_of(value)[0]] = v.id

    def add_vertex(self, node, op, kind, nbytes, cost):
        v = Vertex(id=len(self.jg.vertices), name=node.name, op=op, kind=kind, node=node, bytes=int(nbytes), cost=cost)
        self.jg.vertices.append(v)
        self.jg.node_vertex[node] = v.id
        return v

    def load(self, a):
        return torch.fx.node.map_arg(a, lambda n: self.env[n])

    def run(self):
        for node in self.jg.gm.graph.nodes:
            if node.op == "call_function":
                self.call(node)
            elif node.op == "output":
                self.finish(node)
            elif node.op != "placeholder":
                raise TraceError(f"unsupported node {node.op} {node.target} in the joint graph")
        self.roles_and_preds()

    def call(self, node):
        args, kwargs = self.load(node.args), self.load(node.kwargs)
        ins = flat_tensors((args, kwargs), [])
        in_ptrs = {storage_of(t)[0] for t in ins}
        buffers = {i: args[i].clone() for i, a in enumerate(node.args)
                   if isinstance(a, torch.fx.Node) and self.jg.static.get(a, ("",))[0] == "buffer"}
        # Ops that write (in place, or buffers) run once: a second run would change the values.
        writes = bool(written_args(node)) or bool(buffers)
        result = self.timer.run(node, args, kwargs, not writes) if self.timer else node.target(*args, **kwargs)
        self.env[node] = result
        self.keep.append(result)
        name = op_name(node)
        outs = flat_tensors(result, [])
        # Some schemas do not declare their writes, nor bump version counters (native_batch_norm's
        # running statistics in 1.13): a buffer whose value changed was written.
        written = sorted(set(written_args(node)) | {i for i, before in buffers.items() if not torch.equal(before, args[i])})
        new = {}
        for t in outs:
            ptr, nbytes = storage_of(t)
            if ptr and ptr not in self.owner and ptr not in in_ptrs:
                new.setdefault(ptr, nbytes)
        if name == "getitem":
            parent = self.jg.node_vertex.get(node.args[0])
            ptr, nbytes = storage_of(outs[0]) if outs else (0, 0)
            if parent is not None and self.jg.vertices[parent].kind == "op" and self.multi(node.args[0]) \
                    and ptr and self.owner.get(ptr) == parent:
                v = self.add_vertex(node, self.jg.vertices[parent].op, "item", nbytes, 0.0)
                v.item = node.args[1]
                self.owner[ptr] = v.id
            return
        for t in ins:
            self.readers.setdefault(storage_of(t)[0], []).append(node)
        if new:
            # Items no node reads (an op's statistics or indices that no backward needs) are the
            # op's workspace, as in the forward exporter: the runner drops them as the op returns.
            unread_idx = unread_items(node, result)
            unread = {ptr for ptr, _ in unread_storages(node, result, unread_idx)}
            held = sum(nbytes for ptr, nbytes in new.items() if ptr not in unread)
            v = self.add_vertex(node, name, "op", held, self.cost_of(node, name, args, outs))
            v.workspace = sum(nbytes for ptr, nbytes in new.items() if ptr in unread)
            v.unread = unread_idx if v.workspace else []
            v.random = name in RANDOM_OPS
            v.writes_static = [i for i in written if self.is_static(args[i])]
            for ptr in new:
                self.owner[ptr] = v.id
            return
        if not written:
            return  # a view or an alias: evaluated from its base when needed
        for i in written:
            target = args[i]
            ptr = storage_of(target)[0]
            base = self.owner.get(ptr)
            if base is None:
                raise TraceError(f"op {node.target} writes into a parameter, buffer or input in the joint "
                                 f"graph (node {node.name}): not supported")
            base_vertex = self.jg.vertices[base]
            earlier = [r for r in self.readers.get(ptr, []) if r is not node and r not in base_vertex.group]
            if base_vertex.kind != "op" or earlier:
                raise TraceError(f"in-place op {node.target} (node {node.name}) writes a value that "
                                 f"{earlier[0].name if earlier else 'another op'} read before: not supported")
            base_vertex.group.append(node)
            base_vertex.random = base_vertex.random or name in RANDOM_OPS
            base_vertex.cost += self.cost_of(node, name, args, outs)
        self.jg.alias[node] = node.args[written[0]]

    def cost_of(self, node, name, args, outs):
        return self.timer.cost(node) if self.timer else float(flops(name, args, outs))

    def multi(self, node):
        return isinstance(self.env.get(node), (tuple, list))

    def is_static(self, value):
        return isinstance(value, torch.Tensor) and self.owner.get(storage_of(value)[0], 0) is None

    def sources(self, node, acc, seen):
        """Vertices whose storage node's value reads, through views, aliases and getitems."""
        if node in seen:
            return
        seen.add(node)
        if node in self.jg.node_vertex:
            acc.add(self.jg.node_vertex[node])
            return
        if node in self.jg.static:
            return
        for a in (self.jg.alias[node],) if node in self.jg.alias else node.all_input_nodes:
            self.sources(a, acc, seen)

    def roles_and_preds(self):
        jg = self.jg
        backward_nodes = set()  # nodes that depend on an incoming gradient
        for node in jg.gm.graph.nodes:
            vid = jg.node_vertex.get(node)
            if (vid is not None and jg.vertices[vid].kind == "tangent") or \
                    any(a in backward_nodes for a in node.all_input_nodes):
                backward_nodes.add(node)
        for v in jg.vertices:
            acc = set()
            if v.kind == "op":
                for n in [v.node] + v.group:
                    for a in n.all_input_nodes:
                        if a is not v.node:
                            self.sources(a, acc, set())
            elif v.kind == "item":
                acc.add(jg.node_vertex[v.node.args[0]])
            acc.discard(v.id)
            v.preds = sorted(acc)
            if v.kind == "tangent" or v.node in backward_nodes or any(n in backward_nodes for n in v.group):
                v.role = "backward"
        forward_outputs = []
        for n in jg.forward_out_nodes:
            if n is not None:
                acc = set()
                self.sources(n, acc, set())
                forward_outputs.extend(acc)
        # The incoming gradient exists only once the module's outputs do.
        for v in jg.vertices:
            if v.kind == "tangent":
                v.preds = sorted(set(v.preds) | set(forward_outputs))
        self.renumber()

    def renumber(self):
        """Vertex ids in a topological order (the tangents moved after the module's outputs)."""
        import heapq
        jg = self.jg
        consumers = {v.id: [] for v in jg.vertices}
        waiting = {v.id: len(v.preds) for v in jg.vertices}
        for v in jg.vertices:
            for p in v.preds:
                consumers[p].append(v.id)
        ready = [v for v, k in waiting.items() if k == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            v = heapq.heappop(ready)
            order.append(v)
            for c in consumers[v]:
                waiting[c] -= 1
                if waiting[c] == 0:
                    heapq.heappush(ready, c)
        if len(order) != len(jg.vertices):
            raise TraceError("the joint graph's vertices form a cycle (an in-place op the tracer could not order)")
        new_id = {old: i for i, old in enumerate(order)}
        jg.vertices = [jg.vertices[old] for old in order]
        for v in jg.vertices:
            v.id = new_id[v.id]
            v.preds = sorted(new_id[p] for p in v.preds)
        jg.node_vertex = {n: new_id[i] for n, i in jg.node_vertex.items()}
        jg.outputs = sorted(new_id[i] for i in jg.outputs)
        jg.grad_vertices = [sorted(new_id[i] for i in owners) for owners in jg.grad_vertices]

    def finish(self, node):
        jg = self.jg
        outs = list(node.args[0])
        jg.forward_out_nodes = outs[:jg.num_outputs]
        grads = outs[jg.num_outputs:]
        jg.grad_out_nodes = grads[:len(jg.param_names)]
        for n in jg.grad_out_nodes:
            owners = set()
            if isinstance(n, torch.fx.Node):
                self.sources(n, owners, set())
            jg.grad_vertices.append(sorted(owners))
        acc = set()
        for n in outs:
            if isinstance(n, torch.fx.Node):
                self.sources(n, acc, set())
        jg.outputs = sorted(acc)
