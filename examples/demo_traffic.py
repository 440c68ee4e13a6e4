"""Traffic for the quickstart: keyed JSON orders, with headers, written to `orders` on east.

    python examples/demo_traffic.py --create-only        # just create the topic
    python examples/demo_traffic.py --rate 50 --seconds 30

`make demo` runs it against the lab cluster `east` (`topo lab up east`) while `topo apply
examples/quickstart.yaml` replicates `orders` to `east.orders` on west.
"""

import argparse
import json
import sys
import time

from confluent_kafka import Producer

from topology.kafka import client, records
from topology.lab import manager

CUSTOMERS = 7


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cluster", default="east", help="the lab cluster (default: east)")
    parser.add_argument("--topic", default="orders")
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--rate", type=int, default=50, help="records per second")
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--create-only", action="store_true", help="create the topic, then exit")
    args = parser.parse_args()

    config = manager.admin_config(args.cluster)
    records.create_topic(config, args.topic, args.partitions, exist_ok=True)
    if args.create_only:
        print(f"{args.cluster}/{args.topic}: ready ({args.partitions} partitions)")
        return 0

    run = time.strftime("%H%M%S")
    # client.quiet: librdkafka's transient notices (a fresh broker still loading) stay off screen
    settings = {"acks": "all", "enable.idempotence": "true", "linger.ms": 5}
    producer = Producer({**client.quiet(config), **settings})
    failures: list[str] = []

    def on_delivery(error: object, _message: object) -> None:
        if error is not None:
            failures.append(str(error))

    print(f"producing {args.rate} records/s to {args.cluster}/{args.topic} for "
          f"{args.seconds} s (run {run}) ...", flush=True)  # fmt: skip
    began = time.monotonic()
    sent, total = 0, args.rate * args.seconds
    while sent < total:
        due = min(int((time.monotonic() - began) * args.rate) + 1, total)
        while sent < due:
            sent += 1
            order = {"order": sent, "customer": sent % CUSTOMERS, "amount": round(sent * 1.37, 2)}
            producer.produce(
                args.topic,
                key=f"customer-{sent % CUSTOMERS}".encode(),
                value=json.dumps(order).encode(),
                headers=[("app", b"demo-traffic"), ("run", run.encode())],
                on_delivery=on_delivery,
            )
        producer.poll(0)
        time.sleep(0.02)
    if producer.flush(30) or failures:
        print(f"records not acknowledged: {failures[:3] or 'timed out'}", file=sys.stderr)
        return 1
    print(f"produced {sent} records to {args.cluster}/{args.topic} "
          f"in {time.monotonic() - began:.0f} s", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
