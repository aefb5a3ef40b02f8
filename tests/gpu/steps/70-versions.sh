#!/usr/bin/env bash
# (g) versions: the machine's own CUPTI read with its release's layouts, the trace says what recorded it (and how it subscribed), kernel names demangled, torch.profiler beside the tracer.
# timeout: 150
# min: 45
# docs/tracer.md, "Versions" and "Beside torch.profiler". Two parts, each with the machine's own
# versions (whatever CUPTI, driver and PyTorch it has):
#  1. the leak sample under `vramtrace record` with the toolkit's libcupti (VT_CUPTI_LIB): the
#     trace's cupti_version is that file's cuptiGetVersion; a release the docs' table lists is
#     read with its layouts (no kind reduced, no record left undecoded), one it does not list is
#     reduced and says so (shown, not failed: the table is older than the machine); the driver
#     and runtime versions are in meta, and the device's memory sampled at context creation
#     (docs/schema.md, device.D.mem_sample.K); every mangled kernel name has its demangled and short
#     name in the KERNEL view (sample.versions.txt: the meta rows and names; the trace stays in
#     the scratch folder); record's own NVML reading of other processes (nvml.* meta, docs/cli.md,
#     "Other processes on the devices") is shown, and said in the summary;
#  2. tests/gpu/profiler_lend_check.sh: a PyTorch job with its own torch.profiler under
#     `vramtrace record` (results in profiler_lend/): the profiler and the trace both get their
#     data; each of its traces names the libcupti the job mapped, and its cupti_version is that
#     file's cuptiGetVersion.
# In the rehearsal the sample is the test double (its trace is made up: the checks that need
# the real tracer are shown, not failed) and the profiler check runs its self-test.
. "$VT_TREE/tests/gpu/steps/lib.sh"
d=$VT_STEP_DIR
dry=$VT_DRY_RUN
# the CUPTI API versions of the releases docs/tracer.md's table lists (tests/test_layout.c checks
# the tracer's table against the same releases)
listed="130000 130001 130100 130101 130200 130201 130300 130301 130400 130401"

# cupti_version_of FILE: its cuptiGetVersion, or nothing.
cupti_version_of() {
  "$VT_PYTHON" - "$1" 2> /dev/null << 'EOF'
import ctypes, sys
v = ctypes.c_uint32(0)
try:
    if ctypes.CDLL(sys.argv[1]).cuptiGetVersion(ctypes.byref(v)) == 0:
        print(v.value)
except OSError:
    pass
EOF
}

# meta_of TRACE KEY: the meta value, or nothing.
meta_of() { "$vt" sql --format csv --no-header "$1" "SELECT value FROM meta WHERE key = '$2'" 2> /dev/null | tail -n 1; }

# real_only WHAT FOUND EXPECTED: a comparison that holds for the real tracer only (shown in the rehearsal).
real_only() {
  if [ "$dry" = 1 ]; then vt_row "$1" "$2" "$3" shown; else vt_row "$1" "$2" "$3"; fi
}

# --- 1. a CUDA sample with the toolkit's libcupti
# the kernels' names as the Nsight-compatible KERNEL view gives them (ids into StringIds)
names="FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds m ON m.id = k.mangledName
       JOIN StringIds n ON n.id = k.demangledName JOIN StringIds s ON s.id = k.shortName"
want=$(cupti_version_of "$VT_CUPTI_LIB")
mkdir -p "$VT_SCRATCH/versions"
vt_run 45 "$d/sample.log" env VRAMTRACE_CUPTI="$VT_CUPTI_LIB" "$vt" record -o "$VT_SCRATCH/versions/sample-%p.db" -- \
  "$VT_CARRY/samples/cuda/leak"
