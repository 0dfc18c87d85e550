"""Executes memsched plans on real tensors.

A training plan is a list of compute / free steps over the joint graph's vertices. The runner
keeps one tensor (or, for a multi-output op, one tuple without the items no node reads) per
resident vertex, computes a vertex by running its ATen op(s) on its predecessors' tensors and
drops the reference at a free step, so PyTorch's allocator releases the storage at once. The
steps before the first incoming gradient run in the module's forward, the rest in its backward,
each part as one Python function generated from the plan when the runner is built.
"""

import keyword

import torch
import torch.fx

from .plan import PlanError


class JointRunner:
    """Runs a plan as two generated Python functions, the forward's steps and the backward's.

    Everything that does not depend on the tensors (which vertex a step reads, the views evaluated
    again for it, whether it is a recomputation) is resolved once, here, into straight-line code
    compiled once (as torch.fx's codegen does): a step then costs its ATen calls and a few
    dictionary operations, not a walk over the FX node's arguments.
    """

    def __init__(self, jg, steps):
        self.jg = jg
        self.steps = [(op, int(v)) for op, v in steps]
        self.check()
        writer = _SegmentWriter(jg)
        computed = set()  # the vertices computed by earlier steps: computing one again is a recomputation
        self.run_forward = writer.segment("forward_segment", self.steps[:self.split], computed, jg.forward_out_nodes)
        self.run_backward = writer.segment("backward_segment", self.steps[self.split:], computed, jg.grad_out_nodes)
        self.source = writer.source  # segment name -> its generated code, one commented block per step

    def check(self):
        """Replays the plan's residency: every step legal, the split point well defined."""
        jg, resident, first = self.jg, set(), {}
        n = len(jg.vertices)
        for i, (op, v) in enumerate(self.steps):
            if not 0 <= v < n or op not in ("compute", "free"):
                raise PlanError(f"plan step {i}: bad step {op} {v}")
            vertex = jg.vertices[v]
            if op == "compute":
                missing = [p for p in vertex.preds if p not in resident]
                if missing or v in resident:
                    raise PlanError(f"plan step {i}: compute {vertex.name} with "
                                    f"{'itself resident' if v in resident else 'input ' + jg.vertices[missing[0]].name + ' not resident'}")
                resident.add(v)
                first.setdefault(v, i)
            else:
                if v not in resident:
                    raise PlanError(f"plan step {i}: free {vertex.name}, which is not resident")
                resident.discard(v)
        tangents = [v.id for v in jg.vertices if v.kind == "tangent"]
        self.split = min((first[t] for t in tangents), default=len(self.steps))
        never = [v.name for v in jg.vertices if v.id not in first]
        if never:
            raise PlanError(f"the plan never computes {never[0]}")
        random = sorted((first[v.id], v.id) for v in jg.vertices if v.random)
        if any(a[1] > b[1] for a, b in zip(random, random[1:])) or any(i >= self.split for i, _ in random):
            raise PlanError("the plan draws random numbers in another order than the module's forward")
        missing = [v for v in jg.outputs if v not in resident]
        if missing:
            raise PlanError(f"the plan ends without output {jg.vertices[missing[0]].name}")

    def begin(self, params, buffers, inputs):
        sources = {"param": params, "buffer": buffers, "input": inputs}
        static = [sources[kind][i] for kind, i in self.jg.static.values()]
        return {"static": static, "env": {}, "rng": {}, "tangents": None}

    def forward(self, state, observe=None):
        """The plan's steps up to the first incoming gradient; returns the module's flat outputs."""
        with torch.no_grad():
            return self.run_forward(state["env"], state["static"], state["rng"], None, observe)

    def backward(self, state, grads, observe=None):
        """The remaining steps from the incoming gradients; returns one gradient per parameter."""
        with torch.no_grad():
            state["tangents"] = [g.contiguous() if g is not None else None for g in grads]
            result = self.run_backward(state["env"], state["static"], state["rng"], state["tangents"], observe)
        state["env"].clear()
        state["tangents"] = None
        return result


def _drop_unread(out, unread):
    """The op's result without the items no node reads: they die as the op returns."""
    return tuple(None if i in unread else item for i, item in enumerate(out))


