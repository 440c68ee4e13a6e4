"""`topo dashboard`: the history document its page charts, from the driver or from Prometheus."""
