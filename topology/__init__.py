"""topo: topology-as-code for Kafka cross-cluster replication."""

__version__ = "0.1.0"
