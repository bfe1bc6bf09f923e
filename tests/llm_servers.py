"""A counting, fault-injecting loopback proxy to put in front of a real OpenAI-compatible server."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class JsonHandler(BaseHTTPRequestHandler):
    """A quiet request handler that answers with JSON bodies."""

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class LoopbackServer:
    """A threaded HTTP server on a free loopback port (``base_url``), serving while used as a context manager."""

    def _serve(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class CountingProxy(LoopbackServer):
    """Forwards ``/v1/*`` to ``upstream``; counts answered requests by body hash; injects scripted faults.

    ``faults`` is consumed one entry per incoming request: ``None`` (forward), ``429``/``500`` (answer
    that status), ``"timeout"`` (hold the request for ``delay`` seconds, then drop it) or
    ``"malformed"`` (forward, then replace the message content with text that is not JSON).
    ``on_request(n)`` runs before request number ``n`` (1-based) is handled; when it returns True the
    request is dropped unanswered (as if the client had died before sending it).
    """

    def __init__(self, upstream: str, delay: float = 3.0) -> None:
        self.upstream = upstream.rstrip("/")
        self.delay = delay
        self.faults: list[object] = []
        self.on_request: Callable[[int], bool] | None = None
        self.requests = 0
        self.answered: Counter[str] = Counter()  # body hash -> times answered with upstream 200
        self.authorization: set[str] = set()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._in_flight = 0  # requests being handled: reset() waits for them, so none is counted in the next test
        proxy = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                with urllib.request.urlopen(proxy.upstream + self.path.removeprefix("/v1")) as response:
                    self._send(response.status, response.read())

            def do_POST(self) -> None:
                with proxy._lock:
                    proxy._in_flight += 1
                try:
                    self._forward()
                finally:
                    with proxy._idle:
                        proxy._in_flight -= 1
                        proxy._idle.notify_all()

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with proxy._lock:
                    proxy.requests += 1
                    number = proxy.requests
                    fault = proxy.faults.pop(0) if proxy.faults else None
                    proxy.authorization.add(self.headers.get("Authorization", ""))
                if proxy.on_request is not None and proxy.on_request(number):
                    self.close_connection = True
                    return
                if fault in (429, 500):
                    self._send(fault, json.dumps({"error": {"message": "injected", "code": fault}}).encode())
                    return
                if fault == "timeout":
                    time.sleep(proxy.delay)
                    self.close_connection = True
                    return
                request = urllib.request.Request(proxy.upstream + self.path.removeprefix("/v1"), data=body,
                                                 headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(request) as response:
                        status, payload = response.status, response.read()
                except urllib.error.HTTPError as error:
                    status, payload = error.code, error.read()
                if status == 200:
                    with proxy._lock:
                        proxy.answered[hashlib.sha256(body).hexdigest()] += 1
                    if fault == "malformed":
                        data = json.loads(payload)
                        data["choices"][0]["message"]["content"] = "Sure! Here is {not json"
                        payload = json.dumps(data).encode()
                self._send(status, payload)

        self._serve(Handler)

    def reset(self, wait: float = 120.0) -> None:
        """Forget everything counted, once the requests still being handled (a client gave up on them) are done."""
        with self._idle:
            self._idle.wait_for(lambda: self._in_flight == 0, timeout=wait)
            self.requests = 0
            self.answered.clear()
            self.faults.clear()
            self.on_request = None


def kill_at(process_id: Callable[[], int | None], request_number: int) -> Callable[[int], bool]:
    """An ``on_request`` hook that SIGKILLs a process when request ``request_number`` arrives (and drops
    that request)."""
    def hook(number: int) -> bool:
        pid = process_id()
        if number == request_number and pid is not None:
            os.kill(pid, signal.SIGKILL)
            return True
        return False
    return hook
