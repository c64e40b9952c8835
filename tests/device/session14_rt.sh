#!/usr/bin/env bash
# Session 14, issue #12: the retiled tail (`rt`, kernels/ABI.md "Retiled tail") on the GPU for
# the first time. TESTS=1: the GPU tests first (tests/gpu.rs holds
# retiled_tail_is_bit_identical_and_reruns_identically). Then ROUNDS rounds of gated screens of
# SPECS ("MxNxK:SCHED,SCHED ...": each rt schedule beside its pers twin), one fresh worker per
# shape, the schedules' order reversed every other round; then H2H ("MxNxK:SCHED ...") head to
# head against cuBLAS, sustained and burst. From a `build_drop.sh` folder holding device_lib.sh.
# $OUT: rt-N.txt (the screens), rt.txt (medians, each rt against its pers twin), h2h.txt,
# s14rt.tgz.
set -uo pipefail
source ./device_lib.sh
device_setup s14rt
if [ "${TESTS:-0}" = 1 ]; then
  gpu_tests
fi
P=wgmma_tf32
SPECS=${SPECS:-"6144x6144x6144:${P}_128x256x32_s4_wg2_swz8_pers_c1_k1,${P}_128x256x32_s4_wg2_swz8_rt_c1_k1,${P}_128x256x32_s4_wg2_swz16_pers_c1_k1,${P}_128x256x32_s4_wg2_swz16_rt_c1_k1,${P}_128x256x32_s4_wg2_swz8_pers_c2_k1
5000x5000x2000:${P}_128x200x32_s5_wg2_swz16_pers_c1_k1,${P}_128x200x32_s5_wg2_swz16_rt_c1_k1
6000x6100x2048:${P}_128x256x32_s4_wg2_swz16_pers_c1_k1,${P}_128x256x32_s4_wg2_swz16_rt_c1_k1
2500x6000x2000:${P}_128x224x32_s4_wg2_swz4c_pers_c1_k1,${P}_128x224x32_s4_wg2_swz4c_rt_c1_k1"}
# 6144³: the model's rt choice and the shipped c2 schedule, twice each in turn (±2–3% run to run).
RT6144="6144x6144x6144:${P}_128x256x32_s4_wg2_swz16_rt_c1_k1"
C26144="6144x6144x6144:${P}_128x256x32_s4_wg2_swz8_pers_c2_k1"
H2H=${H2H:-"$RT6144 $C26144 $C26144 $RT6144"}
for round in $(seq 1 "${ROUNDS:-2}"); do
  for spec in $SPECS; do
    shape=${spec%%:*}; IFS=x read -r M N K <<< "$shape"
    list=$(echo "${spec#*:}" | tr ',' ' ')
    [ $((round % 2)) = 0 ] && list=$(echo "$list" | tr ' ' '\n' | tac | tr '\n' ' ')
    # shellcheck disable=SC2086
    screen "$M" "$N" "$K" $list
  done > "$W/rt-$round.txt"
  gpu_state
done
for spec in $H2H; do
  shape=${spec%%:*}; IFS=x read -r M N K <<< "$shape"
  h2h "$M" "$N" "$K" "${spec#*:}"
done | tee "$W/h2h.txt"
python3 - "$W" <<'PY'
import glob, statistics, sys
t, gates = {}, []
for f in sorted(glob.glob(sys.argv[1] + "/rt-*.txt")):
    for line in open(f):
        p = line.split()
        if len(p) >= 6 and p[1] != "cublas":
            if p[-1] != "pass": gates.append(line.strip())
            else: t.setdefault((p[0], p[1]), []).append(float(p[2]))
        elif len(p) >= 6:
            t.setdefault((p[0], "cublas"), []).append(float(p[2]))
with open(sys.argv[1] + "/rt.txt", "w") as out:
    def w(s): print(s); out.write(s + "\n")
    w(f"{'shape':16} {'schedule':48} {'median us':>10} {'rt/pers':>8}  rounds")
    for (shape, s), v in sorted(t.items()):
        twin = t.get((shape, s.replace("_rt_", "_pers_"))) if "_rt_" in s else None
        ratio = f"{statistics.median(v) / statistics.median(twin):8.3f}" if twin else " " * 8
        w(f"{shape:16} {s:48} {statistics.median(v):10.2f} {ratio}  {' '.join('%.1f' % x for x in v)}")
    w(f"gate failures: {len(gates)}")
    for g in gates: w("  " + g)
PY
