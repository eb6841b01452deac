#!/usr/bin/env bash
# What a newcomer waits for: a fresh clone, `bash setup.sh`, `collate demo`, then `collate demo` again,
# first with pip's cache cold, then warm. The README's top section states the figures (the one place).
#
#     bash bench/fresh_clone.sh WORKDIR [REPO]        # REPO: what to clone (default: this checkout)
#
# pip's cache is WORKDIR/pipcache (PIP_CACHE_DIR): empty for the cold pass, filled by it for the warm one.
# DSPy's cache and the embedder's derived models go to folders of their own, empty in each pass, as on a
# new machine. The load average is sampled every 15 s into WORKDIR/PASS/load.txt: say it beside the
# figures (the machine may be shared). Prints one line per pass; logs in WORKDIR/PASS/.
set -u
work=${1:?usage: bash bench/fresh_clone.sh WORKDIR [REPO]}
repo=${2:-$(cd "$(dirname "$0")/.." && pwd)}
mkdir -p "$work" && work=$(cd "$work" && pwd)
rm -rf "$work/pipcache"
now() { date +%s.%N; }
for pass in cold warm; do
  base=$work/$pass
  rm -rf "$base" && mkdir -p "$base"
  ( while true; do echo "$(date +%T) $(cut -d' ' -f1 /proc/loadavg)"; sleep 15; done ) > "$base/load.txt" &
  sampler=$!
  t0=$(now)
  git clone -q "$repo" "$base/clone"
  cd "$base/clone"
  export PIP_CACHE_DIR=$work/pipcache DSPY_CACHEDIR=$base/dspy_cache COLLATE_CACHE_DIR=$base/collate_cache
  bash setup.sh > "$base/setup.log" 2>&1; rc_setup=$?
  t1=$(now)
  ( source .venv/bin/activate && collate demo ) > "$base/demo1.log" 2>&1; rc1=$?
  t2=$(now)
  ( source .venv/bin/activate && collate demo ) > "$base/demo2.log" 2>&1; rc2=$?
  t3=$(now)
  kill "$sampler"
  steps=$(tr '\r' '\n' < "$base/demo1.log" | grep -E '^(corpus|index): ' | sed -E 's/^(corpus|index): .*, ([0-9]+ s)\)$/\1 \2/' | paste -sd, - | sed 's/,/, /g')
  load=$(awk '{print $2}' "$base/load.txt" | sort -n | awk '{a[NR]=$1; s+=$1} END {printf "%s-%s, mean %.1f", a[1], a[NR], s/NR}')
  awk -v p="$pass" -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v r="$rc_setup/$rc1/$rc2" -v s="$steps" -v l="$load" \
    'BEGIN {printf "%s pip cache: clone + setup.sh %.0f s, first demo %.0f s (%s), %.0f s in all; second demo %.0f s; exit codes %s; load %s\n", p, b-a, c-b, s, c-a, d-c, r, l}'
  cd "$work"
done
