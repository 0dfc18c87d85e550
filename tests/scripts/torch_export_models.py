"""Tiny hand-written models for tests/scripts/torch_export.sh; their graphs are worked out by hand there."""

import torch
from torch import nn


class Residual(nn.Module):
    """x -> conv(3->4, 3x3, pad 1, no bias) -> relu -> add(x4) where x4 = conv1x1(x) ... see below.

    Input [1,3,8,8]. Vertices (module level):
      0 x        input  1*3*8*8*4 = 768 bytes
      1 conv     conv2d 1*4*8*8*4 = 1024 bytes, FLOPs 2*256*3*9 = 13824
      2 relu     relu   1024 bytes (a new tensor), cost 256
      3 skip     conv2d 1024 bytes, FLOPs 2*256*3*1 = 1536
      4 add      add    1024 bytes, cost 256
    Edges: 0->1, 1->2, 0->3, 2->4, 3->4. flatten is a view: not a vertex, no bytes.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1, bias=False)
        self.relu = nn.ReLU()
        self.skip = nn.Conv2d(3, 4, 1, bias=False)

    def forward(self, x):
        return torch.flatten(self.relu(self.conv(x)) + self.skip(x), 1)


class ResidualInplace(Residual):
    """The same computation with an in-place relu and an in-place add: the relu and the add write
    into the conv's buffer, so they own no memory (0 bytes) and the views share it too."""

    def __init__(self):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        y = self.relu(self.conv(x))
        y.add_(self.skip(x))  # fx records `y += ...` as an out-of-place add: say add_ explicitly
        return y.view(1, -1)


class MLP(nn.Module):
    """Input [2,16]: fc1 Linear(16,32) -> relu -> fc2 Linear(32,8).

      0 x   input  2*16*4 = 128 bytes
      1 fc1 linear 2*32*4 = 256 bytes, FLOPs 2*64*16 = 2048
      2 relu relu  256 bytes, cost 64
      3 fc2 linear 2*8*4 = 64 bytes, FLOPs 2*16*32 = 1024
    """

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


class TwoInputs(nn.Module):
    """Inputs [2,3] and [3,5]: a @ b (matmul, FLOPs 2*10*3 = 60), then .t() (a view)."""

    def forward(self, a, b):
        return torch.matmul(a, b).t()


class Untraceable(nn.Module):
    """Control flow on a value: torch.fx symbolic tracing cannot follow it."""

    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x


class Embed(nn.Module):
    """Token ids [2,5] (int64, 80 bytes) -> Embedding(10, 6) (2*5*6*4 = 240 bytes, cost 60) -> mean(1)
    (2*6*4 = 48 bytes, cost 12)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)

    def forward(self, ids):
        return self.emb(ids).mean(1)


class Encoder(nn.Module):
    """nn.TransformerEncoderLayer: under no_grad in eval mode one fused inference kernel."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)

    def forward(self, x):
        return self.layer(x)


def not_a_module():
    return 42


class HiddenWork(nn.Module):
    """An LSTM cell: one leaf module (one vertex) to torch.fx, a dozen aten ops to make_fx."""

    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(4, 8)

    def forward(self, x):
        return self.cell(x)
