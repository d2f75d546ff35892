"""Is a server kept full? Requests in flight at an OpenAI-compatible stub, and statelab's CPU.

Starts a stub chat-completions server on 127.0.0.1 in a child process (it answers every
request after a fixed delay and integrates the number of requests in flight over time), then
runs Tower of Hanoi episodes against it through ``statelab.run.runner.run_experiment`` with
the response cache on (a fresh file per case, so every call is a miss and a cache write) and
reports, per configured ``concurrency``:

* mean requests in flight at the server (time-weighted, first request to last answer), and
  its ratio to the configured concurrency (target >= 0.9);
* the peak in flight;
* statelab's CPU per model call (user + system time of this process, all threads: the
  event loop, the HTTP client, the cache writer and the store), in ms;
* the stub server's CPU per call (its own process; on a 2-core machine it competes with
  statelab for the same cores);
* wall time, and the store's commit time (on its worker thread);
* the ramp-up: seconds from the first request until the in-flight count first reaches the
  configured concurrency, and the mean in flight from then on ("steady") as well as from the
  first request ("in flight").

Each case runs with the HTTP clients of the OpenAI-compatible backend, side by side:
``httpx`` (``STATELAB_HTTP_CLIENT=httpx``, the client before issue 13), ``lean`` (the
backend's own keep-alive HTTP/1.1 client, used for plain-http servers) and ``aiohttp``
(not a client statelab has: here the backend's ``post`` is replaced by one through an
``aiohttp.ClientSession`` per event loop, a ``TCPConnector`` of ``concurrency`` connections,
the same whole-request deadline and body cap; it hands a connection back at once, without
the lean client's 20 ms quiet check for stray responses, so it does a little less).

Every episode lasts the same number of steps (the stub's reply is never a legal move, so
each runs to ``max_steps``); the stub's answer times vary uniformly by +-50 % around the
given pace (seeded), as a real server's do, so episodes do not move in lockstep. There are
four times as many episodes as the concurrency. "in flight" is the time-weighted mean from
the first request until the last episode starts (while there is work left to give the
server: after that the run drains, as every finite run does); "whole" is over the whole run.

    python benchmarks/concurrency.py                  # 8 and 32 at 50 ms, 128 and 256 at 1 s
    python benchmarks/concurrency.py --cases 32:0.05 --clients lean
    python benchmarks/concurrency.py --clients lean,httpx,aiohttp --json conc.json
    python benchmarks/concurrency.py --cases 32:0.05 --clients lean --ray 2   # on a local Ray

With ``--ray N`` the episodes run on a local Ray instance of N CPUs (``statelab run --ray``:
N episode workers, each with its own HTTP client); "in flight" is then over the whole run
(the workers' episode starts are not seen here) and "cpu/call" is the driver's alone.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPLY = "Action: wait"  # never a legal Hanoi move: every episode runs to max_steps


# -- the stub server (child process) ----------------------------------------------------------


class Stats:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.now = 0
        self.peak = 0
        self.requests = 0
        self.area = 0.0  # integral of requests in flight over time
        self.first: float | None = None
        self.last = 0.0
        self.mark = 0.0
        self.events: list[tuple[float, int]] = []

    def change(self, d: int) -> None:
        t = time.time()
        self.events.append((t, self.now + d))
        if self.first is None:
            self.first = self.mark = t
        self.area += self.now * (t - self.mark)
        self.mark = t
        self.now += d
        self.peak = max(self.peak, self.now)
        if d < 0:
            self.last = t

    def report(self, until: float | None, level: int) -> dict[str, float]:
        span = (self.last - self.first) if self.first is not None else 0.0
        full = _full_at(self.events, level)
        first = self.first or 0.0
        return {
            "requests": self.requests,
            "peak": self.peak,
            "mean_whole": self.area / span if span > 0 else 0.0,
            "mean_full": _mean_until(self.events, until) if until else 0.0,
            "mean_steady": _mean_until(self.events, until, full) if until and full else 0.0,
            "ramp_s": (full - first) if full else float("nan"),
            "span_s": span,
        }


def _mean_until(events: list[tuple[float, int]], until: float, since: float = 0.0) -> float:
    """Time-weighted mean of the in-flight count from the first event (or ``since``, if
    later) to ``until``."""
    if not events or until <= events[0][0]:
        return 0.0
    start = max(since, events[0][0])
    if until <= start:
        return 0.0
    area, (t_prev, n_prev) = 0.0, events[0]
    for t, n in events[1:]:
        if t >= until:
            break
        if t > start:
            area += n_prev * (t - max(t_prev, start))
        t_prev, n_prev = t, n
    area += n_prev * (until - max(t_prev, start))
    return area / (until - start)


def _full_at(events: list[tuple[float, int]], level: int) -> float | None:
    """When the in-flight count first reached ``level`` (None: never)."""
    return next((t for t, n in events if n >= level), None)


async def _serve(delay: float) -> None:
    stats = Stats()
    rng = random.Random(0)
    body = json.dumps(  # a whole OpenAI chat completion (inspect_ai's client reads it all)
        {
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": 0,
            "model": "stub",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": REPLY},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 4, "total_tokens": 104},
        }
    ).encode()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                length = 0
                while True:
                    h = await reader.readline()
                    if h in (b"\r\n", b"\n", b""):
                        break
                    k, _, v = h.decode("latin-1").partition(":")
                    if k.strip().lower() == "content-length":
                        length = int(v.strip())
                if length:
                    await reader.readexactly(length)
                if line.startswith(b"GET /stats"):
                    query = dict(
                        kv.split("=", 1)
                        for kv in line.split(b" ")[1].decode().partition("?")[2].split("&")
                        if "=" in kv
                    )
                    until = float(query["until"]) if "until" in query else None
                    report = stats.report(until, int(query.get("level", "1")))
                    out = json.dumps(report).encode()
                elif line.startswith(b"GET /reset"):
                    stats.reset()
                    out = b"{}"
                else:
                    stats.requests += 1
                    stats.change(+1)
                    await asyncio.sleep(delay * rng.uniform(0.5, 1.5))
                    stats.change(-1)
                    out = body
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(out), out)
                )
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    async with server:
        await server.serve_forever()


# -- the driver -------------------------------------------------------------------------------


def _get(port: int, path: str) -> dict[str, float]:
    import httpx

    return dict(httpx.get(f"http://127.0.0.1:{port}{path}", timeout=10).json())


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _Aiohttp:
    """The backend's ``Clients.post`` through aiohttp (the ``aiohttp`` client of this
    benchmark): one session per backend and event loop, ``concurrency`` connections."""

    def __init__(self) -> None:
        self.sessions: dict[tuple[int, int], Any] = {}

    async def post(
        self, clients: Any, url: str, body: dict[str, Any], headers: dict[str, str], auth: Any
    ) -> Any:
        import aiohttp

        from statelab.llm._lean_http import Reply, capped

        key = (id(clients), id(asyncio.get_running_loop()))
        session = self.sessions.get(key)
        if session is None:
            connector = aiohttp.TCPConnector(limit=clients.n, limit_per_host=clients.n)
            timeout = aiohttp.ClientTimeout(total=clients.timeout)
            session = self.sessions[key] = aiohttp.ClientSession(
                connector=connector, timeout=timeout
            )
        u = clients.split
        full = f"http://{u.netloc.rpartition('@')[2]}{u.path.rstrip('/')}{url}"
        async with session.post(full, json=body, headers=headers) as r:
            if r.content_length is not None:
                capped(r.content_length, clients.max_body)
            content = bytearray()
            async for part in r.content.iter_any():
                capped(len(content) + len(part), clients.max_body)
                content += part
            heads = {k.lower(): v for k, v in r.headers.items()}
            return Reply(r.status, heads, bytes(content))

    async def aclose(self, clients: Any) -> None:
        for key in [k for k in self.sessions if k[0] == id(clients)]:
            await self.sessions.pop(key).close()


@contextlib.contextmanager
def _client(name: str) -> Iterator[None]:
    """``STATELAB_HTTP_CLIENT`` for httpx and lean; for aiohttp, the backend's ``post``
    (and ``aclose``) replaced by :class:`_Aiohttp`'s while the case runs."""
    if name != "aiohttp":
        os.environ["STATELAB_HTTP_CLIENT"] = name
        yield
        return
    from statelab.llm._http import Clients

    os.environ["STATELAB_HTTP_CLIENT"] = "lean"
    via = _Aiohttp()
    post, aclose = Clients.post, Clients.aclose

    async def closing(self: Any) -> None:
        await via.aclose(self)
        await aclose(self)

    Clients.post = lambda self, *a: via.post(self, *a)  # type: ignore[method-assign]
    Clients.aclose = closing  # type: ignore[method-assign]
    try:
        yield
    finally:
        Clients.post, Clients.aclose = post, aclose  # type: ignore[method-assign]


