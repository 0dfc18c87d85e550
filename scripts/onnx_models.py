#!/usr/bin/env python3
"""Exports networks at ONNX granularity (one vertex per ONNX operator, as PyTorch's ONNX exporter
writes them) for Serenity's proofs on operator-level graphs (docs/serenity.md, "ONNX granularity").

  python3 scripts/onnx_models.py NAME --out MODEL.onnx [--small] [--no-weights] [--seed S]

NAME is a torchvision classification model (densenet121, inception_v3, resnet50, googlenet, ...)
or one of the two NAS networks defined here, written from their papers:
  darts     the DARTS-V2 CIFAR-10 network (Liu et al., ICLR 2019): 20 cells, C = 36, 32x32 input,
            reduction cells at 1/3 and 2/3 (the genotype of graph/darts.hpp, no auxiliary head);
  randwire  a RandWire-WS network (Xie et al., ICCV 2019) as graph/randwire.hpp builds it: 3 random
            stages WS(32, 4, 0.75), C = 78, 224x224 input, each node [weighted sum] -> ReLU ->
            depthwise 3x3 -> pointwise 1x1 -> BatchNorm (its random graphs come from Python's own
            generator, so they differ from the C++ generator's).
--seed S (default 0) seeds RandWire's random graphs and every model's random weights.
--small makes a tiny version of the NAS networks (3-cell DARTS with C = 4 on 8x8; one 8-node
RandWire stage with C = 4 on 32x32) for tests. The model runs in eval mode with random weights,
batch 1, float32, opset 13; weights are written into the file, or with --no-weights left out the
way ../shared/graphs/onnx stores them (external data that is not kept: every initializer keeps its
name, type and shape, which is all memsched reads). Needs Debian's python3-torch (and
python3-torchvision for torchvision models). Exit status 0 written, 2 bad arguments.
"""

import argparse
import os
import random
import shutil
import sys
import tempfile

import torch
from torch import nn

DARTS_V2_NORMAL = [("sep_conv_3x3", 0), ("sep_conv_3x3", 1), ("sep_conv_3x3", 0), ("sep_conv_3x3", 1),
                   ("sep_conv_3x3", 1), ("skip_connect", 0), ("skip_connect", 0), ("dil_conv_3x3", 2)]
DARTS_V2_REDUCE = [("max_pool_3x3", 0), ("max_pool_3x3", 1), ("skip_connect", 2), ("max_pool_3x3", 1),
                   ("max_pool_3x3", 0), ("skip_connect", 2), ("skip_connect", 2), ("max_pool_3x3", 1)]


class ReLUConvBN(nn.Sequential):
    def __init__(self, c_in, c_out, kernel, stride, padding):
        super().__init__(nn.ReLU(), nn.Conv2d(c_in, c_out, kernel, stride, padding, bias=False), nn.BatchNorm2d(c_out))


class DilConv(nn.Sequential):
    def __init__(self, c_in, c_out, kernel, stride, padding, dilation):
        super().__init__(nn.ReLU(), nn.Conv2d(c_in, c_in, kernel, stride, padding, dilation, groups=c_in, bias=False),
                         nn.Conv2d(c_in, c_out, 1, bias=False), nn.BatchNorm2d(c_out))


class SepConv(nn.Sequential):
    def __init__(self, c_in, c_out, kernel, stride, padding):
        super().__init__(DilConv(c_in, c_in, kernel, stride, padding, 1), DilConv(c_in, c_out, kernel, 1, padding, 1))


