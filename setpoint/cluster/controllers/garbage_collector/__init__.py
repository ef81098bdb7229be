"""The garbage collector: ownerReferences honoured as kube-controller-manager's GC does.

:mod:`.dependency_graph` keeps, from informers on every resource (custom resources included,
Events excluded as upstream), which objects each uid owns. :mod:`.collector` processes one
object at a time: a dependent whose owners are all gone (not found, or found with another uid)
is deleted in the background; one whose live owners all wait for their dependents (Foreground
deletion) is deleted in the foreground; one with some live owner only loses its dangling
references. An owner deleted with ``propagationPolicy: Foreground`` keeps the
``foregroundDeletion`` finalizer until no dependent with ``blockOwnerDeletion`` remains; one
deleted with ``Orphan`` keeps ``orphan`` until its dependents no longer reference it.
"""
