"""The Kafka adapter: the only package that imports confluent_kafka."""
