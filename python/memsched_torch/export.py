#!/usr/bin/env python3
"""Exports a PyTorch model's dataflow graph as memsched graph JSON (docs/torch-export.md).

  python3 scripts/torch_export.py MODULE_SPEC --input-shape 1,3,224,224 [--input-shape ...] --out GRAPH.json
                                  [--level module|aten [--autograd]] [--profile] [--training] [--memsched PATH]

MODULE_SPEC is a dotted path to a callable returning an nn.Module, called without arguments
(torchvision.models.resnet18), or FILE.py:NAME. The model is traced with torch.fx (module level:
symbolic_trace; aten level: make_fx) and run once on random inputs of the given shapes (float32,
or D,D,...:int64 for token ids).
Vertices are the values that own memory: graph inputs and every op whose output is a new tensor
(bytes = the size of the new storage(s); an output of a multi-output op that no node reads, such
as max_pool2d_with_indices' indices, is the op's workspace); views and in-place ops share memory
with their base.
Weights, parameters and buffers are not vertices. Exit status: 0 written, 1 the model failed to
trace or run, 2 bad arguments or an unknown module spec.
"""

import argparse
import contextlib
import importlib
import importlib.util
import io
import json
import operator
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PROG = "torch_export"


class ExportError(Exception):
    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def fail(message, status):
    raise ExportError(message, status)


def first_line(exc):
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


INPUT_DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32")


def parse_shape(text):
    """'D,D,...[:DTYPE]' -> (dims, dtype name); float32 by default."""
    shape, _, dtype = text.partition(":")
    try:
        dims = [int(d) for d in shape.split(",")]
    except ValueError:
        dims = []
    if not dims or any(d <= 0 for d in dims):
        fail(f"bad --input-shape '{text}': expected positive integers separated by commas, e.g. 1,3,224,224", 2)
    if dtype and dtype not in INPUT_DTYPES:
        fail(f"bad --input-shape '{text}': unknown dtype '{dtype}' (one of {', '.join(INPUT_DTYPES)})", 2)
    return dims, dtype or "float32"


def make_input(dims, dtype):
    """Random floats; integer inputs (token ids) are zeros, a valid index for any embedding."""
    import torch

    if dtype.startswith("int"):
        return torch.zeros(*dims, dtype=getattr(torch, dtype))
    return torch.randn(*dims).to(getattr(torch, dtype))


def load_model(spec):
    """MODULE_SPEC -> nn.Module: 'FILE.py:NAME' or a dotted path to a callable."""
    import torch

    if ":" in spec:
        path, _, name = spec.rpartition(":")
        if not path.endswith(".py") or not name:
            fail(f"unknown module spec '{spec}': expected FILE.py:NAME or a dotted path", 2)
        if not os.path.isfile(path):
            fail(f"unknown module spec '{spec}': no file {path}", 2)
        module_name = "torch_export_user_" + os.path.splitext(os.path.basename(path))[0]
        loader_spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(loader_spec)
        sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
        try:
            loader_spec.loader.exec_module(module)
        except Exception as exc:  # the user's file: report its error on one line
            fail(f"unknown module spec '{spec}': importing {path} failed: {first_line(exc)}", 2)
        finally:
            sys.path.pop(0)
        if not hasattr(module, name):
            fail(f"unknown module spec '{spec}': {path} has no '{name}'", 2)
        factory = getattr(module, name)
    else:
        parts = spec.split(".")
        factory = None
        for cut in range(len(parts) - 1, 0, -1):  # longest importable module prefix
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            try:
                for attr in parts[cut:]:
                    obj = getattr(obj, attr)
            except AttributeError:
                fail(f"unknown module spec '{spec}': module {'.'.join(parts[:cut])} has no '{'.'.join(parts[cut:])}'", 2)
            factory = obj
            break
        if factory is None:
            fail(f"unknown module spec '{spec}': no importable module in it", 2)
    if isinstance(factory, torch.nn.Module):
        return factory
    if not callable(factory):
        fail(f"unknown module spec '{spec}': not callable", 2)
    try:
        model = factory()
    except Exception as exc:
        fail(f"module spec '{spec}': calling it without arguments failed: {first_line(exc)}", 1)
    if not isinstance(model, torch.nn.Module):
        fail(f"module spec '{spec}': returned {type(model).__name__}, not an nn.Module", 2)
    return model


