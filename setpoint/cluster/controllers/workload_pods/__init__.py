"""Pod facts shared by the workload controllers (ReplicaSet, Deployment, StatefulSet, Job...).

kube-controller-manager keeps these in ``pkg/controller/controller_utils.go`` and
``pkg/api/v1/pod``: whether a pod is active, ready or available, the pod-template-hash, the
order in which surplus pods are deleted, and the pod a controller builds from its template.
They are pure functions of plain object dicts, so every controller and its unit tests share
one definition.
"""
