"""Building an index folder: per-document jobs, the content-hash cache, the lock, swap-in, Ray."""
