"""Consumer offsets across clusters: exact translation, checkpoints, group sync."""
