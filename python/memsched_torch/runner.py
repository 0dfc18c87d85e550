"""Executes memsched plans on real tensors.

A training plan is a list of compute / free steps over the joint graph's vertices. The runner
keeps one tensor (or, for a multi-output op, one tuple without the items no node reads) per
resident vertex, computes a vertex by running its ATen op(s) on its predecessors' tensors and
drops the reference at a free step, so PyTorch's allocator releases the storage at once. The
steps before the first incoming gradient run in the module's forward, the rest in its backward.
"""

import torch
import torch.fx

from .plan import PlanError


class JointRunner:
    def __init__(self, jg, steps):
        self.jg = jg
        self.steps = [(op, int(v)) for op, v in steps]
        self.check()

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
        static = {}
        for node, (kind, i) in self.jg.static.items():
            static[node] = {"param": params, "buffer": buffers, "input": inputs}[kind][i]
        return {"static": static, "env": {}, "computed": set(), "rng": {}, "tangents": None}

    def value(self, state, node, memo):
        """node's value: a resident vertex, a static tensor, or a view evaluated again from its base."""
        jg = self.jg
        if node in memo:
            return memo[node]
        if node in state["static"]:
            return state["static"][node]
        vid = jg.node_vertex.get(node)
        if vid is not None:
            if vid not in state["env"]:
                raise PlanError(f"vertex {jg.vertices[vid].name} is read but not resident")
            return state["env"][vid]
        if node in jg.alias:
            result = self.value(state, jg.alias[node], memo)
        else:
            args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), lambda n: self.value(state, n, memo))
            result = node.target(*args, **kwargs)
        memo[node] = result
        return result

    def compute(self, state, vid):
        v = self.jg.vertices[vid]
        env, memo = state["env"], {}
        if v.kind == "tangent":
            env[vid] = state["tangents"][v.item]
            return
        if v.kind == "item":
            env[vid] = env[self.jg.node_vertex[v.node.args[0]]][v.item]
            return
        again = vid in state["computed"]
        args, kwargs = torch.fx.node.map_arg((v.node.args, v.node.kwargs), lambda n: self.value(state, n, memo))
        if again and v.writes_static:  # BatchNorm's running statistics are updated once per step
            args = tuple(a.clone() if i in v.writes_static else a for i, a in enumerate(args))
        saved = None
        if v.random:
            if again:
                saved = torch.get_rng_state()
                torch.set_rng_state(state["rng"][vid])
            else:
                state["rng"][vid] = torch.get_rng_state()
        try:
            out = v.node.target(*args, **kwargs)
            if v.unread:  # the op's workspace: items no node reads die as the op returns
                out = tuple(None if i in v.unread else item for i, item in enumerate(out))
            env[vid] = memo[v.node] = out
            for node in v.group:
                gargs, gkwargs = torch.fx.node.map_arg((node.args, node.kwargs), lambda n: self.value(state, n, memo))
                node.target(*gargs, **gkwargs)
        finally:
            if saved is not None:
                torch.set_rng_state(saved)
        state["computed"].add(vid)

    def run_steps(self, state, lo, hi, observe=None):
        for op, vid in self.steps[lo:hi]:
            if op == "compute":
                self.compute(state, vid)
            else:
                del state["env"][vid]
            if observe is not None:
                observe()

    def forward(self, state, observe=None):
        """The plan's steps up to the first incoming gradient; returns the module's flat outputs."""
        with torch.no_grad():
            self.run_steps(state, 0, self.split, observe)
            return [self.value(state, n, {}) if n is not None else None for n in self.jg.forward_out_nodes]

    def backward(self, state, grads, observe=None):
        """The remaining steps from the incoming gradients; returns one gradient per parameter."""
        with torch.no_grad():
            state["tangents"] = [g.contiguous() if g is not None else None for g in grads]
            self.run_steps(state, self.split, len(self.steps), observe)
            result = [self.value(state, n, {}) if n is not None else None for n in self.jg.grad_out_nodes]
        state["env"].clear()
        state["tangents"] = None
        return result


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
