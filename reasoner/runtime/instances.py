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
from reasoner.runtime.generated import generated_source

if TYPE_CHECKING:
    from reasoner.knowledge.actions import Action
    from reasoner.runtime.program import CompiledProgram
    from reasoner.runtime.wiring import Wiring

#: Types whose values are shared as they are (immutable, or not state).
_SHARED = frozenset({int, float, str, bool, type(None), bytes, complex, frozenset, range, type})

Objects = list[Any]


class Plan:
    """How to copy one object graph for a key (see the module's docstring), worked out once.

    A plan numbers the objects a key copies (the ``seeds`` first: template objects every key
    replaces with its own) and records how to make each: first the mutable ones, empty
    (objects, containers, generated functions and their globals); then the immutable ones
    holding them (tuples, bound methods, partials, closures), parts first; then what the
    mutable ones hold. A copy replays that with the key's seeds and nothing else.

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
        self._index: dict[int, int] = {id(seed): i for i, seed in enumerate(seeds)}
        self._index[id(builtins.__dict__)] = -1  # (what exec gives generated globals)
        self._shared: set[int] = set()
        self._size = len(seeds)
        self._held = (seeds, roots)  # (ids stay valid while the template lives)
        self._shells: list[tuple[Callable[[Objects, Any], Any], int, Any]] = []
        self._builds: list[tuple[Callable[[Objects, Any], Any], int, Any]] = []
        self._fills: list[tuple[Callable[[Objects, Any, Any], None], int, Any]] = []
        self._recorders: dict[type, Callable[[Any], int]] = {
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
        self._roots = [(self._ref(root), root) for root in roots]

    def copy(self, seeds: Sequence[Any]) -> list[Any]:
        """The copies of the roots, bound to ``seeds`` (in the order the plan's were given)."""
        objects: Objects = [*seeds, *[None] * (self._size - len(seeds))]
        for make, index, data in self._shells:
            objects[index] = make(objects, data)
        for make, index, data in self._builds:
            objects[index] = make(objects, data)
        for fill, index, data in self._fills:
            fill(objects, objects[index], data)
        return [objects[i] if i >= 0 else root for i, root in self._roots]

    def _new(self, value: Any) -> int:
        index = self._index[id(value)] = self._size
        self._size += 1
        return index

    def _ref(self, value: Any) -> int:
        """The number of ``value``'s copy, -1 when keys share ``value``."""
        key = id(value)
        found = self._index.get(key)
        if found is not None:
            return found
        kind = type(value)
        if kind in _SHARED or key in self._shared:
            return -1
        recorder = self._recorders.get(kind)
        if recorder is not None:
            index = recorder(value)
        elif _is_state(kind):
            index = self._object(value, kind)
        else:
            index = -1
        if index < 0:
            self._shared.add(key)
        return index

    def _refs(self, values: Any) -> list[tuple[int, Any]]:
        return [(self._ref(value), value) for value in values]

    def _object(self, value: Any, kind: type) -> int:
        index = self._new(value)
        self._shells.append((_make_object, index, kind))
        fields = []
        for name in _slots(kind):
            try:
                item = getattr(value, name)
            except AttributeError:  # (an unset slot)
                continue
            fields.append((name, self._ref(item), item))
        own = getattr(value, "__dict__", None)
        fields += [(name, self._ref(item), item) for name, item in (own or {}).items()]
        self._fills.append((_fill_object, index, fields))
        return index

    def _function(self, function: FunctionType) -> int:
        if generated_source(function) is None:
            return self._closure(function)
        namespace = self._new(function.__globals__)
        self._shells.append((_make_dict, namespace, None))
        index = self._new(function)
        data = (function.__code__, namespace, function.__name__, function.__defaults__)
        self._shells.append((_make_function, index, data))
        shared, own = {}, []
        for name, item in function.__globals__.items():
            ref = self._ref(item)
            if ref < 0:
                shared[name] = item
            else:
                own.append((name, ref))
        self._fills.append((_fill_namespace, namespace, (shared, own)))
        return index

    def _closure(self, function: FunctionType) -> int:
        cells = function.__closure__ or ()
        refs = []
        for cell in cells:
            try:
                refs.append((self._ref(cell.cell_contents), cell.cell_contents))
            except ValueError:  # (an empty cell)
                return -1
        if all(ref < 0 for ref, _ in refs):
            return -1
        index = self._new(function)
        self._builds.append((_make_closure, index, (function, refs)))
        return index

    def _built(self, value: Any, make: Callable[[Objects, Any], Any], data: Any) -> int:
        index = self._new(value)
        self._builds.append((make, index, data))
        return index

    def _container(self, value: Any, make: Callable[[Objects, Any], Any], data: Any) -> int:
        index = self._new(value)
        self._shells.append((make, index, data))
        return index

    def _tuple(self, value: tuple[Any, ...]) -> int:
        refs = self._refs(value)
        if all(ref < 0 for ref, _ in refs):
            return -1
        return self._built(value, _make_tuple, refs)

    def _method(self, method: MethodType) -> int:
        owner = self._ref(method.__self__)
        if owner < 0:
            return -1
        return self._built(method, _make_method, (method.__func__, owner))

    def _builtin_method(self, method: Any) -> int:
        # a C method (list.append, deque.append ...) of a copied container: the copy's
        owner = self._ref(method.__self__)
        if owner < 0:
            return -1
        return self._built(method, _make_attribute, (owner, method.__name__))

    def _partial(self, value: partial[Any]) -> int:
        func = self._ref(value.func)
        args = self._refs(value.args)
        keywords = {k: (self._ref(v), v) for k, v in value.keywords.items()}
        refs = [func, *(r for r, _ in args), *(r for r, _ in keywords.values())]
        if all(ref < 0 for ref in refs):
            return -1
        return self._built(value, _make_partial, ((func, value.func), args, keywords))

    def _list(self, value: list[Any]) -> int:
        index = self._container(value, _make_list, None)
        self._fills.append((_fill_list, index, self._refs(value)))
        return index

    def _set(self, value: set[Any]) -> int:
        index = self._container(value, _make_set, None)
        self._fills.append((_fill_set, index, self._refs(value)))
        return index

    def _deque(self, value: deque[Any]) -> int:
        index = self._container(value, _make_deque, value.maxlen)
        self._fills.append((_fill_list, index, self._refs(value)))
        return index

    def _dict(self, value: dict[Any, Any]) -> int:
        index = self._container(value, _make_dict, None)
        items = [(self._ref(k), k, self._ref(v), v) for k, v in value.items()]
        self._fills.append((_fill_dict, index, items))
        return index


def _get(objects: Objects, ref: int, value: Any) -> Any:
    return objects[ref] if ref >= 0 else value


def _make_object(objects: Objects, kind: type) -> Any:
    return object.__new__(kind)


def _make_dict(objects: Objects, data: None) -> dict[Any, Any]:
    return {}


def _make_list(objects: Objects, data: None) -> list[Any]:
    return []


def _make_set(objects: Objects, data: None) -> set[Any]:
    return set()


def _make_deque(objects: Objects, maxlen: int | None) -> deque[Any]:
    return deque(maxlen=maxlen)


def _make_function(objects: Objects, data: tuple[Any, ...]) -> FunctionType:
    code, namespace, name, defaults = data
    return FunctionType(code, objects[namespace], name, defaults)


def _make_closure(objects: Objects, data: tuple[Any, ...]) -> FunctionType:
    function, refs = data
    cells = tuple(CellType(_get(objects, ref, item)) for ref, item in refs)
    new = FunctionType(
        function.__code__, function.__globals__, function.__name__, function.__defaults__, cells
    )
    new.__kwdefaults__ = function.__kwdefaults__
    return new


def _make_tuple(objects: Objects, refs: list[tuple[int, Any]]) -> tuple[Any, ...]:
    return tuple([objects[ref] if ref >= 0 else item for ref, item in refs])


def _make_method(objects: Objects, data: tuple[Any, int]) -> MethodType:
    return MethodType(data[0], objects[data[1]])


def _make_attribute(objects: Objects, data: tuple[int, str]) -> Any:
    return getattr(objects[data[0]], data[1])


def _make_partial(objects: Objects, data: tuple[Any, ...]) -> partial[Any]:
    func, args, keywords = data
    return partial(
        _get(objects, *func),
        *(_get(objects, ref, item) for ref, item in args),
        **{k: _get(objects, ref, item) for k, (ref, item) in keywords.items()},
    )


def _fill_object(objects: Objects, new: Any, fields: list[tuple[str, int, Any]]) -> None:
    for name, ref, item in fields:
        setattr(new, name, objects[ref] if ref >= 0 else item)


def _fill_namespace(
    objects: Objects, namespace: dict[str, Any], data: tuple[dict[str, Any], list[Any]]
) -> None:
    shared, own = data
    namespace.update(shared)
    for name, ref in own:
        namespace[name] = objects[ref]


def _fill_list(objects: Objects, new: Any, refs: list[tuple[int, Any]]) -> None:
    new.extend([objects[ref] if ref >= 0 else item for ref, item in refs])


def _fill_set(objects: Objects, new: set[Any], refs: list[tuple[int, Any]]) -> None:
    new.update([objects[ref] if ref >= 0 else item for ref, item in refs])


def _fill_dict(objects: Objects, new: dict[Any, Any], items: list[Any]) -> None:
    for key_ref, key, ref, value in items:
        new[_get(objects, key_ref, key)] = objects[ref] if ref >= 0 else value


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

        table: dict[tuple[str, int] | str, Action] = _Watched(action_table())
        wiring = Wiring(compiled.options, Runtime(compiled.knowledge), Sink(), table)
        try:
            wiring.start(compiled.program, compiled.network)
        except ReasonerError:  # an action only the keys' engines register
            return
        if not table.asked:
            self._wiring = wiring
            self._plan = Plan(wiring.seeds(), wiring.parts())
