#!/usr/bin/env python3
"""ctest scripts_onnx_torchvision: torchvision models exported by torch.onnx.export with default
settings at opsets 13 (scripts/onnx_models.py's) and 14 (PyTorch 1.13's default) read with
`memsched convert`, and every vertex's bytes equal the sizes PyTorch's exporter gives the node's
outputs (its verbose graph: the traced tensors' shapes), the graph output's bytes equal the real
output of the model, and the shape arithmetic (Shape, Gather, Div, Concat, ... feeding Reshape and
Slice) is folded away: no Shape vertex, and the same bytes with --no-fold.

ShuffleNet-V2 (channel shuffle: Shape -> Gather -> Div -> Concat -> Reshape) and ViT (class token
expanded by a computed shape: ConstantOfShape -> Equal -> Where -> Expand) were refused before the
reader evaluated that arithmetic. ViT is torchvision's VisionTransformer class (vit_b_16's code) at
a small width, depth and image: vit_b_16 itself takes about a minute to export. Inputs are 64x64
where the architecture allows. MEMSCHED_TORCHVISION_ALL=1 adds resnet18, efficientnet_b0,
googlenet, regnet_y_400mf, convnext_tiny and swin_t (minutes). Needs PyTorch, torchvision and ONNX
for Python.
  python3 tests/scripts/onnx_torchvision_test.py MEMSCHED_TOOL
"""

import io
import json
import os
import re
import subprocess
import sys
import tempfile

import onnx
import torch
import torchvision
from torchvision.models.vision_transformer import VisionTransformer

ELEMENT_BYTES = {"Float": 4, "Long": 8, "Int": 4, "Bool": 1, "Double": 8, "Half": 2, "Byte": 1, "Char": 1}


def models(more):
    """(name, model, input size): a spread of torchvision architectures; `more` adds the slower ones."""
    yield "shufflenet_v2_x1_0", torchvision.models.shufflenet_v2_x1_0(), 64
    yield "vit", VisionTransformer(image_size=32, patch_size=16, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64), 32
    yield "mobilenet_v3_small", torchvision.models.mobilenet_v3_small(), 64
    yield "squeezenet1_0", torchvision.models.squeezenet1_0(), 64
    if not more:
        return
    yield "resnet18", torchvision.models.resnet18(), 64
    yield "efficientnet_b0", torchvision.models.efficientnet_b0(), 64
    yield "googlenet", torchvision.models.googlenet(aux_logits=False, init_weights=False), 64
    yield "regnet_y_400mf", torchvision.models.regnet_y_400mf(), 64
    yield "convnext_tiny", torchvision.models.convnext_tiny(), 64
    yield "swin_t", torchvision.models.swin_t(), 64


def export(model, size, opset, path):
    """Exports `model` and returns {tensor: bytes} from the exporter's verbose graph."""
    x = torch.randn(1, 3, size, size)
    buf = io.BytesIO()
    with tempfile.TemporaryFile("w+") as log:
        sys.stdout.flush()
        saved = os.dup(1)
        os.dup2(log.fileno(), 1)
        try:
            torch.onnx.export(model, x, buf, opset_version=opset, verbose=True)
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
        log.seek(0)
        text = log.read()
    with open(path, "wb") as f:
        f.write(buf.getvalue())
    sizes = {}
    for line in text.splitlines():
        for name, kind, body in re.findall(r"%(\S+) : (\w+)\(([^)]*)\)", line.split(" = ", 1)[0]):
            if kind not in ELEMENT_BYTES:
                continue
            n = 1
            for token in body.split(", "):
                if token == "*":  # a dimension the exporter does not know (Swin's padded windows)
                    n = None
                    break
                if not re.fullmatch(r"\d+", token):
                    break
                n *= int(token)
            if n is not None:
                sizes[name] = n * ELEMENT_BYTES[kind]
    with torch.no_grad():
        out = model(x)
    return sizes, out.numel() * out.element_size()


def convert(tool, model_path, json_path, *flags):
    run = subprocess.run([tool, "convert", model_path, "--out", json_path, *flags], capture_output=True, text=True)
    if run.returncode != 0:
        raise AssertionError(f"memsched convert {model_path} {' '.join(flags)}: {run.stderr.strip()}")
    with open(json_path) as f:
        return json.load(f)


def check(tool, tmp, name, opset, model, size):
    path = os.path.join(tmp, f"{name}_{opset}.onnx")
    sizes, output_bytes = export(model, size, opset, path)
    proto = onnx.load(path, load_external_data=False)
    outputs = {}  # vertex name (node name, else first output) -> its outputs
    for n in proto.graph.node:
        outputs[n.name or next(o for o in n.output if o)] = [o for o in n.output if o]
    graph = convert(tool, path, os.path.join(tmp, f"{name}_{opset}.json"))
    checked = unknown = 0
    for v in graph["nodes"]:
        if v["op"] == "input":
            assert v["bytes"] == 3 * size * size * 4, (name, v)
            continue
        assert v["op"] not in ("Shape", "Size"), f"{name}: {v['name']} ({v['op']}) is a vertex: its shape arithmetic was not folded"
        if any(o not in sizes for o in outputs[v["name"]]):
            unknown += 1  # checked by the next vertices' sizes and the output's
            continue
        expected = sum(sizes[o] for o in outputs[v["name"]])
        assert v["bytes"] == expected, f"{name} opset {opset}: {v['name']} ({v['op']}) has {v['bytes']} bytes, the export says {expected}"
        checked += 1
    assert checked >= 0.8 * len(graph["nodes"]), f"{name}: the export gives the size of only {checked} vertices"
    by_id = {v["id"]: v for v in graph["nodes"]}
    out_bytes = [by_id[i]["bytes"] for i in graph["outputs"]]
    assert out_bytes == [output_bytes], f"{name}: output bytes {out_bytes}, the model's real output {output_bytes}"
    ops = {}
    for n in proto.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    return checked, unknown, ops


def main():
    tool = sys.argv[1]
    more = os.environ.get("MEMSCHED_TORCHVISION_ALL") == "1"
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, size in models(more):
            model.eval()
            for opset in (13, 14):
                checked, unknown, ops = check(tool, tmp, name, opset, model, size)
                arithmetic = sum(ops.get(o, 0) for o in ("Shape", "Gather", "Concat", "Slice", "Expand", "ConstantOfShape"))
                print(f"{name} opset {opset}: {checked} vertices' bytes match the export ({unknown} sizes it does not know); "
                      f"{arithmetic} Shape, Gather, Concat, Slice, Expand and ConstantOfShape nodes")
        # --no-fold: the arithmetic becomes vertices, the shapes stay the same.
        path = os.path.join(tmp, "shufflenet_v2_x1_0_13.onnx")
        folded = convert(tool, path, os.path.join(tmp, "f.json"))
        unfolded = convert(tool, path, os.path.join(tmp, "u.json"), "--no-fold")
        sizes = {v["name"]: v["bytes"] for v in folded["nodes"]}
        assert any(v["op"] == "Shape" for v in unfolded["nodes"]), "--no-fold: no Shape vertex"
        assert all(sizes[v["name"]] == v["bytes"] for v in unfolded["nodes"] if v["name"] in sizes), "--no-fold changes bytes"
    print("onnx_torchvision_test.py: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