def flat_tensors(value, out):
    """Appends every tensor in value (nested tuples, lists, dicts) to out."""
    import torch

    if isinstance(value, torch.Tensor):
        out.append(value)
    elif isinstance(value, (tuple, list)):
        for item in value:
            flat_tensors(item, out)
    elif isinstance(value, dict):
        for item in value.values():
            flat_tensors(item, out)
    return out


def storage_key(t):
    """The identity of a tensor's memory (None for an empty tensor)."""
    storage = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    ptr = storage.data_ptr()
    nbytes = storage.nbytes() if hasattr(storage, "nbytes") else storage.size() * t.element_size()
    return (ptr, t.device.type) if ptr and nbytes else None, nbytes


# Op names of the memsched vocabulary (docs/ops.md); the training rule reads them.
MODULE_OPS = {
    "Conv1d": "conv1d", "Conv2d": "conv2d", "Conv3d": "conv3d", "ConvTranspose2d": "conv_transpose2d",
    "BatchNorm1d": "batchnorm", "BatchNorm2d": "batchnorm", "BatchNorm3d": "batchnorm",
    "LayerNorm": "layernorm", "GroupNorm": "groupnorm", "ReLU": "relu", "ReLU6": "relu6",
    "MaxPool2d": "maxpool2d", "AvgPool2d": "avgpool2d", "AdaptiveAvgPool2d": "adaptive_avgpool2d",
    "Linear": "linear", "Embedding": "embedding", "Softmax": "softmax", "GELU": "gelu",
    "Dropout": "dropout", "Flatten": "flatten", "Identity": "identity",
}
NAME_OPS = {
    "add": "add", "iadd": "add", "mul": "mul", "imul": "mul", "truediv": "div", "div": "div",
    "cat": "concat", "concat": "concat", "convolution": "conv2d", "native_batch_norm": "batchnorm",
    "_native_batch_norm_legit_no_training": "batchnorm", "native_layer_norm": "layernorm",
    "max_pool2d_with_indices": "maxpool2d", "max_pool2d": "maxpool2d", "adaptive_avg_pool2d": "adaptive_avgpool2d",
    "_adaptive_avg_pool2d": "adaptive_avgpool2d", "hardtanh": "relu6", "clone": "copy", "contiguous": "copy",
    "_softmax": "softmax", "conv2d": "conv2d", "batch_norm": "batchnorm", "layer_norm": "layernorm",
}


def op_name(node, module):
    if node.op == "call_module":
        cls = type(module).__name__
        return MODULE_OPS.get(cls, cls.lower())
    target = node.target
    if node.op == "call_method":
        name = target
    else:
        name = getattr(target, "__name__", str(target))
        overload = getattr(target, "_overloadpacket", None)  # aten OpOverload: aten::add_.Tensor -> add_
        if overload is not None:
            name = overload.__name__
    name = name.split(".")[-1]
    if name.endswith("_") and not name.startswith("_"):
        name = name[:-1]  # in-place variant: relu_ -> relu
    if node.op == "call_function" and name == "convolution" and len(node.args) > 6 and node.args[6] is True:
        return "conv_transpose2d"
    return NAME_OPS.get(name, NAME_OPS.get(name.lstrip("_"), name))


def numel(t):
    return int(t.numel())


def flop_estimate(op, node, module, inputs, outputs):
    """FLOPs (a multiply-add counts 2) of conv, linear, matmul, bmm and kin; else output elements."""
    out_elements = sum(numel(t) for t in outputs)
    args = inputs
    try:
        if op in ("conv1d", "conv2d", "conv3d", "conv_transpose2d"):
            weight = module.weight if module is not None else args[1]
            kernel = 1
            for d in weight.shape[2:]:
                kernel *= int(d)
            if op == "conv_transpose2d":  # weight [in, out/groups, k...]: every input element scatters
                return 2 * numel(args[0]) * int(weight.shape[1]) * kernel
            return 2 * out_elements * int(weight.shape[1]) * kernel  # weight [out, in/groups, k...]
        if op == "linear":
            weight = module.weight if module is not None else args[1]
            return 2 * out_elements * int(weight.shape[1])
        if op in ("mm", "matmul", "bmm"):
            return 2 * out_elements * int(args[0].shape[-1])
        if op in ("addmm", "baddbmm"):
            return 2 * out_elements * int(args[1].shape[-1])
    except (AttributeError, IndexError, TypeError):
        pass
    return out_elements


