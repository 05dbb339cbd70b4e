"""vaultrag.frozen: records that behave like frozen dataclasses without importing `dataclasses` (issue 18)."""
from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import subprocess
import sys

import pytest

from vaultrag import frozen as fz


def _pair():
    """The same class declared twice: once as a frozen dataclass, once as a frozen record."""
    def body(decorate, fld):
        @decorate
        class Rec:
            """A record."""
            a: int
            b: str = "x"
            c: dict = fld(default_factory=dict)
            d: tuple[str, ...] = ()
            e: float | None = fld(default=None, compare=False)

            def doubled(self) -> int:
                return self.a * 2

            def __str__(self) -> str:
                return f"<{self.a}>"
        return Rec
    return body(dataclasses.dataclass(frozen=True), dataclasses.field), body(fz.frozen, fz.field)


def test_record_behaves_like_the_frozen_dataclass():
    dc, rec = _pair()
    assert rec(0).a == 0  # the first call compiles the generated methods
    assert list(inspect.signature(dc).parameters) == list(inspect.signature(rec).parameters)
    for args, kw in [((1,), {}), ((2, "y"), {"c": {"k": [1]}}), ((3,), {"e": 1.5, "d": ("p", "q")})]:
        x, y = dc(*args, **kw), rec(*args, **kw)
        assert repr(x).replace("test_record_behaves_like_the_frozen_dataclass.", "") == \
            repr(y).replace("test_record_behaves_like_the_frozen_dataclass.", "")
        assert dataclasses.asdict(x) == fz.asdict(y) == dataclasses.asdict(y)
        assert str(y) == str(x) and y.doubled() == x.doubled()
        assert y.__match_args__ == x.__match_args__
    assert rec(1).c == {} and rec(1).c is not rec(1).c  # a fresh default per instance
    assert rec(1, e=1.0) == rec(1, e=2.0) and rec(1) != rec(2) and rec(1) != "rec"  # e is not compared
    assert hash(rec(1, c=(), d=("a",))) == hash(rec(1, c=(), d=("a",), e=9.0)) == hash(dc(1, c=(), d=("a",)))
    with pytest.raises(TypeError):  # a dict field, as with the dataclass
        hash(rec(1))
    with pytest.raises(TypeError):
        rec()
    with pytest.raises(TypeError):
        rec(1, zzz=2)
    assert rec.b == "x" and rec.e is None and "c" not in rec.__dict__


def test_record_is_immutable_with_the_dataclass_error():
    _, rec = _pair()
    r = rec(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.a = 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        del r.b
    with pytest.raises(AttributeError):
        r.new_attribute = 1
    assert r.a == 1


def test_dataclasses_functions_work_on_records():
    _, rec = _pair()
    r = rec(1, "y", {"k": 1}, ("t",), 0.5)
    assert dataclasses.is_dataclass(r) and dataclasses.is_dataclass(rec)
    assert [f.name for f in dataclasses.fields(r)] == [f.name for f in fz.fields(rec)] == list("abcde")
    assert [f.compare for f in dataclasses.fields(rec)] == [True, True, True, True, False]
    for changed in (dataclasses.replace(r, b="z"), fz.replace(r, b="z")):
        assert changed == rec(1, "z", {"k": 1}, ("t",)) and changed.e == 0.5 and r.b == "y"
    assert fz.asdict(r) == {"a": 1, "b": "y", "c": {"k": 1}, "d": ("t",), "e": 0.5}
    from vaultrag.retrieve.types import ChannelStatus

    cs = ChannelStatus(True, 2, "pruned")
    assert pickle.loads(pickle.dumps(cs)) == cs and copy.deepcopy(r) == r and copy.copy(r) == r
    with pytest.raises(TypeError):
        fz.fields(object())


def test_nested_records_and_inheritance():
    @fz.frozen
    class Inner:
        v: int

    @fz.frozen
    class Outer:
        inner: Inner
        items: tuple = ()
        more: list = fz.field(default_factory=list)

    @fz.frozen
    class Sub(Outer):
        extra: str = "s"

    o = Sub(Inner(1), (Inner(2),), [Inner(3)])
    assert fz.asdict(o) == dataclasses.asdict(o) == {"inner": {"v": 1}, "items": ({"v": 2},), "more": [{"v": 3}],
                                                     "extra": "s"}
    assert [f.name for f in fz.fields(Sub)] == ["inner", "items", "more", "extra"]
    with pytest.raises(TypeError):
        @fz.frozen
        class Bad:
            a: int = 0
            b: int


def test_methods_compile_on_first_use_of_any():
    _, rec = _pair()
    assert rec.__init__.__code__.co_varnames[:3] == ("self", "args", "kwargs")  # still the stub
    a, b = rec(1, c=()), rec(1, c=())
    assert "_d" in rec.__init__.__code__.co_varnames and hash(a) == hash(b) and a == b
    _, rec2 = _pair()
    r = object.__new__(rec2)
    object.__setattr__(r, "__dict__", {"a": 5, "b": "x", "c": (), "d": (), "e": None})
    assert r == rec2(5, c=()) and "a=5" in repr(r)  # __eq__ first: compiles all of them


def test_post_init_runs():
    seen = []

    @fz.frozen
    class P:
        a: int

        def __post_init__(self):
            seen.append(self.a)
            if self.a < 0:
                raise ValueError("negative")

    P(3)
    assert seen == [3]
    with pytest.raises(ValueError):
        P(-1)


def test_hook_path_records_do_not_import_dataclasses():
    code = ("import sys\nimport vaultrag.config, vaultrag.hook_input, vaultrag.store.base, vaultrag.retrieve.pipeline\n"
            "import vaultrag.retrieve.inject, vaultrag.retrieve.budget, vaultrag.session_memory\n"
            "from vaultrag.retrieve.types import Hit, Answer, ChannelStatus\n"
            "a = Answer('ok', None, 'q', {'bm25': ChannelStatus(True, 2)}, 0, ())\n"
            "d = a.to_dict()\n"
            "print(sorted(m for m in ('dataclasses', 'inspect', 'ast', 'dis') if m in sys.modules), d['channels'])\n")
    p = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[] {'bm25': {'ran': True, 'hits': 2, 'reason': None}}"
