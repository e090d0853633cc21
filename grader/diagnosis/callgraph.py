"""Which of a reference's functions and classes each one calls, directly or not: the reach of a mistake.

A mistake in ``softmax`` also changes ``attention`` (which calls it): diagnosis considers for a failing
exercise the mistakes of everything it uses, and names a failing callee before its callers.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any


def uses(module: ModuleType) -> dict[str, frozenset[str]]:
    """For each function or class of ``module``, every name of the module it calls, directly or not.

    A mistake in ``softmax`` also changes ``attention`` (which calls it), so an
    ``attention`` check considers the mistakes of everything ``attention`` uses.
    """
    own = {name: obj for name, obj in vars(module).items()
           if getattr(obj, "__module__", None) == module.__name__ and callable(obj)}

    def names(obj: Any) -> set[str]:
        codes = [obj.__code__] if hasattr(obj, "__code__") else [
            f.__code__ for f in vars(obj).values() if hasattr(f, "__code__")]
        found: set[str] = set()
        while codes:
            code = codes.pop()
            found.update(code.co_names)
            codes.extend(c for c in code.co_consts if hasattr(c, "co_names"))
        return found & own.keys()

    direct = {name: names(obj) for name, obj in own.items()}
    closure: dict[str, frozenset[str]] = {}
    for name in own:
        seen, todo = {name}, [name]
        while todo:
            for used in direct[todo.pop()] - seen:
                seen.add(used)
                todo.append(used)
        closure[name] = frozenset(seen)
    return closure
