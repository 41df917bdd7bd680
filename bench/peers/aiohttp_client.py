"""The floor among peer load clients (bench/peers/run.sh, docs/performance.md "Peers side by side").

asyncio + aiohttp and nothing else: C workers share one session and send N streamed chat
completions in a closed loop; each counts the SSE events that carry content (one token each on
the loopback target, llama.cpp's framing). No timestamps per token, no statistics: what this
costs in CPU is what any Python client built on aiohttp costs at least.

Prints one JSON object: requests sent, ok, errors, streamed tokens, wall seconds.
"""

import argparse
import asyncio
import json
import sys
import time

import aiohttp


async def one(session, url, body, counts):
    try:
        async with session.post(url, json=body) as resp:
            if resp.status != 200:
                counts["errors"] += 1
                await resp.read()
                return
            tokens = 0
            # aiohttp yields the body line by line; an SSE event is a `data: ` line.
            async for line in resp.content:
                if not line.startswith(b"data: "):
                    continue
                payload = line[6:].strip()
                if payload == b"[DONE]":
                    break
                event = json.loads(payload)
                for choice in event.get("choices") or ():
                    if (choice.get("delta") or {}).get("content"):
                        tokens += 1
            counts["tokens"] += tokens
            counts["ok"] += 1
    except (aiohttp.ClientError, asyncio.TimeoutError, ValueError):
        counts["errors"] += 1


async def main(args):
    url = args.endpoint.rstrip("/") + "/v1/chat/completions"
    counts = {"sent": 0, "ok": 0, "errors": 0, "tokens": 0}
    remaining = [args.requests]
    timeout = aiohttp.ClientTimeout(total=300, sock_connect=30, sock_read=60)
    connector = aiohttp.TCPConnector(limit=args.concurrency)

    async def worker(session, w):
        while remaining[0] > 0:
            remaining[0] -= 1
            i = counts["sent"]
            counts["sent"] += 1
            body = {
                "model": "bakeoff-calibration",
                "messages": [{"role": "user", "content": f"peer {w} request {i}: say hello"}],
                "max_tokens": args.output_tokens,
                "stream": True,
            }
            await one(session, url, body, counts)

    start = time.monotonic()
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        await asyncio.gather(*(worker(session, w) for w in range(args.concurrency)))
    counts["wall_s"] = time.monotonic() - start
    return counts


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--endpoint", required=True)
    p.add_argument("--concurrency", type=int, required=True)
    p.add_argument("--requests", type=int, required=True)
    p.add_argument("--output-tokens", type=int, required=True)
    out = asyncio.run(main(p.parse_args()))
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
