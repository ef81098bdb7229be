"""The namespace controller: empties a terminating namespace, reports why it cannot yet, and
finalizes it (``pkg/controller/namespace/deletion``, 1.32).

Deleting a namespace marks it Terminating (the API server does that); this controller then
deletes every namespaced object in it with Background propagation (custom resources included;
objects holding finalizers stay until their finalizers go), writes the five upstream
``NamespaceDeletion*``/``Namespace*Remaining`` conditions, and once nothing remains removes the
``kubernetes`` finalizer through ``/finalize``, which deletes the namespace.
"""
