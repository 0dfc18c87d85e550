#!/usr/bin/env bash
# ctest python_memsched_torch: runs tests/scripts/memsched_torch_test.py with a python3 that has
# PyTorch (the one on PATH, else Debian's /usr/bin/python3, where python3-torch installs). Skips
# (exit 77) with a message when none has it: scripts/setup.sh --torch installs python3-torch.
#   bash tests/scripts/memsched_torch.sh MEMSCHED_TOOL SOURCE_DIR
set -uo pipefail
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c "import torch, functorch.compile" >/dev/null 2>&1; then
    exec "$py" "$2/tests/scripts/memsched_torch_test.py" "$1" "$2"
  fi
done
echo "skipped: PyTorch is not installed (scripts/setup.sh --torch installs python3-torch)"
exit 77
