"""A flow's record filter evaluated as the copy evaluates it: by Spark's own SQL engine, on
records in the shape Spark's Kafka source gives them (`topo verify` asks which source records
a filtered flow keeps). One local session for the process, started on first use."""

import datetime
import threading
from collections.abc import Sequence

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from topology.core.jobs import JobSpec
from topology.core.verify import Stored
from topology.spark.loop import SOURCE_COLUMNS

SCHEMA = f"{SOURCE_COLUMNS}, topo_index int"  # the source's columns, and each record's place


class FilterCheck:
    def __init__(self) -> None:
        self._session: SparkSession | None = None
        self._lock = threading.Lock()

    def __call__(
        self, spec: JobSpec, topic: str, partition: int, batch: Sequence[Stored]
    ) -> list[bool]:
        """Which of `batch` (records of `topic` [`partition`]) the flow's filter keeps."""
        assert spec.record_filter is not None
        rows = [
            (
                record.key,
                record.value,
                topic,
                partition,
                record.offset,
                datetime.datetime.fromtimestamp(record.timestamp_ms / 1000, datetime.UTC),
                0,
                [(name, data) for name, data in record.headers],
                index,
            )
            for index, record in enumerate(batch)
        ]
        session = self.session()
        kept = session.createDataFrame(rows, SCHEMA).where(F.expr(spec.record_filter))
        found = {row.topo_index for row in kept.select("topo_index").collect()}
        return [index in found for index in range(len(batch))]

    def session(self) -> SparkSession:
        with self._lock:
            if self._session is None:
                from topology.spark.session import build_session

                self._session = build_session(
                    "topo-verify", "local[1]", {"spark.ui.enabled": "false"}
                )
            return self._session

    def stop(self) -> None:
        if self._session is not None:
            self._session.stop()
