"""`topo lab`: local single-node Apache Kafka clusters (KRaft) for trying topo and for tests."""