class _SegmentWriter:
    """Writes the plan's steps as the body of one Python function per segment.

    The function's arguments are the run's state: env (vertex id -> its tensor, or its op's tuple),
    static (the parameters, buffers and inputs, in jg.static's order), rng (a random vertex's RNG
    state before its first computation), tangents and observe. Names of the generated code: t<k>
    a view evaluated again for one step, `out` the result of an op with in-place ops after it,
    f<k> an op, c<k> a constant argument; every name a step binds is deleted at its end, so a view
    lives no longer than the step that made it.
    """

    def __init__(self, jg):
        self.jg = jg
        self.slot = {node: k for k, node in enumerate(jg.static)}
        self.namespace = {"get_rng_state": torch.get_rng_state, "set_rng_state": torch.set_rng_state,
                          "drop_unread": _drop_unread}
        self.names = {}  # id(object) -> its name in namespace
        self.source = {}

    def segment(self, name, steps, computed, out_nodes):
        """The compiled function running steps, then returning the values of out_nodes."""
        lines = [f"def {name}(env, static, rng, tangents, observe):"]
        for op, vid in steps:
            v = self.jg.vertices[vid]
            lines.append(f"    # {op} {v.name!r}{' again' if op == 'compute' and vid in computed else ''}")
            if op == "free":
                body = [f"del env[{vid}]"]
            else:
                body = self.compute(v, again=vid in computed)
                computed.add(vid)
            lines += ["    " + line for line in body]
            lines.append("    if observe is not None: observe()")
        lines += ["    " + line for line in self.outputs(out_nodes)]
        source = "\n".join(lines) + "\n"
        self.source[name] = source
        exec(compile(source, f"<memsched_torch {name}>", "exec"), self.namespace)
        return self.namespace[name]

    def compute(self, v, again):
        """The lines of one compute step of vertex v (again: a recomputation)."""
        if v.kind == "tangent":
            return [f"env[{v.id}] = tangents[{v.item}]"]
        if v.kind == "item":
            return [f"env[{v.id}] = env[{self.jg.node_vertex[v.node.args[0]]}][{v.item!r}]"]
        memo, temps, views = {}, [], []
        call = self.call(v.node, memo, views, temps, clone=v.writes_static if again else ())
        if v.unread:  # the op's workspace: items no node reads die as the op returns
            call = f"drop_unread({call}, {self.constant(frozenset(v.unread))})"
        if v.group:  # in-place ops on the new storage (dropout's bernoulli_) read it as `out`
            memo[v.node] = "out"
            temps.append("out")
            run = [f"out = {call}", f"env[{v.id}] = out"]
            for node in v.group:
                group_views = []
                group_call = self.call(node, memo, group_views, temps)
                run += group_views + [group_call]
        else:
            run = [f"env[{v.id}] = {call}"]
        end = [f"del {', '.join(temps)}"] if temps else []
        if not v.random:
            return views + run + end
        if not again:
            return views + [f"rng[{v.id}] = get_rng_state()"] + run + end
        # A recomputation replays the draw of the first computation, then puts the generator back.
        return views + ["saved = get_rng_state()", f"set_rng_state(rng[{v.id}])", "try:"] + \
            ["    " + line for line in run] + ["finally:", "    set_rng_state(saved)", "del saved"] + end

    def outputs(self, nodes):
        """Lines returning the list of nodes' values (views evaluated anew for each, None kept)."""
        lines, items, temps = [], [], []
        for node in nodes:
            items.append("None" if node is None else self.ref(node, {}, lines, temps))
        return lines + [f"return [{', '.join(items)}]"]

    def call(self, node, memo, views, temps, clone=()):
        """The expression calling node's op; views its arguments need are appended to views."""
        args = [self.arg(a, memo, views, temps) for a in node.args]
        # BatchNorm's running statistics are updated once per step: a recomputation gets copies.
        args = [f"{a}.clone()" if i in clone else a for i, a in enumerate(args)]
        kwargs = {k: self.arg(a, memo, views, temps) for k, a in node.kwargs.items()}
        if all(k.isidentifier() and not keyword.iskeyword(k) for k in kwargs):
            args += [f"{k}={a}" for k, a in kwargs.items()]
        else:
            args.append("**{" + ", ".join(f"{k!r}: {a}" for k, a in kwargs.items()) + "}")
        return f"{self.name(node.target, 'f')}({', '.join(args)})"

    def arg(self, a, memo, views, temps):
        """The expression of one argument: a node's value, a constant, or a container of them."""
        if isinstance(a, torch.fx.Node):
            return self.ref(a, memo, views, temps)
        if not _has_node(a):
            return self.constant(a)
        items = [self.arg(x, memo, views, temps) for x in (a.values() if isinstance(a, dict) else
                                                              (a.start, a.stop, a.step) if isinstance(a, slice) else a)]
        if isinstance(a, tuple):
            return f"({''.join(x + ', ' for x in items)})"
        if isinstance(a, list):
            return f"[{', '.join(items)}]"
        if isinstance(a, dict):
            return "{" + ", ".join(f"{self.constant(k)}: {x}" for k, x in zip(a, items)) + "}"
        if isinstance(a, slice):
            return f"slice({', '.join(items)})"
        raise PlanError(f"runner: unsupported argument {type(a).__name__} holding graph nodes")

    def ref(self, node, memo, views, temps):
        """The expression of node's value: a resident vertex, a static tensor, or a view evaluated
        again from its base (once per step: memo)."""
        if node in memo:
            return memo[node]
        if node in self.slot:
            return f"static[{self.slot[node]}]"
        vid = self.jg.node_vertex.get(node)
        if vid is not None:
            return f"env[{vid}]"  # resident: check() proved it for every vertex a step reads
        if node in self.jg.alias:
            expr = self.ref(self.jg.alias[node], memo, views, temps)
        else:
            call = self.call(node, memo, views, temps)
            expr = f"t{len(temps)}"
            temps.append(expr)
            views.append(f"{expr} = {call}")
        memo[node] = expr
        return expr

    def constant(self, value):
        if value is None or type(value) in (int, bool):
            return repr(value)  # a literal: no lookup at run time
        return self.name(value, "c")

    def name(self, obj, prefix):
        """obj's name in the generated code's namespace (which keeps obj alive)."""
        key = id(obj)
        if key not in self.names:
            self.names[key] = f"{prefix}{len(self.names)}"
            self.namespace[self.names[key]] = obj
        return self.names[key]


