"""Persistent volumes: binding claims to volumes, and a host-path provisioner for the default
StorageClass (kube-controller-manager's ``persistentvolume-binder`` plus what a local cluster
such as kind or minikube installs as its ``standard`` class).

A Pending claim is bound to the smallest Available volume that satisfies it (same class and
volume mode, enough capacity, the access modes, the claim's selector), or to the volume that
names it in ``claimRef``. When none does and the claim's class is provisioned here, a volume
is made for it: a directory under the provisioner's root, ``hostPath`` in the volume's spec.
A volume whose claim is gone is ``Released``, and deleted with its directory when its reclaim
policy is ``Delete`` and it was provisioned here.

``matching`` holds the pure rules; ``controller`` the reconciliation; ``protection`` the
pvc-protection and pv-protection controllers, which let a claim or volume being deleted go
once nothing uses it.
"""