def trace(model, inputs, level, autograd):
    import torch
    import torch.fx

    try:
        if level == "module":
            return torch.fx.symbolic_trace(model)
        from torch.fx.experimental.proxy_tensor import make_fx
        # Under no_grad eval-mode modules may take fused inference kernels (nn.TransformerEncoderLayer
        # is one _transformer_encoder_layer_fwd op); with gradients enabled they take their training
        # paths, which may clone before an in-place op (mobilenet_v2's hardtanh_).
        with torch.set_grad_enabled(autograd):
            return make_fx(model)(*inputs)
    except Exception as exc:
        fail(f"cannot trace the model at {level} level with torch.fx: {first_line(exc)}", 1)


def read_items(node, result):
    """Indices of the items of node's tuple (or list) result that the graph reads; None: all of them
    (a single value, or a tuple read as a whole)."""
    if not isinstance(result, (tuple, list)):
        return None
    read = set()
    for user in node.users:
        if user.target is not operator.getitem or not isinstance(user.args[1], int):
            return None
        if user.users:  # an item nobody reads (max-pool's indices, layer norm's statistics) dies with the tuple
            read.add(user.args[1] % len(result))
    return read


def unread_items(node, result):
    """Indices of the items of node's tuple (or list) result that no node reads (max-pool's indices
    in a forward graph, layer norm's statistics when no backward reads them): a runner drops them as
    soon as the op returns."""
    read = read_items(node, result)
    return [] if read is None else [i for i in range(len(result)) if i not in read]


def unread_storages(node, result, unread=None):
    """Storage keys of the items of node's result that no node reads and no read item shares: the
    op's workspace, allocated by the op and dropped as soon as it returns. Both exporters (this
    file's forward graphs, joint.py's training graphs) make them the op's `workspace`. `unread`:
    unread_items(node, result) when the caller has it already."""
    if unread is None:
        unread = unread_items(node, result)
    if not unread:
        return set()
    keys = {i: {storage_key(t)[0] for t in flat_tensors(item, [])} for i, item in enumerate(result)}
    kept = set().union(*(k for i, k in keys.items() if i not in unread))
    return set().union(*(keys[i] for i in unread)) - kept - {None}


