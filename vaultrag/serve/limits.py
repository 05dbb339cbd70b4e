"""What keeps `vaultrag serve` answering under hostile or many clients: slow clients are dropped,
open connections are capped, and requests in flight (not connections) are limited.

uvicorn closes an idle connection only after a response (its keep-alive timeout): a connection
that never completes its request headers (slow loris) was held for ever, and it counted against
`limit_concurrency`, which counts open connections: 80 such connections to `vaultrag serve`, or a
burst of 120 clients at once (every one of 240 searches answered 503), made it answer 503 to
everyone, the hooks on its Unix socket included. Here a connection gets HEADER_TIMEOUT_S to
deliver each request's headers and a request BODY_TIMEOUT_S to deliver its body (every route,
/mcp included), past which it is answered 408 and closed; at most MAX_OPEN_CONNECTIONS are open
(more are closed at once); at most MAX_IN_FLIGHT requests are served at once, more get 503 at
once (bounded memory, no pile-up), and idle connections do not count.
"""
from __future__ import annotations

import anyio
import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

MAX_IN_FLIGHT = 64  # requests served at once (8 searchers are the load test; hooks take ~10 ms each)
MAX_OPEN_CONNECTIONS = 512  # open connections, idle ones included (file descriptors: the default limit is 1024)
# A request's headers arrive in one packet from any real client (the hook forwarder writes them in
# one sendall); 10 s is generous for a slow network and still frees a connection slot quickly.
HEADER_TIMEOUT_S = 10.0
# A body of the largest size accepted (a 32 MB PostToolUse) takes well under a second on the
# Unix socket; a remote client on a slow link gets this long.
BODY_TIMEOUT_S = 30.0
_BODY = b'{"code":"request_timeout","message":"the request headers did not arrive in time"}'
_TIMED_OUT = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
              b"content-length: %d\r\n\r\n%s" % (len(_BODY), _BODY))


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on every request's headers."""

    _header_timer = None

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > MAX_OPEN_CONNECTIONS:
            transport.close()  # connection_lost forgets it
            return
        self._watch()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def connection_lost(self, exc) -> None:
        self._stop()
        super().connection_lost(exc)

    def _watch(self) -> None:
        """A timer runs while the connection waits for a request's headers, none while one is served."""
        waiting = self.conn.their_state is h11.IDLE and (self.cycle is None or self.cycle.response_complete)
        if waiting and self._header_timer is None and not self.transport.is_closing():
            self._header_timer = self.loop.call_later(HEADER_TIMEOUT_S, self._too_slow)
        elif not waiting:
            self._stop()

    def _stop(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.write(_TIMED_OUT)
            self.transport.close()


class BodyDeadline:
    """ASGI middleware: a request whose body has not fully arrived BODY_TIMEOUT_S after it started
    reads as a client disconnect (the app's body read then fails: 408 from our routes)."""

    def __init__(self, app, timeout: float = BODY_TIMEOUT_S):
        self.app = app
        self.timeout = timeout

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        deadline = anyio.current_time() + self.timeout
        done = False

        async def guarded():
            nonlocal done
            if done:  # the body is in: what follows is the wait for a disconnect, no deadline
                return await receive()
            with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
                message = await receive()
                if message["type"] != "http.request" or not message.get("more_body"):
                    done = True
                return message
            scope["vaultrag.body_timeout"] = True
            return {"type": "http.disconnect"}

        await self.app(scope, guarded, send)


class InFlightLimit:
    """ASGI middleware: at most `limit` HTTP requests served at once; more are answered 503 at once."""

    def __init__(self, app, limit: int = MAX_IN_FLIGHT):
        self.app = app
        self.limit = limit
        self.active = 0  # the event loop's thread only

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if self.active >= self.limit:
            body = b'{"code":"busy","message":"too many requests at once; retry shortly"}'
            await send({"type": "http.response.start", "status": 503,
                        "headers": [(b"content-type", b"application/json"), (b"retry-after", b"1"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        self.active += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.active -= 1
