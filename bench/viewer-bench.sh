#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Viewer benchmark: opens a synthetic trace of N events (default 10M, made
# with bench/vs-gen-trace when missing) in the real window under Xvfb and
# prints first-frame time, per-frame work while zooming and panning, and
# peak memory (see bench/viewer-bench.c), once with the renderer the viewer
# picks by itself (cairo when OpenGL is software-rendered, as under Xvfb)
# and once forced to GTK's GL renderer.
#
# Usage: bench/viewer-bench.sh [BUILD_DIR] [EVENTS]
. "$(dirname "$0")/lib.sh"
# The benchmark programs are not built by default.
ninja -C "$build" benchmarks >&2 || exit 1
events="${2:-10000000}"
bench_synthetic "$events"
ls -l "$trace" | awk '{ printf "trace_bytes %.0f\n", $5 }'
echo "events $events"
for renderer in auto gl; do
  echo "# renderer: $renderer"
  if [ "$renderer" = auto ]; then
    env -u GSK_RENDERER xvfb-run -a -s "-screen 0 1600x1000x24" \
      "$build/bench/viewer-bench" "$trace"
  else
    GSK_RENDERER=gl xvfb-run -a -s "-screen 0 1600x1000x24" \
      "$build/bench/viewer-bench" "$trace"
  fi
done 2> >(grep -v "session bus" >&2)
