#!/usr/bin/env bash
# Numerical contract v2 in one device call. For each SCHEDULE@MxNxK: the schedule timed head to
# head against cuBLAS (6 alternating rounds in one worker process) under truncation and under
# round-to-nearest with each wgmma rounding form (producer, consumer, tma), forms in turn,
# REPEATS times. Every job checks the schedule's output against the canonical's bits (a form that
# changes bits fails its job); the canonical's bit-model check runs in the tuner's screen (the
# 2026-12-03 A/B data, which prints "model N/N", came from a build that ran it here too).
# Usage on the GPU machine: REPEATS=2 [FORMS="trunc tma"] bash tests/device/contract_ab.sh SCHEDULE@MxNxK ...
set -uo pipefail
source "$(dirname "$0")/worker_job.sh"
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
BIN=$PWD/target/release/forge
export FORGE_CACHE=${FORGE_CACHE:-/tmp/forge-cache-ab}
SUMMARIZE='
import json, os, sys
bits = ""
for line in sys.stdin:
    try:
        e = json.loads(line)
    except ValueError:
        print("   ", os.environ["FORM"], line.rstrip()[:300])
        continue
    ev = e.get("event")
    if ev == "bit_model":
        c = e["check"]
        bits = "model %d/%d" % (c["equal"], c["samples"])
    elif ev == "reference":
        ref = e["check"]["rel_rms"]
        bits += " ref %.2e" % ref
    elif ev == "head_to_head":
        o, c = e["own"]["median_us"], e["cublas"]["median_us"]
        print("round %s %-9s %-46s own %9.1f us cuBLAS %9.1f us ratio %.3f  %s"
              % (os.environ["ROUND"], os.environ["FORM"], e["schedule"], o, c, c / o, bits))
'
for r in $(seq 1 "${REPEATS:-2}"); do
  for spec in "$@"; do
    s=${spec%@*}; IFS=x read -r M N K <<< "${spec#*@}"
    for form in ${FORMS:-trunc producer consumer tma}; do
      if [ "$form" = trunc ]; then contract=tf32-trunc-k8-inorder; defines=""
      else contract=tf32-rne-k8-inorder; defines="FORGE_ROUND_IN=$form"; fi
      write_job /tmp/ab-job.json "$M" "$N" "$K" "$s" "${MAX_SECONDS:-0.5}" "$contract"
      FORGE_KERNEL_DEFINES=$defines timeout 120 $BIN worker --job /tmp/ab-job.json 2>&1 |
        ROUND=$r FORM=$form python3 -c "$SUMMARIZE"
    done
  done
done | tee -a "$OUT/contract_ab.txt"
