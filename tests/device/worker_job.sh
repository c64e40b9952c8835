# Sourced by the device scripts: write_job FILE M N K SCHEDULE MAX_SECONDS [CONTRACT] writes a
# worker job that times SCHEDULE head to head against cuBLAS on M×N×K under CONTRACT (default
# tf32-rne-k8-inorder), launched in LAUNCH order (serial, the default, or programmatic);
# FORGE_CACHE must be set.
write_job() {
  cat > "$1" <<JOB
{"shape":{"m":$2,"n":$3,"k":$4},"dtype":"tf32","layout":"tn","seed":20261202,
 "contract":"${7:-tf32-rne-k8-inorder}",
 "candidates":[],"time_cublas":false,"cache_dir":"$FORGE_CACHE",
 "timing":{"warmup_ms":25.0,"batch_us":300.0,"min_samples":15,"max_samples":300,
           "target_half_width":0.01,"max_seconds":$6},
 "head_to_head":"$5","launch":"${LAUNCH:-serial}"}
JOB
}
