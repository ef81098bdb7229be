"""Metacontroller-compatible composite and decorator controllers, run by setpoint's runtime.

A *composite controller* turns each object of a parent kind into a set of children: a *sync
hook* (a function from the observed parent and children to the desired children and status)
says what should exist, and this package does the rest, as Metacontroller does: it watches the
parent and child kinds through the shared cache, calls the hook once per change, writes the
children with server-side apply (one field manager per controller), deletes the children the
hook no longer returns, adopts and orphans children by the parent's selector, replaces the
parent's status with the hook's, and runs the ``finalize`` hook while a parent is deleted. A
*decorator controller* attaches children (``attachments``) and labels, annotations and status to
existing objects of any kind.

The controllers are declared either as ``metacontroller.k8s.io/v1alpha1`` objects
(``CompositeController``, ``DecoratorController``) whose hooks are HTTP webhooks, exactly as
Metacontroller calls them (:class:`Metacontroller` runs every such object it finds), or in Python
(:func:`composite`, :func:`decorator`), the hook a plain function run in-process.

Layers: this package is an operator like any other. It imports the runtime (``client``,
``cache``, ``controller``, ``manager``) and ``api``, never ``cluster``, ``cli``, ``testing`` or
``generate``.
"""

from setpoint.composite.crds import METACONTROLLER_CRDS, metacontroller_crds
from setpoint.composite.hook_wire import HookError
from setpoint.composite.python_hooks import SyncRequest, SyncResponse, composite, decorator
from setpoint.composite.runner import Metacontroller

__all__ = [
    "METACONTROLLER_CRDS",
    "HookError",
    "Metacontroller",
    "SyncRequest",
    "SyncResponse",
    "composite",
    "decorator",
    "metacontroller_crds",
]
