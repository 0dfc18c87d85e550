"""Measured memory and time of budgeted training steps against eager PyTorch (docs/pytorch.md).

  python3 -m memsched_torch.bench [--models resnet18,...] [--batch 1] [--size 224]
                                  [--budgets 1,0.7,0.5,0.3] [--algo auto] [--tool-args 'FLAGS'] [--runs 3]
                                  [--memsched PATH]

Prints one row per model and budget: memsched's predicted peak, the measured peak of the plan's
execution, eager autograd's measured peak, the measured step time against eager's and the plan's
predicted overhead (or, when no plan meets the budget, the error naming it and the least feasible
budget); then, for the same model, torch.utils.checkpoint_sequential (sequence-shaped
models) and functorch's min_cut_rematerialization_partition with the same instrument.

The instrument: glibc's mallinfo2() (bytes in use in every malloc arena plus mmap'd chunks, which is
where PyTorch's CPU allocator gets its memory), sampled after every ATen op through a
TorchDispatchMode. "Peak" is the largest sample minus the sample at the step's start (parameters,
buffers and inputs exist before; parameter gradients are set to None, so they count). It misses
memory an op allocates and frees inside itself (convolution workspaces, im2col buffers) and counts
malloc's own chunk overhead.
"""

import argparse
import ctypes
import gc
import os
import statistics
import sys
import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode

if __package__ in (None, ""):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
    import memsched_torch  # noqa: E402
else:
    import memsched_torch  # noqa: E402


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


_libc = ctypes.CDLL("libc.so.6")
_libc.mallinfo2.restype = _Mallinfo2


def malloc_live():
    info = _libc.mallinfo2()
    return int(info.uordblks + info.hblkhd)


class PeakMeter(TorchDispatchMode):
    """Samples malloc_live() after every ATen op; .peak() is the largest rise over the start."""

    def __enter__(self):
        gc.collect()
        self.start = malloc_live()
        self.max = self.start
        return super().__enter__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        live = malloc_live()
        if live > self.max:
            self.max = live
        return out

    def peak(self):
        return self.max - self.start


def loss_of(out):
    return out if out.dim() == 0 else out.float().mean()


def measure(step_fn, model):
    """(peak bytes, median seconds) of step_fn(), gradients set to None before each run."""
    model.zero_grad(set_to_none=True)
    step_fn()  # warm-up: first-call allocations (thread pools, kernels' caches) are not the step's
    model.zero_grad(set_to_none=True)
    with PeakMeter() as meter:
        step_fn()
    peak = meter.peak()
    return peak


def time_step(step_fn, model, runs):
    times = []
    for _ in range(runs):
        model.zero_grad(set_to_none=True)
        gc.collect()
        start = time.perf_counter()
        step_fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def time_pair(step, eager, model, runs):
    """Median seconds of step and of eager, their runs alternating."""
    a, b = [], []
    for _ in range(runs):
        a.append(time_step(step, model, 1))
        b.append(time_step(eager, model, 1))
    return statistics.median(a), statistics.median(b)


def eager_step(model, inputs):
    def step():
        loss_of(model(*inputs)).backward()
    return step


def sequential_of(model):
    """The model as an nn.Sequential when it is one (torchvision's ResNets are, around flatten)."""
    import torchvision
    if isinstance(model, torch.nn.Sequential):
        return model
    if isinstance(model, torchvision.models.ResNet):
        # The stem stays one piece: its in-place relu cannot take a segment's input (a leaf).
        return torch.nn.Sequential(torch.nn.Sequential(model.conv1, model.bn1, model.relu, model.maxpool),
                                   model.layer1, model.layer2, model.layer3, model.layer4,
                                   torch.nn.Sequential(model.avgpool, torch.nn.Flatten(1), model.fc))
    return None


def checkpoint_step(model, inputs, segments):
    from torch.utils.checkpoint import checkpoint_sequential
    seq = sequential_of(model)

    def step():
        x = inputs[0].detach().requires_grad_()  # checkpoint_sequential needs an input that requires grad
        loss_of(checkpoint_sequential(seq, segments, x)).backward()
    return step


def mincut_step(model, inputs):
    from functorch.compile import aot_module, make_boxed_func, min_cut_rematerialization_partition
    # Boxed graphs free their inputs as they go; unboxed ones keep every saved tensor to the end.
    compiled = aot_module(model, fw_compiler=lambda g, _: make_boxed_func(g), bw_compiler=lambda g, _: make_boxed_func(g),
                          partition_fn=min_cut_rematerialization_partition)

    def step():
        loss_of(compiled(*inputs)).backward()
    return step


def make_model(name):
    import torchvision
    if name == "googlenet":
        return torchvision.models.googlenet(aux_logits=False, init_weights=False)
    if name == "inception_v3":
        return torchvision.models.inception_v3(aux_logits=False, init_weights=False)
    return getattr(torchvision.models, name)()


def search_space_model(name):
    """The DARTS (20 cells, CIFAR) or RandWire (WS, seed 0, ImageNet) network of
    scripts/onnx_models.py, with its input shape."""
    import importlib.util
    path = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "onnx_models.py")
    spec = importlib.util.spec_from_file_location("onnx_models", path)
    models = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(models)
    return models.make(name, False, 0)


