#!/bin/bash
# SPDX-License-Identifier: MIT
# test-install.sh — `meson install` into a staged prefix (DESTDIR) and the
# installed programs and files used from there: `record` finds its own
# collector relative to its executable, `view --screenshot` draws a trace,
# the desktop entry, metainfo, MIME types, man pages and completions are
# installed and valid.  Runs under xvfb-run (the viewer needs a display).
# TAP output.
#
# Usage: test-install.sh MESON BUILD_DIR PREFIX BINDIR LIBDIR DATADIR MANDIR DATA_DIR
#                        HAVE_RECORD HAVE_VIEW
set -u
meson=$1 build=$2 prefix=$3 bindir=$4 libdir=$5 datadir=$6 mandir=$7 data=$8
have_record=$9 have_view=${10}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
n=0 failed=0
ok () { # ok STATUS NAME [DETAIL FILE]
  n=$((n + 1))
  if [ "$1" = 0 ]; then echo "ok $n - $2"; else
    echo "not ok $n - $2"; failed=1
    [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/# /' "$3" | head -20
  fi
}
abs () { case $1 in /*) echo "$1" ;; *) echo "$prefix/$1" ;; esac; }
root=$stage/root
bin=$root$(abs "$bindir") lib=$root$(abs "$libdir") share=$root$(abs "$datadir") man=$root$(abs "$mandir")
log=$stage/log

"$meson" install -C "$build" --destdir "$root" --no-rebuild --quiet >"$log" 2>&1
ok $? "meson install into a staged prefix" "$log"

# Nothing of this machine's own install may be used: the staged programs
# must find what they need relative to themselves.
unset VRAMSCOPE_COLLECTOR LD_LIBRARY_PATH
export HOME=$stage/home XDG_DATA_HOME=$stage/home/share XDG_DATA_DIRS=$share:/usr/share
mkdir -p "$HOME"
cd "$stage"

"$bin/vramscope" --version >"$log" 2>&1
ok $? "the installed vramscope runs" "$log"

if [ "$have_record" = 1 ]; then
  "$bin/vramscope" record -q -o "$stage/true.db" -- sh -c 'printf %s "$CUDA_INJECTION64_PATH" >"$0"; : >"$VRAMSCOPE_SPOOL_DIR/process-$$-1.db"' "$stage/inj" >"$log" 2>&1
  rc=$?
  want=$(realpath "$lib/vramscope/libvramscope-collector.so" 2>/dev/null)
  ok $([ $rc = 0 ] && [ -n "$want" ] && [ "$(cat "$stage/inj")" = "$want" ] && echo 0 || echo 1) \
    "installed record injects the staged collector ($(cat "$stage/inj" 2>/dev/null))" "$log"
  "$bin/vramscope" report "$stage/true.db" --format csv summary >"$log" 2>&1
  ok $? "the trace it wrote opens" "$log"
  "$bin/vramscope" record -o "$stage/bad.db" >"$log" 2>&1
  ok $([ $? = 2 ] && echo 0 || echo 1) "installed record: a usage error exits 2" "$log"
else
  echo "# this build has no collector: record not installed"
fi

"$bin/vramscope" export "$data/sample-oom.db" --format perfetto -o "$stage/oom.json" >"$log" 2>&1
ok $? "installed export writes a Perfetto trace" "$log"

if [ "$have_view" = 1 ]; then
  "$bin/vramscope" view --screenshot "$stage/shot.png" "$data/sample-oom.db" >"$log" 2>&1
  rc=$?
  ok $([ $rc = 0 ] && [ "$(head -c 8 "$stage/shot.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] \
       && [ $(stat -c %s "$stage/shot.png") -gt 10000 ] && echo 0 || echo 1) \
    "installed view --screenshot draws the trace to a PNG" "$log"

  desktop=$share/applications/org.vramscope.View.desktop
  desktop-file-validate "$desktop" >"$log" 2>&1
  ok $([ $? = 0 ] && [ -f "$desktop" ] && echo 0 || echo 1) "org.vramscope.View.desktop is valid" "$log"
  ok $(grep -qx 'Icon=org.vramscope.View' "$desktop" && grep -qx 'MimeType=application/x-vramscope-trace;application/x-pytorch-memory-snapshot;' "$desktop" \
       && echo 0 || echo 1) "the desktop entry names the own icon, the trace type and the snapshot type"
  appstreamcli validate --no-net "$share/metainfo/org.vramscope.View.metainfo.xml" >"$log" 2>&1
  ok $? "the AppStream metainfo passes appstreamcli validate" "$log"
  for icon in scalable/apps/org.vramscope.View.svg symbolic/apps/org.vramscope.View-symbolic.svg; do
    f=$share/icons/hicolor/$icon
    ok $([ -f "$f" ] && python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); sys.exit(d.documentElement.tagName != "svg")' "$f" \
         && echo 0 || echo 1) "icon $icon is an SVG"
  done
fi

# MIME: only vramscope traces are traces; snapshots are recognised.
update-mime-database "$share/mime" >"$log" 2>&1
ok $? "update-mime-database accepts the MIME types" "$log"
sqlite3 "$stage/plain.db" 'CREATE TABLE t (x)'
python3 -c 'import pickle, sys; pickle.dump([1, "segments"], open(sys.argv[1], "wb"), protocol=2)' "$stage/list.pickle"
"$bin/vramscope" export "$data/torch-allocator.db" --format snapshot -o "$stage/exported.pickle" >/dev/null 2>&1
cp "$data/sample-oom.db" "$stage/renamed-trace"
type_of () { gio info -a standard::content-type "$1" 2>/dev/null | sed -n 's/.*content-type: //p'; }
for pair in "$data/sample-oom.db=application/x-vramscope-trace" \
            "$stage/renamed-trace=application/x-vramscope-trace" \
            "$stage/plain.db=application/vnd.sqlite3" \
            "$data/snapshots/oom.pickle=application/x-pytorch-memory-snapshot" \
            "$stage/exported.pickle=application/x-pytorch-memory-snapshot"; do
  f=${pair%=*} want=${pair#*=}
  got=$(type_of "$f")
  ok $([ "$got" = "$want" ] && echo 0 || echo 1) "$(basename "$f") is $want (got $got)"
done
got=$(type_of "$stage/list.pickle")
ok $([ "$got" != application/x-pytorch-memory-snapshot ] && echo 0 || echo 1) "another pickle is no snapshot (got $got)"

# Man pages: one per command, rendered without warnings.
pages="vramscope vramscope-import vramscope-report vramscope-diff vramscope-export vramscope-whatif vramscope-predict"
[ "$have_record" = 1 ] && pages="$pages vramscope-record vramscope-recover"
[ "$have_view" = 1 ] && pages="$pages vramscope-view"
for p in $pages; do
  f=$man/man1/$p.1
  LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$f" >"$stage/page" 2>"$log"
  ok $([ $? = 0 ] && [ ! -s "$log" ] && grep -q "^NAME" "$stage/page" && echo 0 || echo 1) "man page $p renders without warnings" "$log"
done

# Completions: bash completes subcommands, report names and formats, and
# hands the recorded program's own arguments to its completion; zsh's
# parses.
comp=$share/bash-completion/completions/vramscope
complete_line () {
  bash -c 'source /usr/share/bash-completion/bash_completion; source "$1"; shift
           COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
           _vramscope; printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$@" 2>&1 | sort | tr '\n' ' '
}
got=$(complete_line vramscope ex)
ok $([ "$got" = "export " ] && echo 0 || echo 1) "bash completes a subcommand (got $got)"
got=$(complete_line vramscope export x.db --format "")
ok $([ "$got" = "folded perfetto snapshot sqlite " ] && echo 0 || echo 1) "bash completes export formats (got $got)"
got=$(complete_line vramscope report x.db fr)
ok $([ "$got" = "fragmentation " ] && echo 0 || echo 1) "bash completes report names (got $got)"
got=$(complete_line vramscope report x.db --format "")
ok $([ "$got" = "csv json text " ] && echo 0 || echo 1) "bash completes report formats (got $got)"
got=$(complete_line vramscope report x.db --color "")
ok $([ "$got" = "always auto never " ] && echo 0 || echo 1) "bash completes --color (got $got)"
got=$(complete_line vramscope dif)
ok $([ "$got" = "diff " ] && echo 0 || echo 1) "bash completes diff (got $got)"
got=$(complete_line vramscope record -q -- ls --)
ok $(case "$got" in *--version*) ;; *) false ;; esac && case "$got" in *--no-kernels*) false ;; esac && echo 0 || echo 1) \
  "bash completes the recorded program's own options, not record's"
zsh -n "$share/zsh/site-functions/_vramscope" >"$log" 2>&1
ok $? "the zsh completion parses" "$log"

echo "1..$n"
exit $failed
