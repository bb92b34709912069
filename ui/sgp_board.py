"""The SGP board component: a Streamlit components-v2 element (`ui.components.register`: the shared
`component_base.js` and `sgp_board.js`; `data` as JSON bytes).

It shows the board after the stored moves and the goal (side by side or behind a toggle), the pieces as
named buttons ("red cube"; "red cube at B2" only with the study's sgp_piece_coordinates), click targets over
the 2D or 3D image from the renderer's hit map (the pieces, and the free cells the chosen piece can reach,
highlighted), arrow buttons ("move up", …) or the keyboard's arrows, or a typed-command field with the allowed
words beside it (several comma-separated moves with sgp_several_moves), as the study chose. What the browser
gets is `rose_core.instrument.episode_session.board_component_data` (no gold beyond the goal the task shows
anyway; the board as text only in the text modality or with piece coordinates; each piece's cell still comes
along, for the highlights and the click's cells, though the page never shows it).

Browser -> server: state ``board`` on every move, ``{"view_id", "moves": [{seq, text, input, t, active_ms,
click?}], "give_up", "active_ms", "first_action_ms"}`` where ``moves`` are the ones the server has not stored
yet (seq >= ack_seq); ``click`` = ``{from, to, x, y}`` for a move made on the image (the piece's cell, the
cell clicked, the point in image pixels), checked by the server against the board. The server applies and stores them (`EpisodeSession.record_moves`) and answers with the new
board and ``ack_seq``; the controls wait for it before the next move.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ui.components import encode_data, register

_COMPONENT = register("rose_sgp_board", "sgp_board")  # component_base.js + sgp_board.js, classes `sb-`


def sgp_board(key: str, data: dict[str, Any], *, on_board: Callable[[], None] | None = None):
    """Mount the board; the result has `.board` (the moves not yet acknowledged). `on_board` runs before the
    rerun the browser caused, with the new value in ``st.session_state[key]``: storing the moves there lets that
    rerun already show the new board."""
    return _COMPONENT(key=key, data=encode_data(data), on_board_change=on_board or (lambda: None), width="stretch")
