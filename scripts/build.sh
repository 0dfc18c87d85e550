#!/usr/bin/env bash
# Configures memsched into BUILD_DIR (default build/) with Ninja and builds the named targets
# (none named: everything the configuration enables).
#   bash scripts/build.sh [-DOPTION=VALUE ...] [TARGET ...]
# Arguments starting with '-' go to cmake's configure step; the others are Ninja targets
# (memsched_tool, test_order_kahn, ...). -DMEMSCHED_WITH_GLPK=ON also installs libglpk-dev.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
configure=()
targets=()
for arg in "$@"; do
  case "$arg" in
    -*) configure+=("$arg") ;;
    *) targets+=("$arg") ;;
  esac
done
setup_args=()
for arg in "${configure[@]}"; do
  case "$arg" in
    -DMEMSCHED_WITH_GLPK=ON | -DMEMSCHED_WITH_GLPK:BOOL=ON) setup_args+=(--glpk) ;;
  esac
done
bash "$root/scripts/setup.sh" "${setup_args[@]}"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" "${configure[@]}" >/dev/null
if [ ${#targets[@]} -eq 0 ]; then
  cmake --build "$build" --parallel "${JOBS:-$(nproc)}"
else
  cmake --build "$build" --parallel "${JOBS:-$(nproc)}" --target "${targets[@]}"
fi