def inference_rows(args):
    """Serenity's order run by the inference runner against eager's forward, both under no_grad."""
    from memsched_torch.inference import ordered
    print("model         predicted  measured  eager_peak  pred/meas  (inference, Serenity's order)")
    for name in args.models.split(","):
        if name in ("darts", "randwire"):
            model, shape = search_space_model(name)
            x = torch.randn(args.batch, *shape[1:])
        else:
            model = make_model(name)
            size = 299 if name == "inception_v3" else args.size
            x = torch.randn(args.batch, 3, size, size)
        model = model.eval()
        runner, doc, graph = ordered(model, (x,), tool=args.memsched)
        with torch.no_grad():
            model(x)
            with PeakMeter() as meter:
                model(x)
            eager = meter.peak()
            runner(x)
            with PeakMeter() as meter:
                runner(x)
            measured = meter.peak()
        pred = int(doc["peak_bytes"])  # the input, held by the caller, is no vertex's bytes
        print(f"{name:12s} {fmt_mb(pred)} MB {fmt_mb(measured)} MB {fmt_mb(eager)} MB  {pred / max(measured, 1):8.3f}", flush=True)


def tool_flags(args):
    """The tool's remat flags beyond the budget and the algorithm: auto's time limit, then --tool-args."""
    return (("--time-limit", args.time_limit) if args.algo == "auto" else ()) + tuple(args.tool_args.split())


def fmt_mb(b):
    return f"{b / 1e6:8.2f}"


def main(argv):
    parser = argparse.ArgumentParser(prog="memsched_torch.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="resnet18")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--budgets", default="1,0.7,0.5,0.3")
    parser.add_argument("--algo", default="auto")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--segments", default="2,4")
    parser.add_argument("--memsched")
    parser.add_argument("--time-limit", default="30", help="the tool's --time-limit per plan (seconds); a budget with no plan costs a few more (the bisection for the least feasible budget)")
    parser.add_argument("--tool-args", default="", metavar="'FLAGS'",
                        help="more flags for the tool's remat, split at spaces (e.g. --algo free-order "
                             "--tool-args '--max-evaluations 900')")
    parser.add_argument("--costs", choices=("flops", "timed"), default="flops",
                        help="what plans minimise: FLOPs, or the median seconds of each op on this CPU (cached)")
    parser.add_argument("--no-baselines", action="store_true")
    parser.add_argument("--inference", action="store_true",
                        help="inference rows instead: Serenity's order against eager's forward")
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    if args.inference:
        inference_rows(args)
        return 0
    print("model     budget  algo           predicted  measured  eager_peak  pred/meas  step_s  eager_s  time_x  pred_overhead")
    for name in args.models.split(","):
        model = make_model(name).train()
        inputs = (torch.randn(args.batch, 3, args.size, args.size),)
        eager = eager_step(model, inputs)
        eager_peak = measure(eager, model)
        jg = memsched_torch.trace(model, inputs, costs=args.costs)
        for text in args.budgets.split(","):
            budget = float(text)
            try:
                m = memsched_torch.budgeted(model, inputs, budget=budget, algo=args.algo, tool=args.memsched, joint=jg,
                                            extra=tool_flags(args))
            except memsched_torch.PlanError as exc:
                print(f"{name:9s} {budget:5.0%}   {args.algo:12s}  no plan: {exc}")
                continue
            step = eager_step(m, inputs)
            peak = measure(step, model)
            # Interleaved with eager's runs: a shared machine's load then slows both alike.
            seconds, eager_time = time_pair(step, eager, model, args.runs)
            pred = m.predicted_peak
            print(f"{name:9s} {budget:5.0%}   {m.plan.get('algorithm', args.algo)[:12]:12s} {fmt_mb(pred)} MB {fmt_mb(peak)} MB "
                  f"{fmt_mb(eager_peak)} MB  {pred / max(peak, 1):8.3f}  {seconds:6.3f}  {eager_time:7.3f}  "
                  f"{seconds / eager_time:6.2f}  {float(m.plan.get('overhead', 0)):6.3f}", flush=True)
        if args.no_baselines:
            continue
        if sequential_of(model) is not None:
            for segments in (int(s) for s in args.segments.split(",")):
                step = checkpoint_step(model, inputs, segments)
                peak = measure(step, model)
                seconds, eager_time = time_pair(step, eager, model, args.runs)
                print(f"{name:9s}   -     checkpoint_sequential({segments})   measured {fmt_mb(peak)} MB  "
                      f"step {seconds:.3f} s ({seconds / eager_time:.2f}x eager)", flush=True)
        try:
            step = mincut_step(model, inputs)
            peak = measure(step, model)
            seconds, eager_time = time_pair(step, eager, model, args.runs)
            print(f"{name:9s}   -     min_cut_rematerialization_partition measured {fmt_mb(peak)} MB  "
                  f"step {seconds:.3f} s ({seconds / eager_time:.2f}x eager)", flush=True)
        except Exception as exc:  # the baseline's own failure is a result, not the benchmark's
            print(f"{name:9s}   -     min_cut_rematerialization_partition failed: {type(exc).__name__}: "
                  f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
