"""``setpoint create webhook``: a kind's defaulter, validator or conversion, with their tests.

What kubebuilder's ``create webhook --defaulting --programmatic-validation --conversion``
scaffolds, as working code: the handlers run as written (a defaulter that sets a label, a
validator that bounds ``spec.replicas``, a conversion that copies the fields both versions
share) and the tests written beside them pass, so ``make test`` stays green and each stub is a
place to start. As ``create api``: existing files are kept, a missing registration line is
added back, and a kind without its ``create api`` is refused.
"""

from __future__ import annotations

from pathlib import Path
from string import Template

import click

from setpoint.cli import scaffold_project as scaffold

__all__ = ["add_webhooks", "create_webhook_command"]

WEBHOOKS_INIT = '''\
"""The admission and conversion webhooks of the operator (each module registers its own)."""

'''

OPERATOR_IMPORT = "from $package import webhooks  # noqa: E402,F401\n"

HANDLERS = '''\
"""Webhooks of $kind ($group/$version): served by the operator at kubebuilder's paths."""

from $package.api.${version}.${kind_lower} import $kind
from $package.operator import op
from setpoint.api.field_errors import FieldError, invalid
from setpoint.webhook import Denied
$body'''

DEFAULTER = '''

#: The label the defaulter sets when a $kind has none (edit to default your own fields).
NAME_LABEL = "app.kubernetes.io/name"


@op.defaulter($kind)
def default_${kind_lower}(obj: $kind) -> None:
    """Fill in what the user left out; the API server gets a patch of exactly that."""
    labels = dict(obj.metadata.labels or {})
    if NAME_LABEL not in labels:
        labels[NAME_LABEL] = "$kind_lower"
        obj.metadata.labels = labels
'''

VALIDATOR = '''

#: The most replicas a $kind may ask for (edit to check your own rules).
MAX_REPLICAS = 100


def ${kind_lower}_errors(obj: $kind) -> list[FieldError]:
    """What is wrong with ``obj`` beyond what its schema checks."""
    errors: list[FieldError] = []
    replicas = getattr(obj.spec, "replicas", None)
    if isinstance(replicas, int) and replicas > MAX_REPLICAS:
        errors.append(invalid("spec.replicas", replicas, f"must be no more than {MAX_REPLICAS}"))
    return errors


@op.validator($kind)
class ${kind}Validator:
    """Creates and updates must have no errors; deletes are not checked."""

    def validate_create(self, obj: $kind) -> None:
        self._check(obj)

    def validate_update(self, old: $kind, new: $kind) -> None:
        self._check(new)

    @staticmethod
    def _check(obj: $kind) -> None:
        errors = ${kind_lower}_errors(obj)
        if errors:
            raise Denied.invalid("$kind", obj.metadata.name or "", errors, group="$group")
'''

CONVERSION = '''\
"""Conversion of $kind between $version (the hub) and $spoke, served at ``/convert``.

The functions copy the fields both versions share; edit them when the versions differ (a
field renamed or reshaped). Only ``apiVersion`` and the fields change: the API server keeps
the metadata.
"""

from $package.api.${version}.${kind_lower} import $kind as Hub
from $package.api.${spoke}.${kind_lower} import $kind as Spoke
from $package.operator import op


def _fields(obj: Hub | Spoke) -> dict[str, object]:
    return obj.model_dump(by_alias=True, exclude_none=True, exclude={"api_version", "kind"})


def to_hub(obj: Spoke) -> Hub:
    """``obj`` ($spoke) as $version."""
    return Hub.model_validate(_fields(obj))


def from_hub(hub: Hub) -> Spoke:
    """``hub`` ($version) as $spoke."""
    return Spoke.model_validate(_fields(hub))


# What the operator's converter calls on the spoke: convert_to() and convert_from(hub).
Spoke.convert_to = to_hub  # type: ignore[attr-defined]
Spoke.convert_from = staticmethod(from_hub)  # type: ignore[attr-defined]
op.conversion(Hub, Spoke)
'''

TEST_HEAD = '''\
"""The webhooks of $kind, called as the API server calls them (an AdmissionReview each)."""

import pytest

from $package.operator import op
from setpoint.webhook import AdmissionRequest, Denied

GROUP = "$group"


def handler(prefix: str):
    (found,) = [w.handler for w in op.webhooks if w.path.startswith(prefix) and w.kind == "$kind"]
    return found


def ${kind_lower}(**spec):
    return {
        "apiVersion": f"{GROUP}/$version",
        "kind": "$kind",
        "metadata": {"name": "example", "namespace": "default"},
        "spec": spec,
    }


def create(obj):
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": "u", "operation": "CREATE", "object": obj},
    }
    return AdmissionRequest.from_review(review)
'''

