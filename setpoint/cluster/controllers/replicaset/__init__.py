"""The ReplicaSet controller: keep ``spec.replicas`` active pods, as kube-controller-manager.

A sync claims the pods that match the selector (adopting orphans, releasing pods that no
longer match), creates the missing pods in slow-start batches or deletes the surplus in
upstream's deletion order, and writes ``status``. Writes are *expected* (``pending_writes``):
until the cache has seen every pod created or deleted by the last sync, the next sync only
refreshes status, so a burst of events never creates more pods than asked for.
"""
