"""The navigation environment: action schemes, sensors, verbalizer, teacher, Gymnasium env.

Importing this package registers the Gymnasium ids ``flaneur/toy-v0`` and
``flaneur/<task-id>`` for every registered task set (see :mod:`flaneur.env.registration`).
"""

from flaneur.env.navigation_env import TERMINATIONS, NavigationEnv
from flaneur.env.online_map import OnlineMap
from flaneur.env.registration import default_scheme, register_envs
from flaneur.env.schemes import (
    SCHEMES,
    STOP,
    TURN_ACTIONS,
    ActionScheme,
    HeadingsScheme,
    InvalidActionError,
    NodesScheme,
    TurnsScheme,
    UnknownActionError,
    make_scheme,
)
from flaneur.env.sensors import SENSORS, make_sensors
from flaneur.env.state import AgentState, direction_label
from flaneur.env.teacher import Teacher, TeacherError, gold_rollout, node_path
from flaneur.env.toy import toy_city, toy_episodes
from flaneur.env.verbalizer import Verbalizer

register_envs()

__all__ = [
    "SCHEMES",
    "SENSORS",
    "STOP",
    "TERMINATIONS",
    "TURN_ACTIONS",
    "ActionScheme",
    "AgentState",
    "HeadingsScheme",
    "InvalidActionError",
    "NavigationEnv",
    "NodesScheme",
    "OnlineMap",
    "Teacher",
    "TeacherError",
    "TurnsScheme",
    "UnknownActionError",
    "Verbalizer",
    "default_scheme",
    "direction_label",
    "gold_rollout",
    "make_scheme",
    "make_sensors",
    "node_path",
    "register_envs",
    "toy_city",
    "toy_episodes",
]
