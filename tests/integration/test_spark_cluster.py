"""A real standalone Spark cluster (master and worker on localhost) runs a submitted job, and
stopping it leaves nothing behind."""

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from tests import spark_cluster as standalone
from tests.spark_cluster import SparkClusterError, StandaloneSpark

pytestmark = pytest.mark.spark

APP_NAME = "topo-cluster-smoke"

# Sums on the JVM (SQL) and in Python workers on the executors (an RDD lambda).
JOB = textwrap.dedent(
    f"""
    import os
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName("{APP_NAME}").getOrCreate()
    sc = spark.sparkContext
    print("MASTER=" + sc.master)
    print("SQL_SUM=" + str(spark.range(1000).selectExpr("sum(id)").first()[0]))
    print("PY_SUM=" + str(sc.parallelize(range(1000), 4).map(lambda x: x * x).sum()))
    # Where Python ran: an executor's Python worker starts in the executor's directory.
    places = sc.parallelize(range(4), 4).mapPartitions(lambda _: [os.getcwd()]).collect()
    for place in sorted(set(places)):
        print("PY_CWD=" + place)
    spark.stop()
    """
)


def submit(cluster: StandaloneSpark, script: Path, work: Path) -> subprocess.CompletedProcess[str]:
    conf_dir = work / "submit-conf"  # empty: no spark-defaults.conf of the user's
    conf_dir.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "SPARK_HOME": str(cluster.spark_home),
        "SPARK_CONF_DIR": str(conf_dir),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }
    cmd = [
        str(cluster.spark_home / "bin" / "spark-submit"),
        "--master",
        cluster.master_url,
        "--conf",
        "spark.driver.memory=512m",
        "--conf",
        "spark.executor.memory=512m",
        "--conf",
        "spark.ui.enabled=false",
        str(script),
    ]
    return subprocess.run(
        cmd,
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def completed_apps(cluster: StandaloneSpark, name: str) -> list[dict[str, Any]]:
    """The master's completed applications of that name; the driver's unregistration can reach
    the master a moment after spark-submit has exited, so wait a little for it."""
    deadline = time.monotonic() + 15
    while True:
        apps = [a for a in cluster.status().get("completedapps", []) if a.get("name") == name]
        if apps or time.monotonic() >= deadline:
            return apps
        time.sleep(0.25)


def live_processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes whose command line or working directory holds `text`."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(proc / "cwd")
        except (OSError, IndexError):
            continue  # gone meanwhile, or not ours to read
        if state != "Z" and (text in cmdline or text in cwd):
            found.append(f"{proc.name}: {cmdline[:300]}")
    return found


def test_submitted_job_runs_on_the_cluster_executors(
    spark_cluster: StandaloneSpark, tmp_path: Path
) -> None:
    cluster = spark_cluster
    script = tmp_path / "job.py"
    script.write_text(JOB)

    result = submit(cluster, script, tmp_path)

    assert result.returncode == 0, result.stderr[-5000:]
    lines = result.stdout.splitlines()
    assert f"MASTER={cluster.master_url}" in lines
    assert "SQL_SUM=499500" in lines
    assert f"PY_SUM={sum(x * x for x in range(1000))}" in lines
    # Python ran in an executor the worker launched, in the worker's directory for the app.
    places = [line.removeprefix("PY_CWD=") for line in lines if line.startswith("PY_CWD=")]
    assert places
    worker_dirs = [folder.resolve() for folder in cluster.workdir.glob("worker*/")]
    for place in places:
        assert any(Path(place).resolve().is_relative_to(d) for d in worker_dirs), place
    apps = completed_apps(cluster, APP_NAME)
    assert len(apps) == 1, cluster.status()
    assert apps[0]["state"] == "FINISHED"


def test_stop_leaves_no_process_behind(tmp_path: Path) -> None:
    cluster = standalone.start(tmp_path / "cluster", cores=1, memory="512m")
    try:
        assert cluster.status()["aliveworkers"] == 1
        port = cluster.master_url.rsplit(":", 1)[1]
        assert live_processes_mentioning(str(tmp_path))
    finally:
        standalone.stop(cluster)

    assert all(process.poll() is not None for process in cluster.processes)
    assert live_processes_mentioning(str(tmp_path)) == []
    assert live_processes_mentioning(f"--port {port} ") == []
    assert live_processes_mentioning(cluster.master_url) == []
    standalone.stop(cluster)  # a second stop is harmless


def test_failed_start_leaves_no_process_behind(tmp_path: Path) -> None:
    # No JVM starts and registers a worker within a tenth of a second.
    with pytest.raises(SparkClusterError, match="no worker registered") as raised:
        standalone.start(tmp_path / "cluster", cores=1, memory="512m", timeout=0.1)

    assert "last lines of" in str(raised.value)
    assert live_processes_mentioning(str(tmp_path)) == []
