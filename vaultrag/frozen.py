"""Frozen record classes for the hook path, built without the `dataclasses` module.

`@frozen` makes what `@dataclass(frozen=True)` makes (an `__init__` with the same signature and
defaults, `__repr__`, `__eq__` and `__hash__` over the compared fields, `__match_args__`, assignment
refused with `dataclasses.FrozenInstanceError`) at a fraction of the cost: one `exec` per class (its
`__init__`, on first use; the other methods are closures), no
`inspect` signature for the docstring, and no `import dataclasses`, which pulls in `inspect`, `ast`,
`dis` and `tokenize` (~5 ms quiet in a fresh process, plus ~0.3 ms per class: BENCHMARKS.md, "Issue
18: cold hook and warm query, round 2").

The records stay dataclasses to everything else: `dataclasses.fields`, `replace`, `asdict` and
`is_dataclass` work on them, because `__dataclass_fields__` is computed (importing `dataclasses`)
the first time something asks for it. Library code on the hook path uses this module's own
`field`, `fields`, `replace` and `asdict`, which never import it.
Supported: annotated fields, plain defaults, `field(default=..., default_factory=..., compare=...)`,
an optional `__post_init__`, methods the class defines itself (never overwritten), and inheritance
from another `@frozen` class. Not supported (use `dataclasses`): InitVar, ClassVar, kw_only, slots, order.
"""
from __future__ import annotations

__all__ = ["frozen", "field", "fields", "replace", "asdict", "Field"]

_MISSING = object()
# Leaf values asdict returns as they are (dataclasses.asdict deep-copies leaves; these copy to themselves).
_ATOMIC = (str, int, float, bool, bytes, type(None), complex)


class Field:
    """One field of a frozen record: name, annotation (a string under `from __future__ import
    annotations`), default or default_factory, and whether it takes part in ==/hash."""

    __slots__ = ("name", "type", "default", "default_factory", "compare")

    def __init__(self, default=_MISSING, default_factory=_MISSING, compare: bool = True) -> None:
        if default is not _MISSING and default_factory is not _MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.type: object = None
        self.default = default
        self.default_factory = default_factory
        self.compare = compare

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, type={self.type!r}, compare={self.compare})"


def field(*, default=_MISSING, default_factory=_MISSING, compare: bool = True):
    """Like `dataclasses.field` for the options frozen records support."""
    return Field(default, default_factory, compare)


class _DataclassFields:
    """`__dataclass_fields__` on first use: the real dataclass Field objects, made by decorating a
    stand-in class with the same fields, then stored on the class in place of this descriptor."""

    def __get__(self, obj, owner):
        import dataclasses

        ns: dict = {"__annotations__": {f.name: f.type for f in owner.__vr_fields__}}
        for f in owner.__vr_fields__:
            if f.default_factory is not _MISSING:
                ns[f.name] = dataclasses.field(default_factory=f.default_factory, compare=f.compare)
            elif f.default is not _MISSING or not f.compare:
                ns[f.name] = dataclasses.field(default=f.default if f.default is not _MISSING else dataclasses.MISSING,
                                               compare=f.compare)
        stand_in = dataclasses.dataclass(frozen=True)(type(owner.__name__, (), ns))
        found = stand_in.__dataclass_fields__
        type.__setattr__(owner, "__dataclass_fields__", found)
        type.__setattr__(owner, "__dataclass_params__", stand_in.__dataclass_params__)
        return found


def _frozen_setattr(self, name, value):
    import dataclasses

    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self, name):
    import dataclasses

    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _collect(cls) -> list[Field]:
    found: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for f in base.__dict__.get("__vr_fields__", ()):
            found[f.name] = f
    for name, typ in cls.__dict__.get("__annotations__", {}).items():
        value = cls.__dict__.get(name, _MISSING)
        f = value if isinstance(value, Field) else Field(default=value)
        f.name, f.type = name, typ
        if isinstance(value, Field):  # the class attribute becomes the default, as dataclasses does
            if f.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
        found[name] = f
    seen_default = False
    for f in found.values():
        has_default = f.default is not _MISSING or f.default_factory is not _MISSING
        if seen_default and not has_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
        seen_default = seen_default or has_default
    return list(found.values())


def _init_source(flds: list[Field], post_init: bool) -> tuple[str, dict]:
    """Source of `__init__` for fields `flds`, and the globals it needs."""
    env: dict = {"_MISSING": _MISSING}
    params, body = [], []
    for f in flds:
        if f.default_factory is not _MISSING:
            env[f"_factory_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_MISSING")
            body.append(f"    _d[{f.name!r}] = _factory_{f.name}() if {f.name} is _MISSING else {f.name}")
        else:
            if f.default is not _MISSING:
                env[f"_default_{f.name}"] = f.default
                params.append(f"{f.name}=_default_{f.name}")
            else:
                params.append(f.name)
            body.append(f"    _d[{f.name!r}] = {f.name}")
    if post_init:
        body.append("    self.__post_init__()")
    src = f"def __init__(self, {', '.join(params)}):\n    _d = self.__dict__\n" + "\n".join(body or ["    pass"]) + "\n"
    return src, env


