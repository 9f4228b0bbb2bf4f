# SPDX-License-Identifier: MIT
# scripts/lib.sh — shared by scripts/demo and scripts/test: installs the
# Debian 12 packages the build needs (only when some are missing) and
# configures and builds the tree: with every feature for the tests, without
# the collector for the demo on a machine that lacks the CUDA Toolkit.

VS_PACKAGES="meson ninja-build pkg-config gcc g++ python3 \
  libglib2.0-dev libsqlite3-dev sqlite3 libpcre2-dev \
  libgtk-4-dev libadwaita-1-dev libxtst-dev libdw-dev libelf-dev libunwind-dev \
  zlib1g-dev liblzma-dev libbz2-dev libzstd-dev \
  xvfb xauth fonts-dejavu-core clang-format \
  appstream desktop-file-utils shared-mime-info libglib2.0-bin man-db \
  bash-completion zsh nodejs gettext"

vs_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
vs_build="${VS_BUILD_DIR:-$vs_root/build}"
vs_cuda="${CUDA_HOME:-/usr/local/cuda}"

# Installs whatever of VS_PACKAGES is missing; does nothing otherwise.
vs_ensure_packages () {
  local missing=()
  for p in $VS_PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "vramscope: installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -q >&2 || return 1
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends \
    "${missing[@]}" >&2 || return 1
}

# Configures (once) and builds with the collector and the viewer enabled:
# everything built by default (meson's default target holds the programs
# the tests run too).
# `vs_build_all demo`: builds only the two programs the demo runs (the
# CLI and the viewer), and without the CUDA Toolkit leaves the collector
# (and so `record`) out instead of failing — the viewer and the reports
# need no CUDA.  A build tree configured one way is switched to the other
# when needed, so the tests always build everything.
vs_build_all () {
  local collector=enabled
  if [ ! -f "$vs_cuda/include/cupti.h" ]; then
    if [ "${1:-}" != demo ]; then
      echo "vramscope: the CUDA Toolkit with CUPTI was not found at $vs_cuda" \
           "(set CUDA_HOME); it is needed to build the collector" >&2
      return 1
    fi
    echo "vramscope: no CUDA Toolkit at $vs_cuda: building without the collector" \
         "(vramscope record); the viewer and reports work as usual" >&2
    collector=disabled
  fi
  if [ ! -f "$vs_build/build.ninja" ]; then
    meson setup "$vs_build" "$vs_root" -Dcollector=$collector -Dgui=enabled \
      -Dcudatoolkit="$vs_cuda" >&2 || return 1
  else
    local current
    current=$(sed -n 's/.*"name": "collector", "value": "\([a-z]*\)".*/\1/p' \
      "$vs_build/meson-info/intro-buildoptions.json" 2>/dev/null)
    if [ "$current" != "$collector" ]; then
      meson configure "$vs_build" -Dcollector=$collector -Dcudatoolkit="$vs_cuda" >&2 || return 1
    fi
  fi
  if [ "${1:-}" = demo ]; then
    local targets=(cli/vramscope)
    # The viewer, unless this build tree was configured without it.
    grep -q '^build gui/vramscope-view:' "$vs_build/build.ninja" && targets+=(gui/vramscope-view)
    ninja -C "$vs_build" "${targets[@]}" >&2
  else
    ninja -C "$vs_build" >&2
  fi
}

# How many tests run at once: one more than the cores, since many tests
# spend part of their time waiting (a window drawn, a program's round),
# unless MESON_TESTTHREADS says otherwise.
export MESON_TESTTHREADS="${MESON_TESTTHREADS:-$(( $(nproc) + 1 ))}"
