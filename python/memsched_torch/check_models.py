"""Budgeted training steps of the issue's model list against eager PyTorch, bitwise.

  cd python && /usr/bin/python3 -m memsched_torch.check_models [MODEL,...] [--memsched PATH]

Per model: trace, plan at 100%, 70%, 50% and 30% of the no-recomputation peak (--algo auto without
the MILP stage, for speed), one step from the same state and seed as eager, and compare the output,
every parameter gradient and every buffer with torch.equal. A budget with no plan gives the error
naming it and the least feasible budget (searched at the first such budget of a model; a lower
one names the same). Inputs are small (CPU time), large enough in batch that activations, not the
resident parameter gradients, make the peak.
"""

import copy
import sys
import time

import torch
from torch import nn

import memsched_torch


class UNet(nn.Module):
    """Two down and two up levels with skip concatenations and transposed convolutions."""

    def __init__(self, c=8):
        super().__init__()

        def blk(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(inplace=True))
        self.d1, self.d2, self.mid = blk(3, c), blk(c, 2 * c), blk(2 * c, 4 * c)
        self.up2, self.u2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2), blk(4 * c, 2 * c)
        self.up1, self.u1 = nn.ConvTranspose2d(2 * c, c, 2, stride=2), blk(2 * c, c)
        self.out = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        a = self.d1(x)
        b = self.d2(nn.functional.max_pool2d(a, 2))
        m = self.mid(nn.functional.max_pool2d(b, 2))
        y = self.u2(torch.cat([self.up2(m), b], 1))
        return self.out(self.u1(torch.cat([self.up1(y), a], 1)))


class EncoderDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = nn.Transformer(d_model=32, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                                dim_feedforward=64, batch_first=True)

    def forward(self, src, tgt):
        return self.t(src, tgt)


def models():
    import torchvision
    return {
        "resnet18": (torchvision.models.resnet18, (torch.randn(2, 3, 224, 224),)),
        "resnet50": (torchvision.models.resnet50, (torch.randn(8, 3, 64, 64),)),
        "mobilenet_v2": (torchvision.models.mobilenet_v2, (torch.randn(8, 3, 64, 64),)),
        "densenet121": (torchvision.models.densenet121, (torch.randn(8, 3, 64, 64),)),
        "vit_b_16": (lambda: torchvision.models.vit_b_16(image_size=32), (torch.randn(1, 3, 32, 32),)),
        "vit_small": (lambda: torchvision.models.VisionTransformer(image_size=64, patch_size=16, num_layers=2, num_heads=2,
                                                                  hidden_dim=64, mlp_dim=128), (torch.randn(16, 3, 64, 64),)),
        "unet": (UNet, (torch.randn(2, 3, 32, 32),)),
        "transformer": (EncoderDecoder, (torch.randn(16, 32, 32), torch.randn(16, 24, 32))),
    }


BUDGETS = (1.0, 0.7, 0.5, 0.3)


def check(name, make, inputs, tool):
    torch.manual_seed(0)
    model = make().train()
    start = time.time()
    jg = memsched_torch.trace(copy.deepcopy(model), inputs)
    rows, least = [], None
    for budget in BUDGETS:
        ref, mod = copy.deepcopy(model), copy.deepcopy(model)
        try:
            m = memsched_torch.budgeted(mod, inputs, budget=budget, tool=tool, joint=jg,
                                        extra=("--backend", "none"), find_least=least is None)
        except memsched_torch.PlanError as exc:
            if least is None:
                least = budget  # its error names the least feasible budget; later rows point to it
                rows.append(f"{budget:.0%}: no plan: {exc}")
            else:
                rows.append(f"{budget:.0%}: no plan: {exc} (the least feasible budget: see {least:.0%})")
            continue
        torch.manual_seed(5)
        expected = ref(*inputs)
        expected.float().mean().backward()
        torch.manual_seed(5)
        got = m(*inputs)
        got.float().mean().backward()
        equal = torch.equal(expected, got) and \
            all((p.grad is None) == (q.grad is None) and (p.grad is None or torch.equal(p.grad, q.grad))
                for p, q in zip(ref.parameters(), mod.parameters())) and \
            all(torch.equal(a, b) for a, b in zip(ref.buffers(), mod.buffers()))
        rows.append(f"{budget:.0%}: {'equal' if equal else 'DIFFERENT'} (overhead {m.plan['overhead']:.3f})")
    return f"{name}: {len(jg.vertices)} vertices, traced in {time.time() - start:.0f} s; " + "; ".join(rows)


def main(argv):
    tool = None
    if "--memsched" in argv:
        i = argv.index("--memsched")
        tool, argv = argv[i + 1], argv[:i] + argv[i + 2:]
    zoo = models()
    names = argv[0].split(",") if argv else list(zoo)
    torch.set_num_threads(1)
    for name in names:
        make, inputs = zoo[name]
        try:
            print(check(name, make, inputs, tool), flush=True)
        except (memsched_torch.TraceError, memsched_torch.PlanError) as exc:
            print(f"{name}: {type(exc).__name__}: {exc}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