class FactorizedReduce(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(c_in, c_out // 2, 1, stride=2, bias=False)
        self.conv2 = nn.Conv2d(c_in, c_out // 2, 1, stride=2, bias=False)
        self.bn = nn.BatchNorm2d(c_out)

    def forward(self, x):
        x = self.relu(x)
        return self.bn(torch.cat([self.conv1(x), self.conv2(x[:, :, 1:, 1:])], dim=1))


def darts_op(kind, c, stride):
    if kind == "sep_conv_3x3":
        return SepConv(c, c, 3, stride, 1)
    if kind == "dil_conv_3x3":
        return DilConv(c, c, 3, stride, 2, 2)
    if kind == "max_pool_3x3":
        return nn.MaxPool2d(3, stride, 1)
    if kind == "skip_connect":
        return nn.Identity() if stride == 1 else FactorizedReduce(c, c)
    raise ValueError(kind)


class DartsCell(nn.Module):
    def __init__(self, genotype, c_pp, c_p, c, reduction, reduction_prev):
        super().__init__()
        self.pre0 = FactorizedReduce(c_pp, c) if reduction_prev else ReLUConvBN(c_pp, c, 1, 1, 0)
        self.pre1 = ReLUConvBN(c_p, c, 1, 1, 0)
        self.ops = nn.ModuleList(darts_op(kind, c, 2 if reduction and index < 2 else 1) for kind, index in genotype)
        self.inputs = [index for _, index in genotype]

    def forward(self, s0, s1):
        states = [self.pre0(s0), self.pre1(s1)]
        for step in range(len(self.ops) // 2):
            a, b = 2 * step, 2 * step + 1
            states.append(self.ops[a](states[self.inputs[a]]) + self.ops[b](states[self.inputs[b]]))
        return torch.cat(states[2:], dim=1)


class DartsNetwork(nn.Module):
    def __init__(self, cells=20, c=36, classes=10):
        super().__init__()
        c_cur = 3 * c
        self.stem = nn.Sequential(nn.Conv2d(3, c_cur, 3, padding=1, bias=False), nn.BatchNorm2d(c_cur))
        c_pp, c_p, c_cur = c_cur, c_cur, c
        self.cells = nn.ModuleList()
        reduction_prev = False
        for i in range(cells):
            reduction = i in (cells // 3, 2 * cells // 3)
            if reduction:
                c_cur *= 2
            genotype = DARTS_V2_REDUCE if reduction else DARTS_V2_NORMAL
            self.cells.append(DartsCell(genotype, c_pp, c_p, c_cur, reduction, reduction_prev))
            reduction_prev = reduction
            c_pp, c_p = c_p, 4 * c_cur
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c_p, classes)

    def forward(self, x):
        s0 = s1 = self.stem(x)
        for cell in self.cells:
            s0, s1 = s1, cell(s0, s1)
        return self.fc(torch.flatten(self.pool(s1), 1))


def watts_strogatz_dag(n, k, p, rng):
    """WS(n, k, p) as networkx builds it (ring lattice, then rewiring), oriented low -> high index."""
    edges = set()
    for j in range(1, k // 2 + 1):
        for u in range(n):
            edges.add((min(u, (u + j) % n), max(u, (u + j) % n)))
    for j in range(1, k // 2 + 1):
        for u in range(n):
            v = (u + j) % n
            e = (min(u, v), max(u, v))
            if e in edges and rng.random() < p:
                linked = {a if b == u else b for a, b in edges if u in (a, b)}
                choices = [w for w in range(n) if w != u and w not in linked]
                if choices:
                    w = rng.choice(choices)
                    edges.remove(e)
                    edges.add((min(u, w), max(u, w)))
    return sorted(edges)


class RandWireNode(nn.Module):
    def __init__(self, inputs, c_in, c_out, stride):
        super().__init__()
        self.weights = nn.Parameter(torch.zeros(inputs)) if inputs > 1 else None
        self.op = nn.Sequential(nn.ReLU(), nn.Conv2d(c_in, c_in, 3, stride, 1, groups=c_in, bias=False),
                                nn.Conv2d(c_in, c_out, 1, bias=False), nn.BatchNorm2d(c_out))

    def forward(self, xs):
        if self.weights is None:
            return self.op(xs[0])
        w = torch.sigmoid(self.weights)
        return self.op(sum(w[i] * x for i, x in enumerate(xs)))


class RandWireStage(nn.Module):
    def __init__(self, nodes, k, p, c_in, c_out, rng):
        super().__init__()
        edges = watts_strogatz_dag(nodes, k, p, rng)
        self.preds = [[u for u, v in edges if v == i] for i in range(nodes)]
        self.sinks = [i for i in range(nodes) if not any(u == i for u, _ in edges)]
        self.nodes = nn.ModuleList(
            RandWireNode(max(len(self.preds[i]), 1), c_out if self.preds[i] else c_in, c_out, 1 if self.preds[i] else 2)
            for i in range(nodes))

    def forward(self, x):
        out = []
        for i, node in enumerate(self.nodes):
            out.append(node([out[u] for u in self.preds[i]] if self.preds[i] else [x]))
        return sum(out[i] for i in self.sinks) / len(self.sinks) if len(self.sinks) > 1 else out[self.sinks[0]]


class RandWireNetwork(nn.Module):
    def __init__(self, stages=3, nodes=32, k=4, p=0.75, c=78, classes=1000, seed=0):
        super().__init__()
        rng = random.Random(seed)
        self.stem = nn.Sequential(nn.Conv2d(3, c // 2, 3, 2, 1, bias=False), nn.BatchNorm2d(c // 2), nn.ReLU(),
                                  nn.Conv2d(c // 2, c, 3, 2, 1, bias=False), nn.BatchNorm2d(c))
        self.stages = nn.ModuleList()
        c_in = c
        for s in range(stages):
            self.stages.append(RandWireStage(nodes, k, p, c_in, c * 2 ** s, rng))
            c_in = c * 2 ** s
        self.head = nn.Sequential(nn.ReLU(), nn.Conv2d(c_in, 1280, 1, bias=False), nn.BatchNorm2d(1280), nn.ReLU(),
                                  nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(1280, classes)

    def forward(self, x):
        x = self.stem(x)
        for stage in self.stages:
            x = stage(x)
        return self.fc(torch.flatten(self.head(x), 1))


def make(name, small, seed):
    if name == "darts":
        return (DartsNetwork(cells=3, c=4), (1, 3, 8, 8)) if small else (DartsNetwork(), (1, 3, 32, 32))
    if name == "randwire":
        return (RandWireNetwork(stages=1, nodes=8, c=4, classes=10, seed=seed), (1, 3, 32, 32)) if small else (RandWireNetwork(seed=seed), (1, 3, 224, 224))
    import torchvision
    if small or not hasattr(torchvision.models, name):
        return None, None
    kwargs = {"aux_logits": False, "init_weights": False} if name in ("inception_v3", "googlenet") else {}
    return getattr(torchvision.models, name)(**kwargs), (1, 3, 299, 299) if name == "inception_v3" else (1, 3, 224, 224)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("name")
    parser.add_argument("--out", required=True)
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--no-weights", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    model, shape = make(args.name, args.small, args.seed)
    if model is None:
        print(f"onnx_models.py: unknown model '{args.name}'" + (" for --small (darts, randwire)" if args.small else ""), file=sys.stderr)
        return 2
    model.eval()
    with torch.no_grad():
        torch.onnx.export(model, torch.randn(*shape), args.out, opset_version=13, input_names=["x"], output_names=["y"])
    if args.no_weights:
        import onnx
        proto = onnx.load(args.out)
        with tempfile.TemporaryDirectory() as tmp:
            onnx.save_model(proto, os.path.join(tmp, "model.onnx"), save_as_external_data=True,
                            all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
            shutil.copyfile(os.path.join(tmp, "model.onnx"), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
