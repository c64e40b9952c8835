#!/usr/bin/env bash
# Session 6: the chained tail (sk) at the two short-K suite shapes, whose last wave is partial
# (3000×5000×1000: 480 tiles of 128×256 = 3.64 waves; 2048×8192×512: 512 = 3.88): screens of
# the shipped schedule and sk variants, then head-to-heads of the fastest sk and the shipped.
# From a `build_drop.sh` folder holding session6_sk.sh and session6_pp.sh (its helpers).
set -uo pipefail
here=$PWD
FINAL=${OUT:-$PWD/gpu-out}
W=/tmp/forge-s6d
rm -rf "$W"; mkdir -p "$W" "$FINAL"
trap 'cp "$W"/*.txt "$FINAL"/ 2>/dev/null' EXIT
export FORGE_CACHE=$here/cache
source ./worker_job.sh
eval "$(sed -n '/^screen() {/,/^}/p;/^h2h() {/,/^}/p' session6_pp.sh)"
best_sk() {
  python3 - "$W/screen-$1x$2x$3.jsonl" <<'PY'
import json, sys
best = None
for line in open(sys.argv[1]):
    try: e = json.loads(line)
    except ValueError: continue
    if e.get("event") == "result" and "_sk_" in e["schedule"] and e["gate"].get("verdict") == "pass" and e.get("measured"):
        t = e["measured"]["median_us"]
        if best is None or t < best[0]: best = (t, e["schedule"])
print(best[1] if best else "")
PY
}
{
for shape in "3000 5000 1000" "2048 8192 512"; do
  screen $shape wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1 wgmma_tf32_128x256x32_s4_wg2_swz16_sk_c1_k1 \
    wgmma_tf32_128x256x32_s3_wg2_swz16_sk_c1_k1 wgmma_tf32_128x192x32_s4_wg2_swz16_sk_c1_k1 \
    wgmma_tf32_128x256x32_s4_wg2_swz8_sk_c1_k1
done
} 2>&1 | tee "$W/screens.txt"
{
for shape in "3000 5000 1000" "2048 8192 512"; do
  set -- $shape
  b=$(best_sk $1 $2 $3)
  h2h $1 $2 $3 wgmma_tf32_128x256x32_s4_wg2_swz16_pers_c1_k1
  [ -n "$b" ] && h2h $1 $2 $3 "$b"
done
} 2>&1 | tee "$W/h2h.txt"
