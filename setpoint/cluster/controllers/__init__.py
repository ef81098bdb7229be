"""The built-in controllers of the local cluster: kube-controller-manager, scheduler and kubelet.

They run inside the API server's process and event loop, level-based, as their upstream
counterparts do against a real API server: each keeps an informer-like cache of the kinds it
watches (fed by the storage's own watch, so it sees exactly the events a client sees), turns
changes into keys on a deduplicating work queue, and reconciles one key at a time by reading
the cache and writing through the same admission path as API requests. Their writes therefore
produce the watch events, resourceVersions and Events a user would see from
kube-controller-manager; their identity (field manager, Event source) is upstream's.

``framework`` holds the machinery (informers, work queue, cluster access, Event recorder,
controller runner and manager); each controller is its own package or module beside it. Time
comes from one :class:`setpoint.api.clock.Clock`, so tests can drive every controller and the
kubelet with a ``FakeClock``.
"""