def _compared(flds: list[Field]):
    """A function giving the tuple of the compared fields of a record (what dataclasses compares and hashes)."""
    names = tuple(f.name for f in flds if f.compare)
    if len(names) > 1:
        from operator import attrgetter

        return attrgetter(*names)  # a tuple, built in C
    if names:
        name = names[0]
        return lambda self: (getattr(self, name),)
    return lambda self: ()


def _generic(flds: list[Field], name: str):
    """`__repr__`, `__eq__` or `__hash__` as closures over the field names: nothing to compile."""
    if name == "__repr__":
        names = tuple(f.name for f in flds)

        def __repr__(self):
            return f"{self.__class__.__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in names)})"
        return __repr__
    key = _compared(flds)
    if name == "__eq__":
        def __eq__(self, other):
            if other.__class__ is self.__class__:
                return key(self) == key(other)
            return NotImplemented
        return __eq__

    def __hash__(self):
        return hash(key(self))
    return __hash__


_METHODS = ("__init__", "__repr__", "__eq__", "__hash__")


def _install(cls, name: str) -> None:
    """Put `cls`'s generated method `name` in place of its stub (once per class and method). Only
    `__init__` is compiled (one `exec`; issue 18: compiling all four cost a fresh hook ~9 ms CPU
    under load for its 13 record classes, most of it for methods a hook never calls)."""
    flds = list(cls.__vr_fields__)
    if name == "__init__":
        src, env = _init_source(flds, hasattr(cls, "__post_init__"))
        exec(src, env)  # noqa: S102 - the source is built from the class's own field names
        fn = env[name]
    else:
        fn = _generic(flds, name)
    fn.__qualname__ = f"{cls.__qualname__}.{name}"
    fn.__module__ = cls.__module__
    type.__setattr__(cls, name, fn)


def _stub(cls, name: str):
    """Stands in for a generated method until first called: a record class a process never
    instantiates (most of the write side, in a hook) never pays for compiling its methods."""
    def method(self, *args, **kwargs):
        if cls.__dict__.get(name) is method:
            _install(cls, name)
        return cls.__dict__[name](self, *args, **kwargs)
    method.__name__, method.__qualname__, method.__module__ = name, f"{cls.__qualname__}.{name}", cls.__module__
    return method


def frozen(cls):
    """Class decorator: a frozen record, like `@dataclass(frozen=True)` (see the module docstring).

    The generated methods are compiled when one of them is first called (one `exec` per class), so
    `inspect.signature(cls)` shows the field parameters only once the class has been used."""
    cls.__vr_fields__ = tuple(_collect(cls))
    cls.__vr_generated__ = tuple(n for n in _METHODS if n in ("__init__", "__hash__") or n not in cls.__dict__)
    for name in cls.__vr_generated__:
        setattr(cls, name, _stub(cls, name))
    cls.__setattr__ = _frozen_setattr
    cls.__delattr__ = _frozen_delattr
    cls.__match_args__ = tuple(f.name for f in cls.__vr_fields__)
    cls.__dataclass_fields__ = _DataclassFields()
    return cls


def fields(record_or_class) -> tuple[Field, ...]:
    """The fields of a frozen record class or instance, in order."""
    cls = record_or_class if isinstance(record_or_class, type) else type(record_or_class)
    try:
        return cls.__vr_fields__
    except AttributeError:
        raise TypeError(f"{cls.__name__} is not a frozen record") from None


def replace(record, **changes):
    """A copy of `record` with `changes` (like `dataclasses.replace`)."""
    d = record.__dict__
    for f in fields(record):
        if f.name not in changes:
            changes[f.name] = d[f.name]
    return record.__class__(**changes)


def asdict(record) -> dict:
    """`record` as a dict, nested records, lists, tuples and dicts converted too (like `dataclasses.asdict`)."""
    return _asdict(record)


def _asdict(value):
    if isinstance(value, _ATOMIC):
        return value
    if hasattr(type(value), "__vr_fields__"):
        d = value.__dict__
        return {f.name: _asdict(d[f.name]) for f in type(value).__vr_fields__}
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple: rebuilt field by field
        return type(value)(*[_asdict(v) for v in value])
    if isinstance(value, (list, tuple)):
        return type(value)(_asdict(v) for v in value)
    if isinstance(value, dict):
        return type(value)((_asdict(k), _asdict(v)) for k, v in value.items())
    import copy

    return copy.deepcopy(value)
