"""Small models for tests/scripts/memsched_torch_test.py: a CNN with BatchNorm and dropout, a
GPT-style decoder block with a tied embedding, and a model of in-place ops, views and a shared weight."""

import math

import torch
from torch import nn


class SmallCNN(nn.Module):
    """A stem conv-BN-relu(in place), residual conv-BN blocks (in-place relu after the add),
    dropout, pooling and a linear head."""

    def __init__(self, blocks=4, width=8):
        super().__init__()
        self.stem = nn.Conv2d(3, width, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(width)
        self.convs = nn.ModuleList(nn.Conv2d(width, width, 3, padding=1, bias=False) for _ in range(blocks))
        self.bns = nn.ModuleList(nn.BatchNorm2d(width) for _ in range(blocks))
        self.drop = nn.Dropout(0.25)
        self.head = nn.Linear(width * 4 * 4, 10)

    def forward(self, x):
        y = torch.relu_(self.bn(self.stem(x)))
        for conv, bn in zip(self.convs, self.bns):
            y = torch.relu_(bn(conv(y)) + y)
        y = nn.functional.max_pool2d(self.drop(y), 4)
        return self.head(y.flatten(1))


class TinyGPT(nn.Module):
    """Two pre-norm decoder blocks (causal self-attention, GELU MLP, dropout) and an LM head tied
    to the token embedding; the output is the cross-entropy loss against the next token."""

    def __init__(self, vocab=32, dim=16, heads=2, layers=2, context=16):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(context, dim) * 0.02)
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(nn.ModuleDict({
                "ln1": nn.LayerNorm(dim), "qkv": nn.Linear(dim, 3 * dim), "proj": nn.Linear(dim, dim),
                "ln2": nn.LayerNorm(dim), "fc": nn.Linear(dim, 4 * dim), "out": nn.Linear(4 * dim, dim),
                "drop": nn.Dropout(0.1)}))
        self.ln = nn.LayerNorm(dim)
        self.lm = nn.Linear(dim, vocab, bias=False)
        self.lm.weight = self.tok.weight
        self.register_buffer("mask", torch.tril(torch.ones(context, context)).bool())

    def forward(self, ids):
        b, t = ids.shape
        x = self.tok(ids) + self.pos[:t]
        for blk in self.blocks:
            q, k, v = blk["qkv"](blk["ln1"](x)).split(x.shape[-1], dim=-1)
            q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
            att = att.masked_fill(~self.mask[:t, :t], float("-inf")).softmax(-1)
            y = (blk["drop"](att) @ v).transpose(1, 2).reshape(b, t, -1)
            x = x + blk["proj"](y)
            x = x + blk["drop"](blk["out"](nn.functional.gelu(blk["fc"](blk["ln2"](x)))))
        logits = self.lm(self.ln(x))
        return nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))


class InplaceViews(nn.Module):
    """Four rounds of: in-place ops on views, a transpose/reshape chain, and one weight used twice."""

    def __init__(self, rounds=4):
        super().__init__()
        self.rounds = rounds
        self.w = nn.Parameter(torch.randn(12, 12) * 0.3)
        self.b = nn.Parameter(torch.zeros(12))

    def forward(self, x):
        for _ in range(self.rounds):
            h = x @ self.w + self.b
            h[:, :6].mul_(2.0)           # in place on a view
            h = h.view(-1, 3, 4).transpose(1, 2).reshape(-1, 12)
            h.sigmoid_()
            y = h @ self.w.t()           # the same weight again
            y += h
            x = torch.tanh(y)
        return x.sum(0)


class PoolSkip(nn.Module):
    """A max-pool whose output is read again at the end (a skip around two convolutions): its
    indices, which nothing reads, die as the pool returns while its output stays resident."""

    def __init__(self, channels=8):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 2 * channels, 3, padding=1)
        self.conv2 = nn.Conv2d(2 * channels, channels, 3, padding=1)

    def forward(self, x):
        y = nn.functional.max_pool2d(x, 2)
        return self.conv2(torch.relu(self.conv1(y))) + y


class PoolHead(nn.Module):
    """A max-pool of the input and a 1x1 convolution. In a training step the input takes no
    gradient, so no backward reads the pool's indices: they are the pool's workspace, and the
    pool's moment (its output and its indices) is the step's peak."""

    def __init__(self, channels=8):
        super().__init__()
        self.conv = nn.Conv2d(channels, 2, 1)

    def forward(self, x):
        return self.conv(nn.functional.max_pool2d(x, 2))


class SinChain(nn.Module):
    """A long chain of small element-wise ops: two small tensors live at a time among many nodes."""

    def __init__(self, length=400):
        super().__init__()
        self.length = length

    def forward(self, x):
        for _ in range(self.length):
            x = torch.sin(x)
        return x
