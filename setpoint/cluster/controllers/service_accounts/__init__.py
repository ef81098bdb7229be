"""The ServiceAccount controller: a ``default`` ServiceAccount in every active namespace,
re-created if deleted (``pkg/controller/serviceaccount``). Pods get ``serviceAccountName:
default`` from the API server's admission (``kinds/pods.py``), as upstream's ServiceAccount
admission plugin does. The tokens controller (:mod:`.token_controller`) fills Secrets of type
``kubernetes.io/service-account-token`` with a legacy token and deletes those whose
ServiceAccount is gone.
"""
