"""A scripted stand-in for the Anthropic Messages API on 127.0.0.1, for driving the real Claude Code
CLI (`claude -p`) in tests: it records every request body (what the model would receive) and
answers from a script, streaming Server-Sent Events the way the real API does.

    with StandIn(script) as api:          # script(request_body) -> list of content blocks + stop reason
        env["ANTHROPIC_BASE_URL"] = api.url
        ... run claude -p ...
    api.requests                           # [(path, body dict)], in arrival order
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


@dataclass(frozen=True)
class Reply:
    """What the stand-in model answers: content blocks (text / tool_use dicts) and a stop reason."""
    content: tuple[dict, ...]
    stop_reason: str = "end_turn"


def text(s: str) -> Reply:
    return Reply(({"type": "text", "text": s},))


def tool_use(tool_id: str, name: str, tool_input: dict) -> Reply:
    return Reply(({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input},), "tool_use")


def _sse(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def stream_events(reply: Reply, model: str, msg_id: str) -> list[bytes]:
    """The SSE frames of one streamed message (message_start ... message_stop)."""
    usage = {"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    frames = [_sse("message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": usage}})]
    for i, block in enumerate(reply.content):
        if block["type"] == "text":
            frames.append(_sse("content_block_start", {"type": "content_block_start", "index": i,
                                                       "content_block": {"type": "text", "text": ""}}))
            frames.append(_sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "text_delta", "text": block["text"]}}))
        else:
            frames.append(_sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}))
            frames.append(_sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(block["input"])}}))
        frames.append(_sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    frames.append(_sse("message_delta", {"type": "message_delta",
                                         "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                                         "usage": {"output_tokens": 20}}))
    frames.append(_sse("message_stop", {"type": "message_stop"}))
    return frames


@dataclass
class StandIn:
    script: Callable[[dict], Reply]
    requests: list[tuple[str, dict]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def __enter__(self) -> "StandIn":
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _send(self, code: int, body: bytes, ctype: str = "application/json") -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("request-id", f"req_standin_{len(standin.requests)}")
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self._send(200, b"{}")

            def do_HEAD(self):
                self._send(200, b"")

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                standin.requests.append((self.path, body))
                path = self.path.split("?")[0]
                if path.endswith("/count_tokens"):
                    return self._send(200, json.dumps({"input_tokens": 100}).encode())
                if not path.endswith("/v1/messages"):
                    return self._send(200, b"{}")
                try:
                    reply = standin.script(body)
                except Exception as exc:  # a broken script must not hang the client
                    standin.errors.append(f"{type(exc).__name__}: {exc}")
                    reply = text(f"stand-in script error: {exc}")
                model = body.get("model", "claude-standin")
                msg_id = f"msg_standin_{len(standin.requests)}"
                if not body.get("stream"):
                    return self._send(200, json.dumps({
                        "id": msg_id, "type": "message", "role": "assistant", "model": model,
                        "content": list(reply.content), "stop_reason": reply.stop_reason, "stop_sequence": None,
                        "usage": {"input_tokens": 100, "output_tokens": 20}}).encode())
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for frame in stream_events(reply, model, msg_id):
                    self.wfile.write(frame)
                    self.wfile.flush()
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"


def tool_results(body: dict) -> dict[str, dict]:
    """tool_use_id -> the tool_result block, over every message of a request."""
    out = {}
    for msg in body.get("messages") or ():
        content = msg.get("content")
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                out[block.get("tool_use_id")] = block
    return out


def block_text(block) -> str:
    """The text of a content block or of a tool_result's content (a string or a list of blocks)."""
    if isinstance(block, str):
        return block
    if isinstance(block, list):
        return "".join(block_text(b) for b in block)
    if isinstance(block, dict):
        if block.get("type") == "text":
            return block.get("text", "")
        if "content" in block:
            return block_text(block["content"])
    return ""


def message_text(body: dict) -> str:
    """Every text the request carries in its messages (system reminders included), joined."""
    return "\n".join(block_text(m.get("content")) for m in body.get("messages") or ())
