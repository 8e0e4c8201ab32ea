"""One key's node instances, copied from a compiled program's template instead of built.

Building a key's nodes the long way (:meth:`Wiring.start <reasoner.runtime.wiring.Wiring.start>`)
compiles its condition goals, writes and compiles probe, head and dispatcher source, and fuses
the dispatchers: work that depends on the program only. A compiled program does it once, into
a template wiring that never sees an event (:class:`Template`), and works out once how to
copy the template's object graph (:class:`Plan`); each key's nodes are such a copy: new node
instances with empty state, every generated function rebound to them as
``FunctionType(code, globals of this key)`` with the code compiled for the template. The
copies run exactly the code the template would: no indirection is added.

What is copied and what is shared follows from the classes: the objects of
``reasoner.runtime`` classes (nodes, stores, windows: the state) are copied, except frozen
dataclasses; so are the mutable containers (lists, dicts, sets, deques) and generated
functions they reach, and the tuples, bound methods, partials and closures that hold copied
objects. Everything else (goals, knowledge, compiled specs, values, classes, plain functions)
belongs to the program and is shared.
"""

from __future__ import annotations

import builtins
from collections import deque
from collections.abc import Callable, Sequence
from functools import partial
from types import BuiltinMethodType, CellType, FunctionType, MethodType, MethodWrapperType
from typing import TYPE_CHECKING, Any

from reasoner.errors import ReasonerError
from reasoner.knowledge.actions import actions as action_table
from reasoner.runtime.generated import define, generated_source

if TYPE_CHECKING:
    from reasoner.runtime.program import CompiledProgram
    from reasoner.runtime.wiring import Wiring

#: Types whose values are shared as they are (immutable, or not state).
_SHARED = frozenset({int, float, str, bool, type(None), bytes, complex, frozenset, range, type})


