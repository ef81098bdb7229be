"""Port numbers, port names and protocols (apimachinery ``IsValidPortNum``, ``IsValidPortName``;
core ``validateContainerPorts``), shared by Services and pod specs."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.api.names import max_length_message

PROTOCOLS: Final = ("SCTP", "TCP", "UDP")
_PORT_RANGE: Final = "must be between 1 and 65535, inclusive"
_NAME_CHARS: Final = re.compile(r"^[-a-z0-9]+$")
_NAME_LETTER: Final = re.compile(r"[a-z]")


def port_number_problems(port: object) -> list[str]:
    """``IsValidPortNum``."""
    if isinstance(port, int) and not isinstance(port, bool) and 1 <= port <= 65535:
        return []
    return [_PORT_RANGE]


def port_name_problems(name: str) -> list[str]:
    """``IsValidPortName``: an IANA service name."""
    problems = []
    if len(name) > 15:
        problems.append(max_length_message(15))
    if not _NAME_CHARS.match(name):
        problems.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _NAME_LETTER.search(name):
        problems.append("must contain at least one letter (a-z)")
    if "--" in name:
        problems.append("must not contain consecutive hyphens")
    if name and (name[0] == "-" or name[-1] == "-"):
        problems.append("must not begin or end with a hyphen")
    return problems


def container_port_errors(ports: object, path: str) -> list[FieldError]:
    """``validateContainerPorts``: names, container and host ports, protocols."""
    if not isinstance(ports, list) or not ports:
        return []
    errors: list[FieldError] = []
    names: set[str] = set()
    for index, port in enumerate(ports):
        if not isinstance(port, Mapping):
            continue
        item = f"{path}[{index}]"
        name = port.get("name")
        if isinstance(name, str) and name:
            problems = port_name_problems(name)
            if problems:
                errors.extend(fe.invalid(f"{item}.name", name, p) for p in problems)
            elif name in names:
                errors.append(fe.duplicate(f"{item}.name", name))
            else:
                names.add(name)
        number = port.get("containerPort")
        if not number:
            errors.append(fe.required(f"{item}.containerPort", ""))
        else:
            errors.extend(
                fe.invalid(f"{item}.containerPort", number, p) for p in port_number_problems(number)
            )
        host = port.get("hostPort")
        if host:
            errors.extend(
                fe.invalid(f"{item}.hostPort", host, p) for p in port_number_problems(host)
            )
        protocol = port.get("protocol")
        if not protocol:
            errors.append(fe.required(f"{item}.protocol", ""))
        elif protocol not in PROTOCOLS:
            errors.append(fe.not_supported(f"{item}.protocol", protocol, PROTOCOLS))
    return errors
