# scripts/lib.sh — shared by scripts/demo and scripts/test: installs the
# Debian 12 packages the build needs (only when some are missing) and
# configures and builds the tree with every feature enabled.

VS_PACKAGES="meson ninja-build pkg-config gcc g++ python3 \
  libglib2.0-dev libsqlite3-dev sqlite3 libpcre2-dev \
  libgtk-4-dev libadwaita-1-dev libdw-dev libelf-dev libunwind-dev \
  zlib1g-dev liblzma-dev libbz2-dev libzstd-dev \
  xvfb xauth fonts-dejavu-core clang-format gettext"

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

# Configures (once) and builds with the collector and the viewer enabled.
vs_build_all () {
  if [ ! -f "$vs_cuda/include/cupti.h" ]; then
    echo "vramscope: the CUDA Toolkit with CUPTI was not found at $vs_cuda" \
         "(set CUDA_HOME); it is needed to build the collector" >&2
    return 1
  fi
  if [ ! -f "$vs_build/build.ninja" ]; then
    meson setup "$vs_build" "$vs_root" -Dcollector=enabled -Dgui=enabled \
      -Dcudatoolkit="$vs_cuda" >&2 || return 1
  fi
  ninja -C "$vs_build" >&2
}
