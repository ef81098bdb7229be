"""Manifests generated from an operator's code: CRDs, RBAC, kustomize config, chart, Dockerfile.

The code already says what an operator is: its typed resources
(:class:`~setpoint.api.resources.CustomResource` models) say what the CRDs are, and its
reconcilers (what they reconcile, own, watch and declare) say what permissions it needs.
``rbac`` turns reconcilers into a least-privilege Role, ``samples`` makes one valid object per
resource, ``project`` lays everything out as kubebuilder's ``config/`` plus a Dockerfile, and
``chart`` as a Helm chart. ``setpoint generate TARGET -o DIR`` (``setpoint.cli.generate``)
writes the files.

This package sits above the runtime (it reads ``Operator`` declarations) and below the CLI; it
does no I/O except where a function says it writes files.
"""
