"""A property-based fuzz of the HTTP API against its own /openapi.json (schemathesis): whatever
the body, path or header, the server answers with a JSON error or a result, never a 500."""
from __future__ import annotations

import pytest

schemathesis = pytest.importorskip("schemathesis")
pytest.importorskip("starlette")

from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.generation.modes import GenerationMode  # noqa: E402

from vaultrag import api  # noqa: E402
from vaultrag.serve import auth, tokens  # noqa: E402
from vaultrag.serve.app import build_app  # noqa: E402
from vaultrag.serve.mcp_server import build_mcp, http_app  # noqa: E402

HOST = {"Host": "127.0.0.1:8765"}


@pytest.fixture
def state(vault, cfg_for, tmp_path, monkeypatch):
    from vaultrag import embedder

    monkeypatch.setattr(embedder, "load_embedder", embedder.load_embedder)  # undone after the test
    cfg = cfg_for(vault)
    api.reindex(cfg)
    svc = api.Service(cfg)
    svc.keep_embedder_loaded()  # fuzzed /reindex calls reuse one model, as in `vaultrag serve`
    token, _ = tokens.create_token("maintainer", path=tmp_path / "tokens.json")
    app = build_app(svc, auth.Policy(bind_host="127.0.0.1", token_file=tmp_path / "tokens.json"),
                    mcp_app=http_app(build_mcp(svc)))
    yield app, token
    svc.close()


def test_no_input_makes_a_server_error(state):
    app, token = state
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, headers=HOST)
    operations = [op.ok() for op in schema.get_all_operations()]
    assert len(operations) == 6  # every route in the document
    seen: dict[int, int] = {}
    for op, mode in ((op, mode) for op in operations for mode in GenerationMode):
        @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(case=op.as_strategy(generation_mode=mode))
        def fuzz(case):
            response = case.call(headers={**HOST, "Authorization": f"Bearer {token}"})
            seen[response.status_code] = seen.get(response.status_code, 0) + 1
            case.validate_response(response, checks=[not_a_server_error])
            assert response.status_code < 500 or response.status_code in (503, 504), (case.path, response.text)
            if response.status_code >= 400:
                body = response.json()
                assert set(body) == {"code", "message"} and body["message"], body

        try:
            fuzz()
        except Unsatisfiable:  # no input to get wrong (GET /status, /coverage, /healthz)
            assert mode == GenerationMode.NEGATIVE and op.method == "get", op.label
    assert seen.get(200) and seen.get(400), seen  # both valid and invalid input reached the handlers