echo "record: exit $?" >> "$d/sample.log"
t=""
for f in "$VT_SCRATCH"/versions/sample-[0-9]*.db; do [ -f "$f" ] && t=$f && break; done
vt_row "sample: a trace written" "$([ -n "$t" ] && echo 1 || echo 0)" 1
if [ -n "$t" ]; then
  "$vt" sql "$t" "SELECT key, value FROM meta WHERE key LIKE 'cupti%' OR key LIKE 'cuda%' OR key LIKE 'records%'
                  ORDER BY key" > "$d/sample.versions.txt" 2>&1
  "$vt" sql "$t" "SELECT DISTINCT m.value AS mangled, n.value AS demangled, s.value AS short $names" \
    >> "$d/sample.versions.txt" 2>&1
  "$vt" info "$t" > "$d/sample.info.txt" 2>&1
  version=$(meta_of "$t" cupti_version)
  layout=$(meta_of "$t" cupti_layout)
  real_only "sample: cupti_version is cuptiGetVersion of $VT_CUPTI_LIB" "${version:-none}" "${want:-unknown}"
  real_only "sample: cupti_library is that file" "$(readlink -f "$(meta_of "$t" cupti_library)")" \
    "$(readlink -f "$VT_CUPTI_LIB")"
  reduced=$(meta_of "$t" cupti_kinds_reduced)
  undecoded=$(meta_of "$t" records_not_decoded)
  if [ -n "$version" ] && [[ " $listed " == *" $version "* ]]; then
    vt_row "sample: layout of a listed release (cupti_layout not unknown)" \
      "$([ "${layout#unknown}" = "$layout" ] && [ -n "$layout" ] && echo known || echo "${layout:-none}")" known
    vt_row "sample: kinds reduced" "${reduced:-none}" none
    vt_row "sample: records not decoded" "${undecoded:-0}" 0
  else
    vt_row "sample: CUPTI $version is not in the table: cupti_layout" "${layout:-none}" "unknown: ..." shown
    vt_row "sample: kinds reduced" "${reduced:-none}" "the kinds, and why" shown
  fi
  real_only "sample: cuda_driver_version in meta" "$([ -n "$(meta_of "$t" cuda_driver_version)" ] && echo yes || echo no)" yes
  real_only "sample: device memory sampled at context creation (meta device.0.used_at_context_bytes, mem_sample.0)" \
    "$([ -n "$(meta_of "$t" device.0.used_at_context_bytes)" ] && [ -n "$(meta_of "$t" device.0.mem_sample.0)" ] &&
      echo yes || echo no)" yes
  # the subscription (docs/tracer.md, "Several subscribers"): the only subscriber below CUPTI 13.3; from
  # 13.3 one of several where the driver (r610+) grants it, which only this machine can say (shown)
  sub=$(meta_of "$t" cupti_subscription)
  if [[ "$version" =~ ^[0-9]+$ ]] && [ "$version" -lt 130300 ]; then
    real_only "sample: cupti_subscription below CUPTI 13.3" "${sub%%:*}" one
  else
    vt_row "sample: cupti_subscription (CUPTI ${version:-?})" "${sub:-none}" "several: ... (driver r610+) or one: why" shown
  fi
  # other processes on the device, read through NVML by record in its own process (docs/cli.md,
  # "Other processes on the devices"): shown, not judged (a container may hide the driver's library)
  nvml=$(meta_of "$t" nvml.status)
  nvml_launch=$(meta_of "$t" nvml.device.0.others_at_launch)
  nvml_note=$(meta_of "$t" nvml.device.0.others_note)
  nvml_n=$("$vt" sql --format csv --no-header "$t" "SELECT count(*) FROM meta
            WHERE key LIKE 'nvml.device.0.others_sample.%'" 2> /dev/null | tail -n 1)
  vt_row "sample: NVML read by record (nvml.status)" "${nvml:-none}" "ok, or unavailable: why" shown
  vt_row "sample: other processes on device 0 before launch (bytes, processes)" "${nvml_launch:-unknown}" \
    "BYTES N where NVML lists processes" shown
  nmangled=$("$vt" sql --format csv --no-header "$t" "SELECT count(*) $names
              WHERE m.value LIKE '\_Z%' ESCAPE '\'" 2> /dev/null | tail -n 1)
  ndemangled=$("$vt" sql --format csv --no-header "$t" "SELECT count(*) $names
                WHERE m.value LIKE '\_Z%' ESCAPE '\' AND n.value <> m.value AND s.value <> m.value
                AND instr(n.value, '(') > 0" 2> /dev/null | tail -n 1)
  vt_row "sample: kernels with a mangled name" "$([ "${nmangled:-0}" -gt 0 ] && echo some || echo none)" some
  real_only "sample: of them demangled in the trace itself (KERNEL view)" "${ndemangled:-0}" "${nmangled:-0}"
fi

# --- 2. torch.profiler inside a traced PyTorch job
VT_LEND_TIMEOUT=$(vt_limit 100) bash "$VT_TREE/tests/gpu/profiler_lend_check.sh" "$VT_CARRY" > "$d/profiler_lend.log" 2>&1
rc=$?
case "$rc" in
  0) lend="the profiler and the trace both got their data" ;;
  77) lend="skipped (no PyTorch with CUDA)" ;;
  *) lend="FAILED (exit $rc, profiler_lend.log)" ;;
esac
[ "$rc" = 77 ] || vt_row "torch.profiler beside the tracer (profiler_lend_check.sh exit)" "$rc" 0
njob=0
for lt in "$d"/profiler_lend/lend-*.db; do
  [ -f "$lt" ] || continue
  njob=$((njob + 1))
  lib=$(meta_of "$lt" cupti_library)
  vt_row "PyTorch job $(basename "$lt"): cupti_version is cuptiGetVersion of its cupti_library" \
    "$(meta_of "$lt" cupti_version)" "$(cupti_version_of "$lib")"
  pyver=$(meta_of "$lt" cupti_version)
  pylayout=$(meta_of "$lt" cupti_layout)
done

vt_summary "CUPTI ${want:-unknown} ($VT_CUPTI_LIB): trace ${version:-none}, layout ${layout:-none}${reduced:+, reduced: $reduced}; kernels demangled ${ndemangled:-0} of ${nmangled:-0}; subscriber: ${sub:-none}"
[ "$njob" -gt 0 ] && lend="$lend; PyTorch's CUPTI ${pyver:-?}, layout ${pylayout:-?}"
vt_summary "torch.profiler beside the tracer: $lend"
vt_summary "NVML read by record: ${nvml:-none}; device 0: other processes before launch ${nvml_launch:-unknown} (bytes, processes), ${nvml_n:-0} samples while it ran${nvml_note:+; $nvml_note}"
vt_status pass
if [ "$rc" = 77 ]; then vt_status info; fi  # a part not run: a measurement, not a pass