TEST_DEFAULTER = """

async def test_the_name_label_is_defaulted():
    answer = await handler("/mutate-")(create(${kind_lower}()))
    label = {"app.kubernetes.io/name": "$kind_lower"}
    assert answer.patch == [{"op": "add", "path": "/metadata/labels", "value": label}]


async def test_a_label_already_set_is_kept():
    obj = ${kind_lower}()
    obj["metadata"]["labels"] = {"app.kubernetes.io/name": "mine"}
    assert (await handler("/mutate-")(create(obj))).patch == []
"""

TEST_VALIDATOR = """

async def test_too_many_replicas_are_refused():
    with pytest.raises(Denied) as refused:
        await handler("/validate-")(create(${kind_lower}(replicas=101)))
    assert refused.value.code == 422
    assert refused.value.message == (
        f'$kind.{GROUP} "example" is invalid: spec.replicas: Invalid value: 101: '
        "must be no more than 100"
    )


async def test_a_valid_${kind_lower}_is_admitted():
    assert (await handler("/validate-")(create(${kind_lower}(replicas=1)))).allowed
"""

TEST_CONVERSION = '''\
"""Conversion of $kind between $version and $spoke: a round trip changes nothing."""

from $package.api.${spoke}.${kind_lower} import $kind as Spoke
from $package.api.${version}.${kind_lower} import $kind as Hub
from setpoint.webhook import Converter

GROUP = "$group"


def review(desired, *objects):
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "u", "desiredAPIVersion": f"{GROUP}/{desired}", "objects": list(objects)
        },
    }


def test_a_round_trip_through_the_hub_changes_nothing():
    converter = Converter(Hub, [Spoke])
    original = {
        "apiVersion": f"{GROUP}/$spoke",
        "kind": "$kind",
        "metadata": {"name": "example", "namespace": "default"},
        "spec": {"replicas": 2},
    }
    there = converter.review(review("$version", original))["response"]
    assert there["result"] == {"status": "Success"}
    back = converter.review(review("$spoke", *there["convertedObjects"]))["response"]
    assert back["convertedObjects"] == [original]
'''


def _register(path: Path, line: str, created: list[str], label: str) -> None:
    """Append ``line`` to ``path`` unless it is there (the repair of a removed line)."""
    text = path.read_text() if path.exists() else ""
    if line not in text:
        path.write_text(text + ("" if not text or text.endswith("\n") else "\n") + line)
        click.echo(f"  updated  {label}")


def add_webhooks(
    root: Path,
    api_version: str,
    kind: str,
    *,
    defaulting: bool,
    validation: bool,
    spokes: tuple[str, ...] = (),
) -> None:
    """Write the webhook modules and tests of ``kind`` in ``root`` (a project of `init`)."""
    package, domain, _ = scaffold.project_or_usage_error(root)
    kind_lower = kind.lower()
    model = root / package / "api" / api_version / f"{kind_lower}.py"
    if not model.is_file():
        raise click.UsageError(
            f"{model.relative_to(root)} does not exist: run `setpoint create api --version "
            f"{api_version} --kind {kind}` first"
        )
    for spoke in spokes:
        spoke_model = root / package / "api" / spoke / f"{kind_lower}.py"
        if not spoke_model.is_file():
            raise click.UsageError(
                f"--spoke {spoke}: {spoke_model.relative_to(root)} does not exist: run `setpoint "
                f"create api --version {spoke} --kind {kind}` first"
            )
    group = _group_of(model, domain)
    values = {
        "package": package,
        "group": group,
        "version": api_version,
        "kind": kind,
        "kind_lower": kind_lower,
    }
    created: list[str] = []
    webhooks = root / package / "webhooks"
    scaffold.write_file(root, f"{package}/webhooks/__init__.py", WEBHOOKS_INIT, created)
    if defaulting or validation:
        body = (DEFAULTER if defaulting else "") + (VALIDATOR if validation else "")
        handlers = Template(HANDLERS).substitute(values, body=Template(body).substitute(values))
        if not validation:
            handlers = handlers.replace(
                "from setpoint.api.field_errors import FieldError, invalid\n"
                "from setpoint.webhook import Denied\n",
                "",
            )
        scaffold.write_file(root, f"{package}/webhooks/{kind_lower}.py", handlers, created)
        test = (
            TEST_HEAD
            + (TEST_DEFAULTER if defaulting else "")
            + (TEST_VALIDATOR if validation else "")
        )
        if not validation:
            test = test.replace("import pytest\n\n", "").replace(", Denied", "")
        scaffold.write_file(root, f"tests/test_{kind_lower}_webhook.py",
                            Template(test).substitute(values), created)  # fmt: skip
        line = f"from {package}.webhooks import {kind_lower} as {kind_lower}  # noqa: F401\n"
        _register(webhooks / "__init__.py", line, created, f"{package}/webhooks/__init__.py")
    for spoke in spokes:
        module = f"{kind_lower}_{spoke}_conversion"
        spoke_values = {**values, "spoke": spoke}
        conversion = Template(CONVERSION).substitute(spoke_values)
        scaffold.write_file(root, f"{package}/webhooks/{module}.py", conversion, created)
        test = Template(TEST_CONVERSION).substitute(spoke_values)
        scaffold.write_file(root, f"tests/test_{module}.py", test, created)
        line = f"from {package}.webhooks import {module} as {module}  # noqa: F401\n"
        _register(webhooks / "__init__.py", line, created, f"{package}/webhooks/__init__.py")
    operator = root / package / "operator.py"
    _register(operator, Template(OPERATOR_IMPORT).substitute(values), created,
              f"{package}/operator.py")  # fmt: skip
    what = [name for name, on in (("defaulting", defaulting), ("validation", validation)) if on]
    what += [f"conversion {api_version} <-> {spoke}" for spoke in spokes]
    click.echo(f"{kind} ({group}/{api_version}) webhooks added: {', '.join(what)}")