def build_graph(gm, inputs, level):
    """Runs gm once (ShapeProp) and turns its nodes into memsched vertices and edges."""
    import torch
    import torch.fx
    from torch.fx.passes.shape_prop import ShapeProp

    modules = dict(gm.named_modules())
    owner = {}        # storage key -> owning vertex index (None: a weight, parameter or buffer)
    last_writer = {}  # storage key -> vertex of the last in-place write
    readers = {}      # storage key -> vertices that read it since that write
    for t in list(gm.parameters()) + list(gm.buffers()):
        key, _ = storage_key(t)
        if key is not None:
            owner[key] = None
    keep = []  # every value stays referenced, so a freed storage's address is never reused
    vertices = []
    edges = set()
    node_vertex = {}
    module_names = {}
    records = []  # per vertex: (fx node, module, input tensors, output tensors)

    class Catch(torch.fx.Interpreter):
        """Keeps the model's own exception (ShapeProp replaces it with its own message)."""
        error = None

        def run_node(self, n):
            try:
                return super().run_node(n)
            except Exception as exc:
                Catch.error = exc
                raise

    class Tracker(ShapeProp, Catch):  # ShapeProp.run_node -> Catch.run_node -> Interpreter.run_node
        def run_node(self, n):
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            ins = flat_tensors((args, kwargs), [])
            versions = [t._version for t in ins]
            result = super().run_node(n)
            keep.append(result)
            outs = flat_tensors(result, [])
            if n.op == "get_attr":
                for t in outs:
                    key, _ = storage_key(t)
                    if key is not None:
                        owner.setdefault(key, None)
                return result
            if n.op == "output":
                return result
            mutated = [t for t, v in zip(ins, versions) if t._version != v]
            mutated_keys = {k for k in (storage_key(t)[0] for t in mutated) if k is not None and owner.get(k) is not None}
            new = {}
            for t in outs:
                key, nbytes = storage_key(t)
                if key is not None and key not in owner and key not in new:
                    new[key] = nbytes
            unread = unread_storages(n, result)
            transient = {key: nbytes for key, nbytes in new.items() if key in unread}  # the op's workspace
            if n.op != "placeholder" and not new and not mutated_keys:
                return result  # a view, an alias, an empty tensor or a non-tensor value: no memory of its own
            index = len(vertices)
            module = modules.get(n.target) if n.op == "call_module" else None
            if n.op == "placeholder":
                op = "input"
                name = n.name
            else:
                op = op_name(n, module)
                if n.op == "call_module":
                    count = module_names.get(n.target, 0)
                    module_names[n.target] = count + 1
                    name = n.target if count == 0 else f"{n.target}#{count}"
                else:
                    name = n.name
            read_keys = []
            for t in ins:
                key, _ = storage_key(t)
                if key is not None and key not in read_keys:
                    read_keys.append(key)
            for key in read_keys:
                src = owner.get(key)
                if src is not None:
                    edges.add((src, index))
                if key in last_writer and last_writer[key] != index:
                    edges.add((last_writer[key], index))
                readers.setdefault(key, []).append(index)
            for key in mutated_keys:  # a write runs after every earlier reader of the old value
                for r in readers.get(key, []):
                    if r != index:
                        edges.add((r, index))
                last_writer[key] = index
                readers[key] = []
            for key in new:
                owner[key] = index
            held = sum(nbytes for key, nbytes in new.items() if key not in transient)
            vertex = {"id": index, "name": name, "op": op, "bytes": int(held), "cost": 0 if op == "input" else None}
            if transient:  # allocated by the op and dropped as soon as it returns
                vertex["workspace"] = int(sum(transient.values()))
            if mutated_keys and not new:  # in place: its gradient still needs a tensor of this size
                vertex["tensor_bytes"] = int(sum(t.numel() * t.element_size() for t in outs))
            vertices.append(vertex)
            records.append((n, module, ins, outs))
            node_vertex[n] = index
            return result

    with torch.no_grad():
        tracker = Tracker(gm)
        try:
            with contextlib.redirect_stderr(io.StringIO()):  # ShapeProp prints a traceback itself
                out = tracker.propagate(*[t.clone() for t in inputs])
        except ExportError:
            raise
        except Exception as exc:
            fail(f"the traced model failed to run at {level} level: {first_line(Catch.error or exc)}", 1)
    outputs = []
    for t in flat_tensors(out, []):
        key, _ = storage_key(t)
        v = owner.get(key) if key is not None else None
        if v is not None and v not in outputs:
            outputs.append(v)
    for v, (n, module, ins, outs) in zip(vertices, records):
        if v["op"] != "input":
            v["cost"] = flop_estimate(v["op"], n, module, ins, outs)
    return vertices, sorted(edges), sorted(outputs), [rec[0] for rec in records]


def profile(gm, inputs, vertex_nodes, runs):
    """Median seconds of each vertex's op over `runs` timed runs (after one warm-up run)."""
    import torch
    import torch.fx

    wanted = {n: i for i, n in enumerate(vertex_nodes)}
    times = [[] for _ in vertex_nodes]

    class Timer(torch.fx.Interpreter):
        def __init__(self, module, record):
            super().__init__(module)
            self.record = record

        def run_node(self, n):
            start = time.perf_counter()
            result = super().run_node(n)
            elapsed = time.perf_counter() - start
            if self.record and n in wanted:
                times[wanted[n]].append(elapsed)
            return result

    with torch.no_grad():
        for run in range(runs + 1):
            Timer(gm, record=run > 0).run(*[t.clone() for t in inputs])
    return [statistics.median(ts) for ts in times]


