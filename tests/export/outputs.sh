#!/bin/sh
# SPDX-License-Identifier: MIT
# outputs.sh VRAMSCOPE GEN_SNAPSHOT — `export` writes its output as the
# other commands do: interrupted by SIGINT, SIGTERM or SIGHUP it leaves
# neither the output nor its temporary; and every output (an export of
# each format, an imported trace) is created with mode 0666 less the
# umask, as any tool creates files.  TAP output.
set -u
vramscope=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
gen=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
. "$(dirname "$0")/../lib.sh"
cd "$dir" || exit 1

mode () { stat -c %a "$1"; }

echo "1..6"
python3 "$gen" big.pickle 32 >/dev/null 2>&1
python3 "$gen" small.pickle 1 >/dev/null 2>&1
"$vramscope" import -q big.pickle -o big.db || exit 1

# Interrupted exports: no output, no temporary, the signal's status.
for case in "INT perfetto" "TERM snapshot" "HUP perfetto" "TERM sqlite"; do
  set -- $case
  sig=$1 format=$2
  for try in 1 2 3 4 5; do
    rm -f "out-$sig-$format"
    signals_default "$vramscope" export big.db --format "$format" -o "out-$sig-$format" 2>err &
    pid=$!
    t=$(signal_at_temp "out-$sig-$format" $pid 100000 "$sig") && break
    wait $pid
  done
  wait $pid
  rc=$?
  [ -n "$t" ] && [ "$rc" != 0 ] && [ ! -e "out-$sig-$format" ] \
    && ! ls "out-$sig-$format".tmp-* >/dev/null 2>&1
  ok $? "SIG$sig during export --format $format: exit $rc, no output and no temporary left"
done

# One mode rule: 0666 less the umask, for exports and traces alike.
"$vramscope" import -q small.pickle -o small.db || exit 1
bad=""
for mask in 022 002 077; do
  want=$(printf '%o' $((0666 & ~0$mask)))
  for format in perfetto snapshot folded sqlite; do
    (umask $mask && "$vramscope" export small.db --format $format -o "m$mask.$format")
    got=$(mode "m$mask.$format")
    [ "$got" = "$want" ] || bad="$bad $format:$mask:$got"
  done
  (umask $mask && "$vramscope" import -q small.pickle -o "m$mask.db")
  got=$(mode "m$mask.db")
  [ "$got" = "$want" ] || bad="$bad import:$mask:$got"
done
[ -z "$bad" ]
ok $? "every output is 0666 less the umask (wrong:${bad:- none})"

(umask 002 && "$vramscope" export small.db --format folded -o m002.folded --force)
[ "$(mode m002.folded)" = 664 ]
ok $? "an output replaced with --force follows the same rule"
exit $failed
