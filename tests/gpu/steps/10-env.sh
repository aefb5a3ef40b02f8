#!/usr/bin/env bash
# (a) environment: GPU, driver, runtime, CUDA, every libcupti and the one a traced job loads, PyTorch.
# timeout: 60
# min: 20
# Writes environment.txt; never fails unless the real run sees no GPU. The probe runs one
# PyTorch job under `vramtrace record` and reads which libcupti file it mapped and the
# cupti_version its trace recorded.
. "$VT_TREE/tests/gpu/steps/lib.sh"
env_txt="$VT_STEP_DIR/environment.txt"
section() { printf '\n== %s\n' "$*" >> "$env_txt"; }
show() { timeout 20 "$@" >> "$env_txt" 2>&1 || echo "($1: exit $?)" >> "$env_txt"; }

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "host: $(hostname)"
  uname -a
} > "$env_txt"

section runtime
kernel=$(uname -r)
runtime=other
case "$kernel" in
  4.4.0*) runtime=gVisor ;;
  *-fc-*) runtime=Firecracker ;;
esac
{ dmesg 2>/dev/null | head -n 5 | grep -qi gvisor; } && runtime=gVisor
echo "runtime: $runtime (kernel $kernel)" >> "$env_txt"
grep -m1 'model name' /proc/cpuinfo >> "$env_txt" 2>&1
echo "cpus: $(nproc); $(grep MemTotal /proc/meminfo)" >> "$env_txt"
show df -h "$VT_RESULTS"
show cat /etc/os-release
ldd --version 2>&1 | head -n 1 >> "$env_txt"

section nvidia-smi
show nvidia-smi
gpu=$(timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>/dev/null | head -n 1)
echo "query: ${gpu:-none}" >> "$env_txt"

section "CUDA tools"
show nvcc --version
show compute-sanitizer --version
for t in ncu nsys cuda-gdb cmake ninja cc gcc; do echo "$t: $(command -v $t || echo missing)" >> "$env_txt"; done
ls -d /usr/local/cuda* >> "$env_txt" 2>&1
echo "sqlite3.h: $(ls /usr/include/sqlite3.h 2>/dev/null || echo missing) (a rebuild here uses the carried one)" >> "$env_txt"

section "libcupti files (cuptiGetVersion of each)"
"$VT_PYTHON" - "$VT_CUPTI_LIB" "$VT_CUPTI_PY" >> "$env_txt" 2>&1 <<'EOF'
import ctypes, glob, os, site, sys
cands = [p for p in sys.argv[1:] if p]
for pat in ("/usr/local/cuda*/lib*/libcupti.so*", "/usr/local/cuda*/extras/CUPTI/lib64/libcupti.so*",
            "/usr/local/cuda*/targets/*/lib/libcupti.so*"):
    cands += glob.glob(pat)
for d in site.getsitepackages() + [site.getusersitepackages()]:
    cands += glob.glob(os.path.join(d, "nvidia", "*", "lib", "libcupti.so*"))
seen = set()
for p in cands:
    real = os.path.realpath(p)
    if real in seen or not os.path.isfile(real):
        continue
    seen.add(real)
    v = ctypes.c_uint32(0)
    try:
        rc = ctypes.CDLL(real).cuptiGetVersion(ctypes.byref(v))
        ver = v.value if rc == 0 else f"error {rc}"
    except OSError as e:
        ver = f"not loadable: {e}"
    print(f"{real}  {os.path.getsize(real)} B  cuptiGetVersion {ver}")
print(f"VT_CUPTI_LIB (samples, gpu tests): {sys.argv[1] or 'none'}")
print(f"the Python environment's: {sys.argv[2] or 'none'}")
EOF

section "Python and PyTorch"
"$VT_PYTHON" - >> "$env_txt" 2>&1 <<'EOF'
import sys
print("python", sys.version.split()[0], sys.executable)
try:
    import torch
    print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn",
          getattr(torch.backends.cudnn, "version", lambda: None)())
    print("cuda available:", torch.cuda.is_available())
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        print("device 0:", p.name, p.total_memory, "bytes")
except Exception as e:
    print("torch: not usable:", type(e).__name__, e)
try:
    from importlib import metadata
    for d in ("nvidia-cuda-cupti", "nvidia-cuda-runtime", "torch"):
        try:
            print(d, metadata.version(d))
        except metadata.PackageNotFoundError:
            print(d, "not installed")
except ImportError:
    pass
EOF
torch_line=$("$VT_PYTHON" -c 'import torch; print(f"torch {torch.__version__} (CUDA {torch.version.cuda})")' 2>/dev/null)

section "a PyTorch job under vramtrace record: the libcupti it maps, the trace's cupti_version"
probe="$VT_SCRATCH/env-probe"
mkdir -p "$probe"
vt_run 40 "$VT_STEP_DIR/probe.log" "$vt" record -o "$probe/probe-%p.db" -- "$VT_PYTHON" -c '
import os
print("LD_LIBRARY_PATH first:", (os.environ.get("LD_LIBRARY_PATH") or "").split(":")[0])
print("CUDA_INJECTION64_PATH:", os.environ.get("CUDA_INJECTION64_PATH"))
try:
    import torch
    torch.zeros(1, device="cuda").add_(1)
    torch.cuda.synchronize()
except Exception as e:
    print("no CUDA work:", type(e).__name__, e)
maps = sorted({l.split()[-1] for l in open("/proc/self/maps") if "libcupti" in l})
print("libcupti mapped:", " ".join(maps) or "none")'
echo "record: exit $?" >> "$VT_STEP_DIR/probe.log"
cat "$VT_STEP_DIR/probe.log" >> "$env_txt"
mapped=$(sed -n 's/^libcupti mapped: //p' "$VT_STEP_DIR/probe.log")
version=""
for t in "$probe"/probe-*.db; do
  [ -f "$t" ] || continue
  "$vt" sql "$t" "SELECT key, value FROM meta WHERE key LIKE 'cupti%' OR key LIKE '%version%' OR key = 'pid'" \
    >> "$env_txt" 2>&1
  version=$("$vt" sql --format csv --no-header "$t" "SELECT group_concat(key || ' ' || value, ', ') FROM meta
             WHERE key IN ('cupti_library', 'cupti_version', 'cupti_layout')" 2>/dev/null | tail -n 1)
done

section "carried folder"
head -n 8 "$VT_CARRY/manifest.txt" >> "$env_txt"

vt_summary "GPU: ${gpu:-none found}; runtime $runtime; ${torch_line:-no torch}"
vt_summary "libcupti in a traced PyTorch job: ${mapped:-none} (trace: ${version:-no cupti meta}); samples use $VT_CUPTI_LIB"
if [ -z "$gpu" ] && [ "$VT_DRY_RUN" = 0 ]; then
  vt_status fail
else
  vt_status info
fi
