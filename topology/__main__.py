"""`python -m topology ...` is `topo ...` (the local runner starts `topo run` this way, with the
same Python, whatever the PATH)."""

from topology.cli import main

main()
