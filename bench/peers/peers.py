"""Peers side by side (bench/peers/run.sh; docs/performance.md "Peers side by side").

Starts the built-in loopback target (`harness-bench --serve-target`) pinned to one core, then runs
each load client, pinned to another core, with the same workload: closed loop, C concurrent
streams, N requests, T output tokens each, a short prompt. For each run it records the client's
streamed tokens, process wall time, and CPU seconds of the client's whole process tree (user +
system, from wait4(2): the client plus every descendant it reaped, so GuideLLM's worker
processes count), and derives CPU seconds per 1,000 streamed tokens and the ratios to bakeoff.

AIPerf counts tokens with a Hugging Face tokenizer it loads by repo id from the hub cache; offline,
`--aiperf-tokenizer DIR` (tokenizer.json and tokenizer_config.json) is laid out as that cache
(`HF_HOME/hub/models--ORG--NAME/snapshots/REV/`, `refs/main`) under the work directory.

Standard library only: it runs under any python3. Prints one JSON object on stdout.
"""

import argparse
import hashlib
import json
import os
import platform
import select
import shutil
import subprocess
import sys
import tempfile
import time

MODEL = "bakeoff-calibration"
# The repo id AIPerf is told to load its tokenizer by; the files come from --aiperf-tokenizer.
AIPERF_TOKENIZER_REPO = "HuggingFaceTB/SmolLM2-135M-Instruct"
AIPERF_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json")
CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(msg):
    print(f"[peers] {msg}", file=sys.stderr, flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def proc_cpu_s(pid):
    """user + system seconds of a live process (its threads included), from /proc/PID/stat."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return None


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def start_target(target_bin, core):
    p = subprocess.Popen(
        ["taskset", "-c", str(core), target_bin, "--serve-target"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    # The target prints its address at once; do not wait forever on one that never does.
    ready, _, _ = select.select([p.stdout], [], [], 30)
    url = (p.stdout.readline() or "").strip() if ready else ""
    if not url.startswith("http://"):
        p.kill()
        raise SystemExit(f"the target printed no address (got {url!r})")
    return p, url


def run_measured(cmd, core, stdout_path, cwd=None, env=None):
    """Run CMD pinned to CORE; return (exit code, wall s, user+sys s of its reaped tree)."""
    with open(stdout_path, "w") as out, open(stdout_path + ".stderr", "w") as err:
        t0 = time.monotonic()
        p = subprocess.Popen(
            ["taskset", "-c", str(core), *cmd], stdout=out, stderr=err, cwd=cwd, env=env
        )
        # taskset execs the client, so wait4 on this pid reports the client itself plus every
        # descendant it waited for (worker processes included).
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, wall, ru.ru_utime + ru.ru_stime


def find_steps(v):
    """The `steps` list of a bakeoff load artifact, wherever it sits in the JSON."""
    if isinstance(v, dict):
        s = v.get("steps")
        if isinstance(s, list) and s and isinstance(s[0], dict) and "output_tokens" in s[0]:
            return s
        for x in v.values():
            r = find_steps(x)
            if r is not None:
                return r
    elif isinstance(v, list):
        for x in v:
            r = find_steps(x)
            if r is not None:
                return r
    return None


def client_bakeoff(a, url, c, n, t, work):
    outdir = tempfile.mkdtemp(prefix=f"bakeoff-c{c}-n{n}-", dir=work)
    cmd = [
        a.bakeoff_bin, "bench", "run", "--endpoint", url, "--model", MODEL,
        "--concurrency", str(c), "--requests", str(n), "--output-tokens", str(t),
        "--prompt-tokens", str(a.prompt_tokens), "--warmup", "0", "--step-warmup", "0", "--no-pin",
        "--no-calibrate", "--no-metrics", "--json", "--out", outdir,
    ]

    def parse(stdout):
        steps = find_steps(json.loads(stdout))
        if not steps:
            raise ValueError("no steps in the artifact")
        s = steps[0]
        return {
            "streamed_tokens": s["output_tokens"],
            "requests_ok": s["ok"],
            "errors": sum(s.get("errors", {}).values()),
            "client_window_s": s.get("wall_s"),
            "token_source": s.get("token_source"),
        }

    return cmd, parse, None


def client_aiohttp(a, url, c, n, t, work):
    cmd = [
        a.aiohttp_python, os.path.join(a.here, "aiohttp_client.py"), "--endpoint", url,
        "--concurrency", str(c), "--requests", str(n), "--output-tokens", str(t),
    ]

    def parse(stdout):
        v = json.loads(stdout)
        return {
            "streamed_tokens": v["tokens"],
            "requests_ok": v["ok"],
            "errors": v["errors"],
            "client_window_s": v["wall_s"],
        }

    return cmd, parse, None


def guidellm_scenario(url, c, n, t, prompt_words, out_json):
    # A list of prompts with their output length: no synthetic data, so no tokenizer is loaded
    # (the HF hub is out of reach). The token counts GuideLLM reports come from the server's usage.
    data = [
        {"prompt": f"peer request {i}: " + " ".join(["hello"] * prompt_words),
         "output_tokens_count": t}
        for i in range(max(n, c))
    ]
    return {
        "spec": {
            "backend": {
                "kind": "openai_http",
                "target": url,
                "model": MODEL,
                "request_format": "/v1/chat/completions",
                # GuideLLM's chat requests carry the length as `max_completion_tokens`; the
                # loopback target reads `max_tokens` (llama.cpp reads both), so say it twice.
                "extras": {"body": {"max_tokens": t}},
            },
            "profile": {"kind": "concurrent", "streams": [c]},
            "data": [{"kind": "in_memory_dict_list", "data": data}],
            "constraints": [{"kind": "max_requests", "count": n}],
            "outputs": [{"kind": "json", "path": out_json}],
        }
    }


def client_guidellm(a, url, c, n, t, work):
    d = tempfile.mkdtemp(prefix=f"guidellm-c{c}-n{n}-", dir=work)
    out_json = os.path.join(d, "benchmarks.json")
    scenario = os.path.join(d, "scenario.json")
    with open(scenario, "w") as f:
        json.dump(guidellm_scenario(url, c, n, t, a.prompt_tokens, out_json), f)
    cmd = [a.guidellm, "run", "--scenario", scenario, "--disable-console-interactive"]
    env = dict(os.environ)
    # Offline: never reach for the HF hub (unreachable on the hosts this runs on).
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})

    def parse(_stdout):
        with open(out_json) as f:
            v = json.load(f)
        b = v["benchmarks"][0]
        made = b["scheduler_metrics"]["requests_made"]
        out = b["metrics"]["output_token_count"]["successful"]
        # Tokens streamed: every successful request's output. GuideLLM's own statistics may
        # sample fewer requests than it made (`reported_*`), so scale its mean to all of them.
        return {
            "streamed_tokens": int(round(made["successful"] * out["mean"])),
            "requests_ok": made["successful"],
            "errors": made["errored"] + made["incomplete"],
            "client_window_s": b.get("duration"),
            "reported_output_tokens": int(out["total_sum"]),
            "reported_requests": int(out["count"]),
            "worker_processes": b["scheduler_state"].get("num_processes"),
        }

    return cmd, parse, env


def client_guidellm_1worker(a, url, c, n, t, work):
    # GuideLLM spawns up to 10 worker processes by default (GUIDELLM__MAX_WORKER_PROCESSES), all on
    # the one pinned core here; one worker is its leanest shape on one core.
    cmd, parse, env = client_guidellm(a, url, c, n, t, work)
    env["GUIDELLM__MAX_WORKER_PROCESSES"] = "1"
    return cmd, parse, env


def aiperf_hf_home(src, work):
    """An HF_HOME whose hub cache holds SRC's tokenizer files as AIPERF_TOKENIZER_REPO: AIPerf
    0.13.0 takes a tokenizer by repo id (a plain directory is refused as one, and `builtin`
    downloads a tiktoken file), and with HF_HUB_OFFLINE=1 the hub client resolves the id from
    `refs/main` and `snapshots/REV/` without a request."""
    files = [f for f in AIPERF_TOKENIZER_FILES if os.path.isfile(os.path.join(src, f))]
    if "tokenizer.json" not in files:
        raise SystemExit(
            f"--aiperf-tokenizer {src}: no tokenizer.json there; fix: scripts/provision.sh vllm writes "
            "one under ~/.cache/bakeoff/models/SmolLM2-135M-Instruct-hf, or give a directory holding "
            "tokenizer.json and tokenizer_config.json")
    digest = hashlib.sha1()
    for f in files:
        with open(os.path.join(src, f), "rb") as fh:
            digest.update(fh.read())
    rev = digest.hexdigest()
    home = os.path.join(work, "aiperf-hf-home")
    repo = os.path.join(home, "hub", "models--" + AIPERF_TOKENIZER_REPO.replace("/", "--"))
    snap = os.path.join(repo, "snapshots", rev)
    os.makedirs(snap, exist_ok=True)
    os.makedirs(os.path.join(repo, "refs"), exist_ok=True)
    for f in files:
        shutil.copyfile(os.path.join(src, f), os.path.join(snap, f))
    with open(os.path.join(repo, "refs", "main"), "w") as fh:
        fh.write(rev)
    return home


def client_aiperf(a, url, c, n, t, work):
    d = tempfile.mkdtemp(prefix=f"aiperf-c{c}-n{n}-", dir=work)
    cmd = [
        a.aiperf, "profile", "--model", MODEL, "--url", url, "--endpoint-type", "chat",
        "--streaming", "--concurrency", str(c), "--request-count", str(n),
        "--synthetic-input-tokens-mean", str(a.prompt_tokens), "--synthetic-input-tokens-stddev", "0",
        "--output-tokens-mean", str(t), "--output-tokens-stddev", "0",
        # The loopback target reads `max_tokens`; AIPerf sends `max_completion_tokens` otherwise.
        "--use-legacy-max-tokens",
        "--tokenizer", AIPERF_TOKENIZER_REPO, "--artifact-dir", d, "--ui", "none",
        # The target serves no /metrics and this host no GPU to watch.
        "--no-server-metrics", "--no-gpu-telemetry", "--random-seed", "1",
    ]
    env = dict(os.environ)
    env.update({"HF_HOME": a.aiperf_hf_home, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "HF_DATASETS_OFFLINE": "1"})

    def parse(_stdout):
        with open(os.path.join(d, "profile_export_aiperf.json")) as f:
            v = json.load(f)
        errors = v.get("error_request_count") or {}
        usage = v.get("total_usage_completion_tokens") or {}
        return {
            # Tokens as AIPerf counts them: its tokenizer over each reply's streamed text (one
            # token per event on the loopback target, as the server's usage says).
            "streamed_tokens": int(v["total_output_tokens"]["avg"]),
            "requests_ok": int(v["request_count"]["avg"]),
            "errors": int(errors.get("avg", 0)),
            "client_window_s": v["benchmark_duration"]["avg"],
            "reported_usage_tokens": int(usage["avg"]) if "avg" in usage else None,
            "aiperf_version": v.get("aiperf_version"),
        }

    return cmd, parse, env


CLIENTS = {
    "bakeoff": client_bakeoff,
    "aiohttp": client_aiohttp,
    "guidellm": client_guidellm,
    "guidellm_1worker": client_guidellm_1worker,
    "aiperf": client_aiperf,
}


def measure(a, name, target, url, c, n, t, work, repeat):
    """REPEAT runs of one client; the one with the median CPU seconds, with all CPU figures."""
    runs = [measure_once(a, name, target, url, c, n, t, work, i) for i in range(max(repeat, 1))]
    ok = [r for r in runs if "error" not in r] or runs
    ok.sort(key=lambda r: r["cpu_s"])
    r = dict(ok[len(ok) // 2])
    if len(runs) > 1:
        r["repeats_cpu_s"] = [x["cpu_s"] for x in runs]
        r["repeats_wall_s"] = [x["wall_s"] for x in runs]
    return r


def measure_once(a, name, target, url, c, n, t, work, i):
    cmd, parse, env = CLIENTS[name](a, url, c, n, t, work)
    stdout_path = os.path.join(work, f"{name}-c{c}-n{n}-t{t}-r{i}.out")
    log(f"{name}: c={c} n={n} t={t} run {i + 1}")
    target_cpu0 = proc_cpu_s(target.pid)
    rc, wall, cpu = run_measured(cmd, a.client_core, stdout_path, env=env)
    target_cpu1 = proc_cpu_s(target.pid)
    r = {"command": " ".join(cmd), "exit_code": rc, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3)}
    if target_cpu0 is not None and target_cpu1 is not None:
        r["target_cpu_s"] = round(target_cpu1 - target_cpu0, 3)
    try:
        with open(stdout_path) as f:
            r.update(parse(f.read()))
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        r["error"] = f"could not read the client's result: {e} (see {stdout_path}, {stdout_path}.stderr)"
        with open(stdout_path + ".stderr") as f:
            r["stderr_tail"] = f.read()[-1500:]
        return r
    tok = r["streamed_tokens"]
    if tok:
        r["tokens_per_s"] = round(tok / wall, 1)
        if r.get("client_window_s"):
            r["tokens_per_s_client_window"] = round(tok / r["client_window_s"], 1)
        r["cpu_s_per_1k_tokens"] = round(cpu / tok * 1000, 5)
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--target-bin", required=True)
    p.add_argument("--bakeoff-bin", required=True)
    p.add_argument("--aiohttp-python", help="python of the aiohttp venv (omit: skip that client)")
    p.add_argument("--guidellm", help="the guidellm executable (omit: skip that client)")
    p.add_argument("--aiperf", help="the aiperf executable (omit: skip that client)")
    p.add_argument("--aiperf-tokenizer", help="directory with the tokenizer.json AIPerf counts tokens with")
    p.add_argument("--concurrency", default="32,128")
    p.add_argument("--requests", type=int, default=1000)
    p.add_argument("--output-tokens", type=int, default=256)
    p.add_argument("--prompt-tokens", type=int, default=16, help="prompt length (words for the Python clients)")
    p.add_argument("--client-core", type=int, default=0)
    p.add_argument("--target-core", type=int, default=1)
    p.add_argument("--guidellm-one-worker", action="store_true",
                   help="also run GuideLLM with GUIDELLM__MAX_WORKER_PROCESSES=1")
    p.add_argument("--no-baseline", action="store_true", help="skip the one-token start-up runs")
    p.add_argument("--repeat", type=int, default=1, help="runs per client and level; the median by CPU is kept")
    p.add_argument("--workdir")
    a = p.parse_args()
    a.here = os.path.dirname(os.path.abspath(__file__))
    work = a.workdir or tempfile.mkdtemp(prefix="bakeoff-peers-")
    os.makedirs(work, exist_ok=True)
    names = ["bakeoff"] + (["aiohttp"] if a.aiohttp_python else []) + (["guidellm"] if a.guidellm else [])
    if a.guidellm and a.guidellm_one_worker:
        names.append("guidellm_1worker")
    if a.aiperf:
        if not a.aiperf_tokenizer:
            raise SystemExit("--aiperf needs --aiperf-tokenizer DIR (tokenizer.json and tokenizer_config.json)")
        a.aiperf_hf_home = aiperf_hf_home(a.aiperf_tokenizer, work)
        names.append("aiperf")
    levels = [int(x) for x in a.concurrency.split(",") if x]

    result = {
        "machine": {
            "cpus": os.cpu_count(),
            "cpu_model": cpu_model(),
            "kernel": platform.release(),
            "python": sys.version.split()[0],
            "loadavg_before": loadavg(),
        },
        "workload": {
            "concurrency": levels, "requests": a.requests, "output_tokens": a.output_tokens,
            "prompt_tokens": a.prompt_tokens, "client_core": a.client_core,
            "target_core": a.target_core, "warmup": 0, "repeat": a.repeat,
        },
        "workdir": work,
        **({"aiperf_tokenizer": {"repo": AIPERF_TOKENIZER_REPO, "from": a.aiperf_tokenizer}} if a.aiperf else {}),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    target, url = start_target(a.target_bin, a.target_core)
    result["target"] = {"url": url, "bin": a.target_bin}
    try:
        result["runs"] = []
        for c in levels:
            startup = {}
            if not a.no_baseline:
                # Fixed cost at this level: c one-token requests (interpreter start, imports, the
                # worker processes GuideLLM spawns for c streams, bakeoff's artifact writing).
                startup = {n: measure(a, n, target, url, c, c, 1, work, 1) for n in names}
            clients = {n: measure(a, n, target, url, c, a.requests, a.output_tokens, work, a.repeat) for n in names}
            for n in names:
                r, st = clients[n], startup.get(n, {})
                if st.get("cpu_s") is not None and r.get("streamed_tokens") and st.get("streamed_tokens") is not None:
                    dtok = r["streamed_tokens"] - st["streamed_tokens"]
                    if dtok > 0:
                        r["cpu_s_per_1k_tokens_minus_startup"] = round((r["cpu_s"] - st["cpu_s"]) / dtok * 1000, 5)
            base = clients["bakeoff"]
            ratios = {}
            for n in names[1:]:
                r = clients[n]
                ratios[n] = {
                    k: round(r[k] / base[k], 2)
                    for k in ("cpu_s_per_1k_tokens", "cpu_s_per_1k_tokens_minus_startup", "tokens_per_s", "wall_s", "cpu_s")
                    if r.get(k) and base.get(k)
                }
            result["runs"].append(
                {"concurrency": c, "clients": clients, "startup": startup, "peer_over_bakeoff": ratios}
            )
    finally:
        try:
            target.stdin.close()
        except OSError:
            pass
        try:
            target.wait(timeout=5)
        except subprocess.TimeoutExpired:
            target.kill()
            target.wait()
    result["machine"]["loadavg_after"] = loadavg()
    result["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
