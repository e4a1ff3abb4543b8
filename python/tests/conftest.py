"""Shared paths and gates for the suite. Every test drives the real compiled extension
(``toolgate._native``, built by scripts/test-python.sh) — nothing under test is mocked."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "__test__" / "fixtures"
CORPUS = ROOT / "bench" / "corpus"


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def dialect_tools() -> dict:
    """The gate config of the dialect, stream and tool-list fixtures."""
    return read_json(FIXTURES / "dialects" / "tools.json")


@pytest.fixture(scope="session")
def policy_config() -> dict:
    """The policy fixture config (deny by default)."""
    return read_json(FIXTURES / "policy" / "config.json")


@pytest.fixture(scope="session")
def corpus_config() -> dict:
    """The benchmark corpus tools (schema gate only)."""
    return read_json(CORPUS / "tools.json")


def fixture_cases(base: Path):
    """Every ``<dir>/<case>.json`` under ``base``, in name order (as the Node suite reads them)."""
    out = []
    for d in sorted(os.listdir(base)):
        if not (base / d).is_dir():
            continue
        for f in sorted(os.listdir(base / d)):
            if f.endswith(".json"):
                out.append((f"{d}/{f}", read_json(base / d / f)))
    return out
