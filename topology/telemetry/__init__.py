"""Watching a running replication: its Prometheus metrics, health and readiness, the bounded
history the dashboard charts, and the driver's log lines."""
