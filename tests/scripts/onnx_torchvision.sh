#!/usr/bin/env bash
# ctest scripts_onnx_torchvision: runs tests/scripts/onnx_torchvision_test.py with a python3 that
# has PyTorch, torchvision and ONNX (the one on PATH, else Debian's /usr/bin/python3). Skips (exit
# 77) with a message when none has them, or when the tool was built without the ONNX reader.
#   bash tests/scripts/onnx_torchvision.sh MEMSCHED_TOOL SOURCE_DIR
set -uo pipefail
tool=$1 src=$2
if "$tool" convert /dev/null/none.onnx --out /dev/null/x.json 2>&1 | grep -q "needs memsched::onnx"; then
  echo "skipped: the tool was built without the ONNX reader"
  exit 77
fi
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import torch, torchvision, onnx' >/dev/null 2>&1; then
    exec "$py" "$src/tests/scripts/onnx_torchvision_test.py" "$tool"
  fi
done
echo "skipped: PyTorch, torchvision and ONNX for Python are not installed (scripts/setup.sh --torch --onnx)"
exit 77
