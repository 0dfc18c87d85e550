#!/usr/bin/env python3
"""Exports a PyTorch model's dataflow graph as memsched graph JSON (docs/torch-export.md).

The exporter lives in the memsched_torch package (python/memsched_torch/export.py); this is its
command line, kept where the docs and tests call it.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "python"))
from memsched_torch.export import run  # noqa: E402

if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
