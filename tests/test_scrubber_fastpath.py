"""The scrubber's fast paths change what is scanned, never what is found: a secret gets the same
findings alone and inside noise that exercises each path (large text, non-ASCII characters before
it, keywords with no separator on their line, lines that hold a trigger, long runs). Inputs are
generated here."""
from __future__ import annotations

import random
import string

import pytest

from vaultrag.scrubber import engine, scrub

ALNUM = string.ascii_letters + string.digits


def secret(seed: int, n: int = 32) -> str:
    rng = random.Random(seed)
    while True:
        v = "".join(rng.choice(ALNUM) for _ in range(n))
        if any(c.isupper() for c in v) and any(c.islower() for c in v) and any(c.isdigit() for c in v):
            return v


# Noise: pytest lines (`PASSED` holds "pass" and no separator), emoji and CJK (non-ASCII copies),
# long path runs (windows), `==` and `set -` in lines without a secret, keywords in prose.
NOISE = ("tests/test_api.py::test_token_refresh PASSED                      [ 10%]\n"
         "commit 3f2a 🚀 修复 the key handling — naïve café\n"
         "/home/dev/src/Proj3ct+x/src/Module2/Sub_Dir-9/file_name_v2/deeper\n"
         "if a == b: print('no secret here')\n"
         "set -e; the password policy is documented elsewhere\n")

CASES = [
    lambda s: f'api_token = "{s}"\n',
    lambda s: f'if ("{s}" == db_password) {{ ok(); }}\n',
    lambda s: f"setx API_TOKEN {s}\n",
    lambda s: f"aws configure set aws_secret_access_key {s}\n",
    lambda s: f"curl -u admin:{s} https://example.com/api\n",
    lambda s: f"password: {s}\n",
    lambda s: f"ghp_{s[:36].ljust(36, 'Q')}\n",
    lambda s: f"config = {{'secret': '{s}'}}\n",
]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("copies", [1, 2 + engine.SELF_GATE_MIN_CHARS // len(NOISE)])
def test_a_secret_gets_the_same_findings_inside_noise(case, copies):
    value = secret(case)
    body = CASES[case](value)
    alone, alone_findings = scrub(body)
    assert value not in alone and alone_findings, body
    noise = NOISE * copies
    mixed, findings = scrub(noise + body + noise)
    assert value not in mixed
    assert mixed == noise + alone + noise
    lines = noise.count("\n")
    assert [(f.rule, f.line) for f in findings] == [(f.rule, f.line + lines) for f in alone_findings]


def test_noise_alone_is_left_unchanged():
    text = NOISE * (2 + engine.SELF_GATE_MIN_CHARS // len(NOISE))
    assert scrub(text) == (text, ())


def test_keyword_without_separator_on_its_line_still_finds_the_next_lines_value():
    """The separator check stops at the line break: `token` alone on a line, value on the next
    line under its own name."""
    value = secret(99)
    text = "token\nPASSED pass pass\nclient_secret = '%s'\n" % value
    clean, findings = scrub(text)
    assert value not in clean and [f.line for f in findings] == [3]


def test_kelvin_sign_and_dotted_capital_i_keep_offsets_right():
    """`İ` lowers to two characters (offsets shift: the slow path runs); `K` (Kelvin) lowers to
    ASCII `k`. Either way the secret after them is found where it is."""
    value = secret(7)
    for prefix in ("İstanbul İ İ\n", "\u212aey notes\n"):
        clean, findings = scrub(prefix + f'api_token = "{value}"\n')
        assert value not in clean and clean.startswith(prefix) and findings[0].line == 2


def test_every_trigger_is_planned_exactly_once():
    def flat(plan):
        for literal, is_trigger, leaves, inner in plan:
            if is_trigger:
                yield literal
            yield from leaves
            yield from flat(inner)
    plans = engine._plans()
    for triggers, plan in ((engine._SHORT_TRIGGERS, plans.short), (engine._LONG_TRIGGERS, plans.long),
                           (engine._TOKEN_TRIGGERS, plans.token + plans.slash),
                           (engine._TOKEN_ANY_TRIGGERS, plans.token_any)):
        assert sorted(flat(plan)) == sorted(triggers)


def test_switching_the_fast_paths_off_changes_nothing(monkeypatch):
    """Reference run: every rule searched over the whole text, triggers looked up in the lowered
    text itself. Same output, finding for finding."""
    import dataclasses
    texts = [NOISE * copies + case(secret(i)) + NOISE * copies
             for i, case in enumerate(CASES) for copies in (1, 40)]
    fast = [scrub(t) for t in texts]
    monkeypatch.setattr(engine, "_RULES", tuple(dataclasses.replace(r, line_needs="", one_line=False)
                                                for r in engine._RULES))
    monkeypatch.setattr(engine, "_ascii", lambda low: low)
    assert [scrub(t) for t in texts] == fast