def find_tool(explicit):
    for candidate in (explicit, os.environ.get("MEMSCHED")):
        if candidate:
            if not (os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
                fail(f"memsched tool '{candidate}' is not an executable file", 2)
            return candidate
    return shutil.which("memsched")


def main(argv):
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("module_spec", metavar="MODULE_SPEC")
    parser.add_argument("--input-shape", action="append", required=True, metavar="D,D,...[:DTYPE]",
                        help="shape of one input, float32 unless :DTYPE says (int64 for token ids); "
                             "repeat for several inputs, in forward()'s order")
    parser.add_argument("--out", required=True, metavar="GRAPH.json")
    parser.add_argument("--level", choices=("module", "aten"), default="module")
    parser.add_argument("--autograd", action="store_true",
                        help="aten level: trace with gradients enabled (no fused inference kernels)")
    parser.add_argument("--training", action="store_true",
                        help="write the training graph (memsched train rules on the forward graph)")
    parser.add_argument("--memsched", metavar="PATH", help="the memsched tool (default: $MEMSCHED, then PATH)")
    parser.add_argument("--profile", action="store_true", help="cost = median measured seconds of each op on this CPU")
    parser.add_argument("--profile-runs", type=int, default=5, metavar="N")
    parser.add_argument("--name", help="graph name (default: the last part of MODULE_SPEC)")
    args = parser.parse_args(argv)

    shapes = [parse_shape(s) for s in args.input_shape]
    if args.profile_runs < 1:
        fail("--profile-runs must be >= 1", 2)
    if not args.out.endswith(".json"):
        fail(f"--out {args.out}: the exporter writes memsched JSON (.json); convert with 'memsched convert'", 2)
    tool = find_tool(args.memsched) if args.training else None
    try:
        import torch
    except ImportError:
        fail("python3-torch is not installed (bash scripts/setup.sh --torch)", 1)
    torch.manual_seed(0)
    model = load_model(args.module_spec)
    model.eval()
    inputs = [make_input(dims, dtype) for dims, dtype in shapes]
    gm = trace(model, inputs, args.level, args.autograd)
    vertices, edges, outputs, vertex_nodes = build_graph(gm, inputs, args.level)
    if args.profile:
        for v, seconds in zip(vertices, profile(gm, inputs, vertex_nodes, args.profile_runs)):
            if v["op"] != "input":
                v["cost"] = seconds
    name = args.name or args.module_spec.replace(":", ".").split(".")[-1]
    graph = {
        "format": "memsched-graph", "version": 1, "name": name, "kind": "inference",
        "source": f"torch_export.py {args.module_spec}", "tracer": args.level,
        "input_shapes": [dims for dims, _ in shapes], "input_dtypes": [dtype for _, dtype in shapes],
        "cost_unit": "seconds (median of %d runs)" % args.profile_runs if args.profile else "flops",
        "inputs": [v["id"] for v in vertices if v["op"] == "input"], "outputs": outputs,
        "nodes": vertices, "edges": [list(e) for e in edges], "order": [v["id"] for v in vertices],
    }
    if not args.training:
        write_json(args.out, graph)
        print(f"{PROG}: wrote {args.out}: {len(vertices)} vertices, {len(edges)} edges, "
              f"{sum(v['bytes'] for v in vertices)} bytes", file=sys.stderr)
        return 0
    if tool is None:
        write_json(args.out, graph)
        print(f"{PROG}: no memsched tool (give --memsched PATH or set MEMSCHED): wrote the FORWARD graph to "
              f"{args.out}; make the training graph with: memsched train {args.out} --out TRAINING.json", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        forward = os.path.join(tmp, "forward.json")
        write_json(forward, graph)
        done = subprocess.run([tool, "train", forward, "--out", args.out], capture_output=True, text=True)
        if done.returncode != 0:
            fail(f"'{tool} train' failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}", 1)
    # The rule gives g(v) the bytes of v; an in-place v owns none, but its gradient is a new tensor.
    with open(args.out) as f:
        training = json.load(f)
    tensor_bytes = {v["id"]: v["tensor_bytes"] for v in vertices if "tensor_bytes" in v}
    patched = 0
    for v in training["nodes"]:
        if v.get("grad_of") in tensor_bytes:
            v["bytes"] = tensor_bytes[v["grad_of"]]
            patched += 1
    if patched:
        with open(args.out, "w") as f:
            json.dump(training, f, separators=(",", ":"))
            f.write("\n")
    print(f"{PROG}: wrote the training graph {args.out} ({len(vertices)} forward vertices; {tool} train)", file=sys.stderr)
    return 0


def write_json(path, graph):
    with open(path, "w") as f:
        head = {k: v for k, v in graph.items() if k not in ("nodes", "edges", "order")}
        f.write(json.dumps(head)[:-1] + ',\n"nodes":[\n')
        f.write(",\n".join(json.dumps(v, separators=(",", ":")) for v in graph["nodes"]))
        f.write('],\n"edges":' + json.dumps(graph["edges"], separators=(",", ":")))
        f.write(',\n"order":' + json.dumps(graph["order"], separators=(",", ":")) + "}\n")


def run(argv):
    """The command line: main's exit status, or an ExportError's on stderr."""
    try:
        return main(argv)
    except ExportError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return exc.status


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
