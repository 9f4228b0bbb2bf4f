#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Stepping benchmark: opens a synthetic trace of N events (default 10M,
# made with bench/vs-gen-trace when missing) in the real window under Xvfb
# and prints how long each step through the allocators' state takes, key
# press to painted frame, and the analyzer's share (see bench/state-bench.c).
#
# Usage: bench/state-bench.sh [BUILD_DIR] [EVENTS] [STEPS]
. "$(dirname "$0")/lib.sh"
ninja -C "$build" bench/state-bench >&2 || exit 1
events="${2:-10000000}"
steps="${3:-300}"
bench_synthetic "$events"
echo "events $events"
env -u GSK_RENDERER xvfb-run -a -s "-screen 0 1600x1000x24" \
  "$build/bench/state-bench" "$trace" "$steps" 2> >(grep -v "session bus" >&2)
