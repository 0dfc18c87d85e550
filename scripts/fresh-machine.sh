#!/usr/bin/env bash
# Runs a command as root in a fresh minimal Debian root holding a copy of this checkout: proof that
# the README's commands install everything they need on a machine that has nothing but Debian.
#   bash scripts/fresh-machine.sh [--shared] [--stream] [--keep] [--root DIR] -- COMMAND [ARG ...]
# The root is built by debootstrap --variant=minbase (the host's release and package sources, so
# the same package versions as the host), the checkout's tracked and untracked-but-not-ignored
# files are copied to /src, and COMMAND runs there through `bash -c`, with a minimal environment.
# --shared also copies ../shared beside it (/shared), as CI has it. --root DIR builds the root in
# DIR (default: a new folder under ${TMPDIR:-/tmp}); --keep leaves it there afterwards.
# Prints the command's exit code, its wall time and the last lines of its log (the whole log is
# ROOT/fresh-machine.log while the root exists; --stream also shows it as it is written); exits with
# the command's exit code.
# Needs root (debootstrap, chroot, mount) and the network access to Debian's package mirror that
# apt-get already has.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
with_shared=0
stream=0
keep=0
root=
while [ $# -gt 0 ]; do
  case "$1" in
    --shared) with_shared=1 ;;
    --stream) stream=1 ;;
    --keep) keep=1 ;;
    --root) root=${2:?"fresh-machine: --root needs a folder"}; shift ;;
    --) shift; break ;;
    *) echo "fresh-machine: unknown argument '$1' (usage: fresh-machine.sh [--shared] [--stream] [--keep] [--root DIR] -- COMMAND ...)" >&2; exit 2 ;;
  esac
  shift
done
[ $# -gt 0 ] || { echo "fresh-machine: no command given (usage: fresh-machine.sh [--shared] [--stream] [--keep] [--root DIR] -- COMMAND ...)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "fresh-machine: must run as root (debootstrap, chroot and mount need it)" >&2; exit 2; }
command -v debootstrap >/dev/null || {
  echo "fresh-machine: installing debootstrap" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null; }
}

# The host's release and first Debian mirror (deb822 sources first, then the one-line format).
. /etc/os-release
suite=${VERSION_CODENAME:?"fresh-machine: /etc/os-release names no VERSION_CODENAME"}
mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)\/\?$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 || true)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}

[ -n "$root" ] || root=$(mktemp -d "${TMPDIR:-/tmp}/memsched-fresh.XXXXXX")
mkdir -p "$root"
cleanup() {
  # Processes still running in the root (an interrupted command's children) die with it.
  local proc
  for proc in /proc/[0-9]*; do
    [ "$(readlink "$proc/root" 2>/dev/null)" = "$(readlink -f "$root")" ] && kill -9 "${proc#/proc/}" 2>/dev/null || true
  done
  for m in dev/pts dev proc; do mountpoint -q "$root/$m" && umount -l "$root/$m" || true; done
  [ "$keep" -eq 1 ] || rm -rf --one-file-system "$root"
}
trap cleanup EXIT
trap 'exit 130' INT TERM  # through the EXIT trap: unmount and remove the root

t0=$(date +%s)
echo "fresh-machine: debootstrap --variant=minbase $suite $root $mirror" >&2
debootstrap --variant=minbase "$suite" "$root" "$mirror" > "$root.debootstrap.log" 2>&1 || {
  tail -20 "$root.debootstrap.log" >&2; rm -f "$root.debootstrap.log"; echo "fresh-machine: debootstrap failed" >&2; exit 1; }
rm -f "$root.debootstrap.log"
# The host's package sources (updates and security included), so apt sees the same versions.
if ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
  rm -f "$root/etc/apt/sources.list"
  cp /etc/apt/sources.list.d/*.sources "$root/etc/apt/sources.list.d/"
elif [ -f /etc/apt/sources.list ]; then
  cp /etc/apt/sources.list "$root/etc/apt/sources.list"
fi
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
echo "fresh-machine: root ready in $(( $(date +%s) - t0 )) s; copying the checkout to /src" >&2

mkdir -p "$root/src"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -C "$root/src" -xf -
if [ "$with_shared" -eq 1 ]; then
  [ -d "$repo/../shared" ] || { echo "fresh-machine: --shared given but $repo/../shared does not exist" >&2; exit 2; }
  mkdir -p "$root/shared"
  cp -a "$repo/../shared/." "$root/shared/"  # through a link to shared/ too (CI's may be one)
fi

log="$root/fresh-machine.log"
echo "fresh-machine: running as root in /src: $*" >&2
start=$(date +%s)
in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c 'cd /src && "$@"' fresh-machine "$@"
}
set +e
if [ "$stream" -eq 1 ]; then
  in_root "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
else
  in_root "$@" > "$log" 2>&1
  rc=$?
fi
set -e
elapsed=$(( $(date +%s) - start ))
echo "fresh-machine: last lines of the log:"
tail -25 "$log" | sed 's/^/  | /'
echo "fresh-machine: exit code $rc after $elapsed s ($(( elapsed / 60 )) min $(( elapsed % 60 )) s; the root took $(( start - t0 )) s to build)"
exit "$rc"
