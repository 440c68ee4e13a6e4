"""The file spark-submit runs: topo's replication driver (topology/spark/driver.py).

It lives outside the package folder because Python puts a script's folder first on sys.path:
submitted from topology/spark/ its modules would shadow the standard library's (copy, ...).
"""

import sys

from topology.spark.driver import main

sys.exit(main(sys.argv[1:]))