def _group_of(model: Path, domain: str) -> str:
    """The group the kind's model declares (``group="..."`` as ``create api`` writes it)."""
    for line in model.read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("group=") and stripped.endswith(","):
            return stripped.removeprefix("group=").rstrip(",").strip("\"'")
    raise click.UsageError(f'{model.name}: no group="..." found in the {domain} model')


@click.command(name="webhook")
@click.option("--group", help="API group, without the domain (checked against the model's).")
@click.option("--version", "api_version", required=True, help="API version of the kind.")
@click.option("--kind", required=True, help="Kind, as `create api` added it.")
@click.option("--defaulting", is_flag=True, help="A defaulter (a mutating webhook).")
@click.option(
    "--validation",
    "--programmatic-validation",
    "validation",
    is_flag=True,
    help="A validator (a validating webhook).",
)
@click.option(
    "--conversion",
    is_flag=True,
    help="Conversion between --version (the hub) and each --spoke version.",
)
@click.option("--spoke", multiple=True, help="With --conversion: a version converted (repeat).")
@click.option(
    "--directory",
    type=click.Path(file_okay=False),
    default=".",
    show_default=True,
    help="The project's directory.",
)
def create_webhook_command(
    group: str | None,
    api_version: str,
    kind: str,
    defaulting: bool,
    validation: bool,
    conversion: bool,
    spoke: tuple[str, ...],
    directory: str,
) -> None:
    """Add webhooks of a kind: a defaulter, a validator, conversion; with their tests.

    \b
    Example:
      setpoint create webhook --version v1 --kind Site --defaulting --validation
      setpoint create webhook --version v1 --kind Site --conversion --spoke v2
    """
    scaffold.check_api(group or "g", api_version, kind)
    if not (defaulting or validation or conversion):
        raise click.UsageError("name at least one of --defaulting, --validation, --conversion")
    if conversion != bool(spoke):
        raise click.UsageError("--conversion needs --spoke VERSION (and --spoke needs it)")
    for version in spoke:
        scaffold.check_api(group or "g", version, kind)
        if version == api_version:
            raise click.UsageError(f"--spoke {version} is the hub (--version) itself")
    root = Path(directory)
    if group is not None:
        package, domain, _ = scaffold.project_or_usage_error(root)
        model = root / package / "api" / api_version / f"{kind.lower()}.py"
        if model.is_file() and _group_of(model, domain) != f"{group}.{domain}":
            raise click.UsageError(
                f"--group {group}: {kind} {api_version} is in group {_group_of(model, domain)}"
            )
    add_webhooks(
        root, api_version, kind, defaulting=defaulting, validation=validation, spokes=spoke
    )
    click.echo("Next: make generate (config/webhook, config/certmanager); make test")
