#!/usr/bin/env bash
# Session 13, issues #13/#12: inward edge tiles (FORGE_EDGE_INWARD, kernels/common.cuh): A/B of
# FORGE_EDGE_INWARD=1 ("on") against =0 ("off", the overhanging edge tiles) at one-wave deep-K
# shapes with partial edge tiles, where the raster decided 1.0-1.6x (session13_raster.sh), plus
# gate checks of cluster, stream-K, split-K and ping-pong schedules with partial tiles. With
# TESTS=1 first the GPU tests (inward tiles on); with H2H="MxNxK:SCHED ..." last those head to
# head against cuBLAS (sustained and burst) with the default build. From a `build_drop.sh`
# folder holding device_lib.sh. SPECS="MxNxK:SCHED,SCHED ...", ROUNDS rounds in fresh workers,
# the two builds' order alternating. $OUT: inward-N.txt, inward.txt, h2h.txt, s13i.tgz.
# OFF_DEFINES / ON_DEFINES (FORGE_KERNEL_DEFINES of the "off" and "on" builds; defaults
# FORGE_EDGE_INWARD=0 / =1) A/B another kernel define the same way, e.g. the staged stores of
# shifted edge tiles: OFF_DEFINES=FORGE_EDGE_STAGED=0 ON_DEFINES=FORGE_EDGE_STAGED=1 (the GPU
# tests then run with ON_DEFINES).
set -uo pipefail
source ./device_lib.sh
device_setup s13i
OFF_DEFINES=${OFF_DEFINES:-FORGE_EDGE_INWARD=0}
ON_DEFINES=${ON_DEFINES:-FORGE_EDGE_INWARD=1}
echo "off = FORGE_KERNEL_DEFINES=$OFF_DEFINES, on = FORGE_KERNEL_DEFINES=$ON_DEFINES" | tee "$W/builds.txt"
if [ "${TESTS:-0}" = 1 ]; then
  FORGE_KERNEL_DEFINES=$ON_DEFINES gpu_tests
fi
T=wgmma_tf32_128x104x32_s6_wg1
SPECS=${SPECS:-"1280x1256x10240:${T}_swz1_np_c1_k1,${T}_swz2_np_c1_k1,${T}_swz4_np_c1_k1,${T}_swz1c_np_c1_k1
1280x1280x10240:${T}_swz1_np_c1_k1,${T}_swz2_np_c1_k1,${T}_swz8_np_c1_k1,${T}_swz1c_np_c1_k1
1200x1280x10240:${T}_swz1_np_c1_k1,${T}_swz2_np_c1_k1,${T}_swz4_np_c1_k1,${T}_swz1c_np_c1_k1
1216x1216x11264:wgmma_tf32_128x96x32_s7_wg1_swz1_np_c1_k1,wgmma_tf32_128x96x32_s7_wg1_swz2_np_c1_k1,wgmma_tf32_128x104x32_s5_wg2_swz4c_np_c1_k1
1088x1600x8192:wgmma_tf32_128x120x32_s6_wg1_swz2_np_c1_k1,wgmma_tf32_128x120x32_s6_wg1_swz2c_np_c1_k1,wgmma_tf32_128x120x32_s6_wg1_swz4c_np_c1_k1
3000x5000x1000:wgmma_tf32_128x232x32_s4_wg2_swz16_pers_c1_k1,wgmma_tf32_128x216x32_s5_wg2_swz16_sk_c1_k1
2500x2500x2500:wgmma_tf32_128x224x32_s4_wg2_swz8_pers_c2_k1,wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c1_k2
1000x1000x1001:wgmma_tf32_64x128x32_s7_wg2_swz16_pp_c1_k1,wgmma_tf32_128x128x32_s7_wg1_swz1_np_c1_k1"}
for round in $(seq 1 "${ROUNDS:-2}"); do
  for spec in $SPECS; do
    shape=${spec%%:*}; IFS=x read -r M N K <<< "$shape"
    order="off on"; [ $((round % 2)) = 0 ] && order="on off"
    for b in $order; do
      d=$OFF_DEFINES; [ $b = on ] && d=$ON_DEFINES
      # shellcheck disable=SC2046
      FORGE_KERNEL_DEFINES=$d screen "$M" "$N" "$K" $(echo "${spec#*:}" | tr ',' ' ') | sed "s/^/$b /"
    done
  done > "$W/inward-$round.txt"
  gpu_state
done
for spec in ${H2H:-}; do
  shape=${spec%%:*}; IFS=x read -r M N K <<< "$shape"
  h2h "$M" "$N" "$K" "${spec#*:}"
done | tee "$W/h2h.txt"
python3 - "$W" <<'PY'
import glob, statistics, sys
t, gates = {}, []
for f in sorted(glob.glob(sys.argv[1] + "/inward-*.txt")):
    for line in open(f):
        p = line.split()
        if len(p) >= 7 and p[2] != "cublas":
            if p[-1] != "pass": gates.append(line.strip())
            else: t.setdefault((p[1], p[2]), {}).setdefault(p[0], []).append(float(p[3]))
with open(sys.argv[1] + "/inward.txt", "w") as out:
    def w(s): print(s); out.write(s + "\n")
    w(f"{'shape':16} {'schedule':46} {'off us':>8} {'on us':>8} {'on/off':>7}  rounds off | on")
    for (shape, s), d in t.items():
        off, on = d.get("off", []), d.get("on", [])
        if off and on:
            a, b = statistics.median(off), statistics.median(on)
            w(f"{shape:16} {s:46} {a:8.2f} {b:8.2f} {b/a:7.3f}  {' '.join('%.1f' % x for x in off)} | {' '.join('%.1f' % x for x in on)}")
    w(f"gate failures: {len(gates)}")
    for g in gates: w("  " + g)
PY
