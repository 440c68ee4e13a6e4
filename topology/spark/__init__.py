"""The Spark side: the only package that imports pyspark."""
