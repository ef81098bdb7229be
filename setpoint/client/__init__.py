"""The async Kubernetes API client: config, discovery, CRUD, watch, rate limiting, retries."""
