"""The custom resources of memcached-operator."""