def case(
    concurrency: int,
    delay: float,
    steps: int,
    warm: bool = True,
    episodes: int = 0,
    client: str = "lean",
    ray_cpus: int = 0,
) -> dict[str, float]:
    """One run at ``concurrency`` against answers taking ``delay`` s with HTTP ``client``
    (after a one-episode warm-up run when ``warm``: imports and first-use setup are not
    per-call costs)."""
    with _client(client):
        return _case(concurrency, delay, steps, warm, episodes, client, ray_cpus)


def _case(
    concurrency: int,
    delay: float,
    steps: int,
    warm: bool,
    episodes: int,
    client: str,
    ray_cpus: int,
) -> dict[str, float]:
    if warm and not ray_cpus:
        case(1, 0.0, 2, warm=False, episodes=1, client=client)
    import statelab.run.runner as runner
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_experiment

    starts: list[float] = []
    play = runner.run_episode

    async def timed_episode(*a, **kw):  # type: ignore[no-untyped-def]
        starts.append(time.time())
        return await play(*a, **kw)

    runner.run_episode = timed_episode  # type: ignore[assignment]

    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(delay)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        with tempfile.TemporaryDirectory() as tmp:
            exp = parse_experiment(
                {
                    "name": "conc",
                    "model": f"openai-compat:http://127.0.0.1:{port}/v1#stub",
                    "expert": False,
                    "random": False,
                    "seeds": list(range(episodes or 4 * concurrency)),
                    "grid": {"env": ["hanoi"], "history": ["full"]},
                    "max_steps": steps,
                    "concurrency": concurrency,
                    "timeout": 60,
                    "out": tmp,
                    "cache": str(Path(tmp) / "cache.sqlite"),
                }
            )
            _get(port, "/reset")
            s0 = _cpu_s(server.pid)
            r0 = resource.getrusage(resource.RUSAGE_SELF)
            t0 = time.perf_counter()
            if ray_cpus:
                from statelab.run.on_ray import run_on_ray

                res = asyncio.run(run_on_ray(exp, "auto", progress=None))
                starts.append(time.time())
            else:
                res = asyncio.run(run_experiment(exp, progress=None))
            wall = time.perf_counter() - t0
            r1 = resource.getrusage(resource.RUSAGE_SELF)
            s1 = _cpu_s(server.pid)
            stats = _get(port, f"/stats?until={max(starts)}&level={concurrency}")
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        assert res.done == len(exp.seeds), res.failures[:3]
        return {
            "client": client,
            "concurrency": concurrency,
            "delay_ms": delay * 1000,
            "episodes": res.done,
            "calls": res.model_calls,
            "mean_in_flight": stats["mean_full"],
            "ratio": stats["mean_full"] / concurrency,
            "whole_ratio": stats["mean_whole"] / concurrency,
            "steady_ratio": stats["mean_steady"] / concurrency,
            "ramp_s": stats["ramp_s"],
            "server_ms_per_call": (s1 - s0) / max(1, res.model_calls) * 1000,
            "peak": stats["peak"],
            "cpu_ms_per_call": cpu / max(1, res.model_calls) * 1000,
            "wall_s": wall,
            "ideal_s": 4 * steps * delay,
            "store_s": getattr(res, "store_seconds", float("nan")),  # older statelab: none
        }
    finally:
        runner.run_episode = play  # type: ignore[assignment]
        server.terminate()
        server.wait(timeout=10)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--serve", type=float, help=argparse.SUPPRESS)
    ap.add_argument(
        "--cases",
        nargs="*",
        default=["8:0.05", "32:0.05", "128:1", "256:1"],
        help="concurrency:seconds-per-answer",
    )
    ap.add_argument("--steps", type=int, default=0, help="steps per episode (0: by case)")
    ap.add_argument(
        "--clients", default="httpx,lean,aiohttp", help="HTTP clients (httpx, lean, aiohttp)"
    )
    ap.add_argument("--json", type=Path, default=None, help="also write the rows as JSON")
    ap.add_argument("--ray", type=int, default=0, help="on a local Ray of N CPUs")
    args = ap.parse_args()
    if args.serve is not None:
        asyncio.run(_serve(args.serve))
        return
    if args.ray:
        import ray

        os.environ["STATELAB_HTTP_CLIENT"] = args.clients.split(",")[0]  # reaches the workers
        ray.init(num_cpus=args.ray, include_dashboard=False, log_to_driver=False)
    print(f"load average at start: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
    rows = []
    print(
        f"{'client':>7} {'conc':>5} {'answer':>7} {'calls':>6} {'in flight':>9} {'ratio':>6} "
        f"{'steady':>6} {'ramp s':>6} {'whole':>6} {'peak':>5} {'cpu/call':>9} {'stub/call':>9} "
        f"{'wall s':>7} {'ideal s':>7} {'store s':>7}"
    )
    for spec in args.cases:
        n, d = spec.split(":")
        delay = float(d)
        steps = args.steps or (20 if delay < 0.5 else 8)
        for client in args.clients.split(","):
            r = case(int(n), delay, steps, client=client, ray_cpus=args.ray)
            r["load_avg"] = round(os.getloadavg()[0], 1)
            rows.append(r)
            print(
                f"{client:>7} {r['concurrency']:5.0f} {r['delay_ms']:5.0f}ms {r['calls']:6.0f} "
                f"{r['mean_in_flight']:9.1f} {r['ratio']:6.2f} {r['steady_ratio']:6.2f} "
                f"{r['ramp_s']:6.2f} {r['whole_ratio']:6.2f} {r['peak']:5.0f} "
                f"{r['cpu_ms_per_call']:7.2f}ms {r['server_ms_per_call']:7.2f}ms "
                f"{r['wall_s']:7.2f} {r['ideal_s']:7.2f} {r['store_s']:7.2f}",
                flush=True,
            )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
