#!/usr/bin/env bash
# Session 13, issue #13: why raster group 1 runs 25% slower than group 2 at 1280x1280x10240
# (one wave of 128x104 tiles, deep K; session 12's deepk/table.txt) while the model prices them
# alike, and whether it is a pattern. From a `build_drop.sh` folder holding device_lib.sh and
# placement_probe.cu. Three parts, each independent of the others' success:
#   1. placement: nvcc-built probe of where each CTA of a one-wave grid lands (placement.txt)
#   2. ncu: DRAM bytes, L2 hit rate, L2 fabric traffic of raster pairs (ncu_summary.txt)
#   3. sweep: one-wave deep-K shapes, 128x104 tiles with every raster, ROUNDS rounds in fresh
#      worker processes, order reversed every other round (sweep-N.txt, sweep.txt)
# $OUT: the *.txt files and s13r.tgz.
set -uo pipefail
source ./device_lib.sh
device_setup s13r

# 1. placement (skip with PLACEMENT=0)
if [ "${PLACEMENT:-1}" = 0 ]; then
  echo "placement probe skipped"
elif nvcc -arch=sm_90a -O2 -o "$W/placement_probe" placement_probe.cu > "$W/nvcc.txt" 2>&1; then
  timeout 60 "$W/placement_probe" > "$W/placement.txt" 2>&1
  echo "placement probe exit $?"
else
  echo "nvcc failed: $(tail -3 "$W/nvcc.txt")"
fi

# 2. ncu (clocks left alone); launch 0 of forge_gemm is the canonical kernel, launch 1 the schedule's
NCU_SPECS=${NCU_SPECS:-"1280x1280x10240:wgmma_tf32_128x104x32_s6_wg1_swz1_np_c1_k1
1280x1280x10240:wgmma_tf32_128x104x32_s6_wg1_swz2_np_c1_k1
1152x1152x12288:wgmma_tf32_128x88x32_s6_wg1_swz1_np_c1_k1
1152x1152x12288:wgmma_tf32_128x88x32_s6_wg1_swz8c_np_c1_k1
1152x1152x12288:wgmma_tf32_128x96x32_s7_wg1_swz1_np_c1_k1"}
M1="gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_bytes.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
ncu --query-metrics --chip gh100 > "$W/ncu_metrics_all.txt" 2>&1
grep -Ei "ltcfabric|lts__t_sectors_srcunit|lts__d_|lts__t_requests_srcunit" "$W/ncu_metrics_all.txt" > "$W/ncu_metrics_available.txt"
FAB=$(grep -Eo "^lts__t_sectors_srcunit_ltcfabric[a-z_]*" "$W/ncu_metrics_available.txt" | head -1)
M2="lts__t_sectors_srcunit_tex.sum,lts__t_sectors_srcunit_tex_lookup_miss.sum${FAB:+,$FAB.sum}"
for spec in $NCU_SPECS; do
  shape=${spec%%:*}; sched=${spec#*:}
  IFS=x read -r M N K <<< "$shape"
  write_job "$W/job.json" "$M" "$N" "$K" "$sched" 0.2
  tag="${shape}_${sched}"
  timeout 120 ./forge worker --job "$W/job.json" > /dev/null 2>&1   # warm the kernel cache
  for set in 1 2; do
    m=$M1; [ $set = 2 ] && m=$M2
    timeout 200 ncu --clock-control none --target-processes all -k regex:forge_gemm --launch-skip 1 \
      --launch-count 1 --metrics "$m" ./forge worker --job "$W/job.json" > "$W/ncu_${set}_$tag.txt" 2>&1
  done
  echo "== $shape $sched"
  grep -hE "^    [a-z].*(__|sm__)" "$W/ncu_1_$tag.txt" "$W/ncu_2_$tag.txt" | sed 's/  */ /g'
done 2>&1 | tee "$W/ncu_summary.txt"
gpu_state

# 3. sweep: SHAPE or SHAPE:TILE_PREFIX entries (default prefix $T), rasters $R
T=${SWEEP_TILE:-wgmma_tf32_128x104x32_s6_wg1}
R=${SWEEP_RASTERS:-"swz1 swz2 swz4 swz8 swz1c swz2c"}
SHAPES=${SWEEP_SHAPES:-"1280x1352x10240 1280x1280x10240 1280x1248x10240 1280x1144x10240 1280x1040x10240
1280x936x10240 1280x832x10240 1024x1352x10240 1536x1040x10240 1280x1280x4096"}
for round in $(seq 1 "${ROUNDS:-2}"); do
  for entry in $SHAPES; do
    shape=${entry%%:*}; t=$T; [ "$entry" != "$shape" ] && t=${entry#*:}
    IFS=x read -r M N K <<< "$shape"
    c=""; for r in $R; do c="$c ${t}_${r}_np_c1_k1"; done
    [ $((round % 2)) = 0 ] && c=$(echo $c | tr ' ' '\n' | tac | tr '\n' ' ')
    # shellcheck disable=SC2086
    screen "$M" "$N" "$K" $c
  done > "$W/sweep-$round.txt"
  gpu_state
done
python3 - "$W" <<'PY'
import glob, statistics, sys
t = {}
for f in sorted(glob.glob(sys.argv[1] + "/sweep-*.txt")):
    for line in open(f):
        p = line.split()
        if len(p) >= 6 and (p[-1] == "pass" or p[1] == "cublas"):
            t.setdefault(p[0], {}).setdefault(p[1], []).append(float(p[2]))
with open(sys.argv[1] + "/sweep.txt", "w") as out:
    for shape, d in t.items():
        # each schedule against the group-2 row raster of its own tile
        g2 = {s.split("_swz")[0]: statistics.median(v) for s, v in d.items() if "_swz2_np" in s}
        for s, v in sorted(d.items(), key=lambda kv: (kv[0].split("_swz")[0], statistics.median(kv[1]))):
            ref = g2.get(s.split("_swz")[0]) or (list(g2.values()) or [float("nan")])[0]
            line = f"{shape:16} {s:44} median {statistics.median(v):8.2f} us  /swz2 {statistics.median(v) / ref:5.3f}  rounds {' '.join('%.1f' % x for x in v)}"
            print(line); out.write(line + "\n")
PY
