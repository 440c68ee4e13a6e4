"""The plan: what must change on the live clusters for them to match the topology."""
