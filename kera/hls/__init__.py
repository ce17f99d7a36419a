"""High-level synthesis: boards, delay/area models, scheduling, reports and characterisation.

The board and model APIs are re-exported here: ``load_board``, ``list_boards``, ``Board``,
``load_model`` and ``DelayModel``.
"""

from kera.hls.boards import Board, list_boards, load_board
from kera.hls.models import DelayModel, load_model

__all__ = ["Board", "DelayModel", "list_boards", "load_board", "load_model"]
