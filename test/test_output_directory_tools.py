"""Output directories belong to the tool that wrote them: space-robot-identify never replaces a space-robot-sim
run, nor the reverse; each replaces its own with --overwrite. And the summary counts a subtree mounted on another
subtree's frame (a captured target on the hand) as floating: the joined system conserves momentum."""
from __future__ import annotations

import pytest

from space_robot_dynamics import build_model
from space_robot_runtime.output_directory import OutputDirectory, OutputError
from space_robot_runtime.run_summary import momentum_conserved


def _write(tmp_path, tool: str, overwrite: bool = False):
    output = OutputDirectory(tmp_path / "out", overwrite, tool=tool)
    (output.staging / "summary.json").write_text("{}\n")
    return output.commit({"complete": True})


@pytest.mark.parametrize(("first", "second"), [("space-robot-sim", "space-robot-identify"),
                                               ("space-robot-identify", "space-robot-sim")])
def test_another_tools_outputs_are_never_replaced(tmp_path, first, second):
    _write(tmp_path, first)
    with pytest.raises(OutputError, match=f"was not written by {second}"):
        OutputDirectory(tmp_path / "out", overwrite=True, tool=second)
    with pytest.raises(OutputError, match="pass --overwrite"):
        OutputDirectory(tmp_path / "out", overwrite=False, tool=first)
    assert _write(tmp_path, first, overwrite=True) == (tmp_path / "out").absolute()


def test_a_target_held_on_the_hand_keeps_momentum_conserved():
    assert momentum_conserved(build_model("servicer_target_attached"))
    assert not momentum_conserved(build_model("sawyer_fixed"))
