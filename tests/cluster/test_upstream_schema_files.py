"""The upstream schema directory, found without importing kubernetes_validate, is the one the
package itself would name."""

from __future__ import annotations

import importlib
import importlib.util

import pytest

from setpoint.cluster.apiserver.upstream_schema_files import kubernetes_json_schema_root


def test_the_directory_is_the_one_of_the_imported_package() -> None:
    package = importlib.import_module("kubernetes_validate")
    assert package.__file__ is not None
    root = kubernetes_json_schema_root()
    assert root == type(root)(package.__file__).parent / "kubernetes-json-schema"
    for schema_set in ("v1.32.0-local", "v1.32.0-local-strict"):
        assert (root / schema_set / "_definitions.json").is_file()


def test_a_missing_package_is_an_import_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    kubernetes_json_schema_root.cache_clear()
    try:
        with pytest.raises(ImportError, match="kubernetes_validate"):
            kubernetes_json_schema_root()
    finally:
        kubernetes_json_schema_root.cache_clear()
