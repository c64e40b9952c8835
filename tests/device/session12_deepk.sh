#!/usr/bin/env bash
# Session 12, issue #13: the two worst set-9 selection misses at deep K (1152x1152x12288,
# 1280x1280x10240): the stage count, consumer warpgroups, persistence and raster of the tiles
# involved, re-timed in ROUNDS rounds (order reversed every other round), to tell a real miss
# from noise (calibration set 9 measured 8% noise at 1152x1152x12288). From a `build_drop.sh`
# folder holding device_lib.sh. $OUT: deepk-N.txt, nvidia-smi.txt, s12k.tgz.
set -uo pipefail
source ./device_lib.sh
device_setup s12k
A="wgmma_tf32_128x88x32_s7_wg1_swz8c_np_c1_k1 wgmma_tf32_128x88x32_s6_wg1_swz8c_np_c1_k1
wgmma_tf32_128x88x32_s5_wg1_swz8c_np_c1_k1 wgmma_tf32_128x88x32_s7_wg2_swz8c_np_c1_k1
wgmma_tf32_128x88x32_s7_wg1_swz1_np_c1_k1 wgmma_tf32_128x96x32_s7_wg1_swz1_np_c1_k1
wgmma_tf32_128x96x32_s6_wg1_swz1_np_c1_k1 wgmma_tf32_128x96x32_s7_wg2_swz1_np_c1_k1
wgmma_tf32_128x96x32_s7_wg1_swz1_pers_c1_k1"
B="wgmma_tf32_128x104x32_s7_wg1_swz1_np_c1_k1 wgmma_tf32_128x104x32_s6_wg1_swz1_np_c1_k1
wgmma_tf32_128x104x32_s6_wg2_swz2_pers_c1_k1 wgmma_tf32_128x104x32_s7_wg2_swz2_pers_c1_k1
wgmma_tf32_128x104x32_s6_wg2_swz2_np_c1_k1 wgmma_tf32_128x104x32_s6_wg1_swz2_pers_c1_k1
wgmma_tf32_128x104x32_s7_wg2_swz1_np_c1_k1 wgmma_tf32_128x104x32_s5_wg2_swz2_pers_c1_k1"
for round in $(seq 1 "${ROUNDS:-4}"); do
  a=$A; b=$B
  if [ $((round % 2)) = 0 ]; then a=$(echo $A | tr ' ' '\n' | tac | tr '\n' ' '); b=$(echo $B | tr ' ' '\n' | tac | tr '\n' ' '); fi
  # shellcheck disable=SC2086
  { screen 1152 1152 12288 $a; screen 1280 1280 10240 $b; } > "$W/deepk-$round.txt"
  gpu_state
done
python3 - "$W" <<'PY'
import glob, statistics, sys
t = {}
for f in sorted(glob.glob(sys.argv[1] + "/deepk-*.txt")):
    for line in open(f):
        p = line.split()
        if len(p) >= 6 and p[-1] == "pass":
            t.setdefault((p[0], p[1]), []).append(float(p[2]))
for (shape, s), v in sorted(t.items(), key=lambda kv: (kv[0][0], statistics.median(kv[1]))):
    print(f"{shape:16} {s:48} median {statistics.median(v):8.2f} us  rounds {' '.join('%.1f' % x for x in v)}")
PY
