"""The OpenAPI 3.1 document served at /openapi.json (written by hand: the routes are few)."""
from __future__ import annotations

from ..api import MAX_K, MAX_QUERY_CHARS, MAX_TOKENS_CAP

_ERROR = {"type": "object", "required": ["code", "message"],
          "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}
_OBJ = {"type": "object"}


def _err(*codes: int) -> dict:
    text = {400: "bad input", 401: "no or unknown token", 403: "role, Host or Origin refused", 404: "not found",
            409: "a reindex is running", 413: "body too large", 415: "not JSON", 503: "no index yet or busy",
            504: "timed out"}
    return {str(c): {"description": text[c], "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
            for c in codes}


def _json(schema: dict, description: str = "ok") -> dict:
    return {"200": {"description": description, "content": {"application/json": {"schema": schema}}}}


def _body(schema: dict) -> dict:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


SEARCH = {"type": "object", "additionalProperties": False, "required": ["query"], "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS},
    "k": {"type": "integer", "minimum": 1, "maximum": MAX_K},
    "max_tokens": {"type": "integer", "minimum": 0, "maximum": MAX_TOKENS_CAP},
    "scope": {"type": "string", "minLength": 1, "examples": ["vault", "sessions", "all", "adr", "vault,adr"],
              "description": "vault, sessions, all, the name of a `scopes:` path rule, or several comma-separated"},
    "collection": {"type": "string"},
    "gate": {"type": "boolean"}}}
REINDEX = {"type": "object", "additionalProperties": False, "properties": {"full": {"type": "boolean"}}}
ANSWER = {"type": "object", "required": ["status", "reason", "query", "channels", "hits"], "properties": {
    "status": {"type": "string", "enum": ["ok", "no_evidence"]}, "reason": {"type": ["string", "null"]},
    "query": {"type": "string"}, "channels": _OBJ, "stale_files": {"type": "integer"}, "evidence": _OBJ,
    "hits": {"type": "array", "items": _OBJ}}}


def openapi_document(version: str) -> dict:
    auth = [{"bearer": []}]
    return {
        "openapi": "3.1.0",
        "info": {"title": "vaultrag", "version": version,
                 "description": "Local hybrid search over a Markdown vault. Errors are {code, message}."},
        "components": {"schemas": {"Error": _ERROR},
                       "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": auth,
        "paths": {
            "/search": {"post": {"summary": "search the vault (the `vaultrag search --json` answer)",
                                 "requestBody": _body(SEARCH),
                                 "responses": {**_json(ANSWER), **_err(400, 401, 403, 413, 415, 503, 504)}}},
            "/reindex": {"post": {"summary": "bring the index in line with the vault (maintainer)",
                                  "requestBody": {"required": False, "content": {"application/json": {"schema": REINDEX}}},
                                  "responses": {**_json(_OBJ, "the reindex report"),
                                                **_err(400, 401, 403, 409, 413, 415, 503, 504)}}},
            "/coverage": {"get": {"summary": "files in the vault vs indexed, stale files",
                                  "responses": {**_json(_OBJ), **_err(401, 403, 503, 504)}}},
            "/status": {"get": {"summary": "what the index holds (the `vaultrag status --json` object)",
                                "responses": {**_json(_OBJ), **_err(401, 403, 503, 504)}}},
            "/healthz": {"get": {"summary": "liveness", "security": [],
                                 "responses": _json({"type": "object", "required": ["ok"],
                                                     "properties": {"ok": {"type": "boolean"}}})}},
            "/hooks/{event}": {"post": {
                "summary": "a Claude Code hook: its input in, what the command hook would print out (or {})",
                "parameters": [{"name": "event", "in": "path", "required": True,
                                "schema": {"type": "string", "pattern": "^[A-Za-z]{1,40}$"}}],
                "requestBody": _body(_OBJ),
                "responses": {**_json(_OBJ), **_err(401, 403, 404)}}},
        },
    }
