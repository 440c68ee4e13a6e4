"""Errors a user can cause. The CLI turns each into one line on stderr and exit 1."""


class TopoError(Exception):
    """A problem the user can fix; its message is the whole explanation, on one line."""


class ToolMissingError(TopoError):
    """A program topo needs (java, mvn, openssl) is absent or too old."""


class LabError(TopoError):
    """A lab cluster could not be started, stopped or reached."""


class KafkaUnavailableError(TopoError):
    """A Kafka cluster did not answer in time."""


class StalePlanError(TopoError):
    """The clusters or the topology changed after the saved plan was made."""


class ActiveGroupError(TopoError):
    """The group has members on the cluster: its offsets cannot be committed from outside."""


class TopicNotFoundError(KafkaUnavailableError):
    """The cluster answered: the topic does not exist (or cannot be described)."""
