"""The StatefulSet controller: stable, ordered pods ``<set>-0..N-1`` with their own claims.

Each sync (``stateful_set_control.go``) records the template as a ControllerRevision (the
*update revision*), creates each missing ordinal's PersistentVolumeClaims and pod, removes
ordinals at or above ``replicas`` from the highest down, and rolls pods whose
``controller-revision-hash`` is not the update revision, highest ordinal first, down to the
partition. With ``podManagementPolicy: OrderedReady`` (the default) every step waits for the
pods before it to be Running and Ready; ``Parallel`` does not wait.
"""
