"""Every retriever kind of `namesake retrieve` satisfies the written contract
(`namesake.retrieval.base.Retriever`), signatures included, and a built one passes the
Protocol's isinstance check."""

from __future__ import annotations

import inspect
from functools import cached_property

import pytest

from namesake.amber.evaluation.retrieve import RETRIEVERS, retriever_class
from namesake.retrieval.base import Retriever
from namesake.retrieval.bm25 import BM25Retriever
from namesake.retrieval.corpus import Document

METHODS = ("build", "load", "save", "search", "rank_candidates")


def _parameters(function) -> list[inspect.Parameter]:
    return list(inspect.signature(function).parameters.values())


def _callable_as(promised, implemented) -> list[str]:
    """What stops `implemented` from being called as the Protocol's `promised` is: each
    promised positional parameter, by name, in its position; each promised keyword-only one
    by name; a promised default kept; every other parameter defaulted."""
    problems = []
    given = {p.name: (i, p) for i, p in enumerate(_parameters(implemented))}
    for position, parameter in enumerate(_parameters(promised)):
        if parameter.name not in given:
            problems.append(f"no parameter {parameter.name!r}")
            continue
        at, implementation = given[parameter.name]
        if parameter.kind is not inspect.Parameter.KEYWORD_ONLY and at != position:
            problems.append(f"{parameter.name!r} at {at}, not {position}")
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and (
            implementation.kind is inspect.Parameter.POSITIONAL_ONLY
        ):
            problems.append(f"{parameter.name!r} cannot be given by keyword")
        if parameter.default is not inspect.Parameter.empty and (
            implementation.default is inspect.Parameter.empty
        ):
            problems.append(f"{parameter.name!r} has no default")
    promised_names = {p.name for p in _parameters(promised)}
    for name, (_, parameter) in given.items():
        optional = parameter.default is not inspect.Parameter.empty or parameter.kind in (
            inspect.Parameter.VAR_POSITIONAL,
            inspect.Parameter.VAR_KEYWORD,
        )
        if name not in promised_names and not optional:
            problems.append(f"{name!r} is required but not in the contract")
    return problems


@pytest.mark.parametrize("kind", sorted(RETRIEVERS))
def test_every_retriever_kind_satisfies_the_contract(kind):
    cls = retriever_class(kind)
    assert isinstance(cls.INDEX_KIND, str) and cls.INDEX_KIND
    assert isinstance(cls.NAMED_MODELS, dict)
    assert all(
        isinstance(field, str) and isinstance(what, str)
        for field, what in cls.NAMED_MODELS.values()
    )
    assert "provenance" in dir(cls)
    assert isinstance(inspect.getattr_static(cls, "candidate_rows"), cached_property)
    for name in METHODS:
        promised = getattr(Retriever, name)
        implemented = getattr(cls, name)
        if name in ("build", "load"):  # both class methods, bound to the class
            assert isinstance(inspect.getattr_static(cls, name), classmethod), name
        assert _callable_as(promised, implemented) == [], (kind, name)


def test_a_method_the_contract_cannot_call_is_caught():
    """The check itself: a search without `k`, a load that wants another argument and has
    no default for `mmap`, and one whose `mmap` is positional only."""

    class Broken:
        def search(self, queries): ...

        @classmethod
        def load(cls, path, device, mmap): ...

        @classmethod
        def load_positional(cls, path, mmap=False, /): ...

    assert _callable_as(Retriever.search, Broken.search) == ["no parameter 'k'"]
    assert _callable_as(Retriever.load, Broken.load) == [
        "'mmap' has no default",
        "'device' is required but not in the contract",
    ]
    assert _callable_as(Retriever.load, Broken.load_positional) == [
        "'mmap' cannot be given by keyword"
    ]


def test_a_built_retriever_is_a_retriever():
    documents = [
        Document("1", "Abe Lincoln", "Abe Lincoln was a president."),
        Document("2", "Abe Lincoln (musician)", "Abe Lincoln played the trombone."),
    ]
    built = BM25Retriever.build(documents, show_progress=False)
    assert isinstance(built, Retriever)
    assert built.rank_candidates(["trombone"], [["1", "2"]])[0][0][0] == "2"
