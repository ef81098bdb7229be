"""memcached-operator: operator-sdk's Memcached and the memcached proxy of the seed talk."""