class Plan:
    """How to copy one object graph for a key (see the module's docstring), worked out once.

    A plan numbers the objects a key copies (the ``seeds`` first: template objects every key
    replaces with its own) and writes one generated function making them: first the mutable
    ones, empty (objects, containers, generated functions and their globals); then the
    immutable ones holding them (tuples, bound methods, partials, closures), parts first;
    then what the mutable ones hold. A copy is one call of it, with the key's seeds.

    Args:
        seeds: template objects each key brings its own of (in :meth:`copy`'s order).
        roots: the template objects whose copies :meth:`copy` returns.

    >>> from reasoner.runtime.policies import Store
    >>> store = Store()
    >>> plan = Plan([], [[store, store, (1, "a")]])
    >>> [copied] = plan.copy([])
    >>> copied[0] is copied[1], copied[0] is store, copied[2]
    (True, False, (1, 'a'))
    """

    def __init__(self, seeds: Sequence[Any], roots: Sequence[Any]) -> None:
        self._index: dict[int, str] = {id(seed): f"o{i}" for i, seed in enumerate(seeds)}
        self._shared: dict[int, str] = {}
        self._size = len(seeds)
        self._held = (seeds, roots)  # (ids stay valid while the template lives)
        self._scope: dict[str, Any] = {
            "new": object.__new__,
            "function": FunctionType,
            "method": MethodType,
            "partial": partial,
            "closure": _closure,
            "deque": deque,
        }
        self._shells: list[str] = []  # the lines making the mutable objects, empty
        self._builds: list[str] = []  # the lines making the immutable ones, parts first
        self._fills: list[str] = []  # the lines filling the mutable ones
        self._recorders: dict[type, Callable[[Any], str | None]] = {
            FunctionType: self._function,
            MethodType: self._method,
            BuiltinMethodType: self._builtin_method,
            MethodWrapperType: self._builtin_method,
            partial: self._partial,
            tuple: self._tuple,
            list: self._list,
            dict: self._dict,
            set: self._set,
            deque: self._deque,
        }
        self._constant(builtins.__dict__)  # (what exec gives generated globals)
        results = ", ".join(self._ref(root) for root in roots)
        unpack = "".join(f"o{i}, " for i in range(len(seeds)))
        lines = [f"    {unpack}= seeds"] if seeds else []
        lines += [f"    {line}" for line in (*self._shells, *self._builds, *self._fills)]
        source = "def copy(seeds):\n" + "".join(f"{line}\n" for line in lines)
        self._copy = define(source + f"    return [{results}]\n", "copy plan", self._scope)
        self._shells = self._builds = self._fills = []

    def copy(self, seeds: Sequence[Any]) -> list[Any]:
        """The copies of the roots, bound to ``seeds`` (in the order the plan's were given)."""
        copied: list[Any] = self._copy(seeds)
        return copied

    def _new(self, value: Any) -> str:
        name = self._index[id(value)] = f"o{self._size}"
        self._size += 1
        return name

    def _constant(self, value: Any) -> str:
        """The name of a value every key shares."""
        name = self._shared.get(id(value))
        if name is None:
            name = self._shared[id(value)] = f"k{len(self._shared)}"
            self._scope[name] = value
        return name

    def _ref(self, value: Any) -> str:
        """The name of ``value``'s copy in the generated code (a constant when shared)."""
        key = id(value)
        found = self._index.get(key) or self._shared.get(key)
        if found is not None:
            return found
        kind = type(value)
        copied = None
        if kind not in _SHARED:
            recorder = self._recorders.get(kind)
            if recorder is not None:
                copied = recorder(value)
            elif _is_state(kind):
                copied = self._object(value, kind)
        return self._constant(value) if copied is None else copied

    def _refs(self, values: Any) -> tuple[list[str], bool]:
        """The names of ``values``' copies, and whether any of them is copied."""
        names = [self._ref(value) for value in values]
        return names, any(name[0] == "o" for name in names)

    def _object(self, value: Any, kind: type) -> str:
        name = self._new(value)
        self._shells.append(f"{name} = new({self._constant(kind)})")
        fields = []
        for slot in _slots(kind):
            try:
                fields.append((slot, getattr(value, slot)))
            except AttributeError:  # (an unset slot)
                continue
        fields += list(getattr(value, "__dict__", {}).items())
        for field, item in fields:
            self._fills.append(f"setattr({name}, {field!r}, {self._ref(item)})")
        return name

    def _function(self, function: FunctionType) -> str | None:
        if generated_source(function) is None:
            return self._closure(function)
        namespace = self._new(function.__globals__)
        self._shells.append(f"{namespace} = {{}}")
        name = self._new(function)
        code, label, defaults = (
            self._constant(x) for x in (function.__code__, function.__name__, function.__defaults__)
        )
        self._shells.append(f"{name} = function({code}, {namespace}, {label}, {defaults})")
        shared = {}
        for key, item in function.__globals__.items():
            ref = self._ref(item)
            if ref[0] == "o":
                self._fills.append(f"{namespace}[{key!r}] = {ref}")
            else:
                shared[key] = item
        self._fills.append(f"{namespace}.update({self._constant(shared)})")
        return name

    def _closure(self, function: FunctionType) -> str | None:
        try:
            contents = [cell.cell_contents for cell in function.__closure__ or ()]
        except ValueError:  # (an empty cell)
            return None
        names, copied = self._refs(contents)
        if not copied:
            return None
        name = self._new(function)
        cells = "".join(f"{n}, " for n in names)
        self._builds.append(f"{name} = closure({self._constant(function)}, ({cells}))")
        return name

    def _tuple(self, value: tuple[Any, ...]) -> str | None:
        names, copied = self._refs(value)
        if not copied:
            return None
        name = self._new(value)
        self._builds.append(f"{name} = ({''.join(f'{n}, ' for n in names)})")
        return name

    def _method(self, method: MethodType) -> str | None:
        owner = self._ref(method.__self__)
        if owner[0] != "o":
            return None
        name = self._new(method)
        self._builds.append(f"{name} = method({self._constant(method.__func__)}, {owner})")
        return name

    def _builtin_method(self, method: Any) -> str | None:
        # a C method (list.append, deque.append ...) of a copied container: the copy's
        owner = self._ref(method.__self__)
        if owner[0] != "o":
            return None
        name = self._new(method)
        self._builds.append(f"{name} = getattr({owner}, {method.__name__!r})")
        return name

    def _partial(self, value: partial[Any]) -> str | None:
        keywords = list(value.keywords.items())
        names, copied = self._refs([value.func, *value.args, *(v for _, v in keywords)])
        if not copied:
            return None
        arguments = names[: 1 + len(value.args)]
        arguments += [
            f"{k}={n}" for (k, _), n in zip(keywords, names[len(arguments) :], strict=True)
        ]
        name = self._new(value)
        self._builds.append(f"{name} = partial({', '.join(arguments)})")
        return name

    def _list(self, value: list[Any]) -> str:
        return self._container(value, "[]", "extend")

    def _set(self, value: set[Any]) -> str:
        return self._container(value, "set()", "update")

    def _deque(self, value: deque[Any]) -> str:
        return self._container(value, f"deque(maxlen={value.maxlen})", "extend")

    def _container(self, value: Any, empty: str, add: str) -> str:
        name = self._new(value)
        self._shells.append(f"{name} = {empty}")
        if value:
            items, _ = self._refs(value)
            self._fills.append(f"{name}.{add}(({''.join(f'{n}, ' for n in items)}))")
        return name

    def _dict(self, value: dict[Any, Any]) -> str:
        name = self._new(value)
        self._shells.append(f"{name} = {{}}")
        for key, item in value.items():  # (in order: dicts iterate in it)
            self._fills.append(f"{name}[{self._ref(key)}] = {self._ref(item)}")
        return name


