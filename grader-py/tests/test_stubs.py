"""The stubs (``__init__.pyi``) are the package as it is: every public name, and each function's
and class's parameters (names, kinds, defaults), methods and fields, compared with the runtime
objects."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path
from typing import Any

import pytest

import graderkit

STUB = Path(graderkit.__file__).with_name("__init__.pyi")


def stub() -> ast.Module:
    return ast.parse(STUB.read_text(encoding="utf-8"))


def stub_names() -> dict[str, ast.AST]:
    names: dict[str, ast.AST] = {}
    for node in stub().body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, ast.ImportFrom) and node.module == "graderkit":
            for alias in node.names:
                names[alias.asname or alias.name] = node
    return names


MISSING = object()


def stub_parameters(function: ast.FunctionDef, method: bool) -> list[tuple[str, Any, Any]]:
    """(name, kind, default) of each parameter; a default written ``...`` is ``MISSING``."""
    args = function.args
    positional = [(a, inspect.Parameter.POSITIONAL_ONLY) for a in args.posonlyargs]
    positional += [(a, inspect.Parameter.POSITIONAL_OR_KEYWORD) for a in args.args]
    defaults: list[Any] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    out = []
    for (arg, kind), default in zip(positional, defaults, strict=True):
        out.append((arg.arg, kind, _default(default)))
    if args.vararg:
        out.append((args.vararg.arg, inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.empty))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        out.append((arg.arg, inspect.Parameter.KEYWORD_ONLY, _default(default)))
    if args.kwarg:
        out.append((args.kwarg.arg, inspect.Parameter.VAR_KEYWORD, inspect.Parameter.empty))
    if method:
        out = out[1:]
    return out


def _default(node: ast.expr | None) -> Any:
    if node is None:
        return inspect.Parameter.empty
    if isinstance(node, ast.Constant) and node.value is Ellipsis:
        return MISSING
    return ast.literal_eval(node)


def runtime_parameters(obj: Any, method: bool) -> list[tuple[str, Any, Any]]:
    parameters = list(inspect.signature(obj).parameters.values())
    if method and parameters and parameters[0].name == "self":
        parameters = parameters[1:]
    return [(p.name, p.kind, p.default) for p in parameters]


def same(stub_params: list[tuple[str, Any, Any]], runtime: list[tuple[str, Any, Any]]) -> bool:
    if len(stub_params) != len(runtime):
        return False
    for (name, kind, default), (r_name, r_kind, r_default) in zip(stub_params, runtime):
        if name != r_name:
            return False
        # `self` of a native method is positional-only; the stubs write it plainly.
        if kind != r_kind and not (
            kind == inspect.Parameter.POSITIONAL_OR_KEYWORD
            and r_kind == inspect.Parameter.POSITIONAL_ONLY
        ):
            return False
        if default is not MISSING and default != r_default:
            return False
        if default is MISSING and r_default is inspect.Parameter.empty:
            return False
    return True


def test_the_stubs_name_every_public_name_and_nothing_else() -> None:
    names = set(stub_names()) - {"__all__", "__version__"}
    assert names == set(graderkit.__all__) - {"__version__"}
    for name in graderkit.__all__:
        assert hasattr(graderkit, name), name


@pytest.mark.parametrize(
    "name", [n for n, node in stub_names().items() if isinstance(node, ast.FunctionDef)]
)
def test_each_function_s_parameters_are_the_stub_s(name: str) -> None:
    node = stub_names()[name]
    assert isinstance(node, ast.FunctionDef)
    expected = stub_parameters(node, method=False)
    actual = runtime_parameters(getattr(graderkit, name), method=False)
    assert same(expected, actual), (expected, actual)
    assert getattr(graderkit, name).__doc__, f"{name} has no docstring"


@pytest.mark.parametrize(
    "name", [n for n, node in stub_names().items() if isinstance(node, ast.ClassDef)]
)
def test_each_class_is_the_stub_s(name: str) -> None:
    node = stub_names()[name]
    assert isinstance(node, ast.ClassDef)
    cls = getattr(graderkit, name)
    assert cls.__doc__, f"{name} has no docstring"
    fields = []
    for item in node.body:
        if isinstance(item, ast.FunctionDef):
            property_ = any(isinstance(d, ast.Name) and d.id == "property"
                            for d in item.decorator_list)
            if item.name == "__init__":
                expected = stub_parameters(item, method=True)
                actual = runtime_parameters(cls, method=False)
                assert same(expected, actual), (name, expected, actual)
            elif property_:
                assert isinstance(inspect.getattr_static(cls, item.name),
                                  (property, type(graderkit.JsonSchema.draft))), item.name
            else:
                attr = getattr(cls, item.name)
                if item.name != "__bool__":
                    assert attr.__doc__, f"{name}.{item.name} has no docstring"
                expected = stub_parameters(item, method=True)
                actual = runtime_parameters(attr, method=True)
                assert same(expected, actual), (name, item.name, expected, actual)
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            fields.append(item.target.id)
    if dataclasses.is_dataclass(cls):
        assert fields == [f.name for f in dataclasses.fields(cls)]
    elif hasattr(cls, "_fields"):
        assert fields == list(cls._fields)


def test_the_scorer_module_is_typed_in_its_source() -> None:
    # graderkit.scorer is plain Python with annotations, read by type checkers as it is.
    for name in graderkit.scorer.__all__:
        obj = getattr(graderkit.scorer, name)
        if inspect.isfunction(obj):
            assert obj.__doc__ and "return" in obj.__annotations__, name