def _has_node(a):
    found = []
    torch.fx.node.map_arg(a, found.append)
    return bool(found)


class _JointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, runner, buffers, num_inputs, *flat):
        inputs, params = flat[:num_inputs], flat[num_inputs:]
        for i in runner.jg.counters:
            buffers[i].add_(1)
        state = runner.begin(params, buffers, inputs)
        outs = runner.forward(state)
        ctx.runner, ctx.state, ctx.num_inputs = runner, state, num_inputs
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        state, ctx.state = ctx.state, None
        if state is None:
            raise RuntimeError("memsched_torch: backward through a budgeted step twice (retain_graph is not supported)")
        pgrads = ctx.runner.backward(state, grads)
        return (None, None, None, *([None] * ctx.num_inputs), *pgrads)


def run_training_step(runner, params, buffers, inputs):
    """Forward of a budgeted step as an autograd function: gradients flow to params."""
    return _JointFunction.apply(runner, buffers, len(inputs), *inputs, *params)


class InferenceRunner:
    """Runs a forward FX graph in a given order of its nodes, freeing each value after its last use.

    The schedule (which values each node frees) and the graph's constants are worked out once, here:
    a run then allocates its tensors and little else, so a memory meter around a call sees the order's
    memory, not the runner's bookkeeping (dictionaries over every node of a large graph are hundreds
    of kB of malloc).
    """

    def __init__(self, gm, order_nodes):
        self.gm = gm
        self.order = order_nodes
        position = {n: i for i, n in enumerate(order_nodes)}
        last_use = {}
        for n in order_nodes:
            for a in n.all_input_nodes:
                last_use[a] = max(last_use.get(a, -1), position[n])
        self.out_node = next(n for n in gm.graph.nodes if n.op == "output")
        kept = set(self.out_node.all_input_nodes)
        self.placeholders = [n for n in order_nodes if n.op == "placeholder"]
        self.constants = {n: self.attribute(n.target) for n in order_nodes if n.op == "get_attr"}
        self.steps = []  # (node, the values that die after it)
        for i, n in enumerate(order_nodes):
            if n.op in ("placeholder", "get_attr", "output"):
                continue
            if n.op != "call_function":
                raise PlanError(f"inference runner: unsupported node {n.op} {n.target}")
            dead = tuple(a for a in dict.fromkeys(n.all_input_nodes)
                         if last_use.get(a) == i and a not in kept and a not in self.constants)
            if n not in last_use:
                dead += (n,)  # a value nothing reads (max-pool indices, BatchNorm's statistics)
            self.steps.append((n, dead))

    def attribute(self, target):
        obj = self.gm
        for part in target.split("."):
            obj = getattr(obj, part)
        return obj

    def __call__(self, *inputs, observe=None):
        env = dict(zip(self.placeholders, inputs))
        constants = self.constants

        def value(a):
            return env[a] if a in env else constants[a]

        with torch.no_grad():
            for n, dead in self.steps:
                args, kwargs = torch.fx.node.map_arg((n.args, n.kwargs), value)
                env[n] = n.target(*args, **kwargs)
                del args, kwargs
                for a in dead:
                    env.pop(a, None)
                if observe is not None:
                    observe()
            return torch.fx.node.map_arg(self.out_node.args[0], value)