def _closure(function: FunctionType, contents: tuple[Any, ...]) -> FunctionType:
    """``function`` with cells holding ``contents``."""
    cells = tuple(CellType(item) for item in contents)
    new = FunctionType(
        function.__code__, function.__globals__, function.__name__, function.__defaults__, cells
    )
    new.__kwdefaults__ = function.__kwdefaults__
    return new


_state_kinds: dict[type, bool] = {}
_slot_names: dict[type, tuple[str, ...]] = {}


def _is_state(kind: type) -> bool:
    """Whether objects of ``kind`` are a key's state: a ``reasoner.runtime`` class that is
    no frozen dataclass and no tuple."""
    found = _state_kinds.get(kind)
    if found is None:
        params = getattr(kind, "__dataclass_params__", None)
        found = _state_kinds[kind] = (
            kind.__module__.startswith("reasoner.runtime.")
            and not (params is not None and params.frozen)
            and not issubclass(kind, tuple)
        )
    return found


def _slots(kind: type) -> tuple[str, ...]:
    """Every slot of ``kind`` and its bases."""
    found = _slot_names.get(kind)
    if found is None:
        names: list[str] = []
        for base in kind.__mro__:
            slots = base.__dict__.get("__slots__", ())
            names += [slots] if isinstance(slots, str) else slots
        found = _slot_names[kind] = tuple(n for n in names if n not in ("__dict__", "__weakref__"))
    return found


class _Watched(dict[Any, Any]):
    """An action table that notes whether compiling asked it for an action."""

    asked = False

    def get(self, key: Any, default: Any = None) -> Any:
        self.asked = True
        return super().get(key, default)


class Template:
    """A compiled program's nodes, built once (on first use) for the keys to copy.

    A program whose conditions run actions (``do(...)``: the compiled goals hold the actions
    of the engine they were built for) has no template: each key builds its own nodes.
    """

    def __init__(self) -> None:
        self._wiring: Wiring | None = None
        self._plan: Plan | None = None
        self._tried = False

    def __reduce__(self) -> tuple[type[Template], tuple[()]]:
        # (a compiled program shipped to another process builds its template there)
        return Template, ()

    def copy_into(self, compiled: CompiledProgram, wiring: Wiring) -> bool:
        """Give ``wiring`` (a new engine's, running no rules yet) the nodes of ``compiled``,
        copied from the template; False (nothing done) when each key builds its own."""
        if not self._tried:
            self._tried = True
            self._build(compiled)
        if self._wiring is None or self._plan is None:
            return False
        wiring.adopt(self._wiring, self._plan.copy(wiring.seeds()))
        return True

    def _build(self, compiled: CompiledProgram) -> None:
        from reasoner.runtime.nodes import Runtime
        from reasoner.runtime.sink import Sink
        from reasoner.runtime.wiring import Wiring

        table = _Watched(action_table())
        wiring = Wiring(compiled.options, Runtime(compiled.knowledge), Sink(), table)
        try:
            wiring.start(compiled.program, compiled.network)
        except ReasonerError:  # an action only the keys' engines register
            return
        if not table.asked:
            self._wiring = wiring
            self._plan = Plan(wiring.seeds(), wiring.parts())
