"""The application layer, between the CLI and the adapters.

Use cases that decide with the pure core and act through the Kafka adapter (`topology.kafka`):
offset translation against live clusters (`translate`), `topo failover` and `topo offsets`
(`failover`), the checkpoint and group-sync rounds the driver runs (`rounds`). Never imports
Spark or the CLI; the CLI and the Spark driver call it.
"""
